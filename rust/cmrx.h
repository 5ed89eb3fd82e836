/*
 * cmrx.h - the C ABI of the Cache::Memcached::RustXS engine (rust/ffi.rs and
 * rust/ffi/, a file per subsystem).
 *
 * The engine is pure: bytes in, bytes or events out. It does no I/O and knows
 * nothing of Perl; perl/RustXS.xs is the only caller.
 *
 * Numbers: every code, default and level range below comes from the Rust
 * enums and constants (rust/ffi/, rust/parser.rs, rust/decode.rs,
 * rust/deflate.rs, rust/zstd.rs). The GENERATED part
 * is written by `CMRX_UPDATE_HEADER=1 cargo test`, and `cargo test` fails
 * while it and the Rust disagree: do not edit it by hand.
 *
 * Panics: every function below catches any Rust panic before it reaches the
 * caller. A function that returns a status returns CMRX_E_PANIC (or, for the
 * parser, an event of kind CMRX_EV_ERROR with error CMRX_PE_INTERNAL); the
 * constructors return NULL; the size and yes/no functions return 0; the
 * string functions a static "internal error" (cmrx_version an empty
 * string). No unwind ever crosses this boundary.
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

/* BEGIN GENERATED from rust/ffi.rs (CMRX_UPDATE_HEADER=1 cargo test) */
#define CMRX_EV_ERROR                  (-1)
#define CMRX_EV_PARTIAL                0
#define CMRX_EV_VALUE                  1
#define CMRX_EV_DATA                   2
#define CMRX_EV_VALUE_END              3
#define CMRX_EV_END                    4
#define CMRX_PE_SERVER_ERROR           1
#define CMRX_PE_CLIENT_ERROR           2
#define CMRX_PE_ERROR                  3
#define CMRX_PE_UNKNOWN_LINE           4
#define CMRX_PE_BAD_VALUE_LINE         5
#define CMRX_PE_BAD_KEY                6
#define CMRX_PE_BAD_NUMBER             7
#define CMRX_PE_TOO_LARGE              8
#define CMRX_PE_BAD_TERMINATOR         9
#define CMRX_PE_LINE_TOO_LONG          10
#define CMRX_PE_BAD_LINE_END           11
#define CMRX_PE_AFTER_END              12
#define CMRX_PE_INTERNAL               99
#define CMRX_OK                        0
#define CMRX_E_NEED_SPACE              1
#define CMRX_E_DATA                    (-3)
#define CMRX_E_TOO_BIG                 (-100)
#define CMRX_E_ARG                     (-101)
#define CMRX_E_PANIC                   (-102)
#define CMRX_E_NO_MEMORY               (-103)
#define CMRX_E_UNKNOWN_DICTIONARY      (-104)
#define CMRX_E_BAD_DICTIONARY          (-105)
#define CMRX_E_DICTIONARY_CONFLICT     (-106)
#define CMRX_E_TRAINING                (-107)
#define CMRX_DECODE_GZIP               1
#define CMRX_DECODE_ZLIB               2
#define CMRX_DECODE_ZSTD               3
#define CMRX_DECODE_CACHED             4
#define CMRX_DECODE_ANY                5
#define CMRX_TRAIN_FASTCOVER           1
#define CMRX_TRAIN_COVER               2
#define CMRX_TRAIN_SAMPLES             3
#define CMRX_DICT_NOT_LOADED           0
#define CMRX_DICT_SAME                 1
#define CMRX_DICT_DIFFERENT            2
#define CMRX_DICT_ERROR                (-1)
#define CMRX_TRAFFIC_ZSTD_DICTIONARY   0
#define CMRX_TRAFFIC_ZSTD              3
#define CMRX_TRAFFIC_GZIP              1
#define CMRX_TRAFFIC_ZLIB              2
#define CMRX_EVENT_UNKNOWN_DICTIONARY  0
#define CMRX_EVENT_UNDECODABLE         1
#define CMRX_EVENT_TOO_BIG             2
#define CMRX_EVENT_ALREADY_COMPRESSED  3
#define CMRX_EVENT_INCOMPRESSIBLE      4
#define CMRX_EVENT_TOO_SMALL           5
#define CMRX_EVENTS                    6
#define CMRX_FMT_NONE                  0
#define CMRX_DEFLATE_USE_DEFAULT_LEVEL (-1)
#define CMRX_GZIP_DEFAULT_LEVEL        6
#define CMRX_ZLIB_DEFAULT_LEVEL        6
#define CMRX_DEFAULT_MAX_OUTPUT        67108864
#define CMRX_GZIP_MIN_LEVEL            0
#define CMRX_GZIP_MAX_LEVEL            12
#define CMRX_ZLIB_MIN_LEVEL            0
#define CMRX_ZLIB_MAX_LEVEL            9
#define CMRX_ZSTD_USE_DEFAULT_LEVEL    0
#define CMRX_ZSTD_DEFAULT_LEVEL        3
#define CMRX_ZSTD_MIN_LEVEL            (-7)
#define CMRX_ZSTD_MAX_LEVEL            22
#define CMRX_DEFAULT_WARN_INTERVAL     60
/* END GENERATED */

