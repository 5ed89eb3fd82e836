//! gzip and zlib with Compress::Zlib's semantics, on top of libdeflate.
//!
//! * [`gzip`] writes exactly what `Compress::Zlib::memGzip` frames its data
//!   with: the 10-byte header `1f 8b 08 00 00000000 00 ff`, raw DEFLATE, then
//!   CRC-32 and ISIZE little-endian. [`zlib`] is `Compress::Zlib::compress`'s
//!   format (RFC 1950).
//! * [`gunzip`] is `memGunzip`: it parses the header itself (skipping FEXTRA,
//!   FNAME, FCOMMENT, FHCRC), accepts a missing or partial trailer, rejects a
//!   wrong CRC-32 or ISIZE, ignores bytes after the trailer. [`uncompress`] is
//!   `Compress::Zlib::uncompress`: a zlib stream that must end, Adler-32
//!   checked, bytes after it ignored.
//! * libdeflate works buffer to buffer, so decompression runs a growth loop:
//!   start from [`gunzip_size_hint`] / [`uncompress_size_hint`], and on
//!   [`DeflateError::NeedSpace`]`(n)` retry with `n` bytes. Every capacity
//!   asked for is at most `max_out`, the caller's cap on the output size; an
//!   output that would exceed it is [`DeflateError::TooBig`], so a
//!   decompression bomb costs at most `max_out` bytes of memory and about
//!   twice that in decompression work.
//! * Compressor state (libdeflate 1.26: 198 KiB at level 1, 652 KiB at
//!   levels 2..=9, 8.6 MiB at 10..=12) is allocated once per level per
//!   thread, on first use, and reused, never per call; so is the decompressor
//!   (11 KiB). Allocating zlib's level-9 state on every call is most of what
//!   makes Compress::Zlib's memGzip slow.
//!
//! Output buffers are `&mut [MaybeUninit<u8>]` (a Perl scalar's spare
//! capacity). On `Ok(n)` every function here has initialised `out[..n]`.
//!
//! Levels are libdeflate's, 0..=12: 0 stores, 1..=9 mean roughly what they
//! mean to zlib, 10..=12 are slower near-optimal parsing.

mod libdeflate;

use crate::growth::Expansion;
#[cfg(test)]
use crate::growth::MIN_CAPACITY;
use crate::per_thread;

use core::cell::RefCell;
use core::mem::MaybeUninit;

use libdeflate::{Compressor, DecompressError, Decompressor, Stream};

/// Why a gzip or zlib call did not produce output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeflateError {
    /// The output buffer is too small: retry with at least this capacity.
    /// For decompression the value is never above `max_out` and always above
    /// the capacity just tried.
    NeedSpace(usize),
    /// Corrupt or truncated input (zlib's `Z_DATA_ERROR`, -3).
    Data,
    /// The output would exceed `max_out`.
    TooBig,
    /// A bad argument: a compression level out of range.
    Arg,
    /// libdeflate could not allocate its compressor or decompressor state.
    NoMemory,
}

codec_error_display! {
    /// A short English description, for error messages.
    ///
    /// ```
    /// use std::mem::MaybeUninit;
    /// use cmrx::deflate::{gunzip, DeflateError};
    /// let mut out = [MaybeUninit::new(0u8); 16];
    /// let e = gunzip(b"not gzip", &mut out, 16).unwrap_err();
    /// assert_eq!(e, DeflateError::Data);
    /// assert_eq!(e.to_string(), "corrupt or truncated gzip or zlib data");
    /// ```
    DeflateError, "gzip or zlib", f;
}

/// What [`gunzip_member`] produced: `len` bytes of output, from the first
/// `input_used` bytes of the input.
///
/// `input_used` counts what `Compress::Zlib::memGunzip` removes from its
/// argument: the header, the DEFLATE stream, and the 8-byte trailer, or,
/// when fewer than 8 bytes follow the stream, all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inflated {
    /// Bytes written to the front of the output buffer.
    pub len: usize,
    /// Bytes of the input the gzip member took up.
    pub input_used: usize,
}

asks_for_space!(DeflateError);

/// What a level argument of -1 stands for: the default level of the
/// function it is given to ([`GZIP_DEFAULT_LEVEL`] or [`ZLIB_DEFAULT_LEVEL`]),
/// as zlib's `Z_DEFAULT_COMPRESSION` does.
pub const USE_DEFAULT_LEVEL: i32 = -1;

/// The level [`gzip`] uses for `memGzip` (and for -1): the fastest
/// libdeflate level whose output is within 1 % of zlib level 9's (what
/// `memGzip` uses) on real JSON and text. Measured on a 9163-byte JSON value
/// and perldiag.pod (300 KB): memGzip 1280 B / 94 416 B; libdeflate level 5
/// 1321 B (+3.2 %) / 95 336 B, level 6 1289 B (+0.7 %) / 94 573 B (+0.17 %)
/// in 30 µs / 4.2 ms, against 80 µs / 19.8 ms for memGzip and 39 µs /
/// 7.9 ms for libdeflate level 9.
pub const GZIP_DEFAULT_LEVEL: i32 = 6;

/// The level [`zlib`] uses for `compress` without a level (and for -1):
/// zlib's default is 6 as well
/// (libdeflate 6 vs zlib 6: 1277 B vs 1270 B and 94 561 B vs 94 689 B on the
/// same two inputs).
pub const ZLIB_DEFAULT_LEVEL: i32 = 6;

/// The default cap on decompressed sizes (the Perl modules' `$MaxOutput`):
/// 64 MiB (memcached items are at most 1 MiB by default, 1 GiB with `-I`).
pub const DEFAULT_MAX_OUT: usize = 64 << 20;

/// memGzip's header: magic, method 8, no flags, mtime 0, xfl 0, OS 0xff.
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff];
const GZIP_TRAILER_LEN: usize = 8;
/// gzip flag bits.
const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;
const FRESERVED: u8 = 0xe0;

/// How far DEFLATE data can expand: a 258-byte match in 2 bits (a 1-bit
/// length code and a 1-bit distance code) is 1032 output bytes per input
/// byte, and a little over for the last block; a first guess of 4 times
/// the input.
const DEFLATE: Expansion = Expansion {
    per_input_byte: 1032,
    slack: 1024,
    guess_factor: 4,
};

thread_local! {
    /// One compressor per level, made on first use by this thread.
    static COMPRESSORS: RefCell<[Option<Compressor>; LEVELS]> =
        const { RefCell::new([NO_COMPRESSOR; LEVELS]) };
    /// This thread's decompressor, made on first use.
    static DECOMPRESSOR: RefCell<Option<Decompressor>> = const { RefCell::new(None) };
}
const NO_COMPRESSOR: Option<Compressor> = None;
/// libdeflate's levels, 0..=12.
const LEVELS: usize = libdeflate::MAX_LEVEL as usize + 1;

/// Run `f` with this thread's compressor for `level` (0..=12), made on
/// first use (see [`per_thread::with_in`]).
fn with_compressor<R>(level: i32, f: impl FnOnce(&mut Compressor) -> R) -> Result<R, DeflateError> {
    let index = usize::try_from(level)
        .ok()
        .filter(|&i| i < LEVELS)
        .ok_or(DeflateError::Arg)?;
    per_thread::with_in(
        &COMPRESSORS,
        |slots| slots.get_mut(index),
        || Compressor::new(level),
        f,
    )
    .ok_or(DeflateError::NoMemory)
}

/// Run `f` with this thread's decompressor, made on first use.
fn with_decompressor<R>(f: impl FnOnce(&mut Decompressor) -> R) -> Result<R, DeflateError> {
    per_thread::with(&DECOMPRESSOR, Decompressor::new, f).ok_or(DeflateError::NoMemory)
}

/// The lowest level [`gzip`] accepts (besides [`USE_DEFAULT_LEVEL`]): libdeflate's
/// 0, which stores.
///
/// ```
/// use cmrx::deflate::{gzip_level, GZIP_MIN_LEVEL};
/// assert!(gzip_level(GZIP_MIN_LEVEL).is_ok());
/// assert!(gzip_level(GZIP_MIN_LEVEL - 2).is_err());
/// ```
pub const GZIP_MIN_LEVEL: i32 = libdeflate::MIN_LEVEL;

