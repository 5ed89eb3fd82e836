/*
 * RustXS.xs - the thin XS shim between Perl and the Rust engine (rust/cmrx.h).
 *
 * The engine parses and (de)compresses bytes. Beside this file, in C that
 * knows nothing of Perl (perl/src/, as Cache::Memcached::Fast keeps its
 * client in src/): reader.c reads get responses from a socket or from bytes
 * into storage this file gives it, items.c the items of a whole response
 * as stored, values.c says what becomes of a value (its flags, which
 * failures make a miss, what is worth compressing). This
 * file converts: Perl scalars and hashes to bytes for them and back, their
 * callbacks to scalars, their results to Perl conventions, and the numbers
 * the Perl modules share with them (_level_ranges, _constants). The XSUBs
 * of these packages live here (t/06-module-lists.t checks this list against
 * the MODULE lines below):
 *
 *   Cache::Memcached::RustXS             the engine's version, compress_methods
 *   Cache::Memcached::RustXS::GetParser  a parser_class for Cache::Memcached
 *   Cache::Memcached::RustXS::Zlib       Compress::Zlib-compatible gzip/zlib
 *   Cache::Memcached::RustXS::Zstd       zstd with dictionaries
 *
 * Perl code can run in the middle of an XSUB here: get-magic (tied
 * arguments), a tied hash's STORE, the DESTROY of a value a store replaces,
 * a signal handler, on_item. Such code may die or call us again. The rules
 * that keep that safe: read every argument (running its magic) before taking
 * pointers into other scalars; own every new scalar through the savestack
 * (a mortal) before perl code can run; and a parser that is running perl
 * code from the middle of a parse refuses to be re-entered (only on_item,
 * called once the parser's state is whole again, may parse more).
 *
 * Perl subs of this distribution: the XS calls one, and only by its name,
 * Cache::Memcached::RustXS::Zstd::_rescan_for($id) (rescan_for_dictionary
 * below), when a zstd frame names a dictionary that is not loaded. What
 * else the modules decide (which closure is Cache::Memcached's finalize,
 * their defaults) they pass in as arguments; how often a warning is said is
 * the engine's (cmrx_report_due).
 */

#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"
#define NEED_mg_findext
#include "ppport.h"

#include <string.h>
#include <time.h>

#include "cmrx.h"
#include "items.h"
#include "reader.h"
#include "values.h"

#define NUL_LEN 1 /* perl keeps a NUL after a string's bytes */
enum pair_item { PAIR_NAME, PAIR_VALUE, PAIR_LEN }; /* a name and its value */
#define COUNT_OF(array) (sizeof(array) / sizeof((array)[0]))
#define AT_LEAST_ONE(count) ((count) ? (count) : 1) /* Newx of none is not portable */

/* An output scalar keeps at most this much unused room... */
#define OUTPUT_SLACK_MAX 4096
/* ...unless it would use under half of its buffer. */
#define OUTPUT_MIN_FILL_DIVISOR 2

#define GETPARSER_CLASS "Cache::Memcached::RustXS::GetParser"

/* ------------------------------------------------------------------------ */
/* Shared helpers                                                           */

/* The scalar a Zlib function works on: its argument, or the scalar it
 * refers to. Get-magic runs first, once on each, so a tied argument whose
 * FETCH returns a reference is followed. */
static SV *
input_of(pTHX_ SV *arg)
{
    SV *in;
    SvGETMAGIC(arg);
    if (!SvROK(arg))
        return arg;
    in = SvRV(arg);
    if (SvTYPE(in) >= SVt_PVAV)
        croak("not a scalar reference");
    SvGETMAGIC(in);
    if (SvROK(in) || isGV_with_GP(in))
        croak("not a scalar reference");
    return in;
}

/* The bytes of sv, whose get-magic has run, for function `what`: undef is
 * "", a UTF-8 string is downgraded in place (as Compress::Zlib does), wide
 * characters croak. A magical scalar's fetched value is copied and the copy
 * downgraded, since sv_utf8_downgrade runs get-magic again
 * (sv_utf8_downgrade_flags, which need not, is perl 5.32+). The pointer is
 * valid until perl code next runs: read every other argument before. */
