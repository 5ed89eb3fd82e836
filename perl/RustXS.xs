/*
 * RustXS.xs - the thin XS shim between Perl and the Rust engine (rust/cmrx.h).
 *
 * The engine parses and (de)compresses bytes; this file only moves bytes
 * between Perl scalars, hashes, file descriptors and the engine, and turns
 * results into Perl conventions. Two packages live here:
 *
 *   Cache::Memcached::RustXS::GetParser  a parser_class for Cache::Memcached
 *   Cache::Memcached::RustXS::Zlib       Compress::Zlib-compatible gzip/zlib
 */

#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"
#define NEED_mg_findext
#include "ppport.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "cmrx.h"

/* Not in ppport.h: SSize_t_MAX appeared in perl 5.21. */
#ifndef SSize_t_MAX
#define SSize_t_MAX ((SSize_t)(~(Size_t)0 >> 1))
#endif

#define F_COMPRESS 2

/* Bytes read per read(2) into the line buffer; values at least this large
 * (still to come) are read straight into their own scalar instead. */
#define READ_CHUNK (64 * 1024)
/* A value's scalar starts at most this large (memcached's default item size
 * limit, 1 MiB, and its CRLF) and doubles as data arrives: a declared length
 * is a claim, not a fact, trusted only this far. Below the limit a value's
 * reads are not cut short by a scalar still growing. */
#define VALUE_FIRST_ALLOC (1024 * 1024 + 2)

/* ------------------------------------------------------------------------ */
/* Shared helpers                                                           */

/* The bytes of sv for function `what`: undef is "", a UTF-8 string is
 * downgraded in place (as Compress::Zlib does), wide characters croak.
 * Get-magic (tied scalars, substr() lvalues) runs once, first: a magical
 * scalar's fetched value is copied and the copy downgraded, because
 * sv_utf8_downgrade runs get-magic again (sv_utf8_downgrade_flags, which
 * need not, is perl 5.32+). The pointer is valid until perl code next runs:
 * read every other argument before. */
static const char *
bytes_of(pTHX_ SV *sv, const char *what, STRLEN *len)
{
    SvGETMAGIC(sv);
    if (!SvOK(sv)) {
        *len = 0;
        return "";
    }
    if (SvGMAGICAL(sv)) {
        SV *fetched = sv_newmortal();
        sv_setsv_flags(fetched, sv, 0);
        sv = fetched;
    }
    if (SvUTF8(sv) && !sv_utf8_downgrade(sv, TRUE))
        croak("Wide character in %s", what);
    return SvPV_nomg(sv, *len);
}

/* Grows sv's own (never shared) string buffer to exactly `want` bytes plus
 * a NUL. Exactly, not with sv_grow's extra quarter: a buffer with little
 * slack lets perl share the string copy-on-write when it is copied, as
 * Cache::Memcached's get does with every value. */
static char *
grow_to(pTHX_ SV *sv, size_t want)
{
    if (want + 1 < want)
        croak("Cache::Memcached::RustXS: size overflow");
    if (SvLEN(sv) < want + 1)
        SvPV_renew(sv, want + 1);
    return SvPVX(sv);
}

/* Makes out the string of the `got` bytes the engine wrote, keeping room for
 * `reserve` more. A buffer sized for the worst case (a compression bound, a
 * decompression guess of at least 64 KiB) gives its slack back rather than
 * keep it for as long as the value lives. */
static SV *
finish_output(pTHX_ SV *out, size_t got, size_t reserve)
{
    SvPOK_only(out);
    SvCUR_set(out, got);
    *SvEND(out) = '\0';
    if (SvLEN(out) - got > 4096 && SvLEN(out) / 2 > got + reserve)
        SvPV_renew(out, got + reserve + 1);
    return out;
}

typedef int (*decode_fn)(const uint8_t *, size_t, uint8_t *, size_t, size_t, size_t *);

/* Decompresses in[0..len) into a new scalar with `reserve` spare bytes after
 * the output, growing its buffer as the engine asks (never past max_out).
 * Returns NULL with *status set on failure. */
