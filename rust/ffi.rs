//! The C ABI of the engine, declared in `rust/cmrx.h`.
//!
//! This module and its submodules, one a subsystem (`parser`,
//! `deflate` for gzip and zlib, `decode`, `zstd`, `counters`), are
//! the only place where raw pointers from C become Rust references, so every
//! `unsafe` of the crate's own API boundary sits here, each with the
//! invariant that makes it sound. This file holds what they share: the
//! status codes, the conversions of C buffers and the generated header
//! numbers. Every function catches panics
//! ([`std::panic::catch_unwind`]) and turns them into an error value: no
//! unwind ever crosses into C (the release profile keeps `panic = "unwind"`
//! for exactly this).
//!
//! It holds no policy of its own: it converts C arguments to Rust, calls the
//! engine's modules (which decoder a value gets is [`crate::decode`]'s, when
//! a warning is due [`crate::warning_rate`]', which counter a value goes to
//! [`crate::counters`]') and
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
use std::slice;
use std::sync::OnceLock;

use crate::decode::DecodeFormat;
use crate::deflate::DeflateError;
use crate::parser::ParseError;
use crate::warning_rate;

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

mod counters;
mod decode;
mod deflate;
mod parser;
#[cfg(test)]
mod tests;
mod zstd;

pub use self::counters::*;
pub use self::decode::*;
pub use self::deflate::*;
pub use self::parser::*;
pub use self::zstd::*;

abi_codes! {
    /// What the C ABI's gzip, zlib, zstd and dictionary functions return:
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

/// A failed engine call as the ABI reports it: a status, and the number
/// that goes with some (the capacity of `NeedSpace`, the ID of a dictionary).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Failure {
    status: ResultCode,
    number: u64,
}

impl From<DeflateError> for Failure {
    fn from(e: DeflateError) -> Failure {
        let (status, number) = match e {
            DeflateError::NeedSpace(n) => (ResultCode::NeedSpace, n as u64),
            DeflateError::Data => (ResultCode::Data, 0),
            DeflateError::TooBig => (ResultCode::TooBig, 0),
            DeflateError::Arg => (ResultCode::Arg, 0),
            DeflateError::NoMemory => (ResultCode::NoMemory, 0),
        };
        Failure { status, number }
    }
}

impl From<crate::zstd::Error> for Failure {
    fn from(e: crate::zstd::Error) -> Failure {
        let (status, number) = match e {
            crate::zstd::Error::NeedSpace(n) => (ResultCode::NeedSpace, n as u64),
            crate::zstd::Error::Data => (ResultCode::Data, 0),
            crate::zstd::Error::TooBig => (ResultCode::TooBig, 0),
            crate::zstd::Error::Arg => (ResultCode::Arg, 0),
            crate::zstd::Error::UnknownDictionary(id) => {
                (ResultCode::UnknownDictionary, u64::from(id))
            }
            crate::zstd::Error::BadDictionary => (ResultCode::BadDictionary, 0),
            crate::zstd::Error::DictionaryConflict(id) => {
                (ResultCode::DictionaryConflict, u64::from(id))
            }
            crate::zstd::Error::Training => (ResultCode::Training, 0),
            crate::zstd::Error::NoMemory => (ResultCode::NoMemory, 0),
        };
        Failure { status, number }
    }
}

impl From<crate::decode::Error> for Failure {
    fn from(e: crate::decode::Error) -> Failure {
        match e {
            crate::decode::Error::Deflate(e) => Failure::from(e),
            crate::decode::Error::Zstd(e) => Failure::from(e),
        }
    }
}

