//! The C ABI of the engine, declared in `rust/cmrx.h`.
//!
//! This module is the only place where raw pointers from C become Rust
//! references, so every `unsafe` of the crate's own API boundary sits here,
//! each with the invariant that makes it sound. Every function catches panics
//! ([`std::panic::catch_unwind`]) and turns them into an error value: no
//! unwind ever crosses into C (the release profile keeps `panic = "unwind"`
//! for exactly this).

use std::ffi::c_char;
use std::mem::MaybeUninit;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::slice;

use crate::codec::{self, CodecError};
use crate::parser::{Event, ResponseParser, Status};
use crate::sniff;

const EV_PARTIAL: i32 = 0;
const EV_VALUE: i32 = 1;
const EV_DATA: i32 = 2;
const EV_VALUE_END: i32 = 3;
const EV_END: i32 = 4;
const EV_ERROR: i32 = -1;
const PE_INTERNAL: i32 = 99;

const OK: i32 = 0;
const E_NEED_SPACE: i32 = 1;
const E_DATA: i32 = -3;
const E_TOO_BIG: i32 = -100;
const E_ARG: i32 = -101;
const E_PANIC: i32 = -102;

/// Mirrors `struct cmrx_event` in cmrx.h field for field.
#[repr(C)]
pub struct CmrxEvent {
    pub consumed: usize,
    pub key: *const u8,
    pub key_len: usize,
    pub flags: u32,
    pub len: u64,
    pub cas: u64,
    pub has_cas: i32,
    pub data: *const u8,
    pub data_len: usize,
    pub error: i32,
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
        slice::from_raw_parts(ptr, len)
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
        slice::from_raw_parts_mut(ptr.cast::<MaybeUninit<u8>>(), cap)
    }
}

#[no_mangle]
pub extern "C" fn cmrx_parser_new(max_value_len: u64) -> *mut CmrxParser {
    catch_unwind(|| Box::into_raw(Box::new(CmrxParser(ResponseParser::new(max_value_len)))))
        .unwrap_or(ptr::null_mut())
}

/// # Safety
/// `parser` is NULL or came from `cmrx_parser_new` and is not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn cmrx_parser_free(parser: *mut CmrxParser) {
    if !parser.is_null() {
        // SAFETY: the pointer came from Box::into_raw in cmrx_parser_new and the
        // caller gives up its ownership here. Dropping a parser cannot panic.
        drop(Box::from_raw(parser));
    }
}

/// # Safety
/// `parser` is NULL or a live pointer from `cmrx_parser_new`, used by one
/// thread at a time.
#[no_mangle]
pub unsafe extern "C" fn cmrx_parser_reset(parser: *mut CmrxParser) {
    // SAFETY: see above; as_mut yields None for NULL.
    if let Some(p) = parser.as_mut() {
        p.0.reset();
    }
}

/// # Safety
/// `parser` is a live pointer from `cmrx_parser_new` (or NULL), `buf` points
/// to `len` readable bytes, and `ev` to a writable `cmrx_event`. The key and
/// data pointers stored in `ev` point into `buf`.
#[no_mangle]
pub unsafe extern "C" fn cmrx_parser_next(
    parser: *mut CmrxParser,
    buf: *const u8,
    len: usize,
    ev: *mut CmrxEvent,
) -> i32 {
    // SAFETY: the caller passes a writable event; without one there is
    // nothing to report into.
    let Some(ev) = ev.as_mut() else {
        return EV_ERROR;
    };
    // Only the fields the returned kind defines are written (cmrx.h): this
    // runs three times per value on the hot path.
    ev.consumed = 0;
    // SAFETY: parser is live and not shared during the call (see above).
    let Some(parser) = parser.as_mut() else {
        ev.error = PE_INTERNAL;
        return EV_ERROR;
    };
    // SAFETY: buf/len describe readable memory for the duration of the call.
    let bytes = input(buf, len);
    match catch_unwind(AssertUnwindSafe(|| parser.0.next(bytes))) {
        Ok(Ok(Status::Complete((consumed, event)))) => {
            ev.consumed = consumed;
            match event {
                Event::Data(data) => {
                    ev.data = data.as_ptr();
                    ev.data_len = data.len();
                    EV_DATA
                }
                Event::ValueEnd => EV_VALUE_END,
                Event::Value {
                    key,
                    flags,
                    len,
                    cas,
                } => {
                    ev.key = key.as_ptr();
                    ev.key_len = key.len();
                    ev.flags = flags;
                    ev.len = len;
                    ev.has_cas = i32::from(cas.is_some());
                    ev.cas = cas.unwrap_or(0);
                    EV_VALUE
                }
                Event::End => EV_END,
            }
        }
        Ok(Ok(Status::Partial)) => EV_PARTIAL,
        Ok(Err(e)) => {
            ev.error = e.code();
            EV_ERROR
        }
        Err(_) => {
            ev.error = PE_INTERNAL;
            EV_ERROR
        }
    }
}