static const char *
bytes_nomg(pTHX_ SV *sv, const char *what, STRLEN *len)
{
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

/* bytes_nomg of sv, once its get-magic has run. */
static const char *
bytes_of(pTHX_ SV *sv, const char *what, STRLEN *len)
{
    SvGETMAGIC(sv);
    return bytes_nomg(aTHX_ sv, what, len);
}

/* Grows sv's own (never shared) string buffer to exactly `want` bytes plus
 * a NUL. Exactly, not with sv_grow's extra quarter: a buffer with little
 * slack lets perl share the string copy-on-write when it is copied, as
 * Cache::Memcached's get does with every value. */
static char *
grow_to(pTHX_ SV *sv, size_t want)
{
    if (want + NUL_LEN < want)
        croak("Cache::Memcached::RustXS: size overflow");
    if (SvLEN(sv) < want + NUL_LEN)
        SvPV_renew(sv, want + NUL_LEN);
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
    if (SvLEN(out) - got > OUTPUT_SLACK_MAX
        && SvLEN(out) / OUTPUT_MIN_FILL_DIVISOR > got + reserve)
        SvPV_renew(out, got + reserve + NUL_LEN);
    return out;
}

/* Ends a value's string after its data_len bytes, or after them and the
 * CRLF that Cache::Memcached's finalize chops (with_crlf): its buffer has
 * room for both and a NUL. */
static void
end_value(pTHX_ SV *val, size_t data_len, int with_crlf)
{
    char *end = SvPVX(val) + data_len;
    if (with_crlf) {
        Copy("\r\n", end, READER_CRLF_LEN, char);
        end += READER_CRLF_LEN;
    }
    *end = '\0';
    SvCUR_set(val, end - SvPVX(val));
}

/* Decodes in[0..len) as `format` (CMRX_DECODE_*) into a new scalar with
 * `reserve` spare bytes after the output, growing its buffer as the engine
 * asks (never past max_out). Returns NULL with *status set on failure;
 * *in_used and *dictionary (either may be NULL) as cmrx_decode sets them.
 * No perl code runs here. */
static SV *
decode_to_sv(pTHX_ int format, const char *in, STRLEN len, size_t max_out, size_t reserve,
             int *status, size_t *in_used, U32 *dictionary)
{
    size_t cap = cmrx_decode_size_hint(format, (const uint8_t *)in, len, max_out), got = 0;
    uint32_t missing = 0;
    SV *out = newSV(cap + reserve + NUL_LEN); /* a PV with a buffer, never SVt_NULL */
    for (;;) {
        char *buf = grow_to(aTHX_ out, cap + reserve);
        *status = cmrx_decode(format, (const uint8_t *)in, len, (uint8_t *)buf, cap, max_out,
                              &got, in_used, &missing);
        if (*status != CMRX_E_NEED_SPACE || got <= cap)
            break;
        cap = got;
    }
    if (dictionary)
        *dictionary = (U32)missing;
    if (*status != CMRX_OK) {
        SvREFCNT_dec(out);
        return NULL;
    }
    return finish_output(aTHX_ out, got, reserve);
}

/* Whether `level` is an int that the engine's check `valid` accepts. */
static int
level_accepted(IV level, int (*valid)(int))
{
    return level >= INT_MIN && level <= INT_MAX && valid((int)level);
}

/* The zstd and the gzip level `level`, for `what`'s messages: they croak
 * unless the engine accepts it. The ranges in the messages are the
 * engine's (cmrx.h), as the checks are. */
static int
checked_zstd_level(pTHX_ const char *what, IV level)
{
    if (!level_accepted(level, cmrx_zstd_level_valid))
        croak("%s: level must be %d (the default), 1 to %d or -1 to %d, not %" IVdf, what,
              CMRX_ZSTD_USE_DEFAULT_LEVEL, CMRX_ZSTD_MAX_LEVEL, CMRX_ZSTD_MIN_LEVEL, level);
    return (int)level;
}

static int
checked_gzip_level(pTHX_ const char *what, IV level)
{
    if (!level_accepted(level, cmrx_gzip_level_valid))
        croak("%s: level must be %d (the default) or %d to %d, not %" IVdf, what, CMRX_DEFLATE_USE_DEFAULT_LEVEL,
              CMRX_GZIP_MIN_LEVEL, CMRX_GZIP_MAX_LEVEL, level);
    return (int)level;
}

static IV warn_interval(pTHX);

/* Whether `text` is to be said now: the engine says a warning at most once
 * per $Cache::Memcached::RustXS::Zstd::WarnInterval seconds. */
static int
report_due(pTHX_ SV *text, NV now)
{
    STRLEN len;
    const char *bytes = SvPV(text, len);
    IV interval = warn_interval(aTHX);
    return cmrx_report_due((const uint8_t *)bytes, len, now > 0 ? (uint64_t)now : 0,
                           interval > 0 ? (uint64_t)interval : 0);
}

/* A value compressed with a zstd dictionary that is not loaded is a miss:
 * says so when the engine says it is due, not once per value. */
static void
warn_missing_dictionary(pTHX_ U32 id)
{
    SV *text = sv_2mortal(newSVpvf(
        "Cache::Memcached::RustXS: zstd dictionary %lu is not loaded, so values compressed "
        "with it are misses (load it with Cache::Memcached::RustXS::Zstd::load_dictionary)",
        (unsigned long)id));
    if (report_due(aTHX_ text, (NV)time(NULL)))
        warn("%" SVf, SVfARG(text));
}

/* The package variables read or set at every call. Their globs are looked
 * up once per interpreter (a name lookup costs more than a small gunzip's
 * bookkeeping); the scalar is taken from the glob at each use, so `local`
 * and aliasing keep working. */
#define MY_CXT_KEY "Cache::Memcached::RustXS::_guts"
typedef struct {
    GV *gzerrno;         /* $Compress::Zlib::gzerrno */
    GV *level;           /* $Cache::Memcached::RustXS::Zlib::Level */
    GV *max_output;      /* $Cache::Memcached::RustXS::Zlib::MaxOutput */
    GV *max_decoded;     /* $Cache::Memcached::RustXS::MaxDecodedSize */
    GV *warn_interval;   /* $Cache::Memcached::RustXS::Zstd::WarnInterval */
    /* A GetParser line buffer kept from a freed parser for the next one:
     * Cache::Memcached makes a parser per server per get_multi, and malloc
     * plus free of 64 KiB each time costs more than parsing small values. */
    char *spare_line_buffer;
} my_cxt_t;
START_MY_CXT

static void
free_spare_line_buffer(pTHX_ void *unused)
{
    dMY_CXT;
    PERL_UNUSED_ARG(unused);
    reader_spare_free(MY_CXT.spare_line_buffer);
    MY_CXT.spare_line_buffer = NULL;
}

/* A package variable's glob, its scalar set to `initial` unless it holds a
 * value already: the defaults are the engine's (cmrx.h), stated once. */
static GV *
tunable(pTHX_ const char *name, IV initial)
{
    GV *gv = gv_fetchpv(name, GV_ADD | GV_ADDMULTI, SVt_PV);
    SV *sv = GvSVn(gv);
    if (!SvOK(sv) && !SvMAGICAL(sv))
        sv_setiv(sv, initial);
    return gv;
}

static void
init_my_cxt(pTHX_ my_cxt_t *cxt)
{
    cxt->spare_line_buffer = NULL; /* never shared with the interpreter cloned from */
    call_atexit(free_spare_line_buffer, NULL);
    cxt->gzerrno = gv_fetchpvs("Compress::Zlib::gzerrno", GV_ADD | GV_ADDMULTI, SVt_PV);
    cxt->level = tunable(aTHX_ "Cache::Memcached::RustXS::Zlib::Level", CMRX_GZIP_DEFAULT_LEVEL);
    cxt->max_output = tunable(aTHX_ "Cache::Memcached::RustXS::Zlib::MaxOutput", CMRX_DEFAULT_MAX_OUTPUT);
    /* No default of its own: undef falls back to $MaxOutput, which capped
     * these values before this name existed. */
    cxt->max_decoded = gv_fetchpvs("Cache::Memcached::RustXS::MaxDecodedSize", GV_ADD | GV_ADDMULTI, SVt_PV);
    cxt->warn_interval = tunable(aTHX_ "Cache::Memcached::RustXS::Zstd::WarnInterval", CMRX_DEFAULT_WARN_INTERVAL);
}

/* A tunable's value (get-magic first), or `fallback` when it is undef. */
static IV
config_iv(pTHX_ GV *gv, IV fallback)
{
    SV *sv = GvSV(gv);
    if (!sv)
        return fallback;
    SvGETMAGIC(sv);
    return SvOK(sv) ? SvIV_nomg(sv) : fallback;
}

/* A size in bytes: a cap must not be negative (that would disable it). */
static size_t
size_arg(pTHX_ IV value, const char *what)
{
    if (value < 0)
        croak("%s must be a size in bytes, not %" IVdf, what, value);
    return (size_t)value;
}

static IV
warn_interval(pTHX)
{
    dMY_CXT;
    return config_iv(aTHX_ MY_CXT.warn_interval, CMRX_DEFAULT_WARN_INTERVAL);
}

#define MAX_OUTPUT_NAME "$Cache::Memcached::RustXS::Zlib::MaxOutput"
#define GZIP_LEVEL() config_iv(aTHX_ MY_CXT.level, CMRX_DEFLATE_USE_DEFAULT_LEVEL)
#define MAX_OUTPUT() \
    size_arg(aTHX_ config_iv(aTHX_ MY_CXT.max_output, CMRX_DEFAULT_MAX_OUTPUT), MAX_OUTPUT_NAME)
#define MAX_DECODED_NAME "$Cache::Memcached::RustXS::MaxDecodedSize"

/* The cap on a stored value's decoding (zstd, GetParser, decode_compressed):
 * $MaxDecodedSize, or $Zlib::MaxOutput while it is undef. Its get-magic runs
 * once, as $MaxOutput's does. */
static size_t
max_decoded(pTHX)
{
    dMY_CXT;
    SV *sv = GvSV(MY_CXT.max_decoded);
    if (sv) {
        SvGETMAGIC(sv);
        if (SvOK(sv))
            return size_arg(aTHX_ SvIV_nomg(sv), MAX_DECODED_NAME);
    }
    return MAX_OUTPUT();
}

/* Dictionary sets: the one perl function of the distribution this file
 * calls (see the top of this file). It scans the loaded sets again (at most
 * once per rescan interval; Cache::Memcached::RustXS::Zstd::load_dictionaries)
 * and says whether dictionary `id` is loaded now, one of these (which it
 * has from _constants). It guards itself against re-entry (a reader that
 * its own perl code runs). */
#define RESCAN_SUB "Cache::Memcached::RustXS::Zstd::_rescan_for"
enum rescan_answer {
    RESCAN_ABSENT, /* not loaded, after a scan (or no set is loaded) */
    RESCAN_FOUND,  /* loaded now */
    RESCAN_NOT_DUE /* not loaded, and a set is not due for a scan yet: it
                      may come with that scan, so no warning yet */
};

/* Asks the loaded dictionary sets for dictionary `id` (RESCAN_*). Runs perl
 * code, inside an eval and with $@ localised: whatever it does, it does not
 * die through the caller, whose state must merely be whole (no pointer into
 * a scalar perl code can reach, nothing owned that a die would leak). */
static int
rescan_for_dictionary(pTHX_ U32 id)
{
    CV *rescan = get_cv(RESCAN_SUB, 0);
    int found = RESCAN_ABSENT;
    if (!rescan)
        return RESCAN_ABSENT; /* no Zstd.pm, so no set either */
    {
        dSP;
        ENTER;
        SAVETMPS;
        save_scalar(PL_errgv);
        PUSHMARK(SP);
        mXPUSHu(id);
        PUTBACK;
        if (call_sv((SV *)rescan, G_SCALAR | G_EVAL) == 1) {
            SV *said;
            SPAGAIN;
            said = POPs;
            PUTBACK;
            if (!SvTRUE(ERRSV) && SvIOK(said))
                found = SvIVX(said) == RESCAN_FOUND || SvIVX(said) == RESCAN_NOT_DUE
                            ? (int)SvIVX(said) : RESCAN_ABSENT;
        }
        FREETMPS;
        LEAVE;
    }
    return found;
}

/* decode_to_sv; when the zstd frame names a dictionary that is not loaded,
 * asks the dictionary sets for it and decodes once more if it came. The
 * input is copied before perl code runs (that code may change or free the
 * scalar it points into). *status and *dictionary as decode_to_sv sets
 * them, for the last attempt; *report: whether a dictionary still missing
 * is to be reported now (warn_missing_dictionary, which the caller calls
 * when its own state allows perl code to die). */
static SV *
decode_to_sv_rescanning(pTHX_ int format, const char *in, STRLEN len, size_t max_out,
                        size_t reserve, int *status, U32 *dictionary, int *report)
{
    SV *out = decode_to_sv(aTHX_ format, in, len, max_out, reserve, status, NULL, dictionary);
    *report = 0;
    if (!out && *status == CMRX_E_UNKNOWN_DICTIONARY) {
        SV *copy = sv_2mortal(newSVpvn(in, len));
        int rescan = rescan_for_dictionary(aTHX_ *dictionary);
        if (rescan == RESCAN_FOUND)
            out = decode_to_sv(aTHX_ format, SvPVX(copy), len, max_out, reserve, status, NULL,
                               dictionary);
        *report = !out && rescan != RESCAN_NOT_DUE;
        if (!out)
            cmrx_note_event(CMRX_EVENT_UNKNOWN_DICTIONARY); /* a miss, for good */
    }
    return out;
}

/* ------------------------------------------------------------------------ */
/* Cache::Memcached::RustXS::GetParser                                      */

/* The reading itself is perl/src/reader.c's: this file gives it storage
 * for each value (a scalar), and stores the finished values. */
typedef struct {
    reader  reader;      /* reads the response (perl/src/reader.h) */
#ifdef PERL_IMPLICIT_CONTEXT
    PerlInterpreter *perl; /* the interpreter whose parser this is */
#endif
    HV     *dest;        /* where finished values go (counted reference) */
    SV     *on_item;     /* Cache::Memcached's finalize (counted reference) */
    size_t  max_out;     /* cap for decoding a value */
    SV     *key;         /* key of the value in progress, namespace stripped */
    SV     *val;         /* the value in progress, NULL between values */
    U32     flags;
    HV     *batch;       /* key => flags for on_item, since it last ran */
    SV     *flags_sv;    /* the flags value last put in batch */
    int     inline_finalize; /* on_item is Cache::Memcached's finalize: plain
                                values are finished here, not handed to it */
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
    dMY_CXT;
    PERL_UNUSED_ARG(sv);
    if (!p)
        return 0;
    mg->mg_ptr = NULL;
    /* Its line buffer for the next parser, unless perl is shutting down. */
    reader_release(&p->reader, PL_dirty ? NULL : &MY_CXT.spare_line_buffer);
    getparser_drop_value(aTHX_ p);
    SvREFCNT_dec((SV *)p->dest);
    SvREFCNT_dec(p->on_item);
    SvREFCNT_dec(p->key);
    SvREFCNT_dec((SV *)p->batch);
    SvREFCNT_dec(p->flags_sv);
    Safefree(p);
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
    SvGETMAGIC(self);
    if (SvROK(self) && (mg = mg_findext(SvRV(self), PERL_MAGIC_ext, &getparser_vtbl))) {
        if (!mg->mg_ptr)
            croak(GETPARSER_CLASS ": object belongs to another thread");
        return (getparser *)mg->mg_ptr;
    }
    croak(GETPARSER_CLASS ": not a parser object");
    return NULL; /* not reached */
}

/* Hands the values finished since the last call to on_item, in the batched
 * form Cache::Memcached's finalize accepts: on_item->({ key => flags, ... }).
 * Runs at the end of every parse call, with the parser's state whole, so
 * that whatever happens next (END, failure, select timeout) no finished
 * value is left raw in dest, and on_item may parse more. */
static void
getparser_flush(pTHX_ getparser *p)
{
    HV *batch = p->batch;
    SV *batch_ref;
    if (!batch || HvUSEDKEYS(batch) == 0)
        return;
    if (!p->on_item) {
        hv_clear(batch);
        return;
    }
    /* Detached while on_item runs: what on_item parses goes into a new
     * batch; if on_item dies, these keys are not handed over again, and the
     * mortal reference frees the hash. */
    p->batch = NULL;
    batch_ref = sv_2mortal(newRV_noinc((SV *)batch));
    {
        dSP;
        ENTER;
        SAVETMPS;
        PUSHMARK(SP);
        XPUSHs(batch_ref);
        PUTBACK;
        call_sv(p->on_item, G_DISCARD | G_VOID);
        FREETMPS;
        LEAVE;
    }
    /* Reuse the hash (and its bucket array) unless on_item kept it. */
    if (!p->batch && SvREFCNT((SV *)batch) == 1) {
        hv_clear(batch);
        p->batch = (HV *)SvREFCNT_inc_simple_NN((SV *)batch);
    }
}

/* Stores val (whose reference this takes) in dest. A plain hash takes it
 * and cannot die (a DESTROY of the value it replaces cannot propagate an
 * exception). A tied hash's STORE and a restricted hash's refusal of a key
 * can die: for them val is owned by the savestack, and it is stored as perl
 * assigns `$dest{$key} = $val`, through an lvalue element and set-magic. */
static void
getparser_store(pTHX_ HV *dest, SV *val, const char *key, I32 klen, U32 hash)
{
    SV **slot;
    if (!SvRMAGICAL((SV *)dest) && !SvREADONLY((SV *)dest)) {
        (void)hv_store(dest, key, klen, val, hash);
        return;
    }
    sv_2mortal(val);
    PERL_UNUSED_ARG(hash);
    slot = hv_fetch(dest, key, klen, 1);
    if (slot)
        sv_setsv_mg(*slot, val);
}

/* Notes a finished value's key and flags for on_item. */
static void
getparser_batch(pTHX_ getparser *p, const char *key, I32 klen, U32 hash, U32 flags)
{
    if (!p->batch)
        p->batch = newHV();
    /* Flags repeat (mostly 0): share one read-only scalar per value. */
    if (!p->flags_sv || SvUVX(p->flags_sv) != flags) {
        SvREFCNT_dec(p->flags_sv);
        p->flags_sv = newSVuv(flags);
        SvREADONLY_on(p->flags_sv);
    }
    (void)hv_store(p->batch, key, klen, SvREFCNT_inc_simple_NN(p->flags_sv), hash);
}

/* A compressed value decoded (with room for a CRLF), or NULL when it is
 * not: *miss says whether it is then a miss (values.h), reported already
 * when that is due. Takes val's reference when it says *miss or returns
 * the plain value. Perl code may run (a dictionary set's rescan, the
 * report's warn): it cannot reach val, and only the report may die, once
 * val is freed. */
static SV *
getparser_decode(pTHX_ getparser *p, SV *val, size_t data_len, int *miss)
{
    int status, report;
    U32 dictionary;
    SV *plain = decode_to_sv_rescanning(aTHX_ CMRX_DECODE_CACHED, SvPVX(val), data_len, p->max_out,
                                        READER_CRLF_LEN, &status, &dictionary, &report);
    *miss = !plain && value_undecoded_is_miss(status);
    if (plain || *miss)
        SvREFCNT_dec(val);
    if (*miss && report)
        warn_missing_dictionary(aTHX_ dictionary); /* perl code: last */
    return plain;
}

/* A value's data_len bytes are complete: decode it when it is compressed,
 * store it under its key, and finish it (inline) or note it for on_item. A
 * compressed value that does not decode and is no miss stays as it came,
 * flag and all, for Cache::Memcached's own memGunzip to judge, as without
 * us (a zstd frame is not gzip: undef). */
static void
getparser_finish_value(pTHX_ getparser *p, size_t data_len)
{
    SV *val = p->val;
    U32 flags = p->flags;
    STRLEN klen;
    const char *key;
    U32 hash;
    int finished;

    p->val = NULL;
    if (value_is_compressed(flags)) {
        int miss;
        SV *plain = getparser_decode(aTHX_ p, val, data_len, &miss);
        if (miss)
            return;
        if (plain) {
            val = plain;
            data_len = SvCUR(plain);
            flags = value_decoded_flags(flags);
        }
    }
    /* Inline finalize: what Cache::Memcached's finalize would do to a plain
     * value is drop its CRLF. Any other value goes to it, CRLF and all. */
    finished = p->inline_finalize && value_is_plain(flags);
    end_value(aTHX_ val, data_len, !finished);
    if (PL_tainting)
        SvTAINTED_on(val); /* as sysread's data would be */
    key = SvPVX(p->key); /* a plain string: sv_setpvn made it */
    klen = SvCUR(p->key);
    PERL_HASH(hash, key, klen); /* once for both hashes */
    if (!finished)
        getparser_batch(aTHX_ p, key, (I32)klen, hash, flags);
    /* Last: it may run perl code (which cannot reach key) or die. */
    getparser_store(aTHX_ p->dest, val, key, (I32)klen, hash);
}

/* The reader's callbacks (perl/src/reader.h): the value's key and flags,
 * its storage (its scalar's buffer), its end, and signals. */

static char *
getparser_value_begins(void *ctx, const char *key, size_t key_len, uint32_t flags, size_t size,
                       size_t *capacity)
{
    getparser *p = (getparser *)ctx;
    dTHXa(p->perl);
    sv_setpvn(p->key, key, key_len);
    p->flags = flags;
    p->val = newSV(size + NUL_LEN);
    SvPOK_only(p->val);
    *capacity = SvLEN(p->val) - NUL_LEN;
    return SvPVX(p->val);
}

static char *
getparser_value_storage(void *ctx, size_t size, size_t *capacity)
{
    getparser *p = (getparser *)ctx;
    dTHXa(p->perl);
    grow_to(aTHX_ p->val, size);
    *capacity = SvLEN(p->val) - NUL_LEN;
    return SvPVX(p->val);
}

static void
getparser_value_done(void *ctx, size_t data_len)
{
    getparser *p = (getparser *)ctx;
    dTHXa(p->perl);
    getparser_finish_value(aTHX_ p, data_len);
}

static void
getparser_interrupted(void *ctx)
{
    getparser *p = (getparser *)ctx;
    dTHXa(p->perl);
    PERL_UNUSED_VAR(p); /* without threads */
    PERL_ASYNC_CHECK(); /* signal handlers; one that parses croaks */
}

static const reader_callbacks getparser_callbacks = {
    getparser_value_begins, getparser_value_storage, getparser_value_done, getparser_interrupted
};

/* Ends a parse call with `result`: nothing partial stays behind, and every
 * finished value reaches on_item. */
static int
getparser_conclude(pTHX_ getparser *p, int result)
{
    if (result != READER_RUNNING)
        getparser_drop_value(aTHX_ p);
    getparser_flush(aTHX_ p);
    return result;
}

/* Savestack destructor of a parse call: drops the reference that kept the
 * parser alive, and when a croak unwound the call from the middle of the
 * parse (a tied STORE that died, a signal handler), fails the parse: the
 * reader's buffer and the value no longer agree with the engine. */
static void
getparser_unwind(pTHX_ void *object)
{
    SV *inner = (SV *)object;
    MAGIC *mg = mg_findext(inner, PERL_MAGIC_ext, &getparser_vtbl);
    getparser *p = mg ? (getparser *)mg->mg_ptr : NULL;
    if (p && reader_busy(&p->reader)) {
        reader_abandon(&p->reader, "the parse died in perl code it ran (a tied hash's STORE, a signal handler)");
        getparser_drop_value(aTHX_ p);
    }
    SvREFCNT_dec(inner);
}

/* Whether the parse is over (reader_result says how): a parse call then
 * returns that at once, looking at no argument. */
static int
getparser_over(const getparser *p)
{
    return reader_result(&p->reader) != READER_RUNNING;
}

/* The descriptor of a socket handle, or -1 when it has none open. */
static int
socket_fd(pTHX_ SV *sock)
{
    IO *io = sv_2io(sock);
    return IoIFP(io) ? PerlIO_fileno(IoIFP(io)) : -1;
}

/* One parse call: of bytes[0..len) or, when bytes is NULL, of the socket
 * fd. */
static int
getparser_run(pTHX_ SV *self, getparser *p, int fd, const char *bytes, STRLEN len)
{
    int result;
    if (reader_busy(&p->reader))
        croak(GETPARSER_CLASS ": called again from perl code that the same parser ran in the middle "
              "of a parse (a tied destination's STORE, a DESTROY, a signal handler): it cannot parse there");
    ENTER;
    /* The parser stays alive until the call is over, whatever on_item or a
     * DESTROY does with the last reference to it. */
    SAVEDESTRUCTOR_X(getparser_unwind, SvREFCNT_inc_simple_NN(SvRV(self)));
    result = bytes ? reader_feed(&p->reader, bytes, len) : reader_read_fd(&p->reader, fd);
    result = getparser_conclude(aTHX_ p, result);
    LEAVE;
    return result;
}

/* get_response_items: the items of a whole response, as stored, read by
 * perl/src/items.c; here each becomes [key, flags, data, cas]. */
enum item_field { ITEM_KEY, ITEM_FLAGS, ITEM_DATA, ITEM_CAS };
/* _get_response_items returns the items, whether END ended them, and on a
 * bad response why, where and after which value. */
#define RESPONSE_ITEMS_RESULTS 5
typedef struct {
#ifdef PERL_IMPLICIT_CONTEXT
    PerlInterpreter *perl;
#endif
    AV *items;   /* [key, flags, data, cas] of each item */
    int tainted; /* the response is: so is what comes of it */
} stored_items;

/* An item's field: tainted when the response is, as substr's would be. */
static SV *
item_field(pTHX_ const stored_items *s, SV *sv)
{
    if (s->tainted)
        SvTAINTED_on(sv);
    return sv;
}

/* items_read's callback (perl/src/items.h); no perl code runs. The cas is
 * undef without a cas field (a number above UV_MAX, on a perl with 32-bit
 * integers, an approximate one). */
static void
stored_item(void *ctx, const items_item *item)
{
    stored_items *s = (stored_items *)ctx;
    AV *fields;
    SV *cas;
    dTHXa(s->perl);
    fields = newAV();
    av_extend(fields, ITEM_CAS); /* its last index */
    cas = !item->has_cas                  ? newSV(0)
          : item->cas <= (uint64_t)UV_MAX ? newSVuv((UV)item->cas)
                                          : newSVnv((NV)item->cas);
    av_store(fields, ITEM_KEY, item_field(aTHX_ s, newSVpvn(item->key, item->key_len)));
    av_store(fields, ITEM_FLAGS, item_field(aTHX_ s, newSVuv(item->flags)));
    av_store(fields, ITEM_DATA, item_field(aTHX_ s, newSVpvn(item->data, item->data_len)));
    av_store(fields, ITEM_CAS, item_field(aTHX_ s, cas));
    av_push(s->items, newRV_noinc((SV *)fields));
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
        SvIV_set(sv, status);
        SvIOK_on(sv);
        SvSETMAGIC(sv);
    }
}