/* ------------------------------------------------------------------------ */
/* The memcached text-protocol get-response parser (rust/parser.rs).        */

typedef struct cmrx_parser cmrx_parser;

/* CMRX_EV_*: what cmrx_parser_next found at the front of the buffer:
 *   PARTIAL    no complete event: keep the bytes, append more, call again
 *   VALUE      a VALUE line: key, key_len, flags, len, cas, has_cas are set
 *   DATA       data bytes of the current value: data, data_len are set
 *   VALUE_END  the value's data and the "\r\n" after it are complete
 *   END        END\r\n: the response is complete
 *   ERROR      the response is bad: error is a CMRX_PE_* code; the parser
 *              returns the same error on every later call
 * CMRX_PE_*: why (cmrx_parse_error_str gives the text); CMRX_PE_INTERNAL is
 * a caught panic, a bug. */

/* cmrx_parser_next sets `consumed` and the fields of the kind it returns
 * (marked below), and writes nothing else: the struct may be uninitialised. */
typedef struct cmrx_event {
    size_t         consumed;  /* bytes of buf this event used (0 for PARTIAL, ERROR) */
    const uint8_t *key;       /* VALUE: the key, pointing into buf                   */
    size_t         key_len;
    uint32_t       flags;     /* VALUE: client flags                                 */
    uint64_t       len;       /* VALUE: declared data length                         */
    uint64_t       cas;       /* VALUE: cas unique, when has_cas                     */
    int            has_cas;
    const uint8_t *data;      /* DATA: the bytes, pointing into buf                  */
    size_t         data_len;
    int            error;     /* ERROR: a CMRX_PE_* code                             */
} cmrx_event;

/* A new parser accepting values of at most max_value_len bytes (0 means the
 * default, 1 GiB). NULL if memory is short. */
cmrx_parser *cmrx_parser_new(uint64_t max_value_len);
void         cmrx_parser_free(cmrx_parser *parser);     /* NULL is fine */

/* The next event at the front of buf[0..len), returned as a CMRX_EV_* kind.
 * The caller drops ev->consumed bytes from the front of its buffer and calls
 * again; on PARTIAL it appends more input to what is left and calls again. */
int cmrx_parser_next(cmrx_parser *parser, const uint8_t *buf, size_t len,
                     cmrx_event *ev);

/* Data bytes still expected for the current value (0 outside a value). */
uint64_t cmrx_parser_data_remaining(const cmrx_parser *parser);

/* For a caller that reads a value's data straight into its own buffer
 * instead of through buf: counts n of those bytes as consumed, leaving the
 * parser where a DATA event of them would (data is never looked at).
 * CMRX_OK; CMRX_E_ARG if n is more than cmrx_parser_data_remaining (the
 * parser is then unchanged) or parser is NULL. */
int cmrx_parser_take_data(cmrx_parser *parser, uint64_t n);

/* A static, NUL-terminated description of a CMRX_PE_* code (an unknown
 * code gets CMRX_PE_INTERNAL's). */
const char *cmrx_parse_error_str(int error);

/* ------------------------------------------------------------------------ */
/* Deflate: gzip and zlib (rust/deflate.rs), libdeflate underneath, with      */
/* per-thread compressor and decompressor state.                            */