static SV *
decode_to_sv(pTHX_ decode_fn decode, size_t hint, const char *in, STRLEN len,
             size_t max_out, size_t reserve, int *status)
{
    size_t cap = hint, got = 0;
    SV *out = newSV(cap + reserve + 1); /* a PV with a buffer, never SVt_NULL */
    for (;;) {
        char *buf = grow_to(aTHX_ out, cap + reserve);
        *status = decode((const uint8_t *)in, len, (uint8_t *)buf, cap, max_out, &got);
        if (*status != CMRX_E_NEED_SPACE || got <= cap)
            break;
        cap = got;
    }
    if (*status != CMRX_OK) {
        SvREFCNT_dec(out);
        return NULL;
    }
    return finish_output(aTHX_ out, got, reserve);
}

static SV *
gunzip_to_sv(pTHX_ const char *in, STRLEN len, size_t max_out, size_t reserve, int *status)
{
    size_t hint = cmrx_gunzip_size_hint((const uint8_t *)in, len, max_out);
    return decode_to_sv(aTHX_ cmrx_gunzip, hint, in, len, max_out, reserve, status);
}

/* The package variables the Zlib functions read or set at every call. Their
 * globs are looked up once per interpreter (a name lookup costs more than a
 * small gunzip's bookkeeping); the scalar is taken from the glob at each use,
 * so `local` and aliasing keep working. */
#define MY_CXT_KEY "Cache::Memcached::RustXS::_guts"
typedef struct {
    GV *gzerrno;     /* $Compress::Zlib::gzerrno */
    GV *level;       /* $Cache::Memcached::RustXS::Zlib::Level */
    GV *max_output;  /* $Cache::Memcached::RustXS::Zlib::MaxOutput */
    /* A GetParser read buffer kept from a freed parser for the next one:
     * Cache::Memcached makes a parser per server per get_multi, and malloc
     * plus free of 64 KiB each time costs more than parsing small values. */
    char *spare_buf;
} my_cxt_t;
START_MY_CXT

static void
free_spare_buf(pTHX_ void *unused)
{
    dMY_CXT;
    PERL_UNUSED_ARG(unused);
    Safefree(MY_CXT.spare_buf);
    MY_CXT.spare_buf = NULL;
}

static void
init_my_cxt(pTHX_ my_cxt_t *cxt)
{
    cxt->spare_buf = NULL; /* never shared with the interpreter cloned from */
    call_atexit(free_spare_buf, NULL);
    cxt->gzerrno = gv_fetchpvs("Compress::Zlib::gzerrno", GV_ADD | GV_ADDMULTI, SVt_PV);
    cxt->level = gv_fetchpvs("Cache::Memcached::RustXS::Zlib::Level", GV_ADD | GV_ADDMULTI, SVt_PV);
    cxt->max_output = gv_fetchpvs("Cache::Memcached::RustXS::Zlib::MaxOutput", GV_ADD | GV_ADDMULTI, SVt_PV);
}

/* ------------------------------------------------------------------------ */
/* Cache::Memcached::RustXS::GetParser                                      */

typedef struct {
    cmrx_parser *engine;
    HV     *dest;        /* where finished values go (counted reference) */
    SV     *on_item;     /* Cache::Memcached's finalize (counted reference) */
    STRLEN  nslen;       /* namespace bytes to strip from keys */
    size_t  max_out;     /* cap for gunzipping a value */
    char   *buf;         /* unconsumed response bytes: lines, small values */
    size_t  buf_len, buf_cap;
    SV     *key;         /* key of the value in progress, namespace stripped */
    SV     *val;         /* the value in progress, NULL between values */
    int     in_value;    /* a value was begun and not finished (even if the
                            parse then failed and val was dropped) */
    U32     flags;
    HV     *batch;       /* key => flags completed since on_item last ran */
    SV     *flags_sv;    /* the flags value last put in batch */
    int     result;      /* 0 running, 1 END seen, -1 failed */
    int     fd;          /* the descriptor last read, and whether it is */
    int     nonblocking; /* non-blocking (-1: not looked at yet) */
} getparser;

static int getparser_mg_free(pTHX_ SV *sv, MAGIC *mg);
static int getparser_mg_dup(pTHX_ MAGIC *mg, CLONE_PARAMS *param);

/* The magic that ties a parser's C state to its Perl object. A new ithread
 * gets a copy of the object whose state pointer is NULL: the state (its
 * hashes, its socket) belongs to the thread that created it. */
static MGVTBL getparser_vtbl = {
    NULL, NULL, NULL, NULL, getparser_mg_free, NULL, getparser_mg_dup, NULL
};

