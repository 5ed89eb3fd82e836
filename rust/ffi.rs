//! The C ABI of the engine, declared in `rust/cmrx.h`.
//!
//! This module is the only place where raw pointers from C become Rust
//! references, so every `unsafe` of the crate's own API boundary sits here,
//! each with the invariant that makes it sound. Every function catches panics
//! ([`std::panic::catch_unwind`]) and turns them into an error value: no
//! unwind ever crosses into C (the release profile keeps `panic = "unwind"`
//! for exactly this).
//!
//! It holds no policy of its own: it converts C arguments to Rust, calls the
//! engine's modules (which decoder a value gets is [`crate::decode`]'s, the
//! once-per-dictionary report of a missing one [`crate::zstd`]'s) and
//! converts the results back.
//!
//! The numbers C sees are defined once, here and in the engine's enums
//! ([`EventKind`], [`ParseError`], [`ResultCode`],
//! [`DecodeFormat`]) and constants (the codecs' defaults and level ranges);
//! the `#define`s of `cmrx.h` are generated from them
//! ([`header_defines`]), and a test fails when the header and the Rust
//! disagree (`CMRX_UPDATE_HEADER=1 cargo test` rewrites that part of it).

use std::ffi::{c_char, CString};
use std::mem::MaybeUninit;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, addr_of_mut};
use std::slice;
use std::sync::OnceLock;

use crate::codec::{self, CodecError};
use crate::counters;
use crate::decode::{self, DecodeFormat};
use crate::parser::{Event, ParseError, ParseStatus, ResponseParser};
use crate::reports;
use crate::sniff;
use crate::zstd;

/// Defines exports that take a number and only compute a number from it,
/// 0 on a panic (as cmrx.h says of its size and yes/no functions):
/// `fn name(arg: type) -> type = expression;`, each with its doc comment.
macro_rules! number_exports {
    ($($(#[$doc:meta])* fn $name:ident($arg:ident: $in:ty) -> $out:ty = $value:expr;)*) => {$(
        $(#[$doc])*
        ///
        /// 0 on a panic.
        #[no_mangle]
        pub extern "C" fn $name($arg: $in) -> $out {
            catch_unwind(|| $value).unwrap_or(0)
        }
    )*};
}

/// Defines the exports of the deflate compressors, which differ only in the
/// codec function they run: `fn name = function;`, each with its doc
/// comment.
macro_rules! deflate_exports {
    ($($(#[$doc:meta])* fn $name:ident = $compress:path;)*) => {$(
        $(#[$doc])*
        ///
        /// # Safety
        /// As in cmrx.h: `input` readable for `in_len`, `out` writable for
        /// `out_cap`, `out_len` writable.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            input: *const u8,
            in_len: usize,
            level: i32,
            out: *mut u8,
            out_cap: usize,
            out_len: *mut usize,
        ) -> i32 {
            let compress = |i: &[u8], o: &mut [MaybeUninit<u8>]| Ok($compress(i, level, o)?);
            // SAFETY: the caller's contract is codec_call's.
            unsafe { codec_call(input, in_len, out, out_cap, out_len, compress) }
        }
    )*};
}

abi_codes! {
    /// What `cmrx_parser_next` returns: the kind of event it stored.
    pub enum EventKind {
        /// The response is bad: `error` says why; the parser is dead.
        Error = -1 => "CMRX_EV_ERROR",
        /// No complete event in the buffer: keep its bytes, read more.
        Partial = 0 => "CMRX_EV_PARTIAL",
        /// A `VALUE` line: key, flags, len (and cas) are set.
        Value = 1 => "CMRX_EV_VALUE",
        /// Data bytes of the current value: data, data_len.
        Data = 2 => "CMRX_EV_DATA",
        /// The value's data and its `\r\n` are complete.
        ValueEnd = 3 => "CMRX_EV_VALUE_END",
        /// `END\r\n`: the response is complete.
        End = 4 => "CMRX_EV_END",
    }
}

abi_codes! {
    /// What the C ABI's codec, zstd and dictionary functions return:
    /// `CMRX_OK` or a `CMRX_E_*` code (`cmrx_status_str` describes each).
    pub enum ResultCode {
        /// Done: `*out_len` bytes were written.
        Ok = 0 => "CMRX_OK" : "ok",
        /// The output buffer is too small: `*out_len` holds the capacity to
        /// try next.
        NeedSpace = 1 => "CMRX_E_NEED_SPACE" : "output buffer too small",
        /// Corrupt or truncated input (zlib's `Z_DATA_ERROR`).
        Data = -3 => "CMRX_E_DATA" : "corrupt or truncated data",
        /// The output would exceed the caller's cap.
        TooBig = -100 => "CMRX_E_TOO_BIG" : "output larger than the limit",
        /// A bad argument: a level out of range, a NULL pointer.
        Arg = -101 => "CMRX_E_ARG" : "bad argument",
        /// A bug: a caught panic.
        Panic = -102 => "CMRX_E_PANIC" : "internal error",
        /// Memory for the compressor or decompressor state ran out.
        NoMemory = -103 => "CMRX_E_NO_MEMORY" : "out of memory",
        /// A zstd frame names a dictionary that is not loaded (its ID is
        /// reported beside).
        UnknownDictionary = -104 => "CMRX_E_UNKNOWN_DICTIONARY" : "the zstd dictionary it needs is not loaded",
        /// Not a standard zstd dictionary.
        BadDictionary = -105 => "CMRX_E_BAD_DICTIONARY" : "not a zstd dictionary",
        /// Another dictionary with the same ID is loaded already.
        DictionaryConflict = -106 => "CMRX_E_DICTIONARY_CONFLICT" : "a different zstd dictionary with the same ID is loaded",
        /// zstd could not train a dictionary from the samples.
        Training = -107 => "CMRX_E_TRAINING" : "zstd could not train a dictionary from these samples",
    }
}

abi_codes! {
    /// How `cmrx_zstd_train_with` builds a dictionary ([`zstd::Method`]).
    pub enum TrainMethod {
        /// ZDICT's fastCover.
        FastCover = 1 => "CMRX_TRAIN_FASTCOVER",
        /// ZDICT's cover.
        Cover = 2 => "CMRX_TRAIN_COVER",
        /// The samples themselves as the content.
        Samples = 3 => "CMRX_TRAIN_SAMPLES",
    }
}

impl TrainMethod {
    /// The method with this code, if any.
    fn from_code(code: i32) -> Option<zstd::Method> {
        TrainMethod::ALL
            .iter()
            .find(|(m, _)| *m as i32 == code)
            .map(|(m, _)| match m {
                TrainMethod::FastCover => zstd::Method::FastCover,
                TrainMethod::Cover => zstd::Method::Cover,
                TrainMethod::Samples => zstd::Method::Samples,
            })
    }
}

/// The parse error code of a caught panic (`CMRX_PE_INTERNAL`): a bug.
pub const PARSE_INTERNAL: i32 = 99;

/// The message of [`PARSE_INTERNAL`].
const PARSE_INTERNAL_MESSAGE: &str = "internal error in the response parser";

/// A failed engine call as the ABI reports it: a status, and the number
/// that goes with some (the capacity of `NeedSpace`, the ID of a dictionary).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Failure {
    status: ResultCode,
    number: u64,
}

impl From<CodecError> for Failure {
    fn from(e: CodecError) -> Failure {
        let (status, number) = match e {
            CodecError::NeedSpace(n) => (ResultCode::NeedSpace, n as u64),
            CodecError::Data => (ResultCode::Data, 0),
            CodecError::TooBig => (ResultCode::TooBig, 0),
            CodecError::Arg => (ResultCode::Arg, 0),
            CodecError::NoMemory => (ResultCode::NoMemory, 0),
        };
        Failure { status, number }
    }
}

impl From<zstd::Error> for Failure {
    fn from(e: zstd::Error) -> Failure {
        let (status, number) = match e {
            zstd::Error::NeedSpace(n) => (ResultCode::NeedSpace, n as u64),
            zstd::Error::Data => (ResultCode::Data, 0),
            zstd::Error::TooBig => (ResultCode::TooBig, 0),
            zstd::Error::Arg => (ResultCode::Arg, 0),
            zstd::Error::UnknownDictionary(id) => (ResultCode::UnknownDictionary, u64::from(id)),
            zstd::Error::BadDictionary => (ResultCode::BadDictionary, 0),
            zstd::Error::DictionaryConflict(id) => (ResultCode::DictionaryConflict, u64::from(id)),
            zstd::Error::Training => (ResultCode::Training, 0),
            zstd::Error::NoMemory => (ResultCode::NoMemory, 0),
        };
        Failure { status, number }
    }
}

impl From<decode::Error> for Failure {
    fn from(e: decode::Error) -> Failure {
        match e {
            decode::Error::Codec(e) => Failure::from(e),
            decode::Error::Zstd(e) => Failure::from(e),
        }
    }
}

/// The `#define` lines of `cmrx.h` that carry the engine's numbers: every
/// code above, the parse errors, the decode formats, the format code for
/// "none", and the codecs' defaults and level ranges. The header holds exactly these lines between its
/// `BEGIN GENERATED` and `END GENERATED` markers.
pub fn header_defines() -> String {
    let mut defines: Vec<(String, String)> = Vec::new();
    let mut add = |name: &str, value: String| defines.push((name.to_owned(), value));
    for &(kind, name) in EventKind::ALL {
        add(name, (kind as i32).to_string());
    }
    for &(error, name) in ParseError::ALL {
        add(name, error.code().to_string());
    }
    add("CMRX_PE_INTERNAL", PARSE_INTERNAL.to_string());
    for &(status, name) in ResultCode::ALL {
        add(name, (status as i32).to_string());
    }
    for &(format, name) in DecodeFormat::ALL {
        add(name, (format as i32).to_string());
    }
    for &(method, name) in TrainMethod::ALL {
        add(name, (method as i32).to_string());
    }
    for &(state, name) in LoadedState::ALL {
        add(name, (state as i32).to_string());
    }
    for &(kind, name) in TrafficKind::ALL {
        add(name, (kind as i32).to_string());
    }
    for &(event, name) in counters::Event::ALL {
        add(name, (event as i32).to_string());
    }
    add("CMRX_EVENTS", counters::EVENTS.to_string());
    add("CMRX_FMT_NONE", "0".to_owned());
    add("CMRX_LEVEL_DEFAULT", codec::LEVEL_DEFAULT.to_string());
    add(
        "CMRX_DEFAULT_GZIP_LEVEL",
        codec::DEFAULT_GZIP_LEVEL.to_string(),
    );
    add(
        "CMRX_DEFAULT_ZLIB_LEVEL",
        codec::DEFAULT_ZLIB_LEVEL.to_string(),
    );
    add(
        "CMRX_DEFAULT_MAX_OUTPUT",
        codec::DEFAULT_MAX_OUT.to_string(),
    );
    add("CMRX_GZIP_MIN_LEVEL", codec::MIN_GZIP_LEVEL.to_string());
    add("CMRX_GZIP_MAX_LEVEL", codec::MAX_GZIP_LEVEL.to_string());
    add("CMRX_ZLIB_MIN_LEVEL", codec::MIN_ZLIB_LEVEL.to_string());
    add("CMRX_ZLIB_MAX_LEVEL", codec::MAX_ZLIB_LEVEL.to_string());
    add("CMRX_ZSTD_DEFAULT_LEVEL", zstd::DEFAULT_LEVEL.to_string());
    add("CMRX_ZSTD_MIN_LEVEL", zstd::MIN_LEVEL.to_string());
    add("CMRX_ZSTD_MAX_LEVEL", zstd::MAX_LEVEL.to_string());
    add(
        "CMRX_DEFAULT_WARN_INTERVAL",
        reports::DEFAULT_WARN_INTERVAL.to_string(),
    );
    let width = defines.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    defines
        .iter()
        .map(|(name, value)| {
            // Negative values in parentheses, as macros must have them.
            let value = if value.starts_with('-') {
                format!("({value})")
            } else {
                value.clone()
            };
            format!("#define {name:width$} {value}\n")
        })
        .collect()
}

/// Mirrors `struct cmrx_event` in cmrx.h field for field.
#[repr(C)]
pub struct CmrxEvent {
    /// Bytes of the buffer this event used (0 for PARTIAL).
    pub consumed: usize,
    /// VALUE: the key, pointing into the buffer.
    pub key: *const u8,
    /// VALUE: the key's length.
    pub key_len: usize,
    /// VALUE: client flags.
    pub flags: u32,
    /// VALUE: declared data length.
    pub len: u64,
    /// VALUE: cas unique, when `has_cas`.
    pub cas: u64,
    /// VALUE: whether `cas` is set.
    pub has_cas: i32,
    /// DATA: the bytes, pointing into the buffer.
    pub data: *const u8,
    /// DATA: how many.
    pub data_len: usize,
    /// ERROR: a `CMRX_PE_*` code.
    pub error: i32,
}

/// Mirrors `struct cmrx_training` in cmrx.h field for field: what
/// `cmrx_zstd_train_with` does ([`zstd::Training`]), and, after it, the
/// segment size and sequence length it used.
#[repr(C)]
pub struct CmrxTraining {
    /// A `CMRX_TRAIN_*` code.
    pub method: i32,
    /// Segment size (0: search); set to the one used.
    pub k: u32,
    /// Sequence length, 6 or 8 (0: both tried); set to the one used.
    pub d: u32,
    /// Segment sizes tried when `k` is 0 (0: ZDICT's default).
    pub steps: u32,
    /// The level the dictionary is made for.
    pub level: i32,
    /// The dictionary's ID (0: drawn from its content).
    pub id: u32,
}

/// The opaque `cmrx_parser` of cmrx.h.
pub struct CmrxParser(ResponseParser);

/// Borrows `(ptr, len)` from C as a byte slice.
///
/// # Safety
/// `ptr` must point to `len` readable bytes that stay valid and unmodified for
/// `'a`, or `len` must be 0 (then `ptr` may be NULL or dangling).
unsafe fn input<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: the caller guarantees ptr..ptr+len is readable and stays
        // valid and unmodified for 'a; len > 0 here.
        unsafe { slice::from_raw_parts(ptr, len) }
    }
}