/// # Safety
/// `parser` is NULL or a live pointer from `cmrx_parser_new`.
#[no_mangle]
pub unsafe extern "C" fn cmrx_parser_data_remaining(parser: *const CmrxParser) -> u64 {
    // SAFETY: see above.
    parser.as_ref().map_or(0, |p| p.0.data_remaining())
}

#[no_mangle]
pub extern "C" fn cmrx_parse_error_str(error: i32) -> *const c_char {
    let text: &'static [u8] = match error {
        1 => b"server replied SERVER_ERROR\0",
        2 => b"server replied CLIENT_ERROR\0",
        3 => b"server replied ERROR\0",
        4 => b"unknown response line\0",
        5 => b"malformed VALUE line\0",
        6 => b"bad key in VALUE line\0",
        7 => b"bad number in VALUE line\0",
        8 => b"value larger than the parser's limit\0",
        9 => b"data block not followed by \\r\\n\0",
        10 => b"response line too long\0",
        11 => b"line ended by \\n without \\r\0",
        12 => b"bytes after END\0",
        _ => b"internal error in the response parser\0",
    };
    text.as_ptr().cast()
}

fn status(result: Result<usize, CodecError>, out_len: &mut usize) -> i32 {
    match result {
        Ok(n) => {
            *out_len = n;
            OK
        }
        Err(CodecError::NeedSpace(n)) => {
            *out_len = n;
            E_NEED_SPACE
        }
        Err(CodecError::Data) => E_DATA,
        Err(CodecError::TooBig) => E_TOO_BIG,
        Err(CodecError::Arg) => E_ARG,
    }
}

/// Runs a codec call on C buffers, catching panics.
///
/// # Safety
/// `input`/`in_len` readable, `out`/`out_cap` writable and disjoint from the
/// input, `out_len` writable (all as in cmrx.h).
unsafe fn codec_call(
    input_ptr: *const u8,
    in_len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
    f: impl FnOnce(&[u8], &mut [MaybeUninit<u8>]) -> Result<usize, CodecError>,
) -> i32 {
    // SAFETY: out_len is writable per the contract; NULL is an argument error.
    let Some(out_len) = out_len.as_mut() else {
        return E_ARG;
    };
    if (input_ptr.is_null() && in_len != 0) || (out.is_null() && out_cap != 0) {
        return E_ARG;
    }
    // SAFETY: the pointers were checked for NULL above; lengths and
    // disjointness are the caller's contract.
    let (src, dst) = (input(input_ptr, in_len), output(out, out_cap));
    match catch_unwind(AssertUnwindSafe(|| f(src, dst))) {
        Ok(result) => status(result, out_len),
        Err(_) => E_PANIC,
    }
}

#[no_mangle]
pub extern "C" fn cmrx_gzip_bound(in_len: usize) -> usize {
    catch_unwind(|| codec::gzip_bound(in_len)).unwrap_or(0)
}

#[no_mangle]
pub extern "C" fn cmrx_zlib_bound(in_len: usize) -> usize {
    catch_unwind(|| codec::zlib_bound(in_len)).unwrap_or(0)
}

