/*
 * cmrx.h - the C ABI of the Cache::Memcached::RustXS engine (rust/ffi.rs).
 *
 * The engine is pure: bytes in, bytes or events out. It does no I/O and knows
 * nothing of Perl; perl/RustXS.xs is the only caller.
 *
 * Panics: every function below catches any Rust panic before it reaches the
 * caller. A function that returns a status returns CMRX_E_PANIC (or, for the
 * parser, an event of kind CMRX_EV_ERROR with error CMRX_PE_INTERNAL); the
 * constructors return NULL; the size functions return 0. No unwind ever
 * crosses this boundary.
 *
 * Pointers: every (pointer, length) pair must describe readable (for const)
 * or writable memory of at least that length; a NULL pointer is allowed only
 * with length 0.
 */
#ifndef CMRX_H
#define CMRX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* The memcached text-protocol get-response parser (rust/parser.rs).        */

typedef struct cmrx_parser cmrx_parser;

/* Event kinds returned by cmrx_parser_next. */
#define CMRX_EV_PARTIAL    0  /* no complete event in buf: keep its bytes, read more */
#define CMRX_EV_VALUE      1  /* a VALUE line: key, flags, len (and cas) are set      */
#define CMRX_EV_DATA       2  /* data bytes of the current value: data, data_len      */
#define CMRX_EV_VALUE_END  3  /* the value's data and its "\r\n" are complete         */
#define CMRX_EV_END        4  /* END\r\n: the response is complete                    */
#define CMRX_EV_ERROR    (-1) /* the response is bad: error says why; parser is dead  */

/* Parse errors (cmrx_event.error when kind is CMRX_EV_ERROR). */
#define CMRX_PE_SERVER_ERROR     1  /* SERVER_ERROR ...                          */
#define CMRX_PE_CLIENT_ERROR     2  /* CLIENT_ERROR ...                          */
#define CMRX_PE_ERROR            3  /* ERROR                                     */
#define CMRX_PE_UNKNOWN_LINE     4  /* a line that is neither VALUE nor END      */
#define CMRX_PE_BAD_VALUE_LINE   5  /* a malformed VALUE line                    */
#define CMRX_PE_BAD_KEY          6  /* key empty, longer than 250 or has control bytes */
#define CMRX_PE_BAD_NUMBER       7  /* flags, length or cas not a bounded number */
#define CMRX_PE_TOO_LARGE        8  /* declared length over the parser's limit   */
#define CMRX_PE_BAD_TERMINATOR   9  /* the two bytes after a data block not \r\n */
#define CMRX_PE_LINE_TOO_LONG   10  /* no \r\n within the line bound             */
#define CMRX_PE_BAD_LINE_END    11  /* a line ended by \n without \r             */
#define CMRX_PE_AFTER_END       12  /* bytes after END                           */
#define CMRX_PE_INTERNAL        99  /* a bug: a caught panic                     */

/* cmrx_parser_next always sets `consumed`, and then only the fields of the
 * kind it returns (marked below); the others keep whatever they held. */
typedef struct cmrx_event {
    size_t         consumed;  /* bytes of buf this event used (0 for PARTIAL)     */
    const uint8_t *key;       /* VALUE: the key, pointing into buf                */
    size_t         key_len;
    uint32_t       flags;     /* VALUE: client flags                              */
    uint64_t       len;       /* VALUE: declared data length                      */
    uint64_t       cas;       /* VALUE: cas unique, when has_cas                  */
    int            has_cas;
    const uint8_t *data;      /* DATA: the bytes, pointing into buf               */
    size_t         data_len;
    int            error;     /* ERROR: a CMRX_PE_* code                          */
} cmrx_event;

/* A new parser accepting values of at most max_value_len bytes (0 means the
 * default, 1 GiB). NULL if memory is short. */
cmrx_parser *cmrx_parser_new(uint64_t max_value_len);
void         cmrx_parser_free(cmrx_parser *parser);     /* NULL is fine */
void         cmrx_parser_reset(cmrx_parser *parser);    /* ready for a new response */

