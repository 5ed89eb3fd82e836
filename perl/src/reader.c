/*
 * reader.c - reads memcached get responses for GetParser (see reader.h).
 *
 * Bytes come from read(2) into a line buffer, or, for a large value with
 * much of its data still to come, straight into the value's storage; the
 * engine's parser (cmrx_parser_next) turns the line buffer into events, and
 * cmrx_parser_take_data tells it of the bytes read past it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmrx.h"
#include "reader.h"

/* Bytes read per read(2) into the line buffer, and that buffer's usual
 * size. */
#define READ_CHUNK (64 * 1024)
/* A value with at least this much data still to come is read straight into
 * its own storage instead of through the line buffer. */
#define DIRECT_READ_MIN (READ_CHUNK / 2)
/* The line buffer grows when less room than this is left in it. */
#define LINE_BUF_MIN_ROOM (READ_CHUNK / 4)
/* A value's storage starts at most this large (memcached's default item
 * size limit, 1 MiB, and its CRLF) and grows by STORAGE_GROWTH as data
 * arrives: a declared length is a claim, not a fact, trusted only this
 * far. */
#define VALUE_FIRST_ALLOC (1024 * 1024 + READER_CRLF_LEN)
#define STORAGE_GROWTH 2
/* The engine's default cap on a value's declared length (1 GiB). */
#define ENGINE_DEFAULT_MAX_VALUE 0
/* Room for the reason of a failure with an error message after it. */
#define ERROR_TEXT_SIZE 256

#ifndef SSIZE_MAX
#define SSIZE_MAX ((ssize_t)(~(size_t)0 >> 1))
#endif

int
reader_init(reader *r, const reader_callbacks *callbacks, void *ctx, size_t namespace_len,
            char **spare)
{
    memset(r, 0, sizeof *r);
    r->engine = cmrx_parser_new(ENGINE_DEFAULT_MAX_VALUE);
    if (!r->engine)
        return -1;
    r->callbacks = callbacks;
    r->ctx = ctx;
    r->namespace_len = namespace_len;
    r->fd = -1;
    r->nonblocking = -1;
    if (spare && *spare) {
        r->buf = *spare;
        r->buf_cap = READ_CHUNK;
        *spare = NULL;
    }
    return 0;
}

void
reader_release(reader *r, char **spare)
{
    cmrx_parser_free(r->engine);
    free(r->error);
    if (spare && !*spare && r->buf_cap == READ_CHUNK)
        *spare = r->buf;
    else
        free(r->buf);
    memset(r, 0, sizeof *r);
}

void
reader_spare_free(char *spare)
{
    free(spare);
}

int
reader_result(const reader *r)
{
    return r->result;
}

int
reader_busy(const reader *r)
{
    return r->busy;
}

int
reader_in_value(const reader *r)
{
    return r->in_value;
}

const char *
reader_error(reader *r)
{
    if (!r->why_errno)
        return r->why;
    if (!r->error && !(r->error = malloc(ERROR_TEXT_SIZE)))
        return r->why;
    snprintf(r->error, ERROR_TEXT_SIZE, "%s: %s", r->why, strerror(r->why_errno));
    return r->error;
}

/* Ends the parse as failed, saying why (a static message) and, unless err
 * is 0, which error. Returns READER_FAILED. */
static int
reader_fail(reader *r, const char *why, int err)
{
    r->why = why;
    r->why_errno = err;
    r->result = READER_FAILED;
    return READER_FAILED;
}

/* Nothing partial stays behind a parse that is over. */
static void
reader_drop_input(reader *r)
{
    r->buf_len = 0;
    r->value = NULL;
    r->value_cap = 0;
}

void
reader_abandon(reader *r, const char *why)
{
    r->busy = 0;
    reader_fail(r, why, 0);
    reader_drop_input(r);
}

/* Data bytes still to come for the value in progress, as a size. */
static size_t
reader_value_remaining(const reader *r)
{
    uint64_t remaining = cmrx_parser_data_remaining(r->engine);
    return remaining > (uint64_t)SSIZE_MAX ? (size_t)SSIZE_MAX : (size_t)remaining;
}

/* Grows the value's storage to hold `need` data bytes and room for the
 * CRLF after them: by STORAGE_GROWTH, but never past the declared length
 * (the `counted` bytes the engine has handed out or been told of, and
 * those still to come). */
