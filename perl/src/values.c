/*
 * values.c - what becomes of a cache value between memcached and the Perl
 * clients (see values.h).
 */
#include "cmrx.h"
#include "values.h"

int
value_undecoded_is_miss(int status)
{
    return status == CMRX_E_TOO_BIG || status == CMRX_E_UNKNOWN_DICTIONARY;
}

int
value_worth_compressing(const uint8_t *in, size_t len)
{
    int why = cmrx_sniff_compressed(in, len) != CMRX_FMT_NONE ? CMRX_EVENT_ALREADY_COMPRESSED
            : cmrx_looks_incompressible(in, len)               ? CMRX_EVENT_INCOMPRESSIBLE
                                                               : VALUE_WORTH_IT;
    if (why == VALUE_WORTH_IT)
        return 1;
    cmrx_note_event(why);
    return 0;
}

int
value_kept_compressed(int kind, uint32_t dictionary, size_t raw, size_t stored, double ratio)
{
    /* The comparison Cache::Memcached::Fast makes (len * compress_ratio),
     * in the same arithmetic, so that the two agree on every value. */
    if ((double)stored > (double)raw * ratio) {
        cmrx_note_event(CMRX_EVENT_INCOMPRESSIBLE);
        return 0;
    }
    cmrx_note_written(kind, dictionary, raw, stored);
    return 1;
}