/// Borrows `(ptr, cap)` from C as an output buffer that may be uninitialised.
///
/// # Safety
/// `ptr` must point to `cap` writable bytes, not aliased by any input slice of
/// the same call, valid for `'a`, or `cap` must be 0.
unsafe fn output<'a>(ptr: *mut u8, cap: usize) -> &'a mut [MaybeUninit<u8>] {
    if cap == 0 {
        &mut []
    } else {
        // SAFETY: the caller guarantees ptr..ptr+cap is writable, unaliased
        // and valid for 'a; MaybeUninit<u8> has u8's layout and accepts any
        // (even uninitialised) contents.
        unsafe { slice::from_raw_parts_mut(ptr.cast::<MaybeUninit<u8>>(), cap) }
    }
}

/// A new parser (`cmrx_parser_new`): NULL if memory is short or on a panic.
#[no_mangle]
pub extern "C" fn cmrx_parser_new(max_value_len: u64) -> *mut CmrxParser {
    catch_unwind(|| Box::into_raw(Box::new(CmrxParser(ResponseParser::new(max_value_len)))))
        .unwrap_or(ptr::null_mut())
}

/// Frees a parser (`cmrx_parser_free`).
///
/// # Safety
/// `parser` is NULL or came from `cmrx_parser_new` and is not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn cmrx_parser_free(parser: *mut CmrxParser) {
    if !parser.is_null() {
        // SAFETY: the pointer came from Box::into_raw in cmrx_parser_new and the
        // caller gives up its ownership here. Dropping a parser cannot panic.
        drop(unsafe { Box::from_raw(parser) });
    }
}

/// Writes the fields of `ev` that `kind` defines, through the raw pointer:
/// the caller's struct may be uninitialised, so no reference to it is made.
///
/// # Safety
/// `ev` is non-NULL and points to a writable `cmrx_event`.
unsafe fn store_event(ev: *mut CmrxEvent, consumed: usize, event: &Event<'_>) -> EventKind {
    // SAFETY: ev points to a writable cmrx_event (the caller's contract);
    // addr_of_mut! takes each field's address without creating a reference
    // to possibly uninitialised memory, and write() neither reads nor drops
    // the old value.
    unsafe {
        addr_of_mut!((*ev).consumed).write(consumed);
        match *event {
            Event::Data(data) => {
                addr_of_mut!((*ev).data).write(data.as_ptr());
                addr_of_mut!((*ev).data_len).write(data.len());
                EventKind::Data
            }
            Event::ValueEnd => EventKind::ValueEnd,
            Event::Value {
                key,
                flags,
                len,
                cas,
            } => {
                addr_of_mut!((*ev).key).write(key.as_ptr());
                addr_of_mut!((*ev).key_len).write(key.len());
                addr_of_mut!((*ev).flags).write(flags);
                addr_of_mut!((*ev).len).write(len);
                addr_of_mut!((*ev).has_cas).write(i32::from(cas.is_some()));
                addr_of_mut!((*ev).cas).write(cas.unwrap_or(0));
                EventKind::Value
            }
            Event::End => EventKind::End,
        }
    }
}

/// Stores an error code in `ev` (which may be uninitialised).
///
/// # Safety
/// `ev` is non-NULL and points to a writable `cmrx_event`.
unsafe fn store_error(ev: *mut CmrxEvent, code: i32) -> i32 {
    // SAFETY: as in store_event.
    unsafe {
        addr_of_mut!((*ev).consumed).write(0);
        addr_of_mut!((*ev).error).write(code);
    }
    EventKind::Error as i32
}

/// The next event at the front of `buf[0..len)` (`cmrx_parser_next`).
///
/// # Safety
/// `parser` is a live pointer from `cmrx_parser_new` (or NULL), used by one
/// thread at a time; `buf` points to `len` readable bytes; `ev` to a
/// writable, possibly uninitialised `cmrx_event`. The key and data pointers
/// stored in `ev` point into `buf`.
#[no_mangle]
pub unsafe extern "C" fn cmrx_parser_next(
    parser: *mut CmrxParser,
    buf: *const u8,
    len: usize,
    ev: *mut CmrxEvent,
) -> i32 {
    if ev.is_null() {
        return EventKind::Error as i32; // nowhere to say more
    }
    // SAFETY: parser is NULL or live and not shared during the call (the
    // caller's contract); as_mut yields None for NULL.
    let Some(parser) = (unsafe { parser.as_mut() }) else {
        // SAFETY: ev was checked non-NULL and is writable (contract).
        return unsafe { store_error(ev, PARSE_INTERNAL) };
    };
    if buf.is_null() && len != 0 {
        // SAFETY: as above.
        return unsafe { store_error(ev, PARSE_INTERNAL) };
    }
    // SAFETY: buf/len describe readable memory for the duration of the call
    // (contract; NULL only with len 0, checked above).
    let bytes = unsafe { input(buf, len) };
    // Only the fields the returned kind defines are written (cmrx.h): this
    // runs three times per value on the hot path.
    let outcome = catch_unwind(AssertUnwindSafe(|| parser.0.next(bytes)));
    match outcome {
        Ok(Ok(ParseStatus::Complete((consumed, event)))) => {
            // SAFETY: ev checked non-NULL, writable by contract.
            unsafe { store_event(ev, consumed, &event) as i32 }
        }
        Ok(Ok(ParseStatus::Partial)) => {
            // SAFETY: ev checked non-NULL, writable by contract.
            unsafe { addr_of_mut!((*ev).consumed).write(0) };
            EventKind::Partial as i32
        }
        Ok(Err(e)) => {
            // SAFETY: ev checked non-NULL, writable by contract.
            unsafe { store_error(ev, e.code()) }
        }
        Err(_) => {
            // SAFETY: ev checked non-NULL, writable by contract.
            unsafe { store_error(ev, PARSE_INTERNAL) }
        }
    }
}

/// Data bytes still expected for the current value
/// (`cmrx_parser_data_remaining`).
///
/// # Safety
/// `parser` is NULL or a live pointer from `cmrx_parser_new`.
#[no_mangle]
pub unsafe extern "C" fn cmrx_parser_data_remaining(parser: *const CmrxParser) -> u64 {
    // SAFETY: parser is NULL or live (contract); as_ref yields None for NULL.
    unsafe { parser.as_ref() }.map_or(0, |p| p.0.data_remaining())
}

