/*
 * reader.h - reads memcached get responses for GetParser: from a socket's
 * descriptor or from bytes, through the engine's sans-I/O parser
 * (rust/cmrx.h), into storage that its caller provides. It knows nothing
 * of Perl.
 *
 * Why it is apart from the XS: as in Cache::Memcached::Fast, whose C client
 * (src/) does the protocol and the I/O while its XS only converts, this
 * module owns everything between the socket and the engine: the reads, the
 * line buffer, the choice of reading a large value straight into its
 * storage, and how that storage grows as data arrives (a declared length is
 * a claim, not a fact). The caller (perl/RustXS.xs) implements the
 * callbacks below, as Fast's XS implements its client's alloc_value and
 * store callbacks, and keeps the scalars and hashes.
 *
 * Callbacks that run perl code may not return (a croak unwinds them): the
 * reader holds nothing on the C stack that would leak then. Its caller
 * notices (reader_busy is still true once the unwinding reaches it) and
 * calls reader_abandon. Perl code that a callback runs must not read or
 * free with the same reader; its caller refuses that (reader_busy).
 */
#ifndef CMRX_READER_H
#define CMRX_READER_H

#include <stddef.h>
#include <stdint.h>

#include "cmrx.h"

/* What reader_read_fd and reader_feed return: Cache::Memcached's
 * parse_from_sock results. */
#define READER_RUNNING 0     /* the response goes on: call again with more */
#define READER_DONE    1     /* END was seen */
#define READER_FAILED  (-1)  /* the response is bad or the socket failed */

/* The room a value's storage keeps after its data for the "\r\n" that
 * Cache::Memcached's finalize expects there (it chops two characters). */
#define READER_CRLF_LEN 2

/* The caller's side; each callback gets the ctx given to reader_init. */
typedef struct reader_callbacks {
    /* A VALUE line: its key without the namespace (pointing into the
     * reader's buffer: copy it) and its client flags. Returns new storage
     * for the value of at least `size` bytes (its data and the room for a
     * CRLF) with room for a NUL after them: where its bytes start (never
     * NULL: it does not return when memory runs out), *capacity set to
     * the bytes it holds, the NUL's room left out. */
    char *(*value_begins)(void *ctx, const char *key, size_t key_len, uint32_t flags, size_t size,
                          size_t *capacity);
    /* The value's storage grown to at least `size` bytes, its bytes so far
     * kept: as value_begins returns it. The bytes stay where they are until
     * the next call. */
    char *(*value_storage)(void *ctx, size_t size, size_t *capacity);
    /* The value's data_len bytes are in its storage, with room for a CRLF
     * and a NUL after them: the value is complete. */
    void (*value_done)(void *ctx, size_t data_len);
    /* A read was interrupted by a signal: run what handlers wait. */
    void (*interrupted)(void *ctx);
} reader_callbacks;

/* A reader of one get response, in r: its fields are this module's, and
 * public only so that the caller can keep it inside its own state (one
 * allocation per parser, not two). */
typedef struct reader {
    cmrx_parser *engine;
    const reader_callbacks *callbacks;
    void *ctx;
    size_t namespace_len;   /* key bytes to strip */
    char *buf;              /* unconsumed response bytes: lines, small values */
    size_t buf_len, buf_cap;
    /* The value in progress: its storage (the caller's) as value_storage
     * last gave it, and the data bytes in it so far. */
    char *value;
    size_t value_len, value_cap;
    int in_value;           /* a value was begun and not finished */
    int result;             /* READER_* once the parse is over */
    int busy;               /* inside reader_read_fd or reader_feed */
    int fd;                 /* the descriptor last read, and whether it is */
    int nonblocking;        /* non-blocking (-1: not looked at yet) */
    const char *why;        /* why the parse failed (static), NULL while it has not */
    int why_errno;          /* and the error after it, 0 for none */
    char *error;            /* the two as one message, made when asked */
} reader;

/* Makes r a reader of one get response whose keys lose their first
 * namespace_len bytes: 0, or -1 when memory runs out (nothing then needs
 * releasing). *spare (unless NULL) may hold a line buffer that a released
 * reader left (see reader_release): r takes it. */
int reader_init(reader *r, const reader_callbacks *callbacks, void *ctx, size_t namespace_len,
                char **spare);
/* Frees what r holds. Its line buffer goes to *spare when spare is not
 * NULL, *spare is NULL and the buffer is of the usual size: the next
 * reader's, since a reader per server per get_multi would otherwise
 * allocate and free one each time. */
void reader_release(reader *r, char **spare);
/* Frees a line buffer that reader_release left in *spare. */
void reader_spare_free(char *spare);

/* Reads what the descriptor fd has and parses it: READER_*. A non-blocking
 * descriptor is read until it has no more for now (a large value then
 * takes half the trips through Cache::Memcached's select loop); a blocking
 * one once per call, so that the select loop keeps its timeout. A negative
 * fd (no open socket) fails. */
int reader_read_fd(reader *r, int fd);
/* Parses bytes[0..len): READER_*. */
int reader_feed(reader *r, const char *bytes, size_t len);

/* READER_RUNNING until a call returned READER_DONE or READER_FAILED, then
 * that: the reader reads nothing more. */
int reader_result(const reader *r);
/* Whether a call is under way: true inside the callbacks, and after a
 * callback that did not return. */
int reader_busy(const reader *r);
/* Whether a value was begun and not finished (even when the parse then
 * failed): its key is the one the response was on. */
int reader_in_value(const reader *r);
/* Why the parse failed, or NULL: valid until the next call. */
const char *reader_error(reader *r);

/* A callback did not return (a croak unwound the call): the reader's
 * buffer and the value's storage no longer agree with the engine, so the
 * parse fails, saying why. */
void reader_abandon(reader *r, const char *why);

#endif /* CMRX_READER_H */