static void
getparser_drop_value(pTHX_ getparser *p)
{
    if (p->val) {
        SvREFCNT_dec(p->val);
        p->val = NULL;
    }
}

static int
getparser_mg_free(pTHX_ SV *sv, MAGIC *mg)
{
    getparser *p = (getparser *)mg->mg_ptr;
    PERL_UNUSED_ARG(sv);
    if (!p)
        return 0;
    cmrx_parser_free(p->engine);
    getparser_drop_value(aTHX_ p);
    SvREFCNT_dec((SV *)p->dest);
    SvREFCNT_dec(p->on_item);
    SvREFCNT_dec(p->key);
    SvREFCNT_dec((SV *)p->batch);
    SvREFCNT_dec(p->flags_sv);
    {
        dMY_CXT;
        if (p->buf_cap == READ_CHUNK && !MY_CXT.spare_buf && !PL_dirty)
            MY_CXT.spare_buf = p->buf; /* for the next parser */
        else
            Safefree(p->buf);
    }
    Safefree(p);
    mg->mg_ptr = NULL;
    return 0;
}

static int
getparser_mg_dup(pTHX_ MAGIC *mg, CLONE_PARAMS *param)
{
    PERL_UNUSED_ARG(param);
    mg->mg_ptr = NULL;
    return 0;
}

static getparser *
getparser_of(pTHX_ SV *self)
{
    MAGIC *mg;
    if (SvROK(self) && (mg = mg_findext(SvRV(self), PERL_MAGIC_ext, &getparser_vtbl))) {
        if (!mg->mg_ptr)
            croak("Cache::Memcached::RustXS::GetParser: object belongs to another thread");
        return (getparser *)mg->mg_ptr;
    }
    croak("Cache::Memcached::RustXS::GetParser: not a parser object");
    return NULL; /* not reached */
}

/* Hands the values completed since the last call to on_item, in the batched
 * form Cache::Memcached's finalize accepts: on_item->({ key => flags, ... }).
 * Runs at the end of every parse call, so that whatever happens next (END,
 * failure, select timeout) no finished value is left raw in dest. */
static void
getparser_flush(pTHX_ getparser *p)
{
    HV *batch = p->batch;
    if (!batch || HvUSEDKEYS(batch) == 0)
        return;
    if (!p->on_item) {
        hv_clear(batch);
        return;
    }
    /* Detached while on_item runs: if on_item parses more with this parser,
     * that goes into a new batch; if it dies, these keys are not handed
     * over a second time. */
    p->batch = NULL;
    {
        dSP;
        ENTER;
        SAVETMPS;
        PUSHMARK(SP);
        XPUSHs(sv_2mortal(newRV_inc((SV *)batch)));
        PUTBACK;
        call_sv(p->on_item, G_DISCARD | G_VOID);
        FREETMPS;
        LEAVE;
    }
    /* Reuse the hash (and its bucket array) unless on_item kept it. */
    if (!p->batch && SvREFCNT((SV *)batch) == 1) {
        hv_clear(batch);
        p->batch = batch;
    }
    else {
        SvREFCNT_dec((SV *)batch);
    }
}

/* A value's data and CRLF are complete: gunzip it when flagged, store it
 * under its key and note it for on_item. */