/* CMRX_OK and CMRX_E_*: what the deflate and zstd functions return:
 *   OK          done: *out_len bytes written
 *   NEED_SPACE  out is too small: *out_len holds the capacity to try next
 *               (never above max_out when decompressing)
 *   DATA        corrupt or truncated input (zlib's Z_DATA_ERROR, -3)
 *   TOO_BIG     the output would exceed max_out
 *   ARG         a bad argument: a level out of range, a NULL pointer
 *   PANIC       a bug: a caught panic
 *   NO_MEMORY   no memory for the compressor or decompressor state
 *   UNKNOWN_DICTIONARY, BAD_DICTIONARY, DICTIONARY_CONFLICT, TRAINING:
 *               zstd's dictionaries (below)
 * CMRX_DEFLATE_USE_DEFAULT_LEVEL as a level means the function's default:
 * CMRX_GZIP_DEFAULT_LEVEL for cmrx_gzip, CMRX_ZLIB_DEFAULT_LEVEL for
 * cmrx_zlib. CMRX_DEFAULT_MAX_OUTPUT is the cap the Perl modules start with. */

/* Largest output cmrx_gzip / cmrx_zlib can produce for in_len input bytes. */
size_t cmrx_gzip_bound(size_t in_len);
size_t cmrx_zlib_bound(size_t in_len);

/* 1 if cmrx_gzip accepts level (CMRX_DEFLATE_USE_DEFAULT_LEVEL or libdeflate's
 * CMRX_GZIP_MIN_LEVEL..CMRX_GZIP_MAX_LEVEL), else 0. */
int cmrx_gzip_level_valid(int level);

/* gzip in[0..in_len) into out[0..out_cap): a libdeflate level (see
 * cmrx_gzip_level_valid; 1..9 mean roughly what they mean to zlib, the
 * levels above are slower near-optimal parsing) or CMRX_DEFLATE_USE_DEFAULT_LEVEL, framed with
 * Compress::Zlib's memGzip header (1f 8b 08 00, mtime 0, xfl 0, os 0xff).
 * An out_cap of the bound always fits. */
int cmrx_gzip(const uint8_t *in, size_t in_len, int level,
              uint8_t *out, size_t out_cap, size_t *out_len);
/* zlib format with Compress::Zlib::compress's levels: CMRX_DEFLATE_USE_DEFAULT_LEVEL or
 * zlib's CMRX_ZLIB_MIN_LEVEL..CMRX_ZLIB_MAX_LEVEL (any other level is
 * CMRX_E_ARG, as zlib refuses it). */
int cmrx_zlib(const uint8_t *in, size_t in_len, int level,
              uint8_t *out, size_t out_cap, size_t *out_len);

/* Decoding. CMRX_DECODE_*: what cmrx_decode reads:
 *   GZIP    gzip with Compress::Zlib's memGunzip semantics
 *   ZLIB    zlib with Compress::Zlib's uncompress semantics
 *   ZSTD    one zstd frame, with the loaded dictionary its header names
 *   CACHED  a compressed memcached value as the Perl clients write it: a
 *           zstd frame (told by its magic number), else gzip
 *   ANY     zstd or gzip by their magic numbers, else zlib
 * cmrx_decode_size_hint gives a first output capacity: what the data's header
 * says (gzip's trailer, a zstd frame's content size) when plausible, else a
 * small multiple of in_len; never above max_out; 0 when decoding will fail at
 * once or the format is unknown.
 * cmrx_decode writes at most max_out bytes into out[0..out_cap):
 *   CMRX_OK: *out_len bytes; *in_used (unless NULL) gets how many input bytes
 *     gzip data took up as memGunzip consumes them (the header, the deflate
 *     stream and the 8-byte trailer, or everything when fewer than 8 bytes
 *     follow the stream; the whole input for the other formats)
 *   CMRX_E_NEED_SPACE: grow out to *out_len bytes (never above max_out) and
 *     call again
 *   CMRX_E_TOO_BIG: the output exceeds max_out
 *   CMRX_E_UNKNOWN_DICTIONARY: *dictionary (unless NULL) gets the ID of the
 *     dictionary the zstd frame needs
 *   CMRX_E_DATA: bad input */