typedef int (*encode_fn)(const uint8_t *, size_t, int, uint8_t *, size_t, size_t *);

/* Compresses into a new mortal scalar; NULL if the engine refuses (a bad
 * level, no memory). */
static SV *
encode_to_mortal(pTHX_ encode_fn encode, size_t bound, const char *in, STRLEN len, int level)
{
    SV *out = sv_2mortal(newSV(bound + NUL_LEN));
    size_t got = 0;
    if (encode((const uint8_t *)in, len, level, (uint8_t *)SvPVX(out), bound, &got) != CMRX_OK)
        return NULL;
    return finish_output(aTHX_ out, got, 0);
}

typedef size_t (*bound_fn)(size_t);

/* Compresses the bytes of a Zlib function's argument (input_of) at
 * `level`, which the caller read first (its magic may run perl code), into
 * a new mortal scalar; NULL when the engine refuses the level. */
static SV *
encode_arg(pTHX_ SV *data, encode_fn encode, bound_fn bound, IV level, const char *what)
{
    STRLEN len;
    const char *in = bytes_nomg(aTHX_ input_of(aTHX_ data), what, &len);
    if (level < INT_MIN || level > INT_MAX)
        return NULL;
    return encode_to_mortal(aTHX_ encode, bound(len), in, len, (int)level);
}