static void
getparser_finish_value(pTHX_ getparser *p)
{
    SV *val = p->val;
    U32 flags = p->flags;
    STRLEN klen;
    const char *key;
    U32 hash;

    p->val = NULL;
    if (flags & F_COMPRESS) {
        int status;
        SV *plain = gunzip_to_sv(aTHX_ SvPVX(val), SvCUR(val) - 2, p->max_out, 2, &status);
        /* A value that would inflate past the cap is dropped: a miss, as
         * Cache::Memcached::Fast makes of a value its decompressor refuses.
         * Left compressed, finalize would inflate it with no cap at all. */
        if (!plain && status == CMRX_E_TOO_BIG) {
            SvREFCNT_dec(val);
            return;
        }
        /* A value that does not gunzip stays as it came, flag and all, so
         * that Cache::Memcached's own memGunzip decides, as without us. */
        if (plain) {
            char *end = SvPVX(plain) + SvCUR(plain);
            end[0] = '\r';
            end[1] = '\n';
            end[2] = '\0';
            SvCUR_set(plain, SvCUR(plain) + 2);
            SvREFCNT_dec(val);
            val = plain;
            flags &= ~(U32)F_COMPRESS;
        }
    }
    if (PL_tainting)
        SvTAINTED_on(val); /* as sysread's data would be */
    key = SvPV(p->key, klen);
    PERL_HASH(hash, key, klen); /* once for both hashes */
    if (!hv_store(p->dest, key, (I32)klen, val, hash)) {
        /* A tied hash: hv_store only gave val the element's magic; setting
         * it calls STORE, which copies the value (perlguts). */
        SvSETMAGIC(val);
        SvREFCNT_dec(val);
    }
    if (!p->batch)
        p->batch = newHV();
    /* Flags repeat (mostly 0): share one read-only scalar per value. */
    if (!p->flags_sv || SvUVX(p->flags_sv) != flags) {
        SvREFCNT_dec(p->flags_sv);
        p->flags_sv = newSVuv(flags);
        SvREADONLY_on(p->flags_sv);
    }
    (void)hv_store(p->batch, key, (I32)klen, SvREFCNT_inc_simple_NN(p->flags_sv), hash);
}

/* Appends data bytes to the value in progress, doubling its buffer up to
 * the declared length (plus CRLF) as data arrives. */
static void
getparser_append(pTHX_ getparser *p, const char *data, size_t n)
{
    size_t cur = SvCUR(p->val), need = cur + n + 2;
    if (SvLEN(p->val) < need + 1) {
        size_t want = SvLEN(p->val) * 2;
        size_t full = cur + n + 2 + (size_t)cmrx_parser_data_remaining(p->engine);
        if (want < need)
            want = need;
        if (want > full)
            want = full;
        grow_to(aTHX_ p->val, want);
    }
    Copy(data, SvPVX(p->val) + cur, n, char);
    SvCUR_set(p->val, cur + n);
}

/* Runs the engine over the buffered bytes until it needs more input, the
 * response ends, or it proves bad. Returns 0, 1 or -1 as parse_from_sock. */
static int
getparser_drain(pTHX_ getparser *p)
{
    cmrx_event ev;
    size_t at = 0;
    int kind, result = 0;

    while (result == 0) {
        kind = cmrx_parser_next(p->engine, (const uint8_t *)p->buf + at, p->buf_len - at, &ev);
        at += ev.consumed;
        switch (kind) {
        case CMRX_EV_VALUE: {
            size_t klen = ev.key_len > p->nslen ? ev.key_len - p->nslen : 0;
            size_t first = ev.len + 2 < VALUE_FIRST_ALLOC ? (size_t)ev.len + 2 : VALUE_FIRST_ALLOC;
            sv_setpvn(p->key, (const char *)ev.key + (ev.key_len - klen), klen);
            p->flags = ev.flags;
            p->in_value = 1;
            p->val = newSV(first + 1);
            SvPOK_only(p->val);
            break;
        }
        case CMRX_EV_DATA:
            getparser_append(aTHX_ p, (const char *)ev.data, ev.data_len);
            break;
        case CMRX_EV_VALUE_END: {
            char *end = SvPVX(p->val) + SvCUR(p->val);
            end[0] = '\r';
            end[1] = '\n';
            end[2] = '\0';
            SvCUR_set(p->val, SvCUR(p->val) + 2);
            p->in_value = 0;
            getparser_finish_value(aTHX_ p);
            break;
        }
        case CMRX_EV_END:
            /* Bytes after END prove the response bad: let the engine say so. */
            result = at < p->buf_len ? -1 : 1;
            break;
        case CMRX_EV_PARTIAL:
            goto out;
        default:
            result = -1;
            break;
        }
    }
out:
    /* Keep what the engine has not consumed: at most an unfinished line
     * (bounded by the engine) or a value's CRLF. */
    if (at > 0) {
        p->buf_len -= at;
        if (p->buf_len)
            Move(p->buf + at, p->buf, p->buf_len, char);
    }
    return result;
}

/* Ends the parse with `result`: nothing partial stays behind, and every
 * finished value reaches on_item. */
static int
getparser_conclude(pTHX_ getparser *p, int result)
{
    if (result != 0) {
        p->result = result;
        getparser_drop_value(aTHX_ p);
        p->buf_len = 0;
    }
    getparser_flush(aTHX_ p);
    return result;
}