/// The `#define` lines of `cmrx.h` that carry the engine's numbers: every
/// code above, the parse errors, the decode formats, the format code for
/// "none", and the codecs' defaults and level ranges. The header holds exactly these lines between its
/// `BEGIN GENERATED` and `END GENERATED` markers.
pub fn header_defines() -> String {
    use crate::{counters, deflate, zstd};
    /// The `(name, code)` pairs of an enum of codes.
    fn codes<T: Copy>(all: &[(T, &str)], code: impl Fn(T) -> i64) -> Vec<(String, i64)> {
        all.iter()
            .map(|&(v, name)| (name.to_owned(), code(v)))
            .collect()
    }
    let mut defines: Vec<(String, i64)> = Vec::new();
    defines.extend(codes(EventKind::ALL, |v| v as i64));
    defines.extend(codes(ParseError::ALL, |v| i64::from(v.code())));
    defines.push(("CMRX_PE_INTERNAL".to_owned(), i64::from(PARSE_INTERNAL)));
    defines.extend(codes(ResultCode::ALL, |v| v as i64));
    defines.extend(codes(DecodeFormat::ALL, |v| v as i64));
    defines.extend(codes(TrainMethod::ALL, |v| v as i64));
    defines.extend(codes(LoadedState::ALL, |v| v as i64));
    defines.extend(codes(counters::TrafficKind::ALL, |v| v as i64));
    defines.extend(codes(counters::Event::ALL, |v| v as i64));
    // The constants (sizes and intervals are far below i64::MAX).
    let constants: &[(&str, i64)] = &[
        ("CMRX_EVENTS", counters::EVENTS as i64),
        ("CMRX_FMT_NONE", 0),
        (
            "CMRX_DEFLATE_USE_DEFAULT_LEVEL",
            i64::from(deflate::USE_DEFAULT_LEVEL),
        ),
        (
            "CMRX_GZIP_DEFAULT_LEVEL",
            i64::from(deflate::GZIP_DEFAULT_LEVEL),
        ),
        (
            "CMRX_ZLIB_DEFAULT_LEVEL",
            i64::from(deflate::ZLIB_DEFAULT_LEVEL),
        ),
        ("CMRX_DEFAULT_MAX_OUTPUT", deflate::DEFAULT_MAX_OUT as i64),
        ("CMRX_GZIP_MIN_LEVEL", i64::from(deflate::GZIP_MIN_LEVEL)),
        ("CMRX_GZIP_MAX_LEVEL", i64::from(deflate::GZIP_MAX_LEVEL)),
        ("CMRX_ZLIB_MIN_LEVEL", i64::from(deflate::ZLIB_MIN_LEVEL)),
        ("CMRX_ZLIB_MAX_LEVEL", i64::from(deflate::ZLIB_MAX_LEVEL)),
        (
            "CMRX_ZSTD_USE_DEFAULT_LEVEL",
            i64::from(zstd::USE_DEFAULT_LEVEL),
        ),
        ("CMRX_ZSTD_DEFAULT_LEVEL", i64::from(zstd::DEFAULT_LEVEL)),
        ("CMRX_ZSTD_MIN_LEVEL", i64::from(zstd::MIN_LEVEL)),
        ("CMRX_ZSTD_MAX_LEVEL", i64::from(zstd::MAX_LEVEL)),
        (
            "CMRX_DEFAULT_WARN_INTERVAL",
            warning_rate::DEFAULT_WARN_INTERVAL as i64,
        ),
    ];
    defines.extend(
        constants
            .iter()
            .map(|&(name, value)| (name.to_owned(), value)),
    );
    let width = defines.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    defines
        .iter()
        .map(|(name, value)| {
            // Negative values in parentheses, as macros must have them.
            let value = if *value < 0 {
                format!("({value})")
            } else {
                value.to_string()
            };
            format!("#define {name:width$} {value}\n")
        })
        .collect()
}

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

/// The status of an engine call that returns only how it went, run under
/// `catch_unwind`.
fn status_of<E: Into<Failure>>(outcome: std::thread::Result<Result<(), E>>) -> i32 {
    match outcome {
        Ok(Ok(())) => ResultCode::Ok as i32,
        Ok(Err(e)) => e.into().status as i32,
        Err(_) => ResultCode::Panic as i32,
    }
}

/// Runs an engine call on C buffers (an input, an output), catching panics.
///
/// # Safety
/// `input_ptr`/`in_len` readable, `out`/`out_cap` writable and disjoint from
/// the input, `out_len` writable or NULL (all as in cmrx.h).
unsafe fn with_buffers(
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

/// The engine's version, NUL-terminated, static (`cmrx_version`).
#[no_mangle]
pub extern "C" fn cmrx_version() -> *const c_char {
    const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    catch_unwind(|| VERSION.as_ptr().cast()).unwrap_or(b"\0".as_ptr().cast())
}
