/*
 * items.h - the items of a whole memcached get response held in memory, as
 * the server stores them: each one's key, flags, cas and data, read by the
 * engine's sans-I/O parser (rust/cmrx.h) with nothing decoded, dropped or
 * changed. It knows nothing of Perl.
 *
 * Why apart from reader.c: reader.c serves GetParser, which reads a response
 * a piece at a time (from a socket) into storage it asks for each value,
 * and whose caller applies the clients' value policy (values.h: decode what
 * is flagged compressed, make a miss of some). Here the response is whole,
 * so each item's data is where it lies in it, and no policy applies: this
 * is for code that wants what a cache holds (cmrx-dict, the tests' and the
 * benchmark's raw reads). The rules of the response are the engine's in
 * both, so both accept and refuse the same responses.
 */
#ifndef CMRX_ITEMS_H
#define CMRX_ITEMS_H

#include <stddef.h>
#include <stdint.h>

/* What items_read returns. */
#define ITEMS_CUT_SHORT 0    /* no END yet: the bytes are the start of a response */
#define ITEMS_COMPLETE  1    /* END ended the response, and nothing follows it */
#define ITEMS_BAD       (-1) /* the response is bad: items_failure says why and where */

/* One item; its key and data point into the response. */
typedef struct items_item {
    const char *key;
    size_t key_len;
    uint32_t flags;
    int has_cas; /* the VALUE line had a cas field: cas holds it */
    uint64_t cas;
    const char *data;
    size_t data_len;
} items_item;

/* Called once for each item, in the order of the response, when its data
 * and the CRLF after it are whole. It must return (it may not croak): what
 * items_read holds is freed when it returns. */
typedef void (*items_each_fn)(void *ctx, const items_item *item);

/* Why and where a response is bad. */
typedef struct items_failure {
    const char *why;    /* static: the engine's description, or "out of memory" */
    size_t at;          /* where the bytes the engine refused begin: a bad line,
                         * the two bytes after a value's data, what follows END */
    const char *key;    /* the key of the value those bytes come after (its
                         * data was whole, its CRLF is not there), else NULL */
    size_t key_len;
} items_failure;

/* Reads bytes[0..len) as a get response, calling each(ctx, item) for every
 * whole item: ITEMS_COMPLETE, ITEMS_CUT_SHORT (the items before the cut
 * were handed over), or ITEMS_BAD with *failure set. */
int items_read(const char *bytes, size_t len, items_each_fn each, void *ctx, items_failure *failure);

#endif /* CMRX_ITEMS_H */