/// Counts `n` data bytes of the current value as consumed, bytes the
/// caller read straight into its own buffer (`cmrx_parser_take_data`, see
/// [`ResponseParser::take_data`]): `CMRX_OK`, or `CMRX_E_ARG` for a NULL
/// parser or more bytes than the value has left (the parser unchanged).
///
/// # Safety
/// `parser` is NULL or a live pointer from `cmrx_parser_new`, used by one
/// thread at a time.
#[no_mangle]
pub unsafe extern "C" fn cmrx_parser_take_data(parser: *mut CmrxParser, n: u64) -> i32 {
    // SAFETY: parser is NULL or live and not shared during the call (the
    // caller's contract); as_mut yields None for NULL.
    let Some(parser) = (unsafe { parser.as_mut() }) else {
        return ResultCode::Arg as i32;
    };
    match catch_unwind(AssertUnwindSafe(|| parser.0.take_data(n))) {
        Ok(Ok(())) => ResultCode::Ok as i32,
        Ok(Err(_)) => ResultCode::Arg as i32,
        Err(_) => ResultCode::Panic as i32,
    }
}

/// A static, NUL-terminated description of a `CMRX_PE_*` code
/// (`cmrx_parse_error_str`): [`ParseError`]'s own message, the one table;
/// an unknown code gets `CMRX_PE_INTERNAL`'s.
#[no_mangle]
pub extern "C" fn cmrx_parse_error_str(error: i32) -> *const c_char {
    static MESSAGES: Messages = Messages::new();
    MESSAGES.find(error, PARSE_INTERNAL, || {
        ParseError::ALL
            .iter()
            .map(|&(e, _)| (e.code(), e.as_str()))
            .chain([(PARSE_INTERNAL, PARSE_INTERNAL_MESSAGE)])
            .collect()
    })
}

/// The messages of a table of codes as C takes them: static and
/// NUL-terminated, made on first use.
struct Messages(OnceLock<Vec<(i32, CString)>>);

impl Messages {
    const fn new() -> Messages {
        Messages(OnceLock::new())
    }

    /// The message of `code`, else that of `fallback`, from the table
    /// `all` makes (on the first call); "internal error" on a panic.
    fn find(
        &'static self,
        code: i32,
        fallback: i32,
        all: impl FnOnce() -> Vec<(i32, &'static str)>,
    ) -> *const c_char {
        let found = catch_unwind(AssertUnwindSafe(|| {
            let messages = self.0.get_or_init(|| {
                all()
                    .into_iter()
                    .filter_map(|(code, text)| Some((code, CString::new(text).ok()?)))
                    .collect()
            });
            let message = |wanted: i32| messages.iter().find(|(code, _)| *code == wanted);
            message(code)
                .or_else(|| message(fallback))
                .map(|(_, text)| text.as_ptr())
        }));
        match found {
            Ok(Some(text)) => text,
            _ => b"internal error\0".as_ptr().cast(),
        }
    }
}

/// Stores an engine result into the caller's `out_len` (the output's length,
/// or the capacity `NeedSpace` asks for) and says how it went.
fn status(result: Result<usize, Failure>, out_len: &mut usize) -> i32 {
    match result {
        Ok(n) => {
            *out_len = n;
            ResultCode::Ok as i32
        }
        Err(failure) => {
            if failure.status == ResultCode::NeedSpace {
                *out_len = usize::try_from(failure.number).unwrap_or(usize::MAX);
            }
            failure.status as i32
        }
    }
}

/// Runs a codec call on C buffers, catching panics.
///
/// # Safety
/// `input_ptr`/`in_len` readable, `out`/`out_cap` writable and disjoint from
/// the input, `out_len` writable or NULL (all as in cmrx.h).
unsafe fn codec_call(
    input_ptr: *const u8,
    in_len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
    f: impl FnOnce(&[u8], &mut [MaybeUninit<u8>]) -> Result<usize, Failure>,
) -> i32 {
    // SAFETY: out_len is writable or NULL per the contract; NULL is an
    // argument error.
    let Some(out_len) = (unsafe { out_len.as_mut() }) else {
        return ResultCode::Arg as i32;
    };
    if (input_ptr.is_null() && in_len != 0) || (out.is_null() && out_cap != 0) {
        return ResultCode::Arg as i32;
    }
    // SAFETY: the pointers were checked for NULL above; lengths and
    // disjointness are the caller's contract.
    let (src, dst) = unsafe { (input(input_ptr, in_len), output(out, out_cap)) };
    match catch_unwind(AssertUnwindSafe(|| f(src, dst))) {
        Ok(result) => status(result, out_len),
        Err(_) => ResultCode::Panic as i32,
    }
}

number_exports! {
    /// Largest gzip output for `in_len` bytes (`cmrx_gzip_bound`).
    fn cmrx_gzip_bound(in_len: usize) -> usize = codec::gzip_bound(in_len);
    /// Largest zlib output for `in_len` bytes (`cmrx_zlib_bound`).
    fn cmrx_zlib_bound(in_len: usize) -> usize = codec::zlib_bound(in_len);
    /// 1 if `level` is one `cmrx_gzip` accepts, else 0
    /// (`cmrx_gzip_level_valid`).
    fn cmrx_gzip_level_valid(level: i32) -> i32 = i32::from(codec::gzip_level(level).is_ok());
}

deflate_exports! {
    /// gzip with memGzip's framing (`cmrx_gzip`).
    fn cmrx_gzip = codec::gzip;
    /// zlib format with Compress::Zlib::compress's levels (`cmrx_zlib`).
    fn cmrx_zlib = codec::zlib;
}

/// Runs a read-only look at C input, catching panics; `fallback` for a NULL
/// pointer with a length, or a panic.
///
/// # Safety
/// `input_ptr` readable for `in_len` bytes (as in cmrx.h).
unsafe fn inspect<T>(
    input_ptr: *const u8,
    in_len: usize,
    fallback: T,
    f: impl FnOnce(&[u8]) -> T,
) -> T {
    if input_ptr.is_null() && in_len != 0 {
        return fallback;
    }
    // SAFETY: checked for NULL; readability is the caller's contract.
    let src = unsafe { input(input_ptr, in_len) };
    catch_unwind(AssertUnwindSafe(|| f(src))).unwrap_or(fallback)
}

/// A first output capacity for `cmrx_decode` (`cmrx_decode_size_hint`):
/// what the data's header says when it says something plausible, else a few
/// times the input; 0 for an unknown format, or when decoding will fail at
/// once (a zstd frame stating more than `max_out`).
///
/// # Safety
/// `input` readable for `in_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn cmrx_decode_size_hint(
    format: i32,
    input: *const u8,
    in_len: usize,
    max_out: usize,
) -> usize {
    let Some(format) = DecodeFormat::from_code(format) else {
        return 0;
    };
    // SAFETY: the caller's contract is inspect's.
    unsafe {
        inspect(input, in_len, 0, |src| {
            decode::size_hint(format, src, max_out)
        })
    }
}

/// Decodes `input` as `format` into `out` (`cmrx_decode`). `*in_used` (if
/// not NULL) gets how much of the input gzip data took up, as memGunzip
/// consumes it (the whole input for the other formats); `*dictionary` (if
/// not NULL) the ID of the dictionary a zstd frame needs, with
/// `CMRX_E_UNKNOWN_DICTIONARY`.
///
/// # Safety
/// As in cmrx.h: `input` readable for `in_len`, `out` writable for
/// `out_cap`, `out_len` writable, `in_used` and `dictionary` writable or NULL.
#[no_mangle]
pub unsafe extern "C" fn cmrx_decode(
    format: i32,
    input: *const u8,
    in_len: usize,
    out: *mut u8,
    out_cap: usize,
    max_out: usize,
    out_len: *mut usize,
    in_used: *mut usize,
    dictionary: *mut u32,
) -> i32 {
    let Some(format) = DecodeFormat::from_code(format) else {
        return ResultCode::Arg as i32;
    };
    // SAFETY: in_used and dictionary are writable or NULL (contract), and
    // as_mut yields None for NULL.
    let (in_used, dictionary) = unsafe { (in_used.as_mut(), dictionary.as_mut()) };
    let mut missing = None;
    // SAFETY: the caller's contract is codec_call's.
    let status = unsafe {
        codec_call(input, in_len, out, out_cap, out_len, |i, o| {
            let decoded = decode::decode(format, i, o, max_out).map_err(|e| {
                let failure = Failure::from(e);
                if failure.status == ResultCode::UnknownDictionary {
                    missing = u32::try_from(failure.number).ok();
                }
                failure
            })?;
            if let Some(slot) = in_used {
                *slot = decoded.input_used;
            }
            Ok(decoded.len)
        })
    };
    if let (Some(slot), Some(id)) = (dictionary, missing) {
        *slot = id;
    }
    status
}

number_exports! {
    /// Largest frame `cmrx_zstd_compress` can make of `in_len` bytes
    /// (`cmrx_zstd_compress_bound`).
    fn cmrx_zstd_compress_bound(in_len: usize) -> usize = zstd::compress_bound(in_len);
    /// 1 if `cmrx_zstd_compress` accepts `level` (0 for the default, or
    /// [`zstd::MIN_LEVEL`]`..=`[`zstd::MAX_LEVEL`]), else 0
    /// (`cmrx_zstd_level_valid`).
    fn cmrx_zstd_level_valid(level: i32) -> i32 = i32::from(zstd::compression_level(level).is_ok());
}

