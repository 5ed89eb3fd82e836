/*
 * values.h - what becomes of a cache value between memcached and the Perl
 * clients: which client flags say what, which values are decoded on their
 * way in and which failures to decode them make a miss, which values are
 * worth compressing on their way out. It knows nothing of Perl.
 *
 * Why here, beside the XS, and not in the engine: these are the clients'
 * rules (Cache::Memcached's flags, what it and Cache::Memcached::Fast make
 * of a value they cannot read), as Cache::Memcached::Fast keeps its own in
 * its C client; the engine stays bytes in, bytes or events out, and this
 * module asks it (rust/cmrx.h) for the facts: a value's magic number, a
 * decoding's status. The XS applies the rules to scalars, and gives the
 * flags to the Perl modules (_constants): defined here alone.
 */
#ifndef CMRX_VALUES_H
#define CMRX_VALUES_H

#include <stddef.h>
#include <stdint.h>

/* The client flag bits Cache::Memcached and Cache::Memcached::Fast set. */
#define VALUE_F_STORABLE 1 /* frozen with Storable */
#define VALUE_F_COMPRESS 2 /* compressed (gzip by the clients; zstd by this distribution) */

/* The tests of a value's flags run once per value read: inline. */
#ifdef __GNUC__
#define VALUE_INLINE static __inline__
#else
#define VALUE_INLINE static
#endif

/* Whether a value with these flags is stored compressed: the reader
 * decodes it (CMRX_DECODE_CACHED). */
VALUE_INLINE int
value_is_compressed(uint32_t flags)
{
    return (flags & VALUE_F_COMPRESS) != 0;
}

/* The flags of a compressed value once it is decoded. */
VALUE_INLINE uint32_t
value_decoded_flags(uint32_t flags)
{
    return flags & ~(uint32_t)VALUE_F_COMPRESS;
}

/* Whether a value with these flags is plain (neither frozen nor
 * compressed): all that Cache::Memcached's finalize does to it is drop its
 * CRLF. */
VALUE_INLINE int
value_is_plain(uint32_t flags)
{
    return (flags & (VALUE_F_COMPRESS | VALUE_F_STORABLE)) == 0;
}

/* Whether a compressed value whose decoding failed with `status`
 * (CMRX_E_*) is a miss, rather than kept as it came for the client's own
 * decoder to judge: one that would inflate past the cap (left compressed,
 * the client would inflate it with no cap at all) and one whose zstd
 * dictionary is not loaded. Cache::Memcached::Fast makes a miss of any
 * value its decompressor refuses. */
int value_undecoded_is_miss(int status);

/* Whether in[0..len) is worth compressing: not when it is compressed
 * already (JPEG, PNG, gzip, zstd, ...), nor when it is large and a sample
 * of it does not shrink (encrypted, random, unknown media). Saying no at
 * once spares compressing it all for the client to throw away. A no is
 * counted (cmrx_note_event) with its reason. */
#define VALUE_WORTH_IT (-1) /* no CMRX_EVENT_*: compress it */
int value_worth_compressing(const uint8_t *in, size_t len);

/* Whether a value of `raw` bytes compressed to `stored` is kept
 * compressed: when stored is at most raw * ratio (a client stores it raw
 * otherwise: Cache::Memcached::Fast's compress_ratio). Counted either way:
 * written as `kind` (CMRX_TRAFFIC_*) with `dictionary`, or incompressible. */
int value_kept_compressed(int kind, uint32_t dictionary, size_t raw, size_t stored, double ratio);
/* The ratio compress_methods keeps a value compressed at, unless told
 * Cache::Memcached::Fast's own compress_ratio (fast_options does): any
 * saving. */
#define VALUE_COMPRESS_RATIO_DEFAULT 1.0

#endif /* CMRX_VALUES_H */