static void
reader_value_grow(reader *r, size_t need, size_t counted)
{
    size_t full = counted + reader_value_remaining(r);
    size_t want = r->value_cap * STORAGE_GROWTH;
    if (want < need + READER_CRLF_LEN)
        want = need + READER_CRLF_LEN;
    if (want > full + READER_CRLF_LEN)
        want = full + READER_CRLF_LEN;
    r->value = r->callbacks->value_storage(r->ctx, want, &r->value_cap);
}

/* The value's storage, holding `need` data bytes and room for the CRLF
 * after them (reader_value_grow says how it grows). */
static char *
reader_value_room(reader *r, size_t need, size_t counted)
{
    if (r->value_cap < need + READER_CRLF_LEN)
        reader_value_grow(r, need, counted);
    return r->value;
}

/* A VALUE line: its key without the namespace, its flags, and storage of
 * at most VALUE_FIRST_ALLOC to begin with. */
static void
reader_begin_value(reader *r, const cmrx_event *ev)
{
    size_t key_len = ev->key_len > r->namespace_len ? ev->key_len - r->namespace_len : 0;
    size_t first = ev->len < VALUE_FIRST_ALLOC - READER_CRLF_LEN ? (size_t)ev->len + READER_CRLF_LEN
                                                                 : VALUE_FIRST_ALLOC;
    r->in_value = 1;
    r->value_len = 0;
    r->value = r->callbacks->value_begins(r->ctx, (const char *)ev->key + (ev->key_len - key_len),
                                          key_len, ev->flags, first, &r->value_cap);
}

/* Appends data bytes the engine handed out to the value in progress. */
static void
reader_append(reader *r, const uint8_t *data, size_t n)
{
    size_t need = r->value_len + n;
    char *value = reader_value_room(r, need, need);
    memcpy(value + r->value_len, data, n);
    r->value_len = need;
}

/* The value's data and the CRLF after it are complete: hands it over. */
static void
reader_finish_value(reader *r)
{
    r->in_value = 0;
    r->value = NULL;
    r->value_cap = 0;
    r->callbacks->value_done(r->ctx, r->value_len);
}

/* Runs the engine over the buffered bytes until it needs more input, the
 * response ends, or it proves bad. Returns READER_*. */
static int
reader_drain(reader *r)
{
    cmrx_event ev; /* the engine writes only what each event defines */
    size_t at = 0;
    int result = READER_RUNNING;

    while (result == READER_RUNNING) {
        int kind = cmrx_parser_next(r->engine, (const uint8_t *)r->buf + at, r->buf_len - at, &ev);
        at += ev.consumed;
        if (kind == CMRX_EV_PARTIAL)
            break;
        switch (kind) {
        case CMRX_EV_VALUE:
            reader_begin_value(r, &ev);
            break;
        case CMRX_EV_DATA:
            reader_append(r, ev.data, ev.data_len);
            break;
        case CMRX_EV_VALUE_END:
            reader_finish_value(r);
            break;
        case CMRX_EV_END:
            /* Bytes after END: the next call has the engine say so. */
            if (at == r->buf_len)
                result = READER_DONE;
            break;
        default:
            result = reader_fail(r, cmrx_parse_error_str(ev.error), 0);
            break;
        }
    }
    /* Keep what the engine has not consumed: at most an unfinished line
     * (bounded by the engine) or a value's CRLF. */
    if (at > 0) {
        r->buf_len -= at;
        if (r->buf_len)
            memmove(r->buf, r->buf + at, r->buf_len);
    }
    return result;
}

/* The line buffer, with at least LINE_BUF_MIN_ROOM free. 0, or -1 when
 * memory runs out. */
static int
reader_buf_reserve(reader *r)
{
    size_t cap;
    char *grown;
    if (r->buf && r->buf_cap - r->buf_len >= LINE_BUF_MIN_ROOM)
        return 0;
    cap = r->buf ? r->buf_len + READ_CHUNK : READ_CHUNK;
    grown = realloc(r->buf, cap);
    if (!grown)
        return -1;
    r->buf = grown;
    r->buf_cap = cap;
    return 0;
}

/* One read(2) into the line buffer; *asked is the room offered. */
static ssize_t
reader_read_lines(reader *r, int fd, size_t *asked)
{
    ssize_t got;
    if (reader_buf_reserve(r) != 0) {
        errno = ENOMEM;
        return -1;
    }
    *asked = r->buf_cap - r->buf_len;
    got = read(fd, r->buf + r->buf_len, *asked);
    if (got > 0)
        r->buf_len += (size_t)got;
    return got;
}