size_t cmrx_decode_size_hint(int format, const uint8_t *in, size_t in_len, size_t max_out);
int cmrx_decode(int format, const uint8_t *in, size_t in_len, uint8_t *out,
                size_t out_cap, size_t max_out, size_t *out_len, size_t *in_used,
                uint32_t *dictionary);

/* ------------------------------------------------------------------------ */
/* zstd (rust/zstd.rs): libzstd, with standard dictionaries loaded once for */
/* the whole process and per-thread contexts.                               */

/* Largest frame cmrx_zstd_compress can make of in_len bytes. */
size_t cmrx_zstd_compress_bound(size_t in_len);
/* 1 if level is 0 (CMRX_ZSTD_DEFAULT_LEVEL) or zstd's
 * CMRX_ZSTD_MIN_LEVEL..CMRX_ZSTD_MAX_LEVEL (the negative ones are its fast
 * levels), else 0. */
int cmrx_zstd_level_valid(int level);
/* One zstd frame of in[0..in_len) at level, stating its content size, with
 * the loaded dictionary of ID `dictionary` (0: none; one not loaded is
 * CMRX_E_UNKNOWN_DICTIONARY). An out_cap of the bound always fits. */
int cmrx_zstd_compress(const uint8_t *in, size_t in_len, int level,
                       uint32_t dictionary, uint8_t *out, size_t out_cap,
                       size_t *out_len);
/* Loads the standard zstd dictionary bytes[0..len) (as `zstd --train`
 * writes them) for the whole process; *id gets its ID. Loading the same
 * bytes again is CMRX_OK; other bytes with a loaded ID are
 * CMRX_E_DICTIONARY_CONFLICT; anything else CMRX_E_BAD_DICTIONARY. */
int cmrx_zstd_register(const uint8_t *bytes, size_t len, uint32_t *id);
/* Dictionary sets: prepares loaded dictionary id's compression tables at
 * level now, not at first use (a parent that does so before fork shares
 * them): CMRX_E_UNKNOWN_DICTIONARY if not loaded, CMRX_E_ARG for a bad
 * level. */
int cmrx_zstd_prepare(uint32_t id, int level);
/* The ID of the standard dictionary bytes[0..len) once libzstd has loaded
 * its tables (nothing is loaded into the process); CMRX_E_BAD_DICTIONARY. */
int cmrx_zstd_dictionary_id(const uint8_t *bytes, size_t len, uint32_t *id);
/* Copies the dictionary bytes[0..len) into out[0..len) with `id` in its
 * header: CMRX_E_ARG for id 0, CMRX_E_BAD_DICTIONARY. */
int cmrx_zstd_dictionary_with_id(const uint8_t *bytes, size_t len, uint32_t id,
                                 uint8_t *out, size_t *out_len);
/* CMRX_DICT_NOT_LOADED, _SAME (dictionary id is loaded and is bytes) or
 * _DIFFERENT (another dictionary has that ID). */
int cmrx_zstd_loaded_state(uint32_t id, const uint8_t *bytes, size_t len);
/* What cmrx_zstd_train_with does: method is a CMRX_TRAIN_* code (FASTCOVER:
 * ZDICT's fastCover, as `zstd --train`; COVER: ZDICT's cover; SAMPLES: the
 * samples themselves as the content, their end kept when they do not all
 * fit); k the segment size (0: searched over `steps` sizes from 50 to 2000;
 * 0 for SAMPLES) and d the sequence length (6 or 8; 0: both tried; 0 for
 * SAMPLES); level the zstd level the dictionary is made for; id the ID
 * every frame will name (0: drawn from the content). On CMRX_OK, k and d
 * are the ones used. */
typedef struct cmrx_training {
    int32_t  method;
    uint32_t k;
    uint32_t d;
    uint32_t steps;
    int32_t  level;
    uint32_t id;
} cmrx_training;

/* Trains a standard zstd dictionary of at most dict_size bytes on `count`
 * samples (samples[i] of lens[i] bytes) into out[0..dict_size), as *how
 * says: CMRX_E_ARG for parameters out of range (an unknown method, d not 0,
 * 6 or 8, k below d or above dict_size, steps over 1951, a bad level,
 * parameters given to SAMPLES), CMRX_E_TRAINING when zstd cannot make a
 * dictionary of the samples (too few or too small). */