/* Decodes the bytes of a Zlib function's argument (input_of) as `format`,
 * into at most $MaxOutput bytes (read first: its magic may run perl code):
 * a new scalar, or NULL when they do not decode. */
static SV *
decode_arg(pTHX_ SV *data, int format, const char *what)
{
    dMY_CXT;
    size_t max_out = MAX_OUTPUT();
    STRLEN len;
    const char *in = bytes_nomg(aTHX_ input_of(aTHX_ data), what, &len);
    int status;
    return decode_to_sv(aTHX_ format, in, len, max_out, 0, &status, NULL, NULL);
}

/* The samples of `samples` as the engine takes them: *ptrs and *lens
 * (freed with the XSUB's savestack), one entry per element; returns the
 * count. Each sample is copied (shared copy-on-write where perl can) with its
 * get-magic run, so that perl code a later sample runs (a tied array's
 * FETCH) cannot move or free the bytes of an earlier one; no perl code may
 * run after this until the engine is done with the pointers. */
static size_t
sample_arrays(pTHX_ AV *samples, const char *what, const uint8_t ***ptrs, size_t **lens)
{
    SSize_t i, count = av_count(samples);
    Newx(*ptrs, AT_LEAST_ONE(count), const uint8_t *);
    SAVEFREEPV(*ptrs);
    Newx(*lens, AT_LEAST_ONE(count), size_t);
    SAVEFREEPV(*lens);
    for (i = 0; i < count; i++) {
        SV **elem = av_fetch(samples, i, 0);
        SV *sample = sv_mortalcopy(elem ? *elem : &PL_sv_undef);
        STRLEN n;
        (*ptrs)[i] = (const uint8_t *)bytes_nomg(aTHX_ sample, what, &n);
        (*lens)[i] = n;
    }
    return (size_t)count;
}

/* What some XSUBs return: _train the dictionary and the k and d it used;
 * _gunzip_member the data and the input bytes it took up;
 * decode_compressed (in list context) the value, its format and the ID of
 * a missing dictionary. */
