//! The C ABI of decoding a stored value, whatever its format
//! ([`crate::decode`], [`crate::sniff`]): plumbing only.

use super::{inspect, with_buffers, Failure, ResultCode};
use crate::decode::{self, DecodeFormat};
use crate::sniff;

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
    // SAFETY: the caller's contract is with_buffers's.
    let status = unsafe {
        with_buffers(input, in_len, out, out_cap, out_len, |i, o| {
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

// ------------------------------------------- inspecting stored values
//
// For tools that read what a cache holds (cmrx-dict): which decoder a value
// stored compressed needs, and which dictionary a zstd frame names.

/// The decoder `input`, a value stored compressed, needs by its magic
/// number (`cmrx_decoder_format`): `CMRX_DECODE_ZSTD`, `CMRX_DECODE_GZIP`
/// or `CMRX_DECODE_ZLIB`, or `CMRX_FMT_NONE` (0) for none of them (see
/// [`sniff::decoder_format`]; its codes are `CMRX_DECODE_*`'s).
///
/// # Safety
/// `input` readable for `in_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn cmrx_decoder_format(input: *const u8, in_len: usize) -> i32 {
    // SAFETY: the caller's contract is inspect's.
    unsafe {
        inspect(input, in_len, 0, |src| {
            sniff::decoder_format(src).map_or(0, sniff::Format::code)
        })
    }
}