static int
getparser_feed(pTHX_ getparser *p, const char *bytes, size_t len)
{
    int result = 0;
    while (len > 0 && result == 0) {
        size_t room, n;
        if (p->buf_cap - p->buf_len == 0) {
            p->buf_cap = p->buf_cap ? p->buf_cap * 2 : READ_CHUNK;
            Renew(p->buf, p->buf_cap, char);
        }
        room = p->buf_cap - p->buf_len;
        n = len < room ? len : room;
        Copy(bytes, p->buf + p->buf_len, n, char);
        p->buf_len += n;
        bytes += n;
        len -= n;
        result = getparser_drain(aTHX_ p);
    }
    return result;
}

/* Reads what the socket has and parses it. A non-blocking socket is read
 * until a read into the line buffer comes back short (the socket had no
 * more at that moment) or, while a large value streams straight into its
 * scalar, until EAGAIN (half the trips through Cache::Memcached's select
 * loop for a 1 MB value); a blocking one once per call, so the select loop
 * keeps its timeout. */
static int
getparser_read_fd(pTHX_ getparser *p, int fd)
{
    int result = 0;

    if (p->nonblocking < 0 || p->fd != fd) {
        p->fd = fd;
        p->nonblocking = (fcntl(fd, F_GETFL) & O_NONBLOCK) != 0;
    }
    for (;;) {
        ssize_t got;
        size_t asked;
        uint64_t remaining = cmrx_parser_data_remaining(p->engine);

        if (p->val && p->buf_len == 0 && remaining >= READ_CHUNK / 2) {
            /* A large value: read straight into its own scalar. */
            size_t cur = SvCUR(p->val), want = remaining > SSize_t_MAX ? SSize_t_MAX : (size_t)remaining;
            if (SvLEN(p->val) < cur + 2 + 1 + READ_CHUNK / 2) {
                size_t grow = SvLEN(p->val) * 2;
                if (grow > cur + want + 2)
                    grow = cur + want + 2;
                grow_to(aTHX_ p->val, grow);
            }
            if (want > SvLEN(p->val) - cur - 3)
                want = SvLEN(p->val) - cur - 3;
            asked = want;
            got = read(fd, SvPVX(p->val) + cur, asked);
            if (got > 0) {
                cmrx_event ev;
                int kind = cmrx_parser_next(p->engine, (const uint8_t *)SvPVX(p->val) + cur, (size_t)got, &ev);
                if (kind != CMRX_EV_DATA || ev.consumed != (size_t)got)
                    return -1; /* cannot happen: the engine asked for these bytes */
                SvCUR_set(p->val, cur + (size_t)got);
                /* A large value streams in: read on until the socket is
                 * empty (EAGAIN) rather than go back to the select loop. */
                if (!p->nonblocking)
                    return 0;
                continue;
            }
        }
        else {
            if (!p->buf) {
                dMY_CXT;
                p->buf = MY_CXT.spare_buf;
                MY_CXT.spare_buf = NULL;
                p->buf_cap = READ_CHUNK;
                if (!p->buf)
                    Newx(p->buf, READ_CHUNK, char);
            }
            else if (p->buf_cap - p->buf_len < READ_CHUNK / 4) {
                p->buf_cap = p->buf_len + READ_CHUNK;
                Renew(p->buf, p->buf_cap, char);
            }
            asked = p->buf_cap - p->buf_len;
            got = read(fd, p->buf + p->buf_len, asked);
            if (got > 0) {
                p->buf_len += (size_t)got;
                result = getparser_drain(aTHX_ p);
                if (result != 0 || !p->nonblocking || (size_t)got < asked)
                    return result;
                continue;
            }
        }
        if (got < 0 && errno == EINTR) {
            PERL_ASYNC_CHECK();
            continue;
        }
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        return -1; /* closed (0) or a real error */
    }
}

/* ------------------------------------------------------------------------ */
/* Cache::Memcached::RustXS::Zlib                                           */

static void
set_gzerrno(pTHX_ int status)
{
    dMY_CXT;
    SV *sv = GvSVn(MY_CXT.gzerrno);
    if (status == 0) {
        sv_setiv_mg(sv, 0);
    }
    else {
        /* A dualvar, as Compress::Zlib's _set_gzerr makes: -3 / "data error".
         * Upgraded first: a plain string SV has no IV slot to write into. */
        (void)SvUPGRADE(sv, SVt_PVIV);
        sv_setpv(sv, "data error");
        SvIV_set(sv, -3);
        SvIOK_on(sv);
        SvSETMAGIC(sv);
    }
}