#define TRAINED_RESULTS 3
#define GUNZIP_MEMBER_RESULTS 2
#define DECODED_RESULTS 3
/* Compress::Zlib::compress($data, $level): the optional level's place. */
#define ZLIB_LEVEL_ARG 1

/* An engine function that reads a zstd dictionary and gives its ID. */
typedef int (*dictionary_fn)(const uint8_t *, size_t, uint32_t *);

/* The ID that `fn` (cmrx_zstd_register, cmrx_zstd_dictionary_id) gives the
 * dictionary `bytes`, or a croak saying why, after `prefix`. */
static U32
dictionary_call(pTHX_ dictionary_fn fn, SV *bytes, const char *what, const char *prefix)
{
    STRLEN len;
    uint32_t id = 0;
    const char *in = bytes_of(aTHX_ bytes, what, &len);
    int status = fn((const uint8_t *)in, len, &id);
    if (status == CMRX_E_DICTIONARY_CONFLICT)
        croak("%s%s (ID %lu)", prefix, cmrx_status_str(status), (unsigned long)id);
    if (status != CMRX_OK)
        croak("%s%s", prefix, cmrx_status_str(status));
    return id;
}

/* A zstd frame of in[0..len) in a new mortal scalar; NULL (with *status
 * set, unless status is NULL) if the engine refuses: a bad level, a
 * dictionary that is not loaded, no memory. */
static SV *
zstd_to_mortal(pTHX_ const char *in, STRLEN len, int level, U32 dictionary, int *status)
{
    size_t bound = cmrx_zstd_compress_bound(len), got = 0;
    SV *out = sv_2mortal(newSV(bound + NUL_LEN));
    int rc = cmrx_zstd_compress((const uint8_t *)in, len, level, dictionary,
                                (uint8_t *)SvPVX(out), bound, &got);
    if (status)
        *status = rc;
    if (rc != CMRX_OK)
        return NULL;
    return finish_output(aTHX_ out, got, 0);
}

#define ZSTD_COMPRESS "Cache::Memcached::RustXS::Zstd::compress"
#define FIRST_OPTION 1 /* the argument after the data */

/* Zstd::compress's options, the name => value pairs option[0..count)
 * (get-magic run): level (undef: 0, the default) and dictionary (an ID;
 * undef: 0, none). */
static void
zstd_compress_options(pTHX_ SV **option, I32 count, IV *level, UV *dictionary)
{
    SV **end = option + count;
    if (count % PAIR_LEN)
        croak(ZSTD_COMPRESS ": options come in pairs (level => N, dictionary => ID)");
    for (; option < end; option += PAIR_LEN) {
        const char *name = SvPV_nolen(option[PAIR_NAME]);
        SV *value = option[PAIR_VALUE];
        /* Get magic before SvOK: a tied or otherwise magical value has no
         * OK flags until its FETCH has run. */
        SvGETMAGIC(value);
        if (strEQ(name, "level"))
            *level = SvOK(value) ? SvIV_nomg(value) : 0;
        else if (strEQ(name, "dictionary"))
            *dictionary = SvOK(value) ? SvUV_nomg(value) : 0;
        else
            croak(ZSTD_COMPRESS ": unknown option %s", name);
    }
}

/* Sets *out_sv (a Fast output argument) to a mortal result, set-magic and
 * all: a read-only or tied target that dies leaks nothing. */
static void
set_output(pTHX_ SV *out_sv, SV *result)
{
    sv_setsv_flags(out_sv, result, SV_GMAGIC | SV_DO_COW_SVSETSV);
    SvSETMAGIC(out_sv);
}

/* compress_methods: XSUBs Cache::Memcached::Fast calls as f(\$in, \$out).
 * Each pair shares its settings, kept in a scalar that magic ties to each
 * XSUB (so it lives as long as they do, and a new ithread gets its copy). */
typedef struct {
    int    zstd;       /* the compressor writes zstd frames, else gzip */
    int    level;      /* its level (CMRX_*_USE_DEFAULT_LEVEL: the default) */
    U32    dictionary; /* zstd: the loaded dictionary's ID, 0 for none */
    size_t max_output; /* the decompressor's cap */
    double compress_ratio; /* keeps a result of at most this fraction of the value */
} fast_methods;

static MGVTBL fast_methods_vtbl; /* tells this magic from any other */

/* What the compressor writes, as the counters name it (CMRX_TRAFFIC_*). */
static int
fast_methods_kind(const fast_methods *m)
{
    return !m->zstd ? CMRX_TRAFFIC_GZIP : m->dictionary ? CMRX_TRAFFIC_ZSTD_DICTIONARY : CMRX_TRAFFIC_ZSTD;
}

static const fast_methods *
fast_methods_of(pTHX_ CV *cv)
{
    MAGIC *mg = mg_findext((SV *)cv, PERL_MAGIC_ext, &fast_methods_vtbl);
    if (!mg || !mg->mg_obj)
        croak("Cache::Memcached::RustXS: compress_methods XSUB without its settings");
    return (const fast_methods *)SvPVX(mg->mg_obj);
}

static SV *
new_fast_method(pTHX_ XSUBADDR_t xsub, SV *settings)
{
    CV *cv = newXS(NULL, xsub, __FILE__);
    sv_magicext((SV *)cv, settings, PERL_MAGIC_ext, &fast_methods_vtbl, NULL, 0);
    return newRV_noinc((SV *)cv);
}

/* The arguments of a compress_methods XSUB, f(\$in, \$out): the bytes
 * of $in (its get-magic run) and, in *out_sv, $out. */
enum fast_method_arg { FAST_IN, FAST_OUT, FAST_METHOD_ARGS };

static const char *
fast_method_args(pTHX_ SV **args, I32 items, const char *what, SV **out_sv, STRLEN *len)
{
    SV *in_sv;
    if (items != FAST_METHOD_ARGS || !SvROK(args[FAST_IN]) || !SvROK(args[FAST_OUT]))
        croak("Usage: $%s->(\\$in, \\$out)", what);
    in_sv = SvRV(args[FAST_IN]);
    *out_sv = SvRV(args[FAST_OUT]);
    return bytes_of(aTHX_ in_sv, what, len);
}

XS(xs_fast_compress);
XS(xs_fast_compress)
{
    dXSARGS;
    const fast_methods *m = fast_methods_of(aTHX_ cv);
    SV *out_sv, *result;
    STRLEN len;
    const char *in = fast_method_args(aTHX_ &ST(0), items, "compress", &out_sv, &len);
    /* Not worth it (values.h): say no at once, and Cache::Memcached::Fast
     * stores the value raw. */
    if (!value_worth_compressing((const uint8_t *)in, len))
        XSRETURN_NO;
    result = m->zstd ? zstd_to_mortal(aTHX_ in, len, m->level, m->dictionary, NULL)
                     : encode_to_mortal(aTHX_ cmrx_gzip, cmrx_gzip_bound(len), in, len, m->level);
    if (!result || !value_kept_compressed(fast_methods_kind(m), m->dictionary, len, SvCUR(result), m->compress_ratio))
        XSRETURN_NO;
    set_output(aTHX_ out_sv, result);
    XSRETURN_YES;
}

XS(xs_fast_decompress);
XS(xs_fast_decompress)
{
    dXSARGS;
    const fast_methods *m = fast_methods_of(aTHX_ cv);
    SV *out_sv, *result;
    STRLEN len;
    int status, report;
    U32 dictionary;
    const char *in = fast_method_args(aTHX_ &ST(0), items, "decompress", &out_sv, &len);
    result = decode_to_sv_rescanning(aTHX_ CMRX_DECODE_ANY, in, len, m->max_output, 0, &status,
                                     &dictionary, &report);
    if (!result) {
        if (status == CMRX_E_UNKNOWN_DICTIONARY && report)
            warn_missing_dictionary(aTHX_ dictionary);
        XSRETURN_NO;
    }
    set_output(aTHX_ out_sv, sv_2mortal(result));
    XSRETURN_YES;
}

/* ------------------------------------------------------------------------ */
/* Numbers the Perl modules take from here                                  */

/* Each is defined once (cmrx.h, generated from the engine; values.h; this
 * file) and reaches the Perl modules only through these tables. */
typedef struct {
    const char *name;
    IV value;
} named_number;

static const named_number level_ranges[] = {
    { "gzip_min", CMRX_GZIP_MIN_LEVEL }, { "gzip_max", CMRX_GZIP_MAX_LEVEL },
    { "zlib_min", CMRX_ZLIB_MIN_LEVEL }, { "zlib_max", CMRX_ZLIB_MAX_LEVEL },
    { "zstd_min", CMRX_ZSTD_MIN_LEVEL }, { "zstd_max", CMRX_ZSTD_MAX_LEVEL },
};