/// One zstd frame of `input` at `level`, with the loaded dictionary
/// `dictionary` (0: none) (`cmrx_zstd_compress`).
///
/// # Safety
/// As in cmrx.h: `input` readable for `in_len`, `out` writable for `out_cap`.
#[no_mangle]
pub unsafe extern "C" fn cmrx_zstd_compress(
    input: *const u8,
    in_len: usize,
    level: i32,
    dictionary: u32,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> i32 {
    // SAFETY: the caller's contract is codec_call's.
    unsafe {
        codec_call(input, in_len, out, out_cap, out_len, |i, o| {
            let dict = match dictionary {
                0 => None,
                id => Some(zstd::lookup(id).ok_or(zstd::Error::UnknownDictionary(id))?),
            };
            Ok(zstd::compress(i, level, dict.as_deref(), o)?)
        })
    }
}

/// Loads the standard zstd dictionary `bytes` for the whole process
/// (`cmrx_zstd_register`); `*id` gets its ID (also when it conflicts).
///
/// # Safety
/// `bytes` readable for `len` bytes, `id` writable.
#[no_mangle]
pub unsafe extern "C" fn cmrx_zstd_register(bytes: *const u8, len: usize, id: *mut u32) -> i32 {
    if id.is_null() || (bytes.is_null() && len != 0) {
        return ResultCode::Arg as i32;
    }
    // SAFETY: checked for NULL; readability is the caller's contract.
    let src = unsafe { input(bytes, len) };
    let (status, number) = match catch_unwind(|| zstd::register(src)) {
        Ok(Ok(registered)) => (ResultCode::Ok, registered),
        Ok(Err(e)) => {
            let failure = Failure::from(e);
            (failure.status, u32::try_from(failure.number).unwrap_or(0))
        }
        Err(_) => (ResultCode::Panic, 0),
    };
    // SAFETY: id was checked non-NULL and is writable (contract).
    unsafe { id.write(number) };
    status as i32
}

/// The `count` samples of a C array pair as slices (a NULL sample is
/// empty); `None` when an array is NULL with a count.
///
/// # Safety
/// `samples` and `lens` point to `count` entries (or are NULL); each
/// `samples[i]` is readable for `lens[i]` bytes, for `'a`.
unsafe fn sample_slices<'a>(
    samples: *const *const u8,
    lens: *const usize,
    count: usize,
) -> Option<Vec<&'a [u8]>> {
    if count == 0 {
        return Some(Vec::new());
    }
    if samples.is_null() || lens.is_null() {
        return None;
    }
    // SAFETY: both arrays hold count entries (contract, non-NULL here), and
    // each sample is readable for its length.
    unsafe {
        let ptrs = slice::from_raw_parts(samples, count);
        let sizes = slice::from_raw_parts(lens, count);
        Some(
            ptrs.iter()
                .zip(sizes)
                .map(|(&p, &n)| if p.is_null() { &[][..] } else { input(p, n) })
                .collect(),
        )
    }
}

/// Copies a dictionary the engine made into the caller's buffer; its
/// length (`TooBig` if it does not fit).
fn copy_dictionary(dict: &[u8], o: &mut [MaybeUninit<u8>]) -> Result<usize, Failure> {
    let dst = o
        .get_mut(..dict.len())
        .ok_or(Failure::from(zstd::Error::TooBig))?;
    for (d, &b) in dst.iter_mut().zip(dict) {
        d.write(b);
    }
    Ok(dict.len())
}

// ------------------------------------------------ dictionary sets' helpers

/// Prepares the compression tables of loaded dictionary `id` at `level`
/// now (`cmrx_zstd_prepare`), so that processes forked afterwards share
/// them: `CMRX_E_UNKNOWN_DICTIONARY` if it is not loaded, `CMRX_E_ARG` for a
/// level out of range, `CMRX_E_NO_MEMORY`.
#[no_mangle]
pub extern "C" fn cmrx_zstd_prepare(id: u32, level: i32) -> i32 {
    let prepared = catch_unwind(|| {
        zstd::lookup(id)
            .ok_or(zstd::Error::UnknownDictionary(id))?
            .prepare(level)
    });
    match prepared {
        Ok(Ok(())) => ResultCode::Ok as i32,
        Ok(Err(e)) => Failure::from(e).status as i32,
        Err(_) => ResultCode::Panic as i32,
    }
}

/// The ID of the standard zstd dictionary `bytes`, once libzstd has loaded
/// its tables (`cmrx_zstd_dictionary_id`): `CMRX_E_BAD_DICTIONARY` if it
/// cannot. Loads nothing into the process.
///
/// # Safety
/// `bytes` readable for `len` bytes, `id` writable.
#[no_mangle]
pub unsafe extern "C" fn cmrx_zstd_dictionary_id(
    bytes: *const u8,
    len: usize,
    id: *mut u32,
) -> i32 {
    if id.is_null() || (bytes.is_null() && len != 0) {
        return ResultCode::Arg as i32;
    }
    // SAFETY: checked for NULL; readability is the caller's contract.
    let src = unsafe { input(bytes, len) };
    let (status, number) = match catch_unwind(|| zstd::Dictionary::from_bytes(src)) {
        Ok(Ok(d)) => (ResultCode::Ok, d.id()),
        Ok(Err(e)) => (Failure::from(e).status, 0),
        Err(_) => (ResultCode::Panic, 0),
    };
    // SAFETY: id was checked non-NULL and is writable (contract).
    unsafe { id.write(number) };
    status as i32
}

/// Copies the standard zstd dictionary `bytes` into `out` (which holds
/// `len` bytes) with `id` in its header instead of its own
/// (`cmrx_zstd_dictionary_with_id`): `CMRX_E_ARG` for an ID of 0,
/// `CMRX_E_BAD_DICTIONARY` for bytes that are not a loadable dictionary.
///
/// # Safety
/// `bytes` readable for `len` bytes, `out` writable for `len` bytes and not
/// overlapping `bytes`, `out_len` writable.
#[no_mangle]
pub unsafe extern "C" fn cmrx_zstd_dictionary_with_id(
    bytes: *const u8,
    len: usize,
    id: u32,
    out: *mut u8,
    out_len: *mut usize,
) -> i32 {
    // SAFETY: the caller's contract is codec_call's, with out_cap = len.
    unsafe {
        codec_call(bytes, len, out, len, out_len, |i, o| {
            copy_dictionary(&zstd::with_dictionary_id(i, id)?, o)
        })
    }
}

abi_codes! {
    /// What `cmrx_zstd_loaded_state` says of an ID and a dictionary's bytes.
    pub enum LoadedState {
        /// No dictionary with that ID is loaded.
        NotLoaded = 0 => "CMRX_DICT_NOT_LOADED",
        /// The dictionary loaded with that ID is these bytes.
        Same = 1 => "CMRX_DICT_SAME",
        /// A different dictionary is loaded with that ID.
        Different = 2 => "CMRX_DICT_DIFFERENT",
        /// A NULL pointer with a length, or a caught panic.
        Error = -1 => "CMRX_DICT_ERROR",
    }
}

/// Whether dictionary `id` is loaded, and whether it is `bytes`
/// (`cmrx_zstd_loaded_state`): a `CMRX_DICT_*` code.
///
/// # Safety
/// `bytes` readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn cmrx_zstd_loaded_state(id: u32, bytes: *const u8, len: usize) -> i32 {
    // SAFETY: the caller's contract is inspect's.
    let state = unsafe {
        inspect(
            bytes,
            len,
            LoadedState::Error,
            |src| match zstd::registered(id, src) {
                zstd::Registered::No => LoadedState::NotLoaded,
                zstd::Registered::Same => LoadedState::Same,
                zstd::Registered::Different => LoadedState::Different,
            },
        )
    };
    state as i32
}

/// Trains a standard zstd dictionary of at most `dict_size` bytes on
/// `count` samples into `out`, which holds `dict_size`, as `how` says
/// (`cmrx_zstd_train_with`): a method, its parameters, a level and an ID.
/// On `CMRX_OK`, `how->k` and `how->d` are the ones used.
///
/// # Safety
/// `samples` and `lens` point to `count` entries; each `samples[i]` is
/// readable for `lens[i]` bytes; `out` writable for `dict_size` bytes;
/// `out_len` writable; `how` points to a readable and writable
/// `cmrx_training`.
#[no_mangle]
pub unsafe extern "C" fn cmrx_zstd_train_with(
    samples: *const *const u8,
    lens: *const usize,
    count: usize,
    dict_size: usize,
    how: *mut CmrxTraining,
    out: *mut u8,
    out_len: *mut usize,
) -> i32 {
    // SAFETY: how is NULL or a valid cmrx_training (contract).
    let Some(how) = (unsafe { how.as_mut() }) else {
        return ResultCode::Arg as i32;
    };
    let Some(method) = TrainMethod::from_code(how.method) else {
        return ResultCode::Arg as i32;
    };
    // SAFETY: the caller's contract is sample_slices'.
    let Some(inputs) = (unsafe { sample_slices(samples, lens, count) }) else {
        return ResultCode::Arg as i32;
    };
    let training = zstd::Training {
        method,
        k: how.k,
        d: how.d,
        steps: how.steps,
        level: how.level,
        id: how.id,
    };
    let mut used = (how.k, how.d);
    // SAFETY: out is writable for dict_size bytes and out_len writable
    // (contract); codec_call checks them for NULL.
    let status = unsafe {
        codec_call(ptr::null(), 0, out, dict_size, out_len, |_, o| {
            let trained = zstd::train_with(&inputs, dict_size, &training)?;
            used = (trained.k, trained.d);
            copy_dictionary(&trained.bytes, o)
        })
    };
    if status == ResultCode::Ok as i32 {
        (how.k, how.d) = used;
    }
    status
}

/// The size of the frame `cmrx_zstd_compress` would make of each of
/// `count` samples at `level`, with the standard dictionary `dict` (not
/// loaded, and not kept; `dict_len` 0: none) (`cmrx_zstd_frame_sizes`),
/// into `sizes[0..count)`.
///
/// # Safety
/// `dict` readable for `dict_len` bytes; `samples` and `lens` as for
/// `cmrx_zstd_train_with`; `sizes` writable for `count` entries.
#[no_mangle]
pub unsafe extern "C" fn cmrx_zstd_frame_sizes(
    dict: *const u8,
    dict_len: usize,
    level: i32,
    samples: *const *const u8,
    lens: *const usize,
    count: usize,
    sizes: *mut usize,
) -> i32 {
    if (dict.is_null() && dict_len != 0) || (sizes.is_null() && count != 0) {
        return ResultCode::Arg as i32;
    }
    // SAFETY: the caller's contract is sample_slices'.
    let Some(inputs) = (unsafe { sample_slices(samples, lens, count) }) else {
        return ResultCode::Arg as i32;
    };
    // SAFETY: dict is readable for dict_len bytes (contract; checked for
    // NULL above).
    let dict_bytes = unsafe { input(dict, dict_len) };
    let measured = catch_unwind(|| {
        let dictionary = match dict_len {
            0 => None,
            _ => Some(zstd::Dictionary::from_bytes(dict_bytes)?),
        };
        zstd::frame_sizes(&inputs, level, dictionary.as_ref())
    });
    match measured {
        Ok(Ok(measured)) => {
            // SAFETY: sizes is writable for count entries (contract;
            // non-NULL when count > 0), and measured has count of them.
            unsafe {
                for (i, &n) in measured.iter().enumerate().take(count) {
                    sizes.add(i).write(n);
                }
            }
            ResultCode::Ok as i32
        }
        Ok(Err(e)) => Failure::from(e).status as i32,
        Err(_) => ResultCode::Panic as i32,
    }
}