/// The highest level [`gzip`] accepts: libdeflate's 12 (10..=12 are its
/// slower near-optimal parsing).
///
/// ```
/// use cmrx::deflate::{gzip_level, GZIP_MAX_LEVEL};
/// assert!(gzip_level(GZIP_MAX_LEVEL).is_ok());
/// assert!(gzip_level(GZIP_MAX_LEVEL + 1).is_err());
/// ```
pub const GZIP_MAX_LEVEL: i32 = libdeflate::MAX_LEVEL;

/// The lowest level [`zlib`] accepts (besides [`USE_DEFAULT_LEVEL`]): zlib's 0.
///
/// ```
/// use cmrx::deflate::{zlib_level, ZLIB_MIN_LEVEL};
/// assert!(zlib_level(ZLIB_MIN_LEVEL).is_ok());
/// ```
pub const ZLIB_MIN_LEVEL: i32 = 0;

/// The highest level [`zlib`] accepts: zlib's, which `Compress::Zlib::compress`
/// passes on (libdeflate's 10..=12 are not zlib levels).
///
/// ```
/// use cmrx::deflate::{zlib_level, ZLIB_MAX_LEVEL};
/// assert!(zlib_level(ZLIB_MAX_LEVEL).is_ok());
/// assert!(zlib_level(ZLIB_MAX_LEVEL + 1).is_err());
/// ```
pub const ZLIB_MAX_LEVEL: i32 = 9;

/// The libdeflate level [`gzip`] uses for `level`: -1 is the default, 0..=12
/// are themselves, anything else is [`DeflateError::Arg`]. The one place the
/// gzip level range is checked.
pub fn gzip_level(level: i32) -> Result<i32, DeflateError> {
    match level {
        USE_DEFAULT_LEVEL => Ok(GZIP_DEFAULT_LEVEL),
        GZIP_MIN_LEVEL..=GZIP_MAX_LEVEL => Ok(level),
        _ => Err(DeflateError::Arg),
    }
}

/// The level [`zlib`] uses for `level`, with `Compress::Zlib::compress`'s
/// rules: -1 is the default, 0..=9 are themselves, anything else (which zlib
/// refuses) is [`DeflateError::Arg`].
pub fn zlib_level(level: i32) -> Result<i32, DeflateError> {
    match level {
        USE_DEFAULT_LEVEL => Ok(ZLIB_DEFAULT_LEVEL),
        ZLIB_MIN_LEVEL..=ZLIB_MAX_LEVEL => Ok(level),
        _ => Err(DeflateError::Arg),
    }
}

/// Largest output [`gzip`] can produce for `in_len` input bytes at any level
/// (`usize::MAX` if that does not fit).
pub fn gzip_bound(in_len: usize) -> usize {
    libdeflate::deflate_bound(in_len)
        .and_then(|n| n.checked_add(GZIP_HEADER.len() + GZIP_TRAILER_LEN))
        .unwrap_or(usize::MAX)
}

/// Largest output [`zlib`] can produce for `in_len` input bytes at any level
/// (`usize::MAX` if that does not fit).
pub fn zlib_bound(in_len: usize) -> usize {
    libdeflate::zlib_bound(in_len).unwrap_or(usize::MAX)
}

/// Write `bytes` at the front of `out` (which is at least as long).
fn put(out: &mut [MaybeUninit<u8>], bytes: &[u8]) {
    for (dst, &b) in out.iter_mut().zip(bytes) {
        dst.write(b);
    }
}

/// gzip `input` at `level` (see [`gzip_level`]) into `out`, framed exactly
/// as `Compress::Zlib::memGzip` frames it. `Ok(n)`: `out[..n]` is the gzip
/// member. An `out` of [`gzip_bound`]`(input.len())` bytes always fits;
/// a smaller one that does not is `NeedSpace(gzip_bound(..))`.
///
/// ```
/// use cmrx::deflate::{gunzip, gunzip_size_hint, gzip, gzip_bound, GZIP_DEFAULT_LEVEL};
/// let input = br#"{"user":42,"tags":["a","b"]}"#.repeat(20);
/// // Into the spare capacity of a Vec (a Perl scalar's, in the XS).
/// let mut gz: Vec<u8> = Vec::with_capacity(gzip_bound(input.len()));
/// let n = gzip(&input, GZIP_DEFAULT_LEVEL, gz.spare_capacity_mut()).unwrap();
/// // SAFETY: gzip initialised the first n bytes of the spare capacity.
/// unsafe { gz.set_len(n) };
/// assert_eq!(gz[..4], [0x1f, 0x8b, 0x08, 0x00]); // memGzip's header
/// // The trailer states the size: one call into a buffer of exactly that.
/// let max_out = 1 << 20;
/// let mut out: Vec<u8> = Vec::with_capacity(gunzip_size_hint(&gz, max_out));
/// let m = gunzip(&gz, out.spare_capacity_mut(), max_out).unwrap();
/// // SAFETY: gunzip initialised the first m bytes of the spare capacity.
/// unsafe { out.set_len(m) };
/// assert_eq!(out, input);
/// ```
pub fn gzip(input: &[u8], level: i32, out: &mut [MaybeUninit<u8>]) -> Result<usize, DeflateError> {
    let level = gzip_level(level)?;
    let bound = gzip_bound(input.len());
    let frame = GZIP_HEADER.len() + GZIP_TRAILER_LEN;
    let Some(body_cap) = out.len().checked_sub(frame) else {
        return Err(DeflateError::NeedSpace(bound));
    };
    let (head, rest) = out.split_at_mut(GZIP_HEADER.len());
    let body = rest.get_mut(..body_cap).ok_or(DeflateError::TooBig)?;
    let n = with_compressor(level, |c| {
        c.compress(Stream::RawDeflate, input, body).map(<[u8]>::len)
    })?;
    let Some(n) = n else {
        // Cannot happen with out.len() >= bound (libdeflate's guarantee).
        return Err(if out.len() >= bound {
            DeflateError::TooBig
        } else {
            DeflateError::NeedSpace(bound)
        });
    };
    put(head, &GZIP_HEADER);
    let mut trailer = [0u8; GZIP_TRAILER_LEN];
    trailer[..4].copy_from_slice(&libdeflate::crc32(0, input).to_le_bytes());
    // ISIZE is the input length modulo 2^32 (RFC 1952), as memGzip writes it.
    trailer[4..].copy_from_slice(&(input.len() as u32).to_le_bytes());
    // The trailer follows the n body bytes; n <= body_cap = rest.len() - 8.
    let dst = rest
        .get_mut(n..n + GZIP_TRAILER_LEN)
        .ok_or(DeflateError::TooBig)?;
    put(dst, &trailer);
    Ok(GZIP_HEADER.len() + n + GZIP_TRAILER_LEN)
}

/// zlib-format (RFC 1950) compression of `input` at `level` (see
/// [`zlib_level`]) into `out`, as `Compress::Zlib::compress` produces. An
/// `out` of [`zlib_bound`]`(input.len())` bytes always fits; a smaller one
/// that does not is `NeedSpace(zlib_bound(..))`.
///
/// ```
/// use std::mem::MaybeUninit;
/// use cmrx::deflate::{uncompress, zlib, zlib_bound, DeflateError, USE_DEFAULT_LEVEL};
/// let input = b"the same words, the same words, ".repeat(20);
/// let mut z: Vec<u8> = Vec::with_capacity(zlib_bound(input.len()));
/// let n = zlib(&input, USE_DEFAULT_LEVEL, z.spare_capacity_mut()).unwrap();
/// // SAFETY: zlib initialised the first n bytes of the spare capacity.
/// unsafe { z.set_len(n) };
/// // zlib states no size: a buffer too small is told what to try next.
/// let max_out = 1 << 20;
/// let mut small = [MaybeUninit::new(0u8); 16];
/// let Err(DeflateError::NeedSpace(next)) = uncompress(&z, &mut small, max_out) else {
///     panic!("16 bytes are too few");
/// };
/// let mut out: Vec<u8> = Vec::with_capacity(next);
/// let m = uncompress(&z, out.spare_capacity_mut(), max_out).unwrap();
/// // SAFETY: uncompress initialised the first m bytes of the spare capacity.
/// unsafe { out.set_len(m) };
/// assert_eq!(out, input);
/// ```
pub fn zlib(input: &[u8], level: i32, out: &mut [MaybeUninit<u8>]) -> Result<usize, DeflateError> {
    let level = zlib_level(level)?;
    let bound = zlib_bound(input.len());
    let out_len = out.len();
    match with_compressor(level, |c| {
        c.compress(Stream::Zlib, input, out).map(<[u8]>::len)
    })? {
        Some(n) => Ok(n),
        None if out_len >= bound => Err(DeflateError::TooBig), // cannot happen
        None => Err(DeflateError::NeedSpace(bound)),
    }
}