/* The next event at the front of buf[0..len). The caller drops ev->consumed
 * bytes from the front of its buffer and calls again; on PARTIAL it appends
 * more input to what is left and calls again. Returns ev->kind's value. */
int cmrx_parser_next(cmrx_parser *parser, const uint8_t *buf, size_t len,
                     cmrx_event *ev);

/* Data bytes still expected for the current value (0 outside a value). */
uint64_t cmrx_parser_data_remaining(const cmrx_parser *parser);

/* A static, NUL-terminated description of a CMRX_PE_* code. */
const char *cmrx_parse_error_str(int error);

/* ------------------------------------------------------------------------ */
/* The gzip / zlib codec (rust/codec.rs), libdeflate underneath, with       */
/* per-thread compressor and decompressor state.                            */

#define CMRX_OK            0
#define CMRX_E_NEED_SPACE  1    /* out too small: *out_len holds the capacity to try next */
#define CMRX_E_DATA      (-3)   /* corrupt or truncated input (zlib's Z_DATA_ERROR)       */
#define CMRX_E_TOO_BIG   (-100) /* the output would exceed max_out                         */
#define CMRX_E_ARG       (-101) /* bad argument (level out of range, NULL pointer)         */
#define CMRX_E_PANIC     (-102) /* a bug: a caught panic                                   */

/* Largest output cmrx_gzip / cmrx_zlib can produce for in_len input bytes. */
size_t cmrx_gzip_bound(size_t in_len);
size_t cmrx_zlib_bound(size_t in_len);

/* Compress in[0..in_len) at level (0..12, libdeflate's scale; 1..9 mean what
 * they mean to zlib) into out[0..out_cap). out_cap of the bound always fits.
 * gzip output carries Compress::Zlib's memGzip header (1f 8b 08 00, mtime 0,
 * xfl 0, os 0xff). */
int cmrx_gzip(const uint8_t *in, size_t in_len, int level,
              uint8_t *out, size_t out_cap, size_t *out_len);
int cmrx_zlib(const uint8_t *in, size_t in_len, int level,
              uint8_t *out, size_t out_cap, size_t *out_len);

/* A first output capacity for decompressing in[0..in_len): the gzip trailer's
 * size when plausible (never above what deflate can expand in_len to, nor
 * above max_out), else a small multiple of in_len. */
size_t cmrx_gunzip_size_hint(const uint8_t *in, size_t in_len, size_t max_out);
size_t cmrx_uncompress_size_hint(const uint8_t *in, size_t in_len, size_t max_out);

/* Decompress with Compress::Zlib's memGunzip / uncompress semantics into
 * out[0..out_cap). CMRX_OK: *out_len bytes written. CMRX_E_NEED_SPACE: grow
 * out to *out_len bytes (never above max_out) and call again.
 * CMRX_E_TOO_BIG: the output exceeds max_out. CMRX_E_DATA: bad input. */
int cmrx_gunzip(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_cap,
                size_t max_out, size_t *out_len);
int cmrx_uncompress(const uint8_t *in, size_t in_len, uint8_t *out,
                    size_t out_cap, size_t max_out, size_t *out_len);

/* Already-compressed data: 0 if in[0..in_len) starts with no known magic,
 * else a CMRX_FMT_* code. */
#define CMRX_FMT_NONE   0
int cmrx_sniff_compressed(const uint8_t *in, size_t in_len);
/* 1 if in[0..in_len) is large (128 KiB or more) and a 16 KiB sample of it
 * does not deflate by 3 %: not worth compressing. 0 otherwise. */
int cmrx_looks_incompressible(const uint8_t *in, size_t in_len);
/* A static, NUL-terminated name of a CMRX_FMT_* code ("" for none). */
const char *cmrx_format_name(int format);

/* The engine's version (Cargo.toml's), NUL-terminated, static. */
const char *cmrx_version(void);

#ifdef __cplusplus
}
#endif

#endif /* CMRX_H */