int cmrx_zstd_train_with(const uint8_t *const *samples, const size_t *lens,
                         size_t count, size_t dict_size, cmrx_training *how,
                         uint8_t *out, size_t *out_len);
/* sizes[i] = the size of the frame cmrx_zstd_compress would make of
 * samples[i] at `level` with the standard dictionary dict[0..dict_len)
 * (dict_len 0: none), which is neither loaded nor kept: what a candidate
 * dictionary would store. CMRX_E_BAD_DICTIONARY for a dict that is not
 * one, CMRX_E_ARG for a bad level. */
int cmrx_zstd_frame_sizes(const uint8_t *dict, size_t dict_len, int level,
                          const uint8_t *const *samples, const size_t *lens,
                          size_t count, size_t *sizes);
/* 1 when reporting text[0..len) is due at `now` (seconds): the first
 * time, and again `interval` seconds after the last report of it (0: every
 * time); else 0. A warning is said at most once per interval, not once per
 * value (a reader's missing dictionary, a set that cannot be read). */
int cmrx_report_due(const uint8_t *text, size_t len, uint64_t now, uint64_t interval);

/* A static, NUL-terminated description of a CMRX_OK / CMRX_E_* status. */
const char *cmrx_status_str(int status);

/* Already-compressed data: CMRX_FMT_NONE (0) if in[0..in_len) starts with
 * no known magic, else the code of the format it starts with. */
int cmrx_sniff_compressed(const uint8_t *in, size_t in_len);
/* 1 if in[0..in_len) is large (128 KiB or more) and a 16 KiB sample of it
 * does not deflate by 3 %: not worth compressing. 0 otherwise. */
int cmrx_looks_incompressible(const uint8_t *in, size_t in_len);

/* Inspecting stored values (for cmrx-dict): the decoder a value stored
 * compressed needs, by its magic number: CMRX_DECODE_ZSTD, CMRX_DECODE_GZIP
 * or CMRX_DECODE_ZLIB (a zlib header: method 8, check bits that hold), or
 * CMRX_FMT_NONE for none of them. And the dictionary ID a zstd frame's
 * header names: CMRX_OK with *id set (0: none), CMRX_E_DATA when in does not
 * start with a whole zstd frame header. */
int cmrx_decoder_format(const uint8_t *in, size_t in_len);
int cmrx_zstd_frame_dictionary(const uint8_t *in, size_t in_len, uint32_t *id);

/* Counters: what this process wrote and read as cache values. Reads are
 * counted by cmrx_decode, with the misses it ends in (CMRX_EVENT_*) but
 * one: a dictionary that is not loaded is the caller's to count, once it
 * gives up (it may load the dictionary and decode again);
 * writes by the caller, once it keeps a compressed value for memcached:
 * cmrx_note_written(kind, dictionary ID for CMRX_TRAFFIC_ZSTD_DICTIONARY
 * else 0, bytes uncompressed, bytes compressed), CMRX_E_UNKNOWN_DICTIONARY
 * for a dictionary not loaded, CMRX_E_ARG for an unknown kind; and why it
 * left one uncompressed: cmrx_note_event(CMRX_EVENT_*), CMRX_E_ARG for an
 * unknown one. cmrx_traffic_counts fills up to `cap` rows (zstd without a
 * dictionary, gzip, zlib, then each loaded dictionary by ID) and returns
 * how many there are; cmrx_event_counts fills up to `cap` counts indexed
 * by CMRX_EVENT_* and returns CMRX_EVENTS. */
typedef struct cmrx_traffic {
    int32_t  kind;
    uint32_t dictionary;
    uint64_t written;
    uint64_t written_raw;
    uint64_t written_stored;
    uint64_t read;
    uint64_t read_raw;
    uint64_t read_stored;
} cmrx_traffic;

int cmrx_note_written(int kind, uint32_t dictionary, size_t raw, size_t stored);
int cmrx_note_event(int event);
size_t cmrx_traffic_counts(cmrx_traffic *rows, size_t cap);
size_t cmrx_event_counts(uint64_t *counts, size_t cap);

/* The engine's version (Cargo.toml's), NUL-terminated, static. */
const char *cmrx_version(void);

#ifdef __cplusplus
}
#endif

#endif /* CMRX_H */