/* The data argument: a scalar, or a reference to one. */
static SV *
input_of(pTHX_ SV *arg)
{
    if (SvROK(arg)) {
        SV *in = SvRV(arg);
        if (SvTYPE(in) >= SVt_PVAV || SvROK(in) || isGV_with_GP(in))
            croak("not a scalar reference");
        return in;
    }
    return arg;
}

static IV
config_iv(pTHX_ GV *gv, IV fallback)
{
    SV *sv = GvSV(gv);
    return sv && SvOK(sv) ? SvIV(sv) : fallback;
}

#define GZIP_LEVEL() config_iv(aTHX_ MY_CXT.level, 6)
#define MAX_OUTPUT() max_output(aTHX_ MY_CXT.max_output)

static size_t
max_output(pTHX_ GV *gv)
{
    IV max = config_iv(aTHX_ gv, 64 << 20);
    if (max < 0)
        croak("$Cache::Memcached::RustXS::Zlib::MaxOutput must be a size in bytes, not %" IVdf, max);
    return (size_t)max;
}

typedef int (*encode_fn)(const uint8_t *, size_t, int, uint8_t *, size_t, size_t *);

/* Compresses into a new scalar; NULL if the engine refuses (bad level). */
static SV *
encode_to_sv(pTHX_ encode_fn encode, size_t bound, const char *in, STRLEN len, int level)
{
    SV *out = newSV(bound + 1);
    size_t got = 0;
    if (encode((const uint8_t *)in, len, level, (uint8_t *)SvPVX(out), bound, &got) != CMRX_OK) {
        SvREFCNT_dec(out);
        return NULL;
    }
    return finish_output(aTHX_ out, got, 0);
}

/* compress_methods: XSUBs Cache::Memcached::Fast calls as f(\$in, \$out).
 * The level (compress) or output cap (decompress) rides in CvXSUBANY. */
XS(xs_fast_compress);
XS(xs_fast_compress)
{
    dXSARGS;
    SV *in_sv, *out_sv, *result;
    const char *in;
    STRLEN len;
    if (items != 2 || !SvROK(ST(0)) || !SvROK(ST(1)))
        croak("Usage: $compress->(\\$in, \\$out)");
    in_sv = SvRV(ST(0));
    out_sv = SvRV(ST(1));
    in = bytes_of(aTHX_ in_sv, "compress", &len);
    /* Already compressed (JPEG, PNG, gzip, zstd, ...): say no at once, and
     * Cache::Memcached::Fast stores the value raw. */
    if (cmrx_sniff_compressed((const uint8_t *)in, len) != CMRX_FMT_NONE)
        XSRETURN_NO;
    /* Large and a sample does not shrink (encrypted, random, unknown media):
     * no at once too, rather than compress it all for Fast to throw away. */
    if (cmrx_looks_incompressible((const uint8_t *)in, len))
        XSRETURN_NO;
    result = encode_to_sv(aTHX_ cmrx_gzip, cmrx_gzip_bound(len), in, len, (int)XSANY.any_iv);
    if (!result)
        XSRETURN_NO;
    sv_setsv_flags(out_sv, result, SV_GMAGIC | SV_DO_COW_SVSETSV);
    SvSETMAGIC(out_sv);
    SvREFCNT_dec(result);
    XSRETURN_YES;
}

XS(xs_fast_decompress);
XS(xs_fast_decompress)
{
    dXSARGS;
    SV *out_sv, *result;
    const char *in;
    STRLEN len;
    int status;
    if (items != 2 || !SvROK(ST(0)) || !SvROK(ST(1)))
        croak("Usage: $decompress->(\\$in, \\$out)");
    in = bytes_of(aTHX_ SvRV(ST(0)), "decompress", &len);
    out_sv = SvRV(ST(1));
    result = gunzip_to_sv(aTHX_ in, len, (size_t)(UV)XSANY.any_iv, 0, &status);
    if (!result)
        XSRETURN_NO;
    sv_setsv_flags(out_sv, result, SV_GMAGIC | SV_DO_COW_SVSETSV);
    SvSETMAGIC(out_sv);
    SvREFCNT_dec(result);
    XSRETURN_YES;
}