/// 1 when reporting `text` is due at `now` (seconds), `interval` seconds
/// after the last report of it, else 0 (`cmrx_report_due`): the policy is
/// [`reports::report_due`]'s. 0 for a NULL text with a length, or a panic.
///
/// # Safety
/// `text` readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn cmrx_report_due(
    text: *const u8,
    len: usize,
    now: u64,
    interval: u64,
) -> i32 {
    // SAFETY: the caller's contract is inspect's.
    unsafe {
        inspect(text, len, 0, |text| {
            i32::from(reports::report_due(text, now, interval))
        })
    }
}

abi_codes! {
    /// Whose values a row of `cmrx_traffic_counts` counts, and what
    /// `cmrx_note_written` is told a value was written as.
    pub enum TrafficKind {
        /// zstd with the dictionary whose ID the row gives.
        ZstdDictionary = 0 => "CMRX_TRAFFIC_ZSTD_DICTIONARY",
        /// zstd without a dictionary.
        ZstdPlain = 1 => "CMRX_TRAFFIC_ZSTD",
        /// gzip.
        Gzip = 2 => "CMRX_TRAFFIC_GZIP",
        /// zlib.
        Zlib = 3 => "CMRX_TRAFFIC_ZLIB",
    }
}

/// Mirrors `struct cmrx_traffic` in cmrx.h field for field: the values of
/// one kind written and read ([`counters::ValueCounters`]).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CmrxTraffic {
    /// A `CMRX_TRAFFIC_*` code.
    pub kind: i32,
    /// The dictionary's ID (`CMRX_TRAFFIC_ZSTD_DICTIONARY`), else 0.
    pub dictionary: u32,
    /// Values written.
    pub written: u64,
    /// Their bytes uncompressed.
    pub written_raw: u64,
    /// Their bytes compressed.
    pub written_stored: u64,
    /// Values read.
    pub read: u64,
    /// Their bytes uncompressed.
    pub read_raw: u64,
    /// Their bytes compressed.
    pub read_stored: u64,
}

impl CmrxTraffic {
    fn of(kind: TrafficKind, dictionary: u32, counted: &counters::ValueCounters) -> CmrxTraffic {
        let (w, r) = (counted.written.counts(), counted.read.counts());
        CmrxTraffic {
            kind: kind as i32,
            dictionary,
            written: w.values,
            written_raw: w.raw_bytes,
            written_stored: w.stored_bytes,
            read: r.values,
            read_raw: r.raw_bytes,
            read_stored: r.stored_bytes,
        }
    }
}

/// The counters of the kinds without a dictionary, with their codes.
fn plain_traffic() -> [(TrafficKind, &'static counters::ValueCounters); 3] {
    [
        (TrafficKind::ZstdPlain, &counters::ZSTD_PLAIN),
        (TrafficKind::Gzip, &counters::GZIP),
        (TrafficKind::Zlib, &counters::ZLIB),
    ]
}

/// Counts a value written (`cmrx_note_written`): compressed as `kind`,
/// with dictionary `dictionary` for `CMRX_TRAFFIC_ZSTD_DICTIONARY`, from
/// `raw` bytes to `stored`. `CMRX_E_UNKNOWN_DICTIONARY` when that
/// dictionary is not loaded, `CMRX_E_ARG` for an unknown kind.
#[no_mangle]
pub extern "C" fn cmrx_note_written(kind: i32, dictionary: u32, raw: usize, stored: usize) -> i32 {
    let noted = catch_unwind(|| {
        let counted = match TrafficKind::ALL.iter().find(|(k, _)| *k as i32 == kind) {
            Some((TrafficKind::ZstdDictionary, _)) => match zstd::lookup(dictionary) {
                Some(d) => {
                    d.counters().written.add(raw, stored);
                    return ResultCode::Ok;
                }
                None => return ResultCode::UnknownDictionary,
            },
            Some((k, _)) => plain_traffic()
                .into_iter()
                .find(|(p, _)| p == k)
                .map(|(_, c)| c),
            None => None,
        };
        match counted {
            Some(c) => {
                c.written.add(raw, stored);
                ResultCode::Ok
            }
            None => ResultCode::Arg,
        }
    });
    noted.unwrap_or(ResultCode::Panic) as i32
}

/// Counts one `CMRX_EVENT_*` (`cmrx_note_event`): `CMRX_E_ARG` for an
/// unknown code.
#[no_mangle]
pub extern "C" fn cmrx_note_event(event: i32) -> i32 {
    let noted = catch_unwind(|| match counters::Event::from_code(event) {
        Some(e) => {
            e.note();
            ResultCode::Ok
        }
        None => ResultCode::Arg,
    });
    noted.unwrap_or(ResultCode::Panic) as i32
}

/// The traffic counters (`cmrx_traffic_counts`): zstd without a dictionary, gzip,
/// zlib, then each loaded dictionary by ID, as many as fit in `rows`
/// (`cap` of them); returns how many there are (call again with more room
/// when that is above `cap`). 0 on a panic.
///
/// # Safety
/// `rows` writable for `cap` entries (or NULL with `cap` 0).
#[no_mangle]
pub unsafe extern "C" fn cmrx_traffic_counts(rows: *mut CmrxTraffic, cap: usize) -> usize {
    let all = catch_unwind(|| {
        let mut all: Vec<CmrxTraffic> = plain_traffic()
            .iter()
            .map(|(kind, c)| CmrxTraffic::of(*kind, 0, c))
            .collect();
        all.extend(
            zstd::registered_dictionaries()
                .iter()
                .map(|d| CmrxTraffic::of(TrafficKind::ZstdDictionary, d.id(), d.counters())),
        );
        all
    });
    let Ok(all) = all else { return 0 };
    if !rows.is_null() {
        for (i, row) in all.iter().take(cap).enumerate() {
            // SAFETY: i < cap, and rows is writable for cap entries (contract).
            unsafe { rows.add(i).write(*row) };
        }
    }
    all.len()
}

/// How many of each `CMRX_EVENT_*` so far (`cmrx_event_counts`), indexed by
/// code, as many as fit in `counts` (`cap` of them); returns how many kinds
/// there are (`CMRX_EVENTS`).
///
/// # Safety
/// `counts` writable for `cap` entries (or NULL with `cap` 0).
#[no_mangle]
pub unsafe extern "C" fn cmrx_event_counts(counts: *mut u64, cap: usize) -> usize {
    let all = counters::event_counts();
    if !counts.is_null() {
        for (i, n) in all.iter().take(cap).enumerate() {
            // SAFETY: i < cap, and counts is writable for cap entries (contract).
            unsafe { counts.add(i).write(*n) };
        }
    }
    all.len()
}

/// A static, NUL-terminated description of a status (`cmrx_status_str`);
/// an unknown status gets `CMRX_E_PANIC`'s.
#[no_mangle]
pub extern "C" fn cmrx_status_str(status: i32) -> *const c_char {
    static MESSAGES: Messages = Messages::new();
    MESSAGES.find(status, ResultCode::Panic as i32, || {
        ResultCode::ALL
            .iter()
            .map(|&(code, _)| (code as i32, code.as_str()))
            .collect()
    })
}

/// The compressed format `input` starts with (`cmrx_sniff_compressed`).
///
/// # Safety
/// `input` readable for `in_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn cmrx_sniff_compressed(input: *const u8, in_len: usize) -> i32 {
    // SAFETY: the caller's contract is inspect's.
    unsafe {
        inspect(input, in_len, 0, |src| {
            sniff::sniff(src).map_or(0, sniff::Format::code)
        })
    }
}

/// Whether a large input is not worth compressing
/// (`cmrx_looks_incompressible`).
///
/// # Safety
/// `input` readable for `in_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn cmrx_looks_incompressible(input: *const u8, in_len: usize) -> i32 {
    // SAFETY: the caller's contract is inspect's.
    unsafe {
        inspect(input, in_len, 0, |src| {
            i32::from(codec::looks_incompressible(src))
        })
    }
}

// ------------------------------------------- inspecting stored values
//
// For tools that read what a cache holds (cmrx-dict): which decoder a value
// stored compressed needs, and which dictionary a zstd frame names.

/// The decoder `input`, a value stored compressed, needs by its magic
/// number (`cmrx_decoder_format`): `CMRX_DECODE_ZSTD`, `CMRX_DECODE_GZIP`
/// or `CMRX_DECODE_ZLIB`, or `CMRX_FMT_NONE` (0) for none of them (see
/// [`decode::stored_decoder`]).
///
/// # Safety
/// `input` readable for `in_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn cmrx_decoder_format(input: *const u8, in_len: usize) -> i32 {
    // SAFETY: the caller's contract is inspect's.
    unsafe {
        inspect(input, in_len, 0, |src| {
            decode::stored_decoder(src).map_or(0, |d| d.format() as i32)
        })
    }
}

/// The dictionary ID in the header of the zstd frame `input` starts with
/// (`cmrx_zstd_frame_dictionary`): `CMRX_OK` with `*id` set (0 when the
/// frame names none), or `CMRX_E_DATA` when `input` does not start with a
/// whole zstd frame header (see [`zstd::frame_header_dictionary_id`]).
///
/// # Safety
/// `input` readable for `in_len` bytes, `id` writable.
#[no_mangle]
pub unsafe extern "C" fn cmrx_zstd_frame_dictionary(
    input: *const u8,
    in_len: usize,
    id: *mut u32,
) -> i32 {
    if id.is_null() {
        return ResultCode::Arg as i32;
    }
    // SAFETY: the caller's contract is inspect's.
    let found = unsafe {
        inspect(input, in_len, Err(ResultCode::Arg), |src| {
            zstd::frame_header_dictionary_id(src).map_err(|e| Failure::from(e).status)
        })
    };
    match found {
        Ok(named) => {
            // SAFETY: id was checked non-NULL and is writable (contract).
            unsafe { id.write(named.unwrap_or(0)) };
            ResultCode::Ok as i32
        }
        Err(status) => status as i32,
    }
}