/// # Safety
/// As in cmrx.h: `input` readable for `in_len`, `out` writable for `out_cap`.
#[no_mangle]
pub unsafe extern "C" fn cmrx_gzip(
    input: *const u8,
    in_len: usize,
    level: i32,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> i32 {
    codec_call(input, in_len, out, out_cap, out_len, |i, o| {
        codec::gzip(i, level, o)
    })
}

/// # Safety
/// As in cmrx.h: `input` readable for `in_len`, `out` writable for `out_cap`.
#[no_mangle]
pub unsafe extern "C" fn cmrx_zlib(
    input: *const u8,
    in_len: usize,
    level: i32,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> i32 {
    codec_call(input, in_len, out, out_cap, out_len, |i, o| {
        codec::zlib(i, level, o)
    })
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
    let src = input(input_ptr, in_len);
    catch_unwind(AssertUnwindSafe(|| f(src))).unwrap_or(fallback)
}

/// # Safety
/// `input` readable for `in_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn cmrx_gunzip_size_hint(
    input: *const u8,
    in_len: usize,
    max_out: usize,
) -> usize {
    inspect(input, in_len, 0, |src| {
        codec::gunzip_size_hint(src, max_out)
    })
}

/// # Safety
/// `input` readable for `in_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn cmrx_uncompress_size_hint(
    input: *const u8,
    in_len: usize,
    max_out: usize,
) -> usize {
    inspect(input, in_len, 0, |src| {
        codec::uncompress_size_hint(src, max_out)
    })
}

/// # Safety
/// As in cmrx.h: `input` readable for `in_len`, `out` writable for `out_cap`.
#[no_mangle]
pub unsafe extern "C" fn cmrx_gunzip(
    input: *const u8,
    in_len: usize,
    out: *mut u8,
    out_cap: usize,
    max_out: usize,
    out_len: *mut usize,
) -> i32 {
    codec_call(input, in_len, out, out_cap, out_len, |i, o| {
        codec::gunzip(i, o, max_out)
    })
}

/// # Safety
/// As in cmrx.h: `input` readable for `in_len`, `out` writable for `out_cap`.
#[no_mangle]
pub unsafe extern "C" fn cmrx_uncompress(
    input: *const u8,
    in_len: usize,
    out: *mut u8,
    out_cap: usize,
    max_out: usize,
    out_len: *mut usize,
) -> i32 {
    codec_call(input, in_len, out, out_cap, out_len, |i, o| {
        codec::uncompress(i, o, max_out)
    })
}

/// # Safety
/// `input` readable for `in_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn cmrx_sniff_compressed(input: *const u8, in_len: usize) -> i32 {
    inspect(input, in_len, 0, |src| {
        sniff::sniff(src).map_or(0, sniff::Format::code)
    })
}

/// # Safety
/// `input` readable for `in_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn cmrx_looks_incompressible(input: *const u8, in_len: usize) -> i32 {
    inspect(input, in_len, 0, |src| {
        i32::from(codec::looks_incompressible(src))
    })
}

#[no_mangle]
pub extern "C" fn cmrx_format_name(format: i32) -> *const c_char {
    // Names are built once, NUL-terminated, and live for the whole process.
    static NAMES: std::sync::OnceLock<Vec<(i32, std::ffi::CString)>> = std::sync::OnceLock::new();
    let found = catch_unwind(|| {
        let names = NAMES.get_or_init(|| {
            (1..=64)
                .filter_map(sniff::Format::from_code)
                .filter_map(|f| Some((f.code(), std::ffi::CString::new(f.name()).ok()?)))
                .collect()
        });
        names
            .iter()
            .find(|(code, _)| *code == format)
            .map(|(_, name)| name.as_ptr())
    });
    match found {
        Ok(Some(p)) => p,
        _ => b"\0".as_ptr().cast(),
    }
}