static const named_number shared_constants[] = {
    { "F_STORABLE", VALUE_F_STORABLE },
    { "F_COMPRESS", VALUE_F_COMPRESS },
    { "RESCAN_ABSENT", RESCAN_ABSENT },
    { "RESCAN_FOUND", RESCAN_FOUND },
    { "RESCAN_NOT_DUE", RESCAN_NOT_DUE },
    { "TRAIN_FASTCOVER", CMRX_TRAIN_FASTCOVER },
    { "TRAIN_COVER", CMRX_TRAIN_COVER },
    { "TRAIN_SAMPLES", CMRX_TRAIN_SAMPLES },
    { "ZSTD_DEFAULT_LEVEL", CMRX_ZSTD_DEFAULT_LEVEL },
    { "TRAFFIC_ZSTD_DICTIONARY", CMRX_TRAFFIC_ZSTD_DICTIONARY },
    { "TRAFFIC_ZSTD", CMRX_TRAFFIC_ZSTD },
    { "TRAFFIC_GZIP", CMRX_TRAFFIC_GZIP },
    { "TRAFFIC_ZLIB", CMRX_TRAFFIC_ZLIB },
    { "EVENT_UNKNOWN_DICTIONARY", CMRX_EVENT_UNKNOWN_DICTIONARY },
    { "EVENT_UNDECODABLE", CMRX_EVENT_UNDECODABLE },
    { "EVENT_TOO_BIG", CMRX_EVENT_TOO_BIG },
    { "EVENT_ALREADY_COMPRESSED", CMRX_EVENT_ALREADY_COMPRESSED },
    { "EVENT_INCOMPRESSIBLE", CMRX_EVENT_INCOMPRESSIBLE },
    { "EVENT_TOO_SMALL", CMRX_EVENT_TOO_SMALL },
};

/* A count as a perl number: an IV when it fits, else an NV. */
static SV *
count_sv(pTHX_ uint64_t n)
{
    return n <= (uint64_t)IV_MAX ? newSViv((IV)n) : newSVnv((NV)n);
}

/* Pushes the engine's counters (see _counters) on the stack. */
static void
push_counters(pTHX)
{
    dSP;
    size_t n = cmrx_traffic_counts(NULL, 0), got, i;
    cmrx_traffic *rows;
    uint64_t events[CMRX_EVENTS];
    AV *traffic = (AV *)sv_2mortal((SV *)newAV());
    AV *counts = (AV *)sv_2mortal((SV *)newAV());
    /* A dictionary loaded between the two calls is in the next snapshot. */
    Newx(rows, AT_LEAST_ONE(n), cmrx_traffic);
    got = cmrx_traffic_counts(rows, n);
    if (got < n)
        n = got;
    for (i = 0; i < n; i++) {
        AV *row = newAV();
        av_push(row, newSViv(rows[i].kind));
        av_push(row, newSVuv(rows[i].dictionary));
        av_push(row, count_sv(aTHX_ rows[i].written));
        av_push(row, count_sv(aTHX_ rows[i].written_raw));
        av_push(row, count_sv(aTHX_ rows[i].written_stored));
        av_push(row, count_sv(aTHX_ rows[i].read));
        av_push(row, count_sv(aTHX_ rows[i].read_raw));
        av_push(row, count_sv(aTHX_ rows[i].read_stored));
        av_push(traffic, newRV_noinc((SV *)row));
    }
    Safefree(rows);
    n = cmrx_event_counts(events, COUNT_OF(events));
    for (i = 0; i < n && i < COUNT_OF(events); i++)
        av_push(counts, count_sv(aTHX_ events[i]));
    EXTEND(SP, 2);
    PUSHs(sv_2mortal(newRV_inc((SV *)traffic)));
    PUSHs(sv_2mortal(newRV_inc((SV *)counts)));
    PUTBACK;
}