/// The error for an output that did not fit in `tried` bytes.
fn grow(tried: usize, in_len: usize, max_out: usize) -> DeflateError {
    DEFLATE
        .next_capacity(tried, in_len, max_out)
        .map_or(DeflateError::TooBig, DeflateError::NeedSpace)
}

/// A first output capacity for [`gunzip`]`(input)`: the trailer's ISIZE when
/// it is plausible (no more than `max_out` and than what DEFLATE can expand
/// the input to), else a small multiple of the input length. Only a hint: a
/// wrong one costs a retry, never more than `max_out` bytes.
pub fn gunzip_size_hint(input: &[u8], max_out: usize) -> usize {
    let fallback = DEFLATE.first_capacity(input.len(), max_out);
    // The shortest gzip member is 20 bytes; ISIZE is the last 4 of them.
    if input.len() < GZIP_HEADER.len() + GZIP_TRAILER_LEN + 2 {
        return fallback;
    }
    let Some(isize) = input
        .len()
        .checked_sub(4)
        .and_then(|at| input.get(at..))
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(u32::from_le_bytes)
        .and_then(|n| usize::try_from(n).ok())
    else {
        return fallback;
    };
    if isize <= max_out && isize <= DEFLATE.max_output(input.len()) {
        isize
    } else {
        fallback
    }
}

/// A first output capacity for [`uncompress`]`(input)`: zlib has no size
/// field, so a small multiple of the input (see [`gunzip_size_hint`]).
pub fn uncompress_size_hint(input: &[u8], max_out: usize) -> usize {
    DEFLATE.first_capacity(input.len(), max_out)
}

/// Where the DEFLATE data of the gzip member `input` starts, after the
/// header and its optional fields, as `memGunzip`'s `_removeGzipHeader`
/// reads them. The FHCRC is skipped, not checked (as memGunzip does).
fn gzip_body_offset(input: &[u8]) -> Result<usize, DeflateError> {
    let Some(&[id1, id2, method, flags, ..]) = input.get(..GZIP_HEADER.len()) else {
        return Err(DeflateError::Data);
    };
    if id1 != 0x1f || id2 != 0x8b || method != 8 || flags & FRESERVED != 0 {
        return Err(DeflateError::Data);
    }
    let mut pos = GZIP_HEADER.len();
    if flags & FEXTRA != 0 {
        let xlen = input
            .get(pos..pos + 2)
            .map(|b| usize::from(u16::from_le_bytes([b[0], b[1]])))
            .ok_or(DeflateError::Data)?;
        pos += 2 + xlen;
        if pos > input.len() {
            return Err(DeflateError::Data);
        }
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let rest = input.get(pos..).ok_or(DeflateError::Data)?;
            let nul = memchr::memchr(0, rest).ok_or(DeflateError::Data)?;
            pos += nul + 1;
        }
    }
    if flags & FHCRC != 0 {
        pos += 2;
        if pos > input.len() {
            return Err(DeflateError::Data);
        }
    }
    Ok(pos)
}

/// `memGunzip`: decompress the gzip member `input` into `out`, producing at
/// most `max_out` bytes. `Ok(n)`: `out[..n]` is the data. The rest as for
/// [`gunzip_member`].
pub fn gunzip(
    input: &[u8],
    out: &mut [MaybeUninit<u8>],
    max_out: usize,
) -> Result<usize, DeflateError> {
    gunzip_member(input, out, max_out).map(|inflated| inflated.len)
}

/// [`gunzip`], also saying how much of the input the member took up.
/// `Ok(inflated)`: `out[..inflated.len]` is the data.
/// `NeedSpace(m)`: call again with `m` bytes (`m <= max_out`). `TooBig`: the
/// data is longer than `max_out`. `Data`: a bad header, a DEFLATE stream
/// that is corrupt or does not end, or a complete trailer whose CRC-32 or
/// ISIZE does not match. Fewer than 8 bytes after the stream (a missing or
/// partial trailer) are accepted unchecked, and bytes after the 8-byte
/// trailer are ignored, as memGunzip does.
pub fn gunzip_member(
    input: &[u8],
    out: &mut [MaybeUninit<u8>],
    max_out: usize,
) -> Result<Inflated, DeflateError> {
    let start = gzip_body_offset(input)?;
    let body = input.get(start..).ok_or(DeflateError::Data)?;
    let usable = out.len().min(max_out);
    let out = out.get_mut(..usable).ok_or(DeflateError::Data)?;
    let (used, data) = match with_decompressor(|d| d.decompress(Stream::RawDeflate, body, out))? {
        Ok(done) => done,
        Err(DecompressError::BadData) => return Err(DeflateError::Data),
        Err(DecompressError::InsufficientSpace) => return Err(grow(usable, input.len(), max_out)),
    };
    let after = body.get(used..).unwrap_or_default();
    let Some(trailer) = after.get(..GZIP_TRAILER_LEN) else {
        // A missing or partial trailer: accepted unchecked, and consumed.
        return Ok(Inflated {
            len: data.len(),
            input_used: input.len(),
        });
    };
    let crc = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
    let isize = u32::from_le_bytes([trailer[4], trailer[5], trailer[6], trailer[7]]);
    // ISIZE is the length modulo 2^32 (RFC 1952). (memGunzip compares it
    // with the full length, which only differs past 4 GiB of output.)
    if isize != data.len() as u32 || crc != libdeflate::crc32(0, data) {
        return Err(DeflateError::Data);
    }
    Ok(Inflated {
        len: data.len(),
        input_used: start + used + GZIP_TRAILER_LEN,
    })
}

/// `Compress::Zlib::uncompress`: decompress the zlib stream `input` into
/// `out`, producing at most `max_out` bytes; results as for [`gunzip`].
/// `Data` for a bad header (including a preset dictionary), a corrupt or
/// unterminated stream, or a wrong or missing Adler-32. Bytes after the
/// stream are ignored.
pub fn uncompress(
    input: &[u8],
    out: &mut [MaybeUninit<u8>],
    max_out: usize,
) -> Result<usize, DeflateError> {
    let usable = out.len().min(max_out);
    let out = out.get_mut(..usable).ok_or(DeflateError::Data)?;
    match with_decompressor(|d| d.decompress(Stream::Zlib, input, out))? {
        Ok((_, data)) => Ok(data.len()),
        Err(DecompressError::BadData) => Err(DeflateError::Data),
        Err(DecompressError::InsufficientSpace) => Err(grow(usable, input.len(), max_out)),
    }
}

/// Inputs at least this long are sampled by [`looks_incompressible`];
/// shorter ones cost little to compress and say little in a sample.
pub const SAMPLE_FROM: usize = 128 << 10;
/// How much of a large input [`looks_incompressible`] compresses.
const SAMPLE_LEN: usize = 16 << 10;