#[no_mangle]
pub extern "C" fn cmrx_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parser_round_trip_through_the_abi() {
        let resp = b"VALUE k 5 3\r\nabc\r\nEND\r\n";
        let p = cmrx_parser_new(0);
        assert!(!p.is_null());
        let mut ev = MaybeUninit::<CmrxEvent>::zeroed();
        let mut at = 0;
        let mut kinds = Vec::new();
        unsafe {
            loop {
                let k = cmrx_parser_next(p, resp[at..].as_ptr(), resp.len() - at, ev.as_mut_ptr());
                let e = ev.assume_init_ref();
                kinds.push(k);
                if k == EV_VALUE {
                    assert_eq!(slice::from_raw_parts(e.key, e.key_len), b"k");
                    assert_eq!((e.flags, e.len), (5, 3));
                }
                if k <= EV_PARTIAL || k == EV_END {
                    break;
                }
                at += e.consumed;
            }
            cmrx_parser_free(p);
        }
        assert_eq!(kinds, vec![EV_VALUE, EV_DATA, EV_VALUE_END, EV_END]);
    }

    #[test]
    fn parser_errors_carry_codes() {
        let p = cmrx_parser_new(0);
        let mut ev = MaybeUninit::<CmrxEvent>::zeroed();
        let line = b"SERVER_ERROR out of memory\r\n";
        unsafe {
            assert_eq!(
                cmrx_parser_next(p, line.as_ptr(), line.len(), ev.as_mut_ptr()),
                EV_ERROR
            );
            assert_eq!(ev.assume_init_ref().error, 1);
            assert_eq!(
                cmrx_parser_next(ptr::null_mut(), ptr::null(), 0, ev.as_mut_ptr()),
                EV_ERROR
            );
            assert_eq!(ev.assume_init_ref().error, PE_INTERNAL);
            cmrx_parser_free(p);
        }
    }

    #[test]
    fn codec_round_trip_and_need_space_through_the_abi() {
        let data = vec![b'a'; 100_000];
        let mut gz = vec![0u8; cmrx_gzip_bound(data.len())];
        let mut n = 0;
        unsafe {
            assert_eq!(
                cmrx_gzip(
                    data.as_ptr(),
                    data.len(),
                    6,
                    gz.as_mut_ptr(),
                    gz.len(),
                    &mut n
                ),
                OK
            );
            gz.truncate(n);
            let mut out = vec![0u8; 10];
            let mut m = 0;
            let rc = cmrx_gunzip(
                gz.as_ptr(),
                gz.len(),
                out.as_mut_ptr(),
                out.len(),
                1 << 20,
                &mut m,
            );
            assert_eq!(rc, E_NEED_SPACE);
            assert!(m > 10 && m <= 1 << 20);
            let hint = cmrx_gunzip_size_hint(gz.as_ptr(), gz.len(), 1 << 20);
            assert_eq!(hint, data.len());
            out.resize(hint, 0);
            assert_eq!(
                cmrx_gunzip(
                    gz.as_ptr(),
                    gz.len(),
                    out.as_mut_ptr(),
                    out.len(),
                    1 << 20,
                    &mut m
                ),
                OK
            );
            assert_eq!(&out[..m], &data[..]);
            let rc = cmrx_gunzip(gz.as_ptr(), gz.len(), out.as_mut_ptr(), 1000, 1000, &mut m);
            assert_eq!(rc, E_TOO_BIG);
            assert_eq!(
                cmrx_gunzip(
                    b"nope!nope!nope".as_ptr(),
                    14,
                    out.as_mut_ptr(),
                    out.len(),
                    1 << 20,
                    &mut m
                ),
                E_DATA
            );
            assert_eq!(
                cmrx_gzip(ptr::null(), 5, 6, out.as_mut_ptr(), out.len(), &mut m),
                E_ARG
            );
        }
    }

    #[test]
    fn version_is_the_crates() {
        let v = unsafe { std::ffi::CStr::from_ptr(cmrx_version()) };
        assert_eq!(v.to_str().unwrap(), crate::VERSION);
    }
}