/* One read(2) straight into the value in progress, a large one, of at most
 * the data it has left; reader_take_read then tells the engine. */
static ssize_t
reader_read_value(reader *r, int fd)
{
    size_t want = reader_value_remaining(r);
    size_t first = want < DIRECT_READ_MIN ? want : DIRECT_READ_MIN;
    char *value = reader_value_room(r, r->value_len + first, r->value_len);
    size_t room = r->value_cap - r->value_len - READER_CRLF_LEN;
    return read(fd, value + r->value_len, want < room ? want : room);
}

/* The engine never saw the `got` bytes reader_read_value put into the
 * value: they count as consumed, and as the value's. READER_RUNNING, or
 * READER_FAILED if the engine refuses (more than the value has left: a
 * bug). */
static int
reader_take_read(reader *r, size_t got)
{
    if (cmrx_parser_take_data(r->engine, (uint64_t)got) != CMRX_OK)
        return reader_fail(r, cmrx_parse_error_str(CMRX_PE_INTERNAL), 0);
    r->value_len += got;
    return READER_RUNNING;
}

/* Whether fd is non-blocking, looked at once per descriptor. */
static void
reader_note_fd(reader *r, int fd)
{
    if (r->nonblocking < 0 || r->fd != fd) {
        r->fd = fd;
        r->nonblocking = (fcntl(fd, F_GETFL) & O_NONBLOCK) != 0;
    }
}

/* Whether the next read goes straight into the value in progress. */
static int
reader_reads_directly(const reader *r)
{
    return r->in_value && r->buf_len == 0
           && cmrx_parser_data_remaining(r->engine) >= DIRECT_READ_MIN;
}

/* The read loop of reader_read_fd. */
static int
reader_read_loop(reader *r, int fd)
{
    reader_note_fd(r, fd);
    for (;;) {
        size_t asked = 0;
        int direct = reader_reads_directly(r);
        ssize_t got = direct ? reader_read_value(r, fd) : reader_read_lines(r, fd, &asked);
        if (got > 0) {
            int result = direct ? reader_take_read(r, (size_t)got) : reader_drain(r);
            int short_read = !direct && (size_t)got < asked;
            if (result != READER_RUNNING || !r->nonblocking || short_read)
                return result;
            continue;
        }
        if (got < 0 && errno == EINTR) {
            r->callbacks->interrupted(r->ctx);
            continue;
        }
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return READER_RUNNING;
        if (got == 0)
            return reader_fail(r, "the server closed the connection before the response ended", 0);
        return reader_fail(r, "read failed", errno);
    }
}

/* The parse loop of reader_feed. */
static int
reader_feed_loop(reader *r, const char *bytes, size_t len)
{
    int result = READER_RUNNING;
    while (len > 0 && result == READER_RUNNING) {
        size_t n;
        if (reader_buf_reserve(r) != 0)
            return reader_fail(r, "out of memory", 0);
        n = r->buf_cap - r->buf_len;
        if (n > len)
            n = len;
        memcpy(r->buf + r->buf_len, bytes, n);
        r->buf_len += n;
        bytes += n;
        len -= n;
        result = reader_drain(r);
    }
    /* END at the end of a chunk, and more bytes after it. */
    if (result == READER_DONE && len > 0)
        result = reader_fail(r, cmrx_parse_error_str(CMRX_PE_AFTER_END), 0);
    return result;
}

/* Ends a call: a parse that is over keeps nothing partial. */
static int
reader_conclude(reader *r, int result)
{
    r->busy = 0;
    if (result != READER_RUNNING) {
        r->result = result;
        reader_drop_input(r);
    }
    return result;
}

int
reader_read_fd(reader *r, int fd)
{
    if (r->result != READER_RUNNING)
        return r->result;
    if (fd < 0)
        return reader_conclude(r, reader_fail(r, "not an open socket", 0));
    r->busy = 1;
    return reader_conclude(r, reader_read_loop(r, fd));
}

int
reader_feed(reader *r, const char *bytes, size_t len)
{
    if (r->result != READER_RUNNING)
        return r->result;
    r->busy = 1;
    return reader_conclude(r, reader_feed_loop(r, bytes, len));
}