MODULE = Cache::Memcached::RustXS  PACKAGE = Cache::Memcached::RustXS

PROTOTYPES: DISABLE

BOOT:
{
    MY_CXT_INIT;
    init_my_cxt(aTHX_ &MY_CXT);
}

void
CLONE(...)
  CODE:
    {
        MY_CXT_CLONE;
        init_my_cxt(aTHX_ &MY_CXT);
    }

const char *
engine_version()
  CODE:
    RETVAL = cmrx_version();
  OUTPUT:
    RETVAL

MODULE = Cache::Memcached::RustXS  PACKAGE = Cache::Memcached::RustXS::GetParser

SV *
new(class, dest, namespace_len, on_item = &PL_sv_undef)
    SV *class
    SV *dest
    IV namespace_len
    SV *on_item
  PREINIT:
    dMY_CXT;
    getparser *p;
    HV *obj;
    SV *self;
    const char *classname;
  CODE:
    if (!SvROK(dest) || SvTYPE(SvRV(dest)) != SVt_PVHV)
        croak("Cache::Memcached::RustXS::GetParser->new: destination must be a hash reference");
    if (SvOK(on_item) && !(SvROK(on_item) && SvTYPE(SvRV(on_item)) == SVt_PVCV))
        croak("Cache::Memcached::RustXS::GetParser->new: on_item must be a code reference");
    classname = SvROK(class) ? sv_reftype(SvRV(class), TRUE) : SvPV_nolen(class);
    Newxz(p, 1, getparser);
    p->engine = cmrx_parser_new(0);
    if (!p->engine) {
        Safefree(p);
        croak("Cache::Memcached::RustXS::GetParser->new: out of memory");
    }
    p->dest = (HV *)SvREFCNT_inc_simple_NN(SvRV(dest));
    p->on_item = SvOK(on_item) ? newSVsv(on_item) : NULL;
    p->batch = newHV();
    p->fd = -1;
    p->nonblocking = -1;
    p->nslen = namespace_len > 0 ? (STRLEN)namespace_len : 0;
    p->max_out = MAX_OUTPUT();
    p->key = newSVpvs("");
    obj = newHV();
    self = newRV_noinc((SV *)obj);
    sv_magicext((SV *)obj, NULL, PERL_MAGIC_ext, &getparser_vtbl, (const char *)p, 0)->mg_flags |= MGf_DUP;
    sv_bless(self, gv_stashpv(classname, GV_ADD));
    RETVAL = self;
  OUTPUT:
    RETVAL

int
parse_from_sock(self, sock)
    SV *self
    SV *sock
  PREINIT:
    getparser *p;
    IO *io;
    int fd;
  CODE:
    p = getparser_of(aTHX_ self);
    /* on_item may drop the last reference to the parser: keep it alive
     * until this call is over. */
    sv_2mortal(SvREFCNT_inc_simple_NN(SvRV(self)));
    if (p->result != 0) {
        RETVAL = p->result;
    }
    else {
        io = sv_2io(sock);
        fd = IoIFP(io) ? PerlIO_fileno(IoIFP(io)) : -1;
        RETVAL = getparser_conclude(aTHX_ p, fd < 0 ? -1 : getparser_read_fd(aTHX_ p, fd));
    }
  OUTPUT:
    RETVAL

int
parse_from_string(self, bytes)
    SV *self
    SV *bytes
  PREINIT:
    getparser *p;
    const char *in;
    STRLEN len;
  CODE:
    p = getparser_of(aTHX_ self);
    /* on_item may drop the last reference to the parser: keep it alive
     * until this call is over. */
    sv_2mortal(SvREFCNT_inc_simple_NN(SvRV(self)));
    if (p->result != 0) {
        RETVAL = p->result;
    }
    else {
        in = SvPVbyte(bytes, len);
        RETVAL = getparser_conclude(aTHX_ p, getparser_feed(aTHX_ p, in, len));
    }
  OUTPUT:
    RETVAL

SV *
current_key(self)
    SV *self
  PREINIT:
    getparser *p;
  CODE:
    p = getparser_of(aTHX_ self);
    RETVAL = p->in_value ? newSVsv(p->key) : &PL_sv_undef;
  OUTPUT:
    RETVAL

MODULE = Cache::Memcached::RustXS  PACKAGE = Cache::Memcached::RustXS::Zlib