/* Pushes a table's name => number pairs on the stack. */
static void
push_named_numbers(pTHX_ const named_number *table, size_t count)
{
    dSP;
    size_t i;
    EXTEND(SP, (SSize_t)(count * PAIR_LEN));
    for (i = 0; i < count; i++) {
        mPUSHs(newSVpv(table[i].name, 0));
        mPUSHi(table[i].value);
    }
    PUTBACK;
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

void
_level_ranges()
  PPCODE:
    /* The engine's level ranges, for the Perl code that checks levels
     * itself (a dictionary set's manifest): name => level pairs. */
    PUTBACK;
    push_named_numbers(aTHX_ level_ranges, COUNT_OF(level_ranges));
    SPAGAIN;

void
_constants()
  PPCODE:
    /* The other numbers the Perl modules share with the engine, the value
     * policy and this file: name => number pairs. */
    PUTBACK;
    push_named_numbers(aTHX_ shared_constants, COUNT_OF(shared_constants));
    SPAGAIN;

void
_note_event(event)
    int event
  CODE:
    /* Why a client left a value uncompressed, decided in Perl
     * (Cache::Memcached::RustXS::Memcached: under its threshold). */
    if (cmrx_note_event(event) != CMRX_OK)
        croak("Cache::Memcached::RustXS::_note_event: no event %d", event);

int
_report_due(text, now)
    SV *text
    NV now
  CODE:
    /* Whether a warning (its text) is to be said at `now` (seconds): at most
     * once per $Cache::Memcached::RustXS::Zstd::WarnInterval seconds. */
    RETVAL = report_due(aTHX_ text, now);
  OUTPUT:
    RETVAL

void
_counters()
  PPCODE:
    /* The counters as two array references: the traffic rows [kind,
     * dictionary, written, written_raw, written_stored, read, read_raw,
     * read_stored], and the event counts by CMRX_EVENT_* code. */
    PUTBACK;
    push_counters(aTHX);
    SPAGAIN;

SV *
_compress_methods(format, level_sv, dictionary, max_output_sv, compress_ratio_sv = &PL_sv_undef)
    const char *format
    SV *level_sv
    UV dictionary
    SV *max_output_sv
    SV *compress_ratio_sv
  PREINIT:
    fast_methods m;
    SV *settings;
    IV level;
    AV *pair;
  CODE:
    /* For Zlib's and Zstd's compress_methods: the pair of XSUBs, their
     * arguments checked here, once. */
    Zero(&m, 1, fast_methods);
    m.zstd = strEQ(format, "zstd");
    if (!m.zstd && !strEQ(format, "gzip"))
        croak("compress_methods: unknown format %s", format);
    SvGETMAGIC(level_sv);
    level = SvOK(level_sv) ? SvIV_nomg(level_sv) : m.zstd ? CMRX_ZSTD_USE_DEFAULT_LEVEL : CMRX_DEFLATE_USE_DEFAULT_LEVEL;
    m.level = m.zstd ? checked_zstd_level(aTHX_ "compress_methods", level)
                     : checked_gzip_level(aTHX_ "compress_methods", level);
    if (dictionary > (UV)U32_MAX)
        croak("compress_methods: no such dictionary ID %" UVuf, dictionary);
    m.dictionary = (U32)dictionary;
    SvGETMAGIC(max_output_sv);
    if (!SvOK(max_output_sv) || !looks_like_number(max_output_sv))
        croak("compress_methods: max_output must be a size in bytes");
    m.max_output = size_arg(aTHX_ SvIV_nomg(max_output_sv), "compress_methods: max_output");
    SvGETMAGIC(compress_ratio_sv);
    m.compress_ratio = SvOK(compress_ratio_sv) ? SvNV_nomg(compress_ratio_sv) : VALUE_COMPRESS_RATIO_DEFAULT;
    if (!(m.compress_ratio > 0))
        croak("compress_methods: compress_ratio must be a number above 0");
    settings = sv_2mortal(newSVpvn((const char *)&m, sizeof m));
    pair = newAV();
    av_push(pair, new_fast_method(aTHX_ xs_fast_compress, settings));
    av_push(pair, new_fast_method(aTHX_ xs_fast_decompress, settings));
    RETVAL = newRV_noinc((SV *)pair);
  OUTPUT:
    RETVAL

MODULE = Cache::Memcached::RustXS  PACKAGE = Cache::Memcached::RustXS::GetParser

SV *
_new(class, dest, namespace_len, on_item, inline_finalize)
    SV *class
    SV *dest
    IV namespace_len
    SV *on_item
    int inline_finalize
  PREINIT:
    dMY_CXT;
    getparser *p;
    HV *obj;
    SV *self;
    const char *classname;
    size_t max_out;
  CODE:
    /* Everything that can run perl code or croak comes first: nothing is
     * allocated yet. */
    SvGETMAGIC(dest);
    SvGETMAGIC(on_item);
    if (!SvROK(dest) || SvTYPE(SvRV(dest)) != SVt_PVHV)
        croak(GETPARSER_CLASS "->new: destination must be a hash reference");
    if (SvOK(on_item) && !(SvROK(on_item) && SvTYPE(SvRV(on_item)) == SVt_PVCV))
        croak(GETPARSER_CLASS "->new: on_item must be a code reference");
    max_out = max_decoded(aTHX);
    classname = SvROK(class) ? sv_reftype(SvRV(class), TRUE) : SvPV_nolen(class);
    Newxz(p, 1, getparser);
    if (reader_init(&p->reader, &getparser_callbacks, p, namespace_len > 0 ? (size_t)namespace_len : 0,
                    &MY_CXT.spare_line_buffer) != 0) {
        Safefree(p);
        croak(GETPARSER_CLASS "->new: out of memory");
    }
#ifdef PERL_IMPLICIT_CONTEXT
    p->perl = aTHX;
#endif
    p->dest = (HV *)SvREFCNT_inc_simple_NN(SvRV(dest));
    p->on_item = SvOK(on_item) ? newSVsv(on_item) : NULL;
    p->batch = newHV();
    p->max_out = max_out;
    p->inline_finalize = inline_finalize && p->on_item; /* GetParser.pm asks ClientInternals */
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
  CODE:
    p = getparser_of(aTHX_ self);
    RETVAL = getparser_over(p) ? reader_result(&p->reader)
                               : getparser_run(aTHX_ self, p, socket_fd(aTHX_ sock), NULL, 0);
  OUTPUT:
    RETVAL

int
parse_from_string(self, bytes)
    SV *self
    SV *bytes
  PREINIT:
    getparser *p;
    SV *copy;
    const char *in;
    STRLEN len;
  CODE:
    p = getparser_of(aTHX_ self);
    if (getparser_over(p)) {
        RETVAL = reader_result(&p->reader);
    }
    else {
        /* A copy (shared copy-on-write where perl can): the stores of the
         * parse may free or change the caller's scalar, even `bytes` itself
         * when it is an element of the destination hash. */
        copy = sv_mortalcopy(bytes);
        in = SvPVbyte(copy, len);
        RETVAL = getparser_run(aTHX_ self, p, -1, in, len);
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
    RETVAL = reader_in_value(&p->reader) ? newSVsv(p->key) : &PL_sv_undef;
  OUTPUT:
    RETVAL

SV *
error(self)
    SV *self
  PREINIT:
    const char *why;
  CODE:
    why = reader_error(&getparser_of(aTHX_ self)->reader);
    RETVAL = why ? newSVpv(why, 0) : &PL_sv_undef;
  OUTPUT:
    RETVAL

int
inline_finalize(self)
    SV *self
  CODE:
    RETVAL = getparser_of(aTHX_ self)->inline_finalize;
  OUTPUT:
    RETVAL

void
_get_response_items(response)
    SV *response
  PREINIT:
    stored_items s;
    items_failure failure;
    const char *bytes;
    STRLEN len;
    SV *items_ref;
    int result;
  PPCODE:
    /* For get_response_items (GetParser.pm), which makes the failure a
     * message: (\@items, complete), or on a bad response (\@items, 0, why,
     * where, the key of the value it came after or undef). */
    bytes = bytes_of(aTHX_ response, "get_response_items", &len);
#ifdef PERL_IMPLICIT_CONTEXT
    s.perl = aTHX;
#endif
    s.items = newAV();
    items_ref = sv_2mortal(newRV_noinc((SV *)s.items));
    s.tainted = SvTAINTED(response);
    result = items_read(bytes, len, stored_item, &s, &failure);
    EXTEND(SP, RESPONSE_ITEMS_RESULTS);
    PUSHs(items_ref);
    mPUSHi(result == ITEMS_COMPLETE);
    if (result == ITEMS_BAD) {
        mPUSHs(newSVpv(failure.why, 0));
        mPUSHu((UV)failure.at);
        PUSHs(failure.key ? sv_2mortal(newSVpvn(failure.key, failure.key_len)) : &PL_sv_undef);
    }

MODULE = Cache::Memcached::RustXS  PACKAGE = Cache::Memcached::RustXS::Zlib

void
memGzip(data)
    SV *data
  PROTOTYPE: $
  PREINIT:
    dMY_CXT;
    SV *out;
  PPCODE:
    set_gzerrno(aTHX_ 0);
    out = encode_arg(aTHX_ data, cmrx_gzip, cmrx_gzip_bound, GZIP_LEVEL(), "memGzip");
    ST(0) = out ? out : &PL_sv_undef;
    XSRETURN(1);

void
memGunzip(data)
    SV *data
  PROTOTYPE: $
  PREINIT:
    SV *out;
  PPCODE:
    out = decode_arg(aTHX_ data, CMRX_DECODE_GZIP, "memGunzip");
    if (out)
        sv_2mortal(out); /* before $gzerrno's set-magic, which may die */
    set_gzerrno(aTHX_ out ? 0 : CMRX_E_DATA);
    ST(0) = out ? out : &PL_sv_undef;
    XSRETURN(1);

void
_gunzip_member(data)
    SV *data
  PREINIT:
    dMY_CXT;
    const char *in;
    STRLEN len;
    int status;
    size_t max_out, used = 0;
    SV *out;
  PPCODE:
    /* For the override of Compress::Zlib::memGunzip: (data, bytes of the
     * input the member took up), or nothing when it does not gunzip. */
    max_out = MAX_OUTPUT();
    in = bytes_of(aTHX_ data, "memGunzip", &len);
    out = decode_to_sv(aTHX_ CMRX_DECODE_GZIP, in, len, max_out, 0, &status, &used, NULL);
    if (!out)
        XSRETURN_EMPTY;
    sv_2mortal(out);
    set_gzerrno(aTHX_ 0);
    EXTEND(SP, GUNZIP_MEMBER_RESULTS);
    PUSHs(out);
    mPUSHu((UV)used);

void
compress(data, ...)
    SV *data
  PROTOTYPE: $;$
  PREINIT:
    IV level;
    SV *out;
  PPCODE:
    /* As Compress::Zlib: no level is the default; an explicit undef is
     * level 0 (it warns there too, through SvIV). Levels zlib refuses give
     * undef, as there. */
    level = items > ZLIB_LEVEL_ARG ? SvIV(ST(ZLIB_LEVEL_ARG)) : CMRX_DEFLATE_USE_DEFAULT_LEVEL;
    out = encode_arg(aTHX_ data, cmrx_zlib, cmrx_zlib_bound, level, "compress");
    ST(0) = out ? out : &PL_sv_undef;
    XSRETURN(1);

void
uncompress(data)
    SV *data
  PROTOTYPE: $
  PREINIT:
    SV *out;
  PPCODE:
    out = decode_arg(aTHX_ data, CMRX_DECODE_ZLIB, "uncompress");
    ST(0) = out ? sv_2mortal(out) : &PL_sv_undef;
    XSRETURN(1);

MODULE = Cache::Memcached::RustXS  PACKAGE = Cache::Memcached::RustXS::Zstd

UV
_load_dictionary_bytes(bytes)
    SV *bytes
  CODE:
    RETVAL = dictionary_call(aTHX_ cmrx_zstd_register, bytes, "load_dictionary", "");
  OUTPUT:
    RETVAL

void
_prepare_dictionary(id, level)
    UV id
    IV level
  PREINIT:
    int status;
  CODE:
    /* Dictionary sets: the compression tables at the set's level, now. */
    if (id > (UV)U32_MAX || level < INT_MIN || level > INT_MAX)
        croak("%s", cmrx_status_str(CMRX_E_ARG));
    status = cmrx_zstd_prepare((U32)id, (int)level);
    if (status != CMRX_OK)
        croak("%s", cmrx_status_str(status));

UV
dictionary_id(bytes)
    SV *bytes
  CODE:
    RETVAL = dictionary_call(aTHX_ cmrx_zstd_dictionary_id, bytes, "dictionary_id", "dictionary_id: ");
  OUTPUT:
    RETVAL

SV *
dictionary_with_id(bytes, id)
    SV *bytes
    SV *id
  PREINIT:
    const char *in;
    STRLEN len;
    UV new_id;
    size_t got = 0;
    int status;
    SV *out;
  CODE:
    /* The ID first (its magic may run perl code), then the bytes. */
    SvGETMAGIC(id);
    if (!SvOK(id) || !looks_like_number(id) || SvIV_nomg(id) < 1 || SvUV_nomg(id) > (UV)U32_MAX)
        croak("dictionary_with_id: the ID must be 1 to %lu", (unsigned long)U32_MAX);
    new_id = SvUV_nomg(id);
    in = bytes_of(aTHX_ bytes, "dictionary_with_id", &len);
    out = sv_2mortal(newSV(len + NUL_LEN));
    status = cmrx_zstd_dictionary_with_id((const uint8_t *)in, len, (U32)new_id,
                                          (uint8_t *)SvPVX(out), &got);
    if (status != CMRX_OK)
        croak("dictionary_with_id: %s", cmrx_status_str(status));
    RETVAL = SvREFCNT_inc_simple_NN(finish_output(aTHX_ out, got, 0));
  OUTPUT:
    RETVAL

const char *
_loaded_state(id, bytes)
    UV id
    SV *bytes
  PREINIT:
    const char *in;
    STRLEN len;
  CODE:
    in = bytes_of(aTHX_ bytes, "_loaded_state", &len);
    switch (id > (UV)U32_MAX ? CMRX_DICT_NOT_LOADED : cmrx_zstd_loaded_state((U32)id, (const uint8_t *)in, len)) {
    case CMRX_DICT_NOT_LOADED: RETVAL = "not_loaded"; break;
    case CMRX_DICT_SAME:       RETVAL = "same"; break;
    case CMRX_DICT_DIFFERENT:  RETVAL = "different"; break;
    default:                   croak("%s", cmrx_status_str(CMRX_E_ARG));
    }
  OUTPUT:
    RETVAL

void
_train(samples, dict_size, method, k, d, steps, level, id)
    AV *samples
    UV dict_size
    IV method
    UV k
    UV d
    UV steps
    IV level
    UV id
  PREINIT:
    const uint8_t **ptrs;
    size_t *lens, count, got = 0;
    cmrx_training how;
    int status;
    SV *out;
  PPCODE:
    /* The numbers are checked (and their magic run) before the samples'
     * pointers are taken: no perl code runs after that until the engine is
     * done with them. */
    if (method < INT32_MIN || method > INT32_MAX || level < INT32_MIN || level > INT32_MAX
        || k > U32_MAX || d > U32_MAX || steps > U32_MAX || id > U32_MAX)
        croak("train_dictionary: %s", cmrx_status_str(CMRX_E_ARG));
    how.method = (int32_t)method;
    how.k = (uint32_t)k;
    how.d = (uint32_t)d;
    how.steps = (uint32_t)steps;
    how.level = (int32_t)level;
    how.id = (uint32_t)id;
    count = sample_arrays(aTHX_ samples, "train_dictionary", &ptrs, &lens);
    out = sv_2mortal(newSV(dict_size + NUL_LEN));
    status = cmrx_zstd_train_with(ptrs, lens, count, (size_t)dict_size, &how,
                                  (uint8_t *)SvPVX(out), &got);
    if (status != CMRX_OK)
        croak("train_dictionary: %s", cmrx_status_str(status));
    EXTEND(SP, TRAINED_RESULTS);
    PUSHs(finish_output(aTHX_ out, got, 0));
    mPUSHu(how.k);
    mPUSHu(how.d);

void
_frame_sizes(dictionary, level, samples)
    SV *dictionary
    IV level
    AV *samples
  PREINIT:
    const uint8_t **ptrs;
    const char *dict = NULL;
    size_t *lens, *sizes, count, i;
    STRLEN dict_len = 0;
    int status, zstd_level;
    AV *result;
  PPCODE:
    zstd_level = checked_zstd_level(aTHX_ "frame_sizes", level);
    SvGETMAGIC(dictionary);
    if (SvOK(dictionary)) {
        /* A copy (its magic has run): the samples' magic below may change
         * the caller's scalar. */
        SV *copy = sv_newmortal();
        sv_setsv_flags(copy, dictionary, 0);
        dict = bytes_nomg(aTHX_ copy, "frame_sizes", &dict_len);
    }
    count = sample_arrays(aTHX_ samples, "frame_sizes", &ptrs, &lens);
    Newx(sizes, AT_LEAST_ONE(count), size_t);
    SAVEFREEPV(sizes);
    status = cmrx_zstd_frame_sizes((const uint8_t *)dict, dict_len, zstd_level, ptrs, lens, count,
                                   sizes);
    if (status != CMRX_OK)
        croak("frame_sizes: %s", cmrx_status_str(status));
    result = newAV();
    sv_2mortal((SV *)result);
    for (i = 0; i < count; i++)
        av_push(result, newSVuv(sizes[i]));
    XPUSHs(sv_2mortal(newRV_inc((SV *)result)));

void
compress(data, ...)
    SV *data
  PREINIT:
    const char *in;
    STRLEN len;
    IV level = 0;
    UV dictionary = 0;
    int status, zstd_level;
    SV *out;
  PPCODE:
    /* Options first (their magic may run perl code), then the input. */
    zstd_compress_options(aTHX_ &ST(FIRST_OPTION), items - FIRST_OPTION, &level, &dictionary);
    zstd_level = checked_zstd_level(aTHX_ ZSTD_COMPRESS, level);
    if (dictionary > (UV)U32_MAX)
        croak(ZSTD_COMPRESS ": no such dictionary ID %" UVuf, dictionary);
    in = bytes_nomg(aTHX_ input_of(aTHX_ data), ZSTD_COMPRESS, &len);
    out = zstd_to_mortal(aTHX_ in, len, zstd_level, (U32)dictionary, &status);
    if (!out && status == CMRX_E_UNKNOWN_DICTIONARY)
        croak(ZSTD_COMPRESS ": dictionary %" UVuf " is not loaded", dictionary);
    ST(0) = out ? out : &PL_sv_undef;
    XSRETURN(1);

void
decompress(data)
    SV *data
  PREINIT:
    const char *in;
    STRLEN len;
    int status, report;
    size_t max_out;
    U32 dictionary;
    SV *out;
  PPCODE:
    max_out = max_decoded(aTHX); /* before the input's pointer: it may run perl code */
    in = bytes_nomg(aTHX_ input_of(aTHX_ data), "Cache::Memcached::RustXS::Zstd::decompress", &len);
    out = decode_to_sv_rescanning(aTHX_ CMRX_DECODE_ZSTD, in, len, max_out, 0, &status, &dictionary,
                                  &report);
    if (out)
        sv_2mortal(out);
    else if (status == CMRX_E_UNKNOWN_DICTIONARY && report)
        warn_missing_dictionary(aTHX_ dictionary); /* perl code ($SIG{__WARN__}): out is safe */
    ST(0) = out ? out : &PL_sv_undef;
    XSRETURN(1);

# ------------------------------------------------------------------------
# Inspecting stored values (for cmrx-dict): one decoder choice by magic
# number and one zstd frame-header reader, the engine's.

MODULE = Cache::Memcached::RustXS  PACKAGE = Cache::Memcached::RustXS

void
decode_compressed(data)
    SV *data
  PREINIT:
    const char *in, *format_name;
    STRLEN len;
    int format, status = CMRX_OK;
    size_t max_out;
    U32 dictionary = 0;
    SV *out = NULL;
  PPCODE:
    /* (value, format, missing dictionary ID): value undef when it does not
     * decode, format undef when no decoder's magic number starts it. */
    max_out = max_decoded(aTHX); /* before the input's pointer: it may run perl code */
    in = bytes_nomg(aTHX_ input_of(aTHX_ data), "decode_compressed", &len);
    format = cmrx_decoder_format((const uint8_t *)in, len);
    format_name = format == CMRX_DECODE_ZSTD ? "zstd"
                : format == CMRX_DECODE_GZIP ? "gzip"
                : format == CMRX_DECODE_ZLIB ? "zlib" : NULL;
    if (format_name)
        out = decode_to_sv(aTHX_ format, in, len, max_out, 0, &status, NULL, &dictionary);
    if (out)
        sv_2mortal(out);
    if (GIMME_V != G_ARRAY) {
        ST(0) = out ? out : &PL_sv_undef;
        XSRETURN(1);
    }
    EXTEND(SP, DECODED_RESULTS);
    PUSHs(out ? out : &PL_sv_undef);
    PUSHs(format_name ? sv_2mortal(newSVpv(format_name, 0)) : &PL_sv_undef);
    PUSHs(status == CMRX_E_UNKNOWN_DICTIONARY ? sv_2mortal(newSVuv(dictionary)) : &PL_sv_undef);

MODULE = Cache::Memcached::RustXS  PACKAGE = Cache::Memcached::RustXS::Zstd

SV *
frame_dictionary_id(data)
    SV *data
  PREINIT:
    const char *in;
    STRLEN len;
    uint32_t id = 0;
  CODE:
    in = bytes_nomg(aTHX_ input_of(aTHX_ data), "frame_dictionary_id", &len);
    RETVAL = cmrx_zstd_frame_dictionary((const uint8_t *)in, len, &id) == CMRX_OK
           ? newSVuv(id) : &PL_sv_undef;
  OUTPUT:
    RETVAL
