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
    return cmrx_sniff_compressed(in, len) == CMRX_FMT_NONE && !cmrx_looks_incompressible(in, len);
}