SV *
memGzip(data)
    SV *data
  PROTOTYPE: $
  PREINIT:
    dMY_CXT;
    const char *in;
    STRLEN len;
    IV level;
  CODE:
    set_gzerrno(aTHX_ 0);
    level = GZIP_LEVEL(); /* before bytes_of: it may run perl code */
    in = bytes_of(aTHX_ input_of(aTHX_ data), "memGzip", &len);
    RETVAL = encode_to_sv(aTHX_ cmrx_gzip, cmrx_gzip_bound(len), in, len, (int)level);
    if (!RETVAL)
        XSRETURN_UNDEF;
  OUTPUT:
    RETVAL

SV *
memGunzip(data)
    SV *data
  PROTOTYPE: $
  PREINIT:
    dMY_CXT;
    const char *in;
    STRLEN len;
    int status;
    size_t max_out;
  CODE:
    max_out = MAX_OUTPUT(); /* before bytes_of: it may run perl code */
    in = bytes_of(aTHX_ input_of(aTHX_ data), "memGunzip", &len);
    RETVAL = gunzip_to_sv(aTHX_ in, len, max_out, 0, &status);
    set_gzerrno(aTHX_ RETVAL ? 0 : -3);
    if (!RETVAL)
        XSRETURN_UNDEF;
  OUTPUT:
    RETVAL

SV *
compress(data, ...)
    SV *data
  PROTOTYPE: $;$
  PREINIT:
    const char *in;
    STRLEN len;
    IV lvl;
  CODE:
    /* As Compress::Zlib: no level means Z_DEFAULT_COMPRESSION; an explicit
     * undef is level 0 (it warns there too, through SvIV). Read before
     * bytes_of, whose pointer perl code could invalidate. */
    lvl = items > 1 ? SvIV(ST(1)) : -1;
    in = bytes_of(aTHX_ input_of(aTHX_ data), "compress", &len);
    if (lvl == -1)
        lvl = 6; /* Z_DEFAULT_COMPRESSION */
    if (lvl < 0 || lvl > 9)
        XSRETURN_UNDEF; /* zlib refuses other levels; so does Compress::Zlib */
    RETVAL = encode_to_sv(aTHX_ cmrx_zlib, cmrx_zlib_bound(len), in, len, (int)lvl);
    if (!RETVAL)
        XSRETURN_UNDEF;
  OUTPUT:
    RETVAL

SV *
uncompress(data)
    SV *data
  PROTOTYPE: $
  PREINIT:
    dMY_CXT;
    const char *in;
    STRLEN len;
    int status;
    size_t max_out;
  CODE:
    max_out = MAX_OUTPUT(); /* before bytes_of: it may run perl code */
    in = bytes_of(aTHX_ input_of(aTHX_ data), "uncompress", &len);
    RETVAL = decode_to_sv(aTHX_ cmrx_uncompress,
                          cmrx_uncompress_size_hint((const uint8_t *)in, len, max_out),
                          in, len, max_out, 0, &status);
    if (!RETVAL)
        XSRETURN_UNDEF;
  OUTPUT:
    RETVAL

SV *
_compress_methods(level, max_output)
    IV level
    UV max_output
  PREINIT:
    CV *c, *d;
    AV *pair;
  CODE:
    if (level < 0 || level > 12)
        croak("compress_methods: level must be 0..12");
    c = newXS(NULL, xs_fast_compress, __FILE__);
    CvXSUBANY(c).any_iv = level;
    d = newXS(NULL, xs_fast_decompress, __FILE__);
    CvXSUBANY(d).any_iv = (IV)max_output; /* ANY has no any_uv before 5.18 */
    pair = newAV();
    av_push(pair, newRV_noinc((SV *)c));
    av_push(pair, newRV_noinc((SV *)d));
    RETVAL = newRV_noinc((SV *)pair);
  OUTPUT:
    RETVAL

int
sniff_compressed(data)
    SV *data
  PREINIT:
    const char *in;
    STRLEN len;
  CODE:
    in = SvPVbyte(data, len);
    RETVAL = cmrx_sniff_compressed((const uint8_t *)in, len);
  OUTPUT:
    RETVAL

const char *
format_name(code)
    int code
  CODE:
    RETVAL = cmrx_format_name(code);
  OUTPUT:
    RETVAL