/// Whether a large input is not worth compressing: 16 KiB from its middle,
/// deflated at level 1 (the cheapest), save less than 3 %. For data no magic
/// number gives away (encrypted or random bytes, media without a known
/// header) this costs about 1 % of what compressing it all would, and a
/// client that stores such data raw anyway loses nothing. Always false for
/// inputs shorter than [`SAMPLE_FROM`].
pub fn looks_incompressible(input: &[u8]) -> bool {
    if input.len() < SAMPLE_FROM {
        return false;
    }
    let start = input.len() / 2 - SAMPLE_LEN / 2;
    let Some(sample) = input.get(start..start + SAMPLE_LEN) else {
        return false;
    };
    let Some(bound) = libdeflate::deflate_bound(SAMPLE_LEN) else {
        return false;
    };
    let mut out: Vec<u8> = Vec::with_capacity(bound);
    let compressed = with_compressor(1, |c| {
        c.compress(Stream::RawDeflate, sample, out.spare_capacity_mut())
            .map(<[u8]>::len)
    });
    match compressed {
        Ok(Some(n)) => n * 100 >= SAMPLE_LEN * 97,
        // No compressor (out of memory) or no room: no verdict.
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn large_random_input_looks_incompressible_and_text_does_not() {
        let random = crate::testing::Rng(99).bytes(super::SAMPLE_FROM * 2);
        assert!(super::looks_incompressible(&random));
        assert!(
            !super::looks_incompressible(&random[..super::SAMPLE_FROM - 1]),
            "short inputs are never judged"
        );
        let text: Vec<u8> = b"VALUE key 0 5\r\nhello\r\nEND\r\n"
            .iter()
            .copied()
            .cycle()
            .take(super::SAMPLE_FROM * 2)
            .collect();
        assert!(!super::looks_incompressible(&text));
        let mut half = text.clone();
        half[..super::SAMPLE_FROM].copy_from_slice(&random[..super::SAMPLE_FROM]);
        let _ = super::looks_incompressible(&half); // either verdict; never a panic
    }

    use super::*;

    // ---------------------------------------------------------------- helpers

    use crate::growth::drive_checked;
    use crate::testing::{
        decode_from_a_tiny_buffer, gunzip_vec, gzip_vec, uncompress_vec, zlib_vec, CompressFn,
        DecompressFn, Rng,
    };

    /// JSON resembling a memcached value (t/data/seed.json's shape).
    fn json_like(records: usize) -> Vec<u8> {
        let mut rng = Rng(7);
        let words = [
            "Book",
            "Music",
            "DVD",
            "catalog",
            "media",
            "title",
            "author",
            "大型本",
            "文庫",
        ];
        let mut s = String::from("[");
        for i in 0..records {
            if i > 0 {
                s.push(',');
            }
            let w = words[rng.below(words.len())];
            s.push_str(&format!(
                "{{\"catalog\":\"{w}\",\"img\":\"http://ecx.images-amazon.com/images/I/{:x}._SL75_.jpg\",\
                 \"price\":{},\"asin\":\"{:010}\",\"title\":\"{} {}\"}}",
                rng.next_u64() >> 20,
                rng.below(100_000),
                rng.next_u64() % 10_000_000_000,
                w,
                words[rng.below(words.len())]
            ));
        }
        s.push(']');
        s.into_bytes()
    }

    /// English-like text from a few hundred pseudo-words.
    fn text_like(len: usize) -> Vec<u8> {
        let mut rng = Rng(11);
        let vocab: Vec<String> = (0..400)
            .map(|_| {
                let n = 2 + rng.below(8);
                (0..n)
                    .map(|_| (b'a' + rng.below(26) as u8) as char)
                    .collect()
            })
            .collect();
        let mut s = Vec::with_capacity(len + 16);
        while s.len() < len {
            s.extend_from_slice(vocab[rng.below(vocab.len())].as_bytes());
            s.push(if rng.below(12) == 0 { b'\n' } else { b' ' });
        }
        s.truncate(len);
        s
    }

    fn corpus() -> Vec<(&'static str, Vec<u8>)> {
        let mut rng = Rng(0x1234_5678_9abc_def0);
        vec![
            ("empty", Vec::new()),
            ("one byte", b"x".to_vec()),
            ("nul", vec![0]),
            ("all bytes", (0..=255u8).collect()),
            (
                "all bytes x 64",
                (0..=255u8).cycle().take(256 * 64).collect(),
            ),
            ("json", json_like(60)),
            ("text", text_like(200_000)),
            ("zeros 1 MiB", vec![0; 1 << 20]),
            ("random 100 KiB", rng.bytes(100 << 10)),
            ("random 31", rng.bytes(31)),
            ("random 70000", rng.bytes(70_000)),
        ]
    }

    /// Bitwise CRC-32 (independent of libdeflate).
    fn crc32_ref(data: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in data {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ 0xedb8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    fn adler32_ref(data: &[u8]) -> u32 {
        let (mut a, mut b) = (1u32, 0u32);
        for &x in data {
            a = (a + u32::from(x)) % 65521;
            b = (b + a) % 65521;
        }
        (b << 16) | a
    }

    /// The raw DEFLATE stream inside a gzip member made by [`gzip`].
    fn raw_deflate(data: &[u8], level: i32) -> Vec<u8> {
        let gz = gzip_vec(data, level).unwrap();
        gz[10..gz.len() - 8].to_vec()
    }

    fn trailer(data: &[u8]) -> Vec<u8> {
        let mut t = crc32_ref(data).to_le_bytes().to_vec();
        t.extend_from_slice(&(data.len() as u32).to_le_bytes());
        t
    }

    /// A gzip member with hand-made header fields.
    fn member(flags: u8, extra: &[u8], name: &[u8], comment: &[u8], data: &[u8]) -> Vec<u8> {
        let mut v = vec![0x1f, 0x8b, 8, flags, 1, 2, 3, 4, 2, 3];
        if flags & FEXTRA != 0 {
            v.extend_from_slice(&(extra.len() as u16).to_le_bytes());
            v.extend_from_slice(extra);
        }
        if flags & FNAME != 0 {
            v.extend_from_slice(name);
            v.push(0);
        }
        if flags & FCOMMENT != 0 {
            v.extend_from_slice(comment);
            v.push(0);
        }
        if flags & FHCRC != 0 {
            v.extend_from_slice(&[0xab, 0xcd]); // memGunzip does not check it
        }
        v.extend_from_slice(&raw_deflate(data, 6));
        v.extend_from_slice(&trailer(data));
        v
    }

    /// Decompress with a fresh `MaybeUninit` buffer of exactly `cap` bytes.
    fn gunzip_cap(input: &[u8], cap: usize, max_out: usize) -> Result<Vec<u8>, DeflateError> {
        let mut buf = vec![MaybeUninit::new(0xa5u8); cap];
        let n = gunzip(input, &mut buf, max_out)?;
        Ok(buf[..n]
            .iter()
            // SAFETY: the buffer was fully initialised above.
            .map(|b| unsafe { b.assume_init() })
            .collect())
    }

    /// Run the NeedSpace protocol by hand from the size hint, checking every
    /// step; returns the result and the capacities tried.
    fn drive(
        input: &[u8],
        max_out: usize,
        hint: fn(&[u8], usize) -> usize,
        f: DecompressFn,
    ) -> (Result<Vec<u8>, DeflateError>, Vec<usize>) {
        drive_checked(hint(input, max_out), max_out, |buf| f(input, buf, max_out))
    }

    // ------------------------------------------------------------ compression

    #[test]
    fn round_trips_every_level() {
        for (name, data) in corpus() {
            for level in 0..=12 {
                if data.len() > 300_000 && !matches!(level, 0 | 1 | 6 | 9 | 12) {
                    continue;
                }
                let gz = gzip_vec(&data, level).unwrap();
                assert!(gz.len() <= gzip_bound(data.len()), "{name} L{level}");
                assert_eq!(gz[..10], GZIP_HEADER, "{name} L{level}");
                assert_eq!(gz[gz.len() - 8..], trailer(&data)[..], "{name} L{level}");
                assert_eq!(
                    gunzip_vec(&gz, DEFAULT_MAX_OUT).unwrap(),
                    data,
                    "{name} L{level}"
                );

                if zlib_level(level).is_err() {
                    continue; // 10..=12 are gzip levels only
                }
                let z = zlib_vec(&data, level).unwrap();
                assert!(z.len() <= zlib_bound(data.len()), "{name} L{level}");
                assert_eq!((u32::from(z[0]) * 256 + u32::from(z[1])) % 31, 0);
                assert_eq!(z[0] & 0x0f, 8);
                assert_eq!(z[z.len() - 4..], adler32_ref(&data).to_be_bytes());
                assert_eq!(
                    uncompress_vec(&z, DEFAULT_MAX_OUT).unwrap(),
                    data,
                    "{name} L{level}"
                );
            }
        }
    }

    #[test]
    fn compression_actually_compresses() {
        let json = json_like(60);
        let gz = gzip_vec(&json, GZIP_DEFAULT_LEVEL).unwrap();
        assert!(gz.len() * 3 < json.len(), "{} -> {}", json.len(), gz.len());
        let zeros = vec![0u8; 1 << 20];
        assert!(gzip_vec(&zeros, 1).unwrap().len() < 8 << 10);
        // Level 0 stores.
        assert!(gzip_vec(&json, 0).unwrap().len() > json.len());
    }

    #[test]
    fn gzip_header_and_trailer_are_memgzips() {
        // perl -MCompress::Zlib -e 'print Compress::Zlib::memGzip("x")' | xxd
        //   1f8b 0800 0000 0000 00ff ab00 0083 16dc 8c01 0000 00
        for level in 0..=12 {
            let gz = gzip_vec(b"x", level).unwrap();
            assert_eq!(gz[..10], [0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff]);
            assert_eq!(gz[gz.len() - 8..], [0x83, 0x16, 0xdc, 0x8c, 1, 0, 0, 0]);
            // memGzip(""): header, 03 00, eight zero bytes.
            let gz = gzip_vec(b"", level).unwrap();
            assert_eq!(gz[..10], GZIP_HEADER);
            assert_eq!(gz[gz.len() - 8..], [0; 8]);
            assert_eq!(gunzip_vec(&gz, 0).unwrap(), b"");
        }
        // memGzip's own output for "" and "x" decompress here.
        let perl_empty = [
            0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        assert_eq!(gunzip_vec(&perl_empty, 100).unwrap(), b"");
        let perl_x = [
            0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 0xab, 0, 0, 0x83, 0x16, 0xdc, 0x8c, 1, 0, 0, 0,
        ];
        assert_eq!(gunzip_vec(&perl_x, 100).unwrap(), b"x");
        // compress(""): 78 9c 03 00 00 00 00 01.
        assert_eq!(
            uncompress_vec(&[0x78, 0x9c, 3, 0, 0, 0, 0, 1], 100).unwrap(),
            b""
        );
    }

    #[test]
    fn bad_levels_are_arg() {
        let mut buf = [MaybeUninit::new(0u8); 64];
        for level in [-2, 13, 100, i32::MIN, i32::MAX] {
            assert_eq!(gzip(b"abc", level, &mut buf), Err(DeflateError::Arg));
            assert_eq!(gzip_vec(b"abc", level), Err(DeflateError::Arg));
        }
        // compress()'s levels are zlib's: libdeflate's 10..=12 are not.
        for level in [-2, 10, 11, 12, 13, i32::MIN, i32::MAX] {
            assert_eq!(zlib(b"abc", level, &mut buf), Err(DeflateError::Arg));
            assert_eq!(zlib_vec(b"abc", level), Err(DeflateError::Arg));
        }
    }

    #[test]
    fn level_minus_one_is_the_default() {
        let json = json_like(50);
        assert_eq!(
            gzip_vec(&json, USE_DEFAULT_LEVEL),
            gzip_vec(&json, GZIP_DEFAULT_LEVEL)
        );
        assert_eq!(
            zlib_vec(&json, USE_DEFAULT_LEVEL),
            zlib_vec(&json, ZLIB_DEFAULT_LEVEL)
        );
        assert_eq!(gzip_level(USE_DEFAULT_LEVEL), Ok(GZIP_DEFAULT_LEVEL));
        assert_eq!(zlib_level(9), Ok(9));
    }

    #[test]
    fn compression_need_space() {
        let data = Rng(5).bytes(100_000);
        for (f, bound) in [
            (gzip as CompressFn, gzip_bound(data.len())),
            (zlib, zlib_bound(data.len())),
        ] {
            for cap in [0, 5, 17, 18, 30, 1000, data.len() / 2] {
                let mut buf = vec![MaybeUninit::new(0u8); cap];
                assert_eq!(
                    f(&data, 6, &mut buf),
                    Err(DeflateError::NeedSpace(bound)),
                    "cap {cap}"
                );
            }
            let mut buf = vec![MaybeUninit::new(0u8); bound];
            assert!(f(&data, 6, &mut buf).is_ok());
            // Also for empty input into nothing.
            assert!(matches!(f(b"", 6, &mut []), Err(DeflateError::NeedSpace(n)) if n >= 8));
        }
    }

    #[test]
    fn bounds_do_not_overflow() {
        assert_eq!(gzip_bound(usize::MAX), usize::MAX);
        assert_eq!(zlib_bound(usize::MAX), usize::MAX);
        assert_eq!(gzip_bound(usize::MAX / 2 + 1), usize::MAX);
        assert!(gzip_bound(0) >= 20);
        assert!(zlib_bound(0) >= 8);
        assert!(gzip_bound(1 << 20) > 1 << 20);
        assert!(gzip_bound(1 << 20) < (1 << 20) + 4096);
    }

    #[test]
    fn threads_have_their_own_state() {
        let handles: Vec<_> = (0..8)
            .map(|t| {
                std::thread::spawn(move || {
                    let data = text_like(20_000 + t * 1000);
                    for i in 0..20 {
                        let level = (t as i32 + i) % 13;
                        let gz = gzip_vec(&data, level).unwrap();
                        assert_eq!(gunzip_vec(&gz, DEFAULT_MAX_OUT).unwrap(), data);
                        let z = zlib_vec(&data, level.min(9)).unwrap();
                        assert_eq!(uncompress_vec(&z, DEFAULT_MAX_OUT).unwrap(), data);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }

    // ------------------------------------------------------------ gzip header

    #[test]
    fn every_header_field_combination() {
        let data = json_like(5);
        for flags in 0..32u8 {
            let flags = flags & (FEXTRA | FNAME | FCOMMENT | FHCRC) | (flags & 1); // FTEXT too
            let gz = member(flags, b"AB\x04\x00xyzw", b"file.json", b"a comment", &data);
            assert_eq!(
                gunzip_vec(&gz, DEFAULT_MAX_OUT).unwrap(),
                data,
                "flags {flags:#x}"
            );
            // Empty extra field, empty name and comment.
            let gz = member(flags, b"", b"", b"", &data);
            assert_eq!(
                gunzip_vec(&gz, DEFAULT_MAX_OUT).unwrap(),
                data,
                "flags {flags:#x}"
            );
        }
        // A 64 KiB extra field containing NULs.
        let extra = vec![0u8; 65_535];
        let gz = member(FEXTRA | FNAME, &extra, b"n", b"", &data);
        assert_eq!(gunzip_vec(&gz, DEFAULT_MAX_OUT).unwrap(), data);
    }

    #[test]
    fn truncation_inside_the_header_is_data() {
        let data = b"hello hello hello hello";
        for flags in [
            0,
            FEXTRA,
            FNAME,
            FCOMMENT,
            FHCRC,
            FEXTRA | FNAME | FCOMMENT | FHCRC,
        ] {
            let full = member(flags, b"extra!", b"name", b"comment", data);
            let header_len = full.len() - raw_deflate(data, 6).len() - 8;
            for cut in 0..=header_len {
                assert_eq!(
                    gunzip_vec(&full[..cut], 1000),
                    Err(DeflateError::Data),
                    "flags {flags:#x} cut {cut}"
                );
                assert!(gunzip_size_hint(&full[..cut], 1000) <= 1000);
            }
        }
        // An FEXTRA length pointing past the end.
        let mut gz = vec![0x1f, 0x8b, 8, FEXTRA, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff];
        gz.extend_from_slice(&raw_deflate(data, 6));
        gz.extend_from_slice(&trailer(data));
        assert_eq!(gunzip_vec(&gz, 1000), Err(DeflateError::Data));
        // FNAME without a terminating NUL anywhere.
        let mut gz = vec![0x1f, 0x8b, 8, FNAME, 0, 0, 0, 0, 0, 0xff];
        gz.extend_from_slice(&[b'a'; 40]);
        assert_eq!(gunzip_vec(&gz, 1000), Err(DeflateError::Data));
    }

    #[test]
    fn short_inputs_are_data() {
        assert_eq!(gunzip_vec(b"", 1000), Err(DeflateError::Data));
        let gz = gzip_vec(b"abc", 6).unwrap();
        for cut in 0..=10 {
            assert_eq!(
                gunzip_vec(&gz[..cut], 1000),
                Err(DeflateError::Data),
                "cut {cut}"
            );
            assert_eq!(
                gunzip_cap(&gz[..cut], 0, 0),
                Err(DeflateError::Data),
                "cut {cut}"
            );
        }
        assert_eq!(gunzip_vec(&GZIP_HEADER, 1000), Err(DeflateError::Data));
    }

    #[test]
    fn bad_magic_method_and_reserved_flags() {
        let good = gzip_vec(b"some data", 6).unwrap();
        for (at, value) in [
            (0, 0x1e),
            (0, 0x8b),
            (1, 0x8c),
            (1, 0x1f),
            (2, 7),
            (2, 0),
            (2, 9),
            (3, 0x20),
            (3, 0x40),
            (3, 0x80),
            (3, 0xe0),
        ] {
            let mut bad = good.clone();
            bad[at] = value;
            assert_eq!(
                gunzip_vec(&bad, 1000),
                Err(DeflateError::Data),
                "byte {at} = {value:#x}"
            );
        }
        // mtime, xfl and os are not looked at.
        let mut other = good.clone();
        other[4..10].copy_from_slice(&[9, 9, 9, 9, 2, 3]);
        assert_eq!(gunzip_vec(&other, 1000).unwrap(), b"some data");
    }

    // ----------------------------------------------------------- gzip trailer

    #[test]
    fn missing_or_partial_trailer_is_accepted() {
        for (name, data) in corpus() {
            let gz = gzip_vec(&data, 6).unwrap();
            for missing in 1..=8 {
                let cut = &gz[..gz.len() - missing];
                assert_eq!(
                    gunzip_vec(cut, DEFAULT_MAX_OUT).as_deref(),
                    Ok(&data[..]),
                    "{name}: {missing} trailer bytes missing"
                );
            }
            // Even a partial trailer of garbage: fewer than 8 bytes are not checked.
            for extra in 0..8 {
                let mut v = gz[..gz.len() - 8].to_vec();
                v.extend(std::iter::repeat(0xee).take(extra));
                assert_eq!(
                    gunzip_vec(&v, DEFAULT_MAX_OUT).as_deref(),
                    Ok(&data[..]),
                    "{name}: {extra} garbage bytes"
                );
            }
        }
    }

    #[test]
    fn wrong_crc_or_isize_is_data() {
        for (name, data) in corpus() {
            let gz = gzip_vec(&data, 6).unwrap();
            let n = gz.len();
            for (at, flip) in (n - 8..n).flat_map(|at| [(at, 0x01), (at, 0x80)]) {
                let mut bad = gz.clone();
                bad[at] ^= flip;
                assert_eq!(
                    gunzip_vec(&bad, DEFAULT_MAX_OUT),
                    Err(DeflateError::Data),
                    "{name}: trailer byte {} ^ {flip:#x}",
                    at + 8 - n
                );
            }
        }
    }

    #[test]
    fn bytes_after_the_trailer_are_ignored() {
        let data = json_like(10);
        let gz = gzip_vec(&data, 6).unwrap();
        let second = gzip_vec(b"second member", 6).unwrap();
        for tail in [&b"\x00"[..], b"garbage", &[0xff; 1000], &second, &gz] {
            let mut v = gz.clone();
            v.extend_from_slice(tail);
            assert_eq!(gunzip_vec(&v, DEFAULT_MAX_OUT).unwrap(), data);
        }
    }

    #[test]
    fn truncated_or_corrupt_deflate_is_data() {
        for (name, data) in corpus() {
            if data.len() > 200_000 {
                continue;
            }
            let gz = gzip_vec(&data, 6).unwrap();
            let body_end = gz.len() - 8;
            let step = (body_end / 300).max(1);
            for cut in (10..body_end).step_by(step).chain([body_end - 1]) {
                assert_eq!(
                    gunzip_vec(&gz[..cut], DEFAULT_MAX_OUT),
                    Err(DeflateError::Data),
                    "{name}: cut at {cut} of {body_end}"
                );
            }
        }
        // A reserved block type (3).
        let mut gz = GZIP_HEADER.to_vec();
        gz.extend_from_slice(&[0x07, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(gunzip_vec(&gz, 1000), Err(DeflateError::Data));
        // Random bodies and random corruption: Data or (rarely) a success
        // whose checks pass; never a panic.
        let mut rng = Rng(99);
        let good = gzip_vec(&json_like(20), 6).unwrap();
        for _ in 0..3000 {
            let mut bad = good.clone();
            for _ in 0..1 + rng.below(4) {
                let at = 10 + rng.below(bad.len() - 10);
                bad[at] ^= 1 << rng.below(8);
            }
            let r = gunzip_vec(&bad, 1 << 20);
            assert!(
                matches!(
                    r,
                    Err(DeflateError::Data) | Err(DeflateError::TooBig) | Ok(_)
                ),
                "{r:?}"
            );
            let mut junk = GZIP_HEADER.to_vec();
            let n = rng.below(200);
            junk.extend(rng.bytes(n));
            let _ = gunzip_vec(&junk, 1 << 16);
            let _ = uncompress_vec(&junk[8..], 1 << 16);
        }
    }

    // ------------------------------------------------- output sizes and caps

    #[test]
    fn size_hint_is_isize_when_plausible() {
        let data = json_like(60);
        let gz = gzip_vec(&data, 6).unwrap();
        assert_eq!(gunzip_size_hint(&gz, DEFAULT_MAX_OUT), data.len());
        // Capped by max_out: fall back to a multiple of the input, capped.
        assert_eq!(gunzip_size_hint(&gz, 100), 100);
        let small_cap = data.len() - 1;
        assert_eq!(
            gunzip_size_hint(&gz, small_cap),
            small_cap.min(MIN_CAPACITY)
        );
        // Exact hints take one call.
        let (r, tried) = drive(&gz, DEFAULT_MAX_OUT, gunzip_size_hint, gunzip);
        assert_eq!(r.unwrap(), data);
        assert_eq!(tried, vec![data.len()]);
        // Empty member: hint 0, and 0 bytes is enough.
        let gz = gzip_vec(b"", 6).unwrap();
        assert_eq!(gunzip_size_hint(&gz, DEFAULT_MAX_OUT), 0);
        assert_eq!(gunzip_cap(&gz, 0, DEFAULT_MAX_OUT).unwrap(), b"");
        // Short or empty inputs: small fallback, never above max_out.
        assert!(gunzip_size_hint(b"", DEFAULT_MAX_OUT) <= 1024);
        assert_eq!(gunzip_size_hint(b"", 0), 0);
        assert!(uncompress_size_hint(b"", DEFAULT_MAX_OUT) <= 1024);
        assert_eq!(
            uncompress_size_hint(&[0; 100_000], DEFAULT_MAX_OUT),
            400_000
        );
        assert_eq!(
            uncompress_size_hint(&[0; 100], DEFAULT_MAX_OUT),
            MIN_CAPACITY
        );
        assert_eq!(uncompress_size_hint(&[0; 100_000], 5), 5);
    }

    #[test]
    fn lying_isize_costs_only_retries() {
        let data = text_like(300_000);
        let gz = gzip_vec(&data, 6).unwrap();
        let body = &gz[..gz.len() - 8];
        // A partial trailer is not checked, so whatever its last four bytes
        // claim, the result is right; a lie only costs retries.
        for claim in [
            0u32,
            1,
            1000,
            data.len() as u32 - 1,
            data.len() as u32 + 1,
            50 << 20,
            u32::MAX,
        ] {
            let mut v = body.to_vec();
            v.extend_from_slice(&claim.to_le_bytes());
            let hint = gunzip_size_hint(&v, DEFAULT_MAX_OUT);
            assert!(hint <= DEFAULT_MAX_OUT && hint <= DEFLATE.max_output(v.len()));
            let (r, tried) = drive(&v, DEFAULT_MAX_OUT, gunzip_size_hint, gunzip);
            assert_eq!(r.unwrap(), data, "claim {claim}");
            assert!(tried.len() <= 6, "claim {claim}: {tried:?}");
            assert!(
                tried.iter().all(|&c| c <= DEFLATE.max_output(v.len())) || tried.len() == 1,
                "{tried:?}"
            );
        }
        // With a complete trailer a lying ISIZE is rejected, whatever the hint.
        for claim in [0u32, 1, data.len() as u32 + 1, 50 << 20, u32::MAX] {
            let mut v = body.to_vec();
            v.extend_from_slice(&crc32_ref(&data).to_le_bytes());
            v.extend_from_slice(&claim.to_le_bytes());
            let (r, _) = drive(&v, DEFAULT_MAX_OUT, gunzip_size_hint, gunzip);
            assert_eq!(r, Err(DeflateError::Data), "claim {claim}");
        }
        // An implausible ISIZE (more than DEFLATE can expand the input to) is
        // not used as a hint at all.
        let gz = gzip_vec(b"tiny", 6).unwrap();
        let mut v = gz[..gz.len() - 4].to_vec();
        v.extend_from_slice(&(60u32 << 20).to_le_bytes());
        assert!(gunzip_size_hint(&v, DEFAULT_MAX_OUT) <= DEFLATE.max_output(v.len()));
    }

    #[test]
    fn need_space_protocol() {
        let data = vec![0u8; 1 << 20];
        let gz = gzip_vec(&data, 6).unwrap();
        let z = zlib_vec(&data, 6).unwrap();
        for (input, f) in [
            (&gz, gunzip as DecompressFn),
            (&z, uncompress as DecompressFn),
        ] {
            // From a tiny buffer, each step grows and stays within max_out.
            let max_out = 10 << 20;
            let (n, steps) = decode_from_a_tiny_buffer(max_out, |cap| {
                let mut buf = vec![MaybeUninit::new(0u8); cap];
                f(input, &mut buf, max_out)
            });
            assert_eq!(n, data.len());
            assert!(steps <= 6, "{steps} steps");
            // Exactly enough, both as buffer and as cap.
            let mut buf = vec![MaybeUninit::new(0u8); data.len()];
            assert_eq!(f(input, &mut buf, data.len()), Ok(data.len()));
            // One byte short of the cap: TooBig, whatever the buffer size.
            for cap in [data.len() - 1, data.len(), data.len() + 100] {
                let mut buf = vec![MaybeUninit::new(0xa5u8); cap];
                assert_eq!(
                    f(input, &mut buf, data.len() - 1),
                    Err(DeflateError::TooBig)
                );
                // Nothing written past max_out.
                assert!(buf[data.len() - 1..]
                    .iter()
                    // SAFETY: buf was fully initialised.
                    .all(|b| unsafe { b.assume_init() } == 0xa5));
            }
            // A buffer smaller than the cap: NeedSpace up to the cap.
            let mut buf = vec![MaybeUninit::new(0u8); 1000];
            assert_eq!(f(input, &mut buf, 1500), Err(DeflateError::NeedSpace(1500)));
            let mut buf = vec![MaybeUninit::new(0u8); 1500];
            assert_eq!(f(input, &mut buf, 1500), Err(DeflateError::TooBig));
            // max_out 0.
            assert_eq!(f(input, &mut [], 0), Err(DeflateError::TooBig));
        }
    }

    /// Fixed-Huffman DEFLATE writer for hand-made streams.
    struct Bits {
        out: Vec<u8>,
        acc: u64,
        n: u32,
    }
    impl Bits {
        fn new() -> Bits {
            Bits {
                out: Vec::new(),
                acc: 0,
                n: 0,
            }
        }
        /// `count` bits of `v`, least significant first.
        fn put(&mut self, v: u64, count: u32) {
            self.acc |= v << self.n;
            self.n += count;
            while self.n >= 8 {
                self.out.push(self.acc as u8);
                self.acc >>= 8;
                self.n -= 8;
            }
        }
        /// A Huffman code of `len` bits, most significant first.
        fn code(&mut self, code: u64, len: u32) {
            let rev = code.reverse_bits() >> (64 - len);
            self.put(rev, len);
        }
        fn finish(mut self) -> Vec<u8> {
            if self.n > 0 {
                self.out.push(self.acc as u8);
            }
            self.out
        }
    }

    /// A raw DEFLATE stream of 1 + 258 * matches zero bytes: one fixed-Huffman
    /// block, a literal 0 then `matches` copies of (length 258, distance 1).
    fn zeros_bomb(matches: usize) -> Vec<u8> {
        let mut b = Bits::new();
        b.put(1, 1); // BFINAL
        b.put(1, 2); // BTYPE 01: fixed Huffman
        b.code(0x30, 8); // literal 0
        for _ in 0..matches {
            b.code(0xc5, 8); // length symbol 285 (258)
            b.code(0, 5); // distance code 0 (1)
        }
        b.code(0, 7); // end of block
        b.finish()
    }

    #[test]
    fn hand_made_stream_is_valid() {
        let raw = zeros_bomb(10);
        let mut gz = GZIP_HEADER.to_vec();
        gz.extend_from_slice(&raw);
        let expect = vec![0u8; 1 + 2580];
        gz.extend_from_slice(&trailer(&expect));
        assert_eq!(gunzip_vec(&gz, 10_000).unwrap(), expect);
    }

    #[test]
    fn bomb_is_too_big_without_allocating_past_the_cap() {
        // 1 GiB of zeros in 6.8 MB (fixed Huffman: 13 bits per 258 bytes).
        let matches = (1usize << 30) / 258 + 1;
        let raw = zeros_bomb(matches);
        let total = 1 + 258 * matches;
        let mut gz = GZIP_HEADER.to_vec();
        gz.extend_from_slice(&raw);
        gz.extend_from_slice(&[0, 0, 0, 0]); // CRC (never reached)
        gz.extend_from_slice(&(total as u32).to_le_bytes());
        let max_out = DEFAULT_MAX_OUT;
        let (r, tried) = drive(&gz, max_out, gunzip_size_hint, gunzip);
        assert_eq!(r, Err(DeflateError::TooBig));
        assert!(tried.iter().all(|&c| c <= max_out), "{tried:?}");
        assert_eq!(*tried.last().unwrap(), max_out);
        assert!(tried.len() <= 4, "{tried:?}");
        assert_eq!(gunzip_vec(&gz, max_out), Err(DeflateError::TooBig));

        // The same as zlib.
        let mut z = vec![0x78, 0x9c];
        z.extend_from_slice(&raw);
        z.extend_from_slice(&[0, 0, 0, 0]);
        let (r, tried) = drive(&z, max_out, uncompress_size_hint, uncompress);
        assert_eq!(r, Err(DeflateError::TooBig));
        assert!(tried.iter().all(|&c| c <= max_out), "{tried:?}");

        // A libdeflate-made bomb: 32 MiB of zeros, cap 1 MiB.
        let zeros = vec![0u8; 32 << 20];
        let gz = gzip_vec(&zeros, 1).unwrap();
        assert!(gz.len() < 64 << 10);
        let (r, tried) = drive(&gz, 1 << 20, gunzip_size_hint, gunzip);
        assert_eq!(r, Err(DeflateError::TooBig));
        assert!(tried.iter().all(|&c| c <= 1 << 20), "{tried:?}");
        assert_eq!(gunzip_vec(&gz, (32 << 20) - 1), Err(DeflateError::TooBig));
        assert_eq!(gunzip_vec(&gz, 32 << 20).unwrap().len(), 32 << 20);
    }

    // -------------------------------------------------------------- uncompress

    #[test]
    fn uncompress_checks() {
        let data = json_like(20);
        let z = zlib_vec(&data, 6).unwrap();
        assert_eq!(uncompress_vec(&z, DEFAULT_MAX_OUT).unwrap(), data);
        // Bytes after the stream are ignored (zlib's inflate stops at the end).
        let mut v = z.clone();
        v.extend_from_slice(b"trailing junk");
        assert_eq!(uncompress_vec(&v, DEFAULT_MAX_OUT).unwrap(), data);
        // Any bit of the Adler-32 wrong.
        for at in z.len() - 4..z.len() {
            for bit in 0..8 {
                let mut bad = z.clone();
                bad[at] ^= 1 << bit;
                assert_eq!(
                    uncompress_vec(&bad, DEFAULT_MAX_OUT),
                    Err(DeflateError::Data),
                    "byte {at} bit {bit}"
                );
            }
        }
        // Every truncation (including a missing or partial Adler-32).
        for cut in 0..z.len() {
            assert_eq!(
                uncompress_vec(&z[..cut], DEFAULT_MAX_OUT),
                Err(DeflateError::Data),
                "cut {cut}"
            );
        }
        // Header: bad FCHECK, method, window, preset dictionary.
        for (cmf, flg) in [
            (0x78, 0x9d),
            (0x79, 0x9c),
            (0x88, 0x1c),
            (0x78, 0xbb),
            (0x78, 0x20 | 0x1f),
        ] {
            let mut bad = z.clone();
            bad[0] = cmf;
            bad[1] = flg;
            assert_eq!(
                uncompress_vec(&bad, DEFAULT_MAX_OUT),
                Err(DeflateError::Data),
                "{cmf:#x} {flg:#x}"
            );
        }
        // Smaller windows are fine (zlib accepts any CINFO <= 7).
        let mut small = z.clone();
        small[0] = 0x08;
        small[1] = (31 - (0x08u32 * 256 % 31)) as u8;
        assert_eq!(uncompress_vec(&small, DEFAULT_MAX_OUT).unwrap(), data);
        // gzip is not zlib, nor is the reverse.
        let gz = gzip_vec(&data, 6).unwrap();
        assert_eq!(
            uncompress_vec(&gz, DEFAULT_MAX_OUT),
            Err(DeflateError::Data)
        );
        assert_eq!(gunzip_vec(&z, DEFAULT_MAX_OUT), Err(DeflateError::Data));
        assert_eq!(
            uncompress_vec(b"", DEFAULT_MAX_OUT),
            Err(DeflateError::Data)
        );
    }

    // ------------------------------------------ cross-check with Compress::Zlib

    /// Run `perl -MCompress::Zlib` over a batch of inputs (each framed with
    /// pack "N/a*"); each answer is `Some(output)` or `None` for undef.
    /// Returns `None` if perl or Compress::Zlib is not available.
    /// Asserts that `ours` accepts exactly the inputs Compress::Zlib's `func`
    /// accepts, with the same output. Needs perl (callers skip without it).
    fn assert_agrees_with_perl(
        func: &str,
        cases: &[Vec<u8>],
        ours: fn(&[u8], usize) -> Result<Vec<u8>, DeflateError>,
    ) {
        let theirs = perl_batch(func, cases).unwrap();
        let mut mismatches = Vec::new();
        for (case, t) in cases.iter().zip(&theirs) {
            let ours = ours(case, DEFAULT_MAX_OUT).ok();
            if ours.as_ref() != t.as_ref() {
                mismatches.push((case.clone(), ours.is_some(), t.is_some()));
            }
        }
        assert!(
            mismatches.is_empty(),
            "{func}: {} of {} differ, first: {:02x?}",
            mismatches.len(),
            cases.len(),
            mismatches.first()
        );
    }

    fn perl_batch(func: &str, inputs: &[Vec<u8>]) -> Option<Vec<Option<Vec<u8>>>> {
        use std::io::Write;
        use std::process::{Command, Stdio};
        let script = format!(
            "binmode STDIN; binmode STDOUT; local $/; my $in = <STDIN>; \
             for my $x (unpack '(N/a*)*', $in) {{ my $r = Compress::Zlib::{func}($x); \
             print pack 'N/a*', defined $r ? \"1$r\" : '0' }}"
        );
        // The perl the XS is built for (`make test` sets CMRX_PERL), so the
        // comparison is with that perl's Compress::Zlib.
        let perl = std::env::var_os("CMRX_PERL").unwrap_or_else(|| "perl".into());
        let mut child = Command::new(perl)
            .args(["-MCompress::Zlib", "-e", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut framed = Vec::new();
        for i in inputs {
            framed.extend_from_slice(&(i.len() as u32).to_be_bytes());
            framed.extend_from_slice(i);
        }
        let mut stdin = child.stdin.take()?;
        let writer = std::thread::spawn(move || stdin.write_all(&framed));
        let out = child.wait_with_output().ok()?;
        writer.join().ok()?.ok()?;
        if !out.status.success() {
            return None;
        }
        let mut answers = Vec::new();
        let mut rest = &out.stdout[..];
        while rest.len() >= 4 {
            let n = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
            let item = rest.get(4..4 + n)?;
            answers.push(match item.split_first() {
                Some((b'1', r)) => Some(r.to_vec()),
                _ => None,
            });
            rest = &rest[4 + n..];
        }
        (answers.len() == inputs.len()).then_some(answers)
    }

    #[test]
    fn agrees_with_compress_zlib_when_perl_is_present() {
        let corpus: Vec<Vec<u8>> = corpus().into_iter().map(|(_, d)| d).collect();
        // Ours -> memGunzip / uncompress.
        let ours_gz: Vec<Vec<u8>> = corpus
            .iter()
            .map(|d| gzip_vec(d, GZIP_DEFAULT_LEVEL).unwrap())
            .collect();
        let Some(back) = perl_batch("memGunzip", &ours_gz) else {
            eprintln!("perl with Compress::Zlib not available: skipped");
            return;
        };
        for (d, b) in corpus.iter().zip(&back) {
            assert_eq!(b.as_deref(), Some(&d[..]));
        }
        let ours_z: Vec<Vec<u8>> = corpus
            .iter()
            .map(|d| zlib_vec(d, ZLIB_DEFAULT_LEVEL).unwrap())
            .collect();
        for (d, b) in corpus
            .iter()
            .zip(&perl_batch("uncompress", &ours_z).unwrap())
        {
            assert_eq!(b.as_deref(), Some(&d[..]));
        }
        // memGzip / compress -> ours.
        for (func, ours) in [
            ("memGzip", gunzip_vec as fn(&[u8], usize) -> _),
            ("compress", uncompress_vec),
        ] {
            for (d, c) in corpus.iter().zip(perl_batch(func, &corpus).unwrap()) {
                let c = c.unwrap();
                assert_eq!(ours(&c, DEFAULT_MAX_OUT).unwrap(), *d, "{func}");
                if func == "memGzip" {
                    assert_eq!(c[..10], GZIP_HEADER);
                }
            }
        }

        // Malformed inputs: accept and reject exactly what memGunzip does.
        let mut rng = Rng(2024);
        let mut cases: Vec<Vec<u8>> = Vec::new();
        let data = json_like(8);
        let members = [
            gzip_vec(&data, 6).unwrap(),
            member(
                FEXTRA | FNAME | FCOMMENT | FHCRC,
                b"xx\x02\x00ab",
                b"name",
                b"comment",
                &data,
            ),
            gzip_vec(b"", 6).unwrap(),
            gzip_vec(b"x", 9).unwrap(),
        ];
        for m in &members {
            for cut in 0..=m.len() {
                cases.push(m[..cut].to_vec());
            }
            for at in 0..m.len() {
                for bit in [0, 3, 5, 6, 7] {
                    let mut bad = m.clone();
                    bad[at] ^= 1 << bit;
                    cases.push(bad);
                }
            }
            for tail in [&b"\x00"[..], b"junk", &[0xff; 9]] {
                let mut v = m.clone();
                v.extend_from_slice(tail);
                cases.push(v);
            }
        }
        for _ in 0..2000 {
            let m = &members[rng.below(members.len())];
            let mut bad = m.clone();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(bad.len());
                bad[at] = (rng.next_u64() >> 56) as u8;
            }
            bad.truncate(bad.len() - rng.below(4).min(bad.len()));
            cases.push(bad);
        }
        assert_agrees_with_perl("memGunzip", &cases, gunzip_vec);

        // uncompress likewise.
        let z = zlib_vec(&data, 6).unwrap();
        let mut cases: Vec<Vec<u8>> = (0..=z.len()).map(|cut| z[..cut].to_vec()).collect();
        for at in 0..z.len() {
            for bit in [0, 4, 7] {
                let mut bad = z.clone();
                bad[at] ^= 1 << bit;
                cases.push(bad);
            }
        }
        let mut v = z.clone();
        v.extend_from_slice(b"after");
        cases.push(v);
        assert_agrees_with_perl("uncompress", &cases, uncompress_vec);
    }
}