/// The engine's version, NUL-terminated, static (`cmrx_version`).
#[no_mangle]
pub extern "C" fn cmrx_version() -> *const c_char {
    const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    catch_unwind(|| VERSION.as_ptr().cast()).unwrap_or(b"\0".as_ptr().cast())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/rust/cmrx.h");
    const BEGIN: &str = "/* BEGIN GENERATED";
    const END: &str = "/* END GENERATED */";

    /// cmrx.h carries exactly the numbers of the Rust enums and constants.
    /// With CMRX_UPDATE_HEADER=1 the generated part is rewritten instead.
    #[test]
    fn header_defines_match_the_rust() {
        let header = std::fs::read_to_string(HEADER_PATH).expect("read rust/cmrx.h");
        let begin = header
            .find(BEGIN)
            .expect("BEGIN GENERATED marker in cmrx.h");
        let body = begin
            + header[begin..]
                .find("*/\n")
                .expect("end of the BEGIN comment")
            + 3;
        let end = header.find(END).expect("END GENERATED marker in cmrx.h");
        let want = header_defines();
        if std::env::var_os("CMRX_UPDATE_HEADER").is_some() {
            let updated = format!("{}{}{}", &header[..body], want, &header[end..]);
            std::fs::write(HEADER_PATH, updated).expect("write rust/cmrx.h");
            return;
        }
        assert_eq!(
            &header[body..end],
            want,
            "rust/cmrx.h is out of date: run CMRX_UPDATE_HEADER=1 cargo test"
        );
        // No other line of the header defines a number.
        let outside = format!("{}{}", &header[..body], &header[end..]);
        for line in outside.lines() {
            assert!(
                !(line.starts_with("#define CMRX_") && line.split_whitespace().nth(2).is_some()),
                "a numeric #define outside the generated part: {line}"
            );
        }
    }

    #[test]
    fn codes_are_unique_within_each_enum() {
        let mut kinds: Vec<i32> = EventKind::ALL.iter().map(|&(k, _)| k as i32).collect();
        kinds.sort_unstable();
        kinds.dedup();
        assert_eq!(kinds.len(), EventKind::ALL.len());
        let mut statuses: Vec<i32> = ResultCode::ALL.iter().map(|&(s, _)| s as i32).collect();
        statuses.sort_unstable();
        statuses.dedup();
        assert_eq!(statuses.len(), ResultCode::ALL.len());
        let mut errors: Vec<i32> = ParseError::ALL.iter().map(|&(e, _)| e.code()).collect();
        errors.push(PARSE_INTERNAL);
        errors.sort_unstable();
        errors.dedup();
        assert_eq!(errors.len(), ParseError::ALL.len() + 1);
    }

    #[test]
    fn parse_error_messages_come_from_the_enum() {
        for &(e, _) in ParseError::ALL {
            // SAFETY: cmrx_parse_error_str returns a static NUL-terminated string.
            let text = unsafe { std::ffi::CStr::from_ptr(cmrx_parse_error_str(e.code())) };
            assert_eq!(text.to_str().unwrap(), e.as_str());
        }
        for code in [PARSE_INTERNAL, 0, -5, 1000] {
            // SAFETY: cmrx_parse_error_str returns a static NUL-terminated string.
            let text = unsafe { std::ffi::CStr::from_ptr(cmrx_parse_error_str(code)) };
            assert_eq!(text.to_str().unwrap(), PARSE_INTERNAL_MESSAGE);
        }
    }

    #[test]
    fn parser_round_trip_through_the_abi() {
        let resp = b"VALUE k 5 3\r\nabc\r\nEND\r\n";
        let p = cmrx_parser_new(0);
        assert!(!p.is_null());
        // Uninitialised on purpose: the ABI must only ever write into it.
        let mut ev = MaybeUninit::<CmrxEvent>::uninit();
        let mut at = 0;
        let mut kinds = Vec::new();
        // SAFETY: p is live until freed at the end; every buffer passed is a
        // live slice with its length; ev is only read through raw pointers,
        // field by field, after the ABI wrote those fields.
        unsafe {
            loop {
                let k = cmrx_parser_next(p, resp[at..].as_ptr(), resp.len() - at, ev.as_mut_ptr());
                kinds.push(k);
                let consumed = addr_of_mut!((*ev.as_mut_ptr()).consumed).read();
                if k == EventKind::Value as i32 {
                    let e = ev.as_ptr();
                    let key = slice::from_raw_parts((*e).key, (*e).key_len);
                    assert_eq!(key, b"k");
                    assert_eq!(((*e).flags, (*e).len), (5, 3));
                }
                if k <= EventKind::Partial as i32 || k == EventKind::End as i32 {
                    break;
                }
                at += consumed;
            }
            cmrx_parser_free(p);
        }
        assert_eq!(
            kinds,
            [
                EventKind::Value,
                EventKind::Data,
                EventKind::ValueEnd,
                EventKind::End
            ]
            .map(|k| k as i32)
        );
    }

    #[test]
    fn data_read_elsewhere_is_taken_through_the_abi() {
        let line = b"VALUE k 0 10\r\n";
        let p = cmrx_parser_new(0);
        let mut ev = MaybeUninit::<CmrxEvent>::zeroed();
        // SAFETY: p is live until freed at the end (or NULL on purpose where
        // the ABI must refuse it); buffers are live slices with their
        // lengths; ev is zeroed, so reading it is sound.
        unsafe {
            let next = |bytes: &[u8], ev: *mut CmrxEvent| {
                cmrx_parser_next(p, bytes.as_ptr(), bytes.len(), ev)
            };
            assert_eq!(next(line, ev.as_mut_ptr()), EventKind::Value as i32);
            assert_eq!(
                cmrx_parser_take_data(p, 11),
                ResultCode::Arg as i32,
                "more than the value has"
            );
            assert_eq!(
                cmrx_parser_data_remaining(p),
                10,
                "... refused, nothing taken"
            );
            assert_eq!(cmrx_parser_take_data(p, 4), ResultCode::Ok as i32);
            assert_eq!(cmrx_parser_data_remaining(p), 6);
            assert_eq!(
                next(b"efghij\r\nEND\r\n", ev.as_mut_ptr()),
                EventKind::Data as i32
            );
            assert_eq!(ev.assume_init_ref().data_len, 6);
            assert_eq!(
                cmrx_parser_take_data(p, 1),
                ResultCode::Arg as i32,
                "no data left"
            );
            assert_eq!(cmrx_parser_take_data(p, 0), ResultCode::Ok as i32);
            assert_eq!(
                next(b"\r\nEND\r\n", ev.as_mut_ptr()),
                EventKind::ValueEnd as i32
            );
            assert_eq!(
                cmrx_parser_take_data(ptr::null_mut(), 0),
                ResultCode::Arg as i32
            );
            cmrx_parser_free(p);
        }
    }

    #[test]
    fn parser_errors_carry_codes() {
        let p = cmrx_parser_new(0);
        let mut ev = MaybeUninit::<CmrxEvent>::zeroed();
        let line = b"SERVER_ERROR out of memory\r\n";
        // SAFETY: p is live until freed at the end; buffers are live slices
        // with their lengths (or NULL with 0, or NULL on purpose where the
        // ABI must refuse it); ev is zeroed, so reading it is sound.
        unsafe {
            assert_eq!(
                cmrx_parser_next(p, line.as_ptr(), line.len(), ev.as_mut_ptr()),
                EventKind::Error as i32
            );
            assert_eq!(ev.assume_init_ref().error, ParseError::ServerError.code());
            assert_eq!(
                cmrx_parser_next(ptr::null_mut(), ptr::null(), 0, ev.as_mut_ptr()),
                EventKind::Error as i32
            );
            assert_eq!(ev.assume_init_ref().error, PARSE_INTERNAL);
            assert_eq!(
                cmrx_parser_next(p, ptr::null(), 5, ev.as_mut_ptr()),
                EventKind::Error as i32
            );
            assert_eq!(
                cmrx_parser_next(p, line.as_ptr(), line.len(), ptr::null_mut()),
                EventKind::Error as i32
            );
            cmrx_parser_free(p);
        }
    }

    /// cmrx_decode with every out-parameter, for the tests.
    fn decode(
        format: DecodeFormat,
        input: &[u8],
        cap: usize,
        max_out: usize,
    ) -> (i32, Vec<u8>, usize, u32) {
        let mut out = vec![0u8; cap];
        let (mut n, mut used, mut dict) = (0, 0, 0);
        // SAFETY: every pointer is a live buffer with its length, or a
        // writable local.
        let rc = unsafe {
            cmrx_decode(
                format as i32,
                input.as_ptr(),
                input.len(),
                out.as_mut_ptr(),
                out.len(),
                max_out,
                &mut n,
                &mut used,
                &mut dict,
            )
        };
        if rc == ResultCode::Ok as i32 {
            out.truncate(n);
        }
        (
            rc,
            out,
            if rc == ResultCode::NeedSpace as i32 {
                n
            } else {
                used
            },
            dict,
        )
    }

    #[test]
    fn codec_round_trip_and_need_space_through_the_abi() {
        let ok = ResultCode::Ok as i32;
        let data = vec![b'a'; 100_000];
        let mut gz = vec![0u8; cmrx_gzip_bound(data.len())];
        let mut n = 0;
        // SAFETY: every pointer passed is a live buffer with its length (or
        // NULL on purpose where the ABI must refuse it).
        unsafe {
            let rc = cmrx_gzip(
                data.as_ptr(),
                data.len(),
                6,
                gz.as_mut_ptr(),
                gz.len(),
                &mut n,
            );
            assert_eq!(rc, ok);
            gz.truncate(n);
            let mut out = vec![0u8; 64];
            let rc = cmrx_gzip(ptr::null(), 5, 6, out.as_mut_ptr(), out.len(), &mut n);
            assert_eq!(rc, ResultCode::Arg as i32);
            let rc = cmrx_gzip(data.as_ptr(), 5, 13, out.as_mut_ptr(), out.len(), &mut n);
            assert_eq!(rc, ResultCode::Arg as i32);
            let rc = cmrx_zlib(data.as_ptr(), 5, 10, out.as_mut_ptr(), out.len(), &mut n);
            assert_eq!(rc, ResultCode::Arg as i32, "zlib's levels stop at 9");
            let rc = cmrx_zlib(data.as_ptr(), 5, -1, out.as_mut_ptr(), out.len(), &mut n);
            assert_eq!(rc, ok, "-1 is the default level");
            let hint =
                cmrx_decode_size_hint(DecodeFormat::Gzip as i32, gz.as_ptr(), gz.len(), 1 << 20);
            assert_eq!(hint, data.len());
        }
        let (rc, _, want, _) = decode(DecodeFormat::Gzip, &gz, 10, 1 << 20);
        assert_eq!(rc, ResultCode::NeedSpace as i32);
        assert!(want > 10 && want <= 1 << 20);
        // Trailing bytes after the member are not part of it.
        let mut two = gz.clone();
        two.extend_from_slice(b"next member");
        let (rc, out, used, _) = decode(DecodeFormat::Gzip, &two, data.len(), 1 << 20);
        assert_eq!((rc, &out[..], used), (ok, &data[..], gz.len()));
        let (rc, ..) = decode(DecodeFormat::Gzip, &gz, 1000, 1000);
        assert_eq!(rc, ResultCode::TooBig as i32);
        let (rc, ..) = decode(DecodeFormat::Gzip, b"nope!nope!nope", 100, 1 << 20);
        assert_eq!(rc, ResultCode::Data as i32);
        assert_eq!(cmrx_gzip_level_valid(12), 1);
        assert_eq!(cmrx_gzip_level_valid(-1), 1);
        assert_eq!(cmrx_gzip_level_valid(13), 0);
        assert_eq!(cmrx_gzip_level_valid(-2), 0);
    }

    #[test]
    fn decode_formats_by_magic() {
        let ok = ResultCode::Ok as i32;
        let data = b"the same data in three formats ".repeat(20);
        let gz = crate::testing::gzip_vec(&data, 6).unwrap();
        let z = crate::testing::zlib_vec(&data, 6).unwrap();
        let zs = zstd::compress_vec(&data, 3, None).unwrap();
        for (name, input) in [("gzip", &gz), ("zlib", &z), ("zstd", &zs)] {
            let (rc, out, ..) = decode(DecodeFormat::Any, input, data.len(), 1 << 20);
            assert_eq!((rc, out), (ok, data.clone()), "Any reads {name}");
            let (rc, ..) = decode(DecodeFormat::Cached, input, data.len(), 1 << 20);
            let want = if name == "zlib" {
                ResultCode::Data as i32
            } else {
                ok
            };
            assert_eq!(rc, want, "Cached reads zstd and gzip, not {name}");
        }
        let (rc, ..) = decode(DecodeFormat::Gzip, &zs, data.len(), 1 << 20);
        assert_eq!(rc, ResultCode::Data as i32, "Gzip is gzip only");
        let (rc, ..) = decode(DecodeFormat::Zstd, &gz, data.len(), 1 << 20);
        assert_eq!(rc, ResultCode::Data as i32, "Zstd is zstd only");
        let (rc, ..) = decode(DecodeFormat::Zstd, &zs, data.len() - 1, data.len() - 1);
        assert_eq!(rc, ResultCode::TooBig as i32);
        // SAFETY: a live slice and its length.
        let rc = unsafe { cmrx_decode_size_hint(99, zs.as_ptr(), zs.len(), 1 << 20) };
        assert_eq!(rc, 0, "an unknown format has no hint");
        let (rc, ..) = {
            let mut n = 0;
            let mut out = [0u8; 8];
            // SAFETY: live buffers with their lengths; NULL optional outputs.
            let rc = unsafe {
                cmrx_decode(
                    99,
                    zs.as_ptr(),
                    zs.len(),
                    out.as_mut_ptr(),
                    8,
                    8,
                    &mut n,
                    ptr::null_mut(),
                    ptr::null_mut(),
                )
            };
            (rc, ())
        };
        assert_eq!(
            rc,
            ResultCode::Arg as i32,
            "an unknown format is a bad argument"
        );
    }

    /// A `cmrx_training` as a C caller fills it in: `k` 0 (searched), the
    /// rest as given.
    fn c_training(method: i32, d: u32, steps: u32, level: i32, id: u32) -> CmrxTraining {
        CmrxTraining {
            method,
            k: 0,
            d,
            steps,
            level,
            id,
        }
    }

    #[test]
    fn zstd_training_choices_and_frame_sizes_through_the_abi() {
        let ok = ResultCode::Ok as i32;
        let samples: Vec<Vec<u8>> = (0..200)
            .map(|i| format!(r#"{{"id":{i},"kind":"event","at":{}}}"#, i * 977).into_bytes())
            .collect();
        let ptrs: Vec<*const u8> = samples.iter().map(|s| s.as_ptr()).collect();
        let lens: Vec<usize> = samples.iter().map(Vec::len).collect();
        let mut dict = vec![0u8; 4096];
        let mut dict_len = 0;
        let train_from =
            |count: usize, how: &mut CmrxTraining, dict: &mut Vec<u8>, dict_len: &mut usize| {
                assert!(count <= ptrs.len());
                // SAFETY: the sample arrays hold at least count entries of live
                // buffers; dict is writable for its length; how and dict_len
                // are writable locals.
                unsafe {
                    cmrx_zstd_train_with(
                        ptrs.as_ptr(),
                        lens.as_ptr(),
                        count,
                        dict.len(),
                        how,
                        dict.as_mut_ptr(),
                        dict_len,
                    )
                }
            };
        let train = |how: &mut CmrxTraining, dict: &mut Vec<u8>, dict_len: &mut usize| {
            train_from(ptrs.len(), how, dict, dict_len)
        };
        let mut how = c_training(TrainMethod::Cover as i32, 8, 3, 9, 17);
        assert_eq!(train(&mut how, &mut dict, &mut dict_len), ok);
        assert!(how.k >= zstd::TRAIN_MIN_K, "the k found: {}", how.k);
        assert_eq!(how.d, 8);
        let bytes = dict[..dict_len].to_vec();
        assert_eq!(zstd::Dictionary::from_bytes(&bytes).unwrap().id(), 17);
        let mut default = c_training(TrainMethod::FastCover as i32, 0, 4, 3, 0);
        assert_eq!(
            train_from(2, &mut default, &mut dict, &mut dict_len),
            ResultCode::Training as i32,
            "two samples are too few"
        );
        // Unknown methods and bad parameters are refused, and how is left
        // as it was.
        for (method, d) in [(0, 0), (4, 0), (TrainMethod::Samples as i32, 6)] {
            let mut bad = c_training(method, d, 0, 3, 0);
            assert_eq!(
                train(&mut bad, &mut dict, &mut dict_len),
                ResultCode::Arg as i32
            );
            assert_eq!((bad.k, bad.d), (0, d));
        }
        // SAFETY: NULL is refused before anything is read.
        let rc = unsafe {
            cmrx_zstd_train_with(
                ptrs.as_ptr(),
                lens.as_ptr(),
                ptrs.len(),
                dict.len(),
                ptr::null_mut(),
                dict.as_mut_ptr(),
                &mut dict_len,
            )
        };
        assert_eq!(rc, ResultCode::Arg as i32);

        // The sizes of the frames, with that dictionary, without one, and
        // with bytes that are not one.
        let d = zstd::Dictionary::from_bytes(&bytes).unwrap();
        let measure = |dict: &[u8], level: i32| {
            let mut sizes = vec![0usize; 10];
            let dict_ptr = if dict.is_empty() {
                ptr::null()
            } else {
                dict.as_ptr()
            };
            // SAFETY: the dictionary (NULL when empty) and the sample arrays
            // are live buffers with their lengths; sizes holds as many
            // entries as it is told.
            let rc = unsafe {
                cmrx_zstd_frame_sizes(
                    dict_ptr,
                    dict.len(),
                    level,
                    ptrs.as_ptr(),
                    lens.as_ptr(),
                    sizes.len(),
                    sizes.as_mut_ptr(),
                )
            };
            (rc, sizes)
        };
        for (with, level) in [(true, 9), (false, 3)] {
            let dict = if with { &bytes[..] } else { &[][..] };
            let (rc, sizes) = measure(dict, level);
            assert_eq!(rc, ok);
            for (s, &n) in samples.iter().zip(&sizes) {
                let frame = zstd::compress_vec(s, level, with.then_some(&d)).unwrap();
                assert_eq!(frame.len(), n);
            }
        }
        assert_eq!(measure(b"nope", 3).0, ResultCode::BadDictionary as i32);
        assert_eq!(measure(&[], 23).0, ResultCode::Arg as i32);
        let mut sizes = vec![0usize; 10];
        // SAFETY: NULL arrays with a count are refused before anything is
        // read.
        let rc = unsafe {
            cmrx_zstd_frame_sizes(
                ptr::null(),
                0,
                3,
                ptr::null(),
                ptr::null(),
                10,
                sizes.as_mut_ptr(),
            )
        };
        assert_eq!(rc, ResultCode::Arg as i32);
    }

    #[test]
    fn zstd_through_the_abi() {
        let ok = ResultCode::Ok as i32;
        let samples: Vec<Vec<u8>> = (0..300)
            .map(|i| {
                format!(r#"{{"id":{i},"name":"user{}","roles":["a","b"]}}"#, i * 13).into_bytes()
            })
            .collect();
        let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
        let dict = zstd::train(&refs, 4096).unwrap();
        let (mut id, mut again, mut bad) = (0, 0, 77);
        // SAFETY: every pointer is a live buffer with its length, or a
        // writable local.
        unsafe {
            assert_eq!(cmrx_zstd_register(dict.as_ptr(), dict.len(), &mut id), ok);
            assert!(id != 0);
            assert_eq!(
                cmrx_zstd_register(dict.as_ptr(), dict.len(), &mut again),
                ok
            );
            assert_eq!(again, id, "registering the same bytes again");
            assert_eq!(
                cmrx_zstd_register(b"not a dictionary".as_ptr(), 16, &mut bad),
                ResultCode::BadDictionary as i32
            );
            assert_eq!(bad, 0);
        }
        let compress = |dictionary: u32| {
            let value = &samples[7];
            let mut frame = vec![0u8; cmrx_zstd_compress_bound(value.len())];
            let mut frame_len = 0;
            // SAFETY: live buffers with their lengths, a writable local.
            let rc = unsafe {
                cmrx_zstd_compress(
                    value.as_ptr(),
                    value.len(),
                    3,
                    dictionary,
                    frame.as_mut_ptr(),
                    frame.len(),
                    &mut frame_len,
                )
            };
            frame.truncate(frame_len);
            (rc, frame)
        };
        assert_eq!(compress(12345).0, ResultCode::UnknownDictionary as i32);
        let (rc, frame) = compress(id);
        assert_eq!(rc, ok);
        let (rc, out, ..) = decode(DecodeFormat::Cached, &frame, samples[7].len(), 1 << 20);
        assert_eq!((rc, out), (ok, samples[7].clone()));
        // A frame naming a dictionary nobody loaded: its ID comes back.
        let mut other = frame.clone();
        let at = 5; // after the magic and the frame header descriptor
        other[at] ^= 0x55;
        if zstd::frame_dictionary_id(&other).is_some_and(|d| d != id) {
            let (rc, _, _, missing) = decode(DecodeFormat::Cached, &other, 4096, 1 << 20);
            assert_eq!(rc, ResultCode::UnknownDictionary as i32);
            assert_eq!(Some(missing), zstd::frame_dictionary_id(&other));
        }
        let text = b"ffi test 77777";
        // SAFETY: text is readable for its length.
        let due = |now| unsafe { cmrx_report_due(text.as_ptr(), text.len(), now, 60) };
        assert_eq!(due(500), 1);
        assert_eq!(due(501), 0);
        assert_eq!(due(560), 1);
        assert_eq!(cmrx_zstd_level_valid(0), 1);
        assert_eq!(cmrx_zstd_level_valid(22), 1);
        assert_eq!(cmrx_zstd_level_valid(23), 0);
        // SAFETY: cmrx_status_str returns a static NUL-terminated string.
        let text = unsafe {
            std::ffi::CStr::from_ptr(cmrx_status_str(ResultCode::UnknownDictionary as i32))
        };
        assert_eq!(
            text.to_str().unwrap(),
            ResultCode::UnknownDictionary.as_str()
        );
    }

    #[test]
    fn dictionary_set_helpers_through_the_abi() {
        let ok = ResultCode::Ok as i32;
        let samples: Vec<Vec<u8>> = (0..300)
            .map(|i| {
                format!(r#"{{"order":{i},"item":"sku{}","qty":{}}}"#, i * 17, i % 4).into_bytes()
            })
            .collect();
        let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
        let dict = zstd::train(&refs, 2048).unwrap();
        let mut copy = vec![0u8; dict.len()];
        let (mut copy_len, mut id) = (0, 0);
        // SAFETY: every pointer is a live buffer of the length given, or a
        // writable local.
        unsafe {
            assert_eq!(
                cmrx_zstd_dictionary_id(dict.as_ptr(), dict.len(), &mut id),
                ok
            );
            assert_eq!(id, zstd::Dictionary::from_bytes(&dict).unwrap().id());
            assert_eq!(
                cmrx_zstd_dictionary_id(b"nope".as_ptr(), 4, &mut id),
                ResultCode::BadDictionary as i32
            );
            assert_eq!(
                cmrx_zstd_dictionary_id(dict.as_ptr(), 1, ptr::null_mut()),
                ResultCode::Arg as i32
            );
            let rc = cmrx_zstd_dictionary_with_id(
                dict.as_ptr(),
                dict.len(),
                90_001,
                copy.as_mut_ptr(),
                &mut copy_len,
            );
            assert_eq!((rc, copy_len), (ok, dict.len()));
            assert_eq!(
                cmrx_zstd_dictionary_id(copy.as_ptr(), copy_len, &mut id),
                ok
            );
            assert_eq!(id, 90_001);
            let rc = cmrx_zstd_dictionary_with_id(
                dict.as_ptr(),
                dict.len(),
                0,
                copy.as_mut_ptr(),
                &mut copy_len,
            );
            assert_eq!(rc, ResultCode::Arg as i32);
            let rc = cmrx_zstd_dictionary_with_id(
                b"nope".as_ptr(),
                4,
                9,
                copy.as_mut_ptr(),
                &mut copy_len,
            );
            assert_eq!(rc, ResultCode::BadDictionary as i32);

            assert_eq!(
                cmrx_zstd_prepare(90_001, 9),
                ResultCode::UnknownDictionary as i32
            );
            assert_eq!(
                cmrx_zstd_loaded_state(90_001, copy.as_ptr(), copy.len()),
                LoadedState::NotLoaded as i32
            );
            assert_eq!(cmrx_zstd_register(copy.as_ptr(), copy.len(), &mut id), ok);
            assert_eq!(cmrx_zstd_prepare(90_001, 9), ok);
            assert_eq!(cmrx_zstd_prepare(90_001, 99), ResultCode::Arg as i32);
            assert_eq!(
                cmrx_zstd_loaded_state(90_001, copy.as_ptr(), copy.len()),
                LoadedState::Same as i32
            );
            assert_eq!(
                cmrx_zstd_loaded_state(90_001, dict.as_ptr(), dict.len()),
                LoadedState::Different as i32
            );
            assert_eq!(
                cmrx_zstd_loaded_state(90_001, ptr::null(), 5),
                LoadedState::Error as i32,
                "a NULL pointer with a length is refused"
            );
        }
    }

    #[test]
    fn stored_values_inspected_through_the_abi() {
        let data = b"a value stored compressed ".repeat(10);
        let zs = zstd::compress_vec(&data, 3, None).unwrap();
        let cases: [(&[u8], i32); 5] = [
            (&zs, DecodeFormat::Zstd as i32),
            (
                &crate::testing::gzip_vec(&data, 6).unwrap(),
                DecodeFormat::Gzip as i32,
            ),
            (
                &crate::testing::zlib_vec(&data, 6).unwrap(),
                DecodeFormat::Zlib as i32,
            ),
            (b"never compressed", 0),
            (b"", 0),
        ];
        for (input, want) in cases {
            // SAFETY: a live slice and its length.
            let got = unsafe { cmrx_decoder_format(input.as_ptr(), input.len()) };
            assert_eq!(got, want);
        }
        // SAFETY: NULL with a length is refused without a read.
        assert_eq!(unsafe { cmrx_decoder_format(ptr::null(), 4) }, 0);
        let mut id = 77;
        // SAFETY: live slices with their lengths, a writable local, or NULL on
        // purpose where the ABI must refuse it.
        unsafe {
            assert_eq!(
                cmrx_zstd_frame_dictionary(zs.as_ptr(), zs.len(), &mut id),
                ResultCode::Ok as i32
            );
            assert_eq!(id, 0, "a frame without a dictionary");
            let gz = b"\x1f\x8b\x08\x00";
            assert_eq!(
                cmrx_zstd_frame_dictionary(gz.as_ptr(), gz.len(), &mut id),
                ResultCode::Data as i32
            );
            assert_eq!(
                cmrx_zstd_frame_dictionary(zs.as_ptr(), 5, &mut id),
                ResultCode::Data as i32
            );
            assert_eq!(
                cmrx_zstd_frame_dictionary(ptr::null(), 5, &mut id),
                ResultCode::Arg as i32
            );
            assert_eq!(
                cmrx_zstd_frame_dictionary(zs.as_ptr(), zs.len(), ptr::null_mut()),
                ResultCode::Arg as i32
            );
        }
        let mut named = zstd::compress_vec(&data, 3, None).unwrap();
        // A hand-made header naming dictionary 0x01020304 (no content size,
        // a window byte).
        named.splice(4..named.len(), [0x03, 7 << 3, 4, 3, 2, 1]);
        // SAFETY: a live slice and its length, a writable local.
        let rc = unsafe { cmrx_zstd_frame_dictionary(named.as_ptr(), named.len(), &mut id) };
        assert_eq!((rc, id), (ResultCode::Ok as i32, 0x0102_0304));
    }

    #[test]
    fn version_is_the_crates() {
        // SAFETY: cmrx_version returns a static NUL-terminated string.
        let v = unsafe { std::ffi::CStr::from_ptr(cmrx_version()) };
        assert_eq!(v.to_str().unwrap(), crate::VERSION);
    }

    #[test]
    fn counters_through_the_abi() {
        // Process-wide counts: only what this test adds is asserted.
        let rows = || {
            // SAFETY: NULL with a capacity of 0 only counts the rows.
            let n = unsafe { cmrx_traffic_counts(ptr::null_mut(), 0) };
            let mut rows = vec![CmrxTraffic::default(); n];
            // SAFETY: rows is writable for n entries.
            let got = unsafe { cmrx_traffic_counts(rows.as_mut_ptr(), n) };
            rows.truncate(got.min(n));
            rows
        };
        let gzip_written = |rows: &[CmrxTraffic]| {
            let row = rows
                .iter()
                .find(|r| r.kind == TrafficKind::Gzip as i32)
                .unwrap();
            (row.written, row.written_raw, row.written_stored)
        };
        let before = gzip_written(&rows());
        assert_eq!(
            cmrx_note_written(TrafficKind::Gzip as i32, 0, 1000, 300),
            ResultCode::Ok as i32
        );
        let after = gzip_written(&rows());
        assert_eq!(
            (after.0 - before.0, after.1 - before.1, after.2 - before.2),
            (1, 1000, 300)
        );
        assert!(
            rows().len() >= plain_traffic().len(),
            "the kinds without a dictionary, always"
        );
        assert_eq!(
            cmrx_note_written(TrafficKind::ZstdDictionary as i32, 4_100_000_001, 10, 5),
            ResultCode::UnknownDictionary as i32
        );
        assert_eq!(cmrx_note_written(99, 0, 10, 5), ResultCode::Arg as i32);

        let mut events = [0u64; counters::EVENTS];
        let count = |events: &mut [u64]| {
            // SAFETY: events is writable for its length.
            unsafe { cmrx_event_counts(events.as_mut_ptr(), events.len()) }
        };
        assert_eq!(count(&mut events), counters::EVENTS);
        let before = events[counters::Event::TooSmall as usize];
        assert_eq!(
            cmrx_note_event(counters::Event::TooSmall as i32),
            ResultCode::Ok as i32
        );
        count(&mut events);
        assert!(events[counters::Event::TooSmall as usize] > before);
        assert_eq!(cmrx_note_event(-5), ResultCode::Arg as i32);
        // SAFETY: NULL with a capacity of 0 only counts the kinds.
        let kinds = unsafe { cmrx_event_counts(ptr::null_mut(), 0) };
        assert_eq!(kinds, counters::EVENTS);
    }
}
