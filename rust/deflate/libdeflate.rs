//! A minimal safe wrapper over the raw libdeflate FFI (`libdeflate-sys`).
//!
//! Only what [`super`] (gzip and zlib) needs: owning compressor and decompressor
//! handles freed on drop, raw-DEFLATE and zlib compression, the `_ex`
//! decompression entry points (which report how much input the stream used),
//! and CRC-32. Output buffers are `&mut [MaybeUninit<u8>]` because
//! they are usually a Perl scalar's uninitialised spare capacity; a successful
//! call hands back the written prefix as an initialised `&[u8]`.
//!
//! Every `unsafe` block states the invariant it relies on.

use core::ffi::c_void;
use core::fmt;
use core::mem::MaybeUninit;
use core::ptr::{self, NonNull};

use libdeflate_sys as sys;

/// The lowest compression level libdeflate accepts (it stores).
pub const MIN_LEVEL: i32 = 0;
/// The highest compression level libdeflate accepts.
pub const MAX_LEVEL: i32 = 12;

/// Why a decompression call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecompressError {
    /// The input is not a valid (or is a truncated) stream.
    BadData,
    /// The output would not fit in the buffer given (the input may still turn
    /// out to be bad further on: libdeflate stops at the first overflow).
    InsufficientSpace,
}

impl fmt::Display for DecompressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DecompressError::BadData => "not a valid DEFLATE or zlib stream",
            DecompressError::InsufficientSpace => "the output does not fit the buffer",
        })
    }
}

impl std::error::Error for DecompressError {}

/// `&mut [MaybeUninit<u8>]` as the `(pointer, length)` pair libdeflate wants.
fn out_raw(out: &mut [MaybeUninit<u8>]) -> (*mut c_void, usize) {
    (out.as_mut_ptr().cast::<c_void>(), out.len())
}

/// The first `n` bytes of `out` as initialised bytes.
///
/// # Safety
/// `n <= out.len()` and `out[..n]` has been fully written.
unsafe fn assume_init(out: &[MaybeUninit<u8>], n: usize) -> &[u8] {
    debug_assert!(n <= out.len());
    // SAFETY: the caller guarantees n <= out.len() and that out[..n] is
    // initialised; MaybeUninit<u8> has the layout of u8.
    unsafe { core::slice::from_raw_parts(out.as_ptr().cast::<u8>(), n) }
}

/// An owned `struct libdeflate_compressor` for one compression level.
///
/// What a [`Compressor`] writes: raw DEFLATE (a gzip member's body) or a
/// zlib stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Raw DEFLATE.
    RawDeflate,
    /// zlib: a two-byte header, DEFLATE, an Adler-32.
    Zlib,
}

/// Not `Send`/`Sync` (raw pointer): [`super`] keeps one per level per thread.
pub struct Compressor {
    raw: NonNull<sys::libdeflate_compressor>,
}

impl Compressor {
    /// A compressor for `level` (0..=12); `None` for a level out of range or
    /// when libdeflate cannot allocate its state.
    pub fn new(level: i32) -> Option<Compressor> {
        if !(MIN_LEVEL..=MAX_LEVEL).contains(&level) {
            return None;
        }
        // SAFETY: no pointer arguments; the level is in libdeflate's accepted
        // range. The result is either NULL or a compressor we now own.
        let raw = unsafe { sys::libdeflate_alloc_compressor(level) };
        NonNull::new(raw).map(|raw| Compressor { raw })
    }

    /// `input` compressed as `stream` into `out`. `None` if it does not fit
    /// (an `out` of [`deflate_bound`] or [`zlib_bound`]`(input.len())` bytes
    /// always fits).
    pub fn compress<'o>(
        &mut self,
        stream: Stream,
        input: &[u8],
        out: &'o mut [MaybeUninit<u8>],
    ) -> Option<&'o [u8]> {
        match stream {
            Stream::RawDeflate => self.compress_with(sys::libdeflate_deflate_compress, input, out),
            Stream::Zlib => self.compress_with(sys::libdeflate_zlib_compress, input, out),
        }
    }

    /// Runs one of libdeflate's `*_compress` functions (they share a
    /// signature and contract).
    fn compress_with<'o>(
        &mut self,
        compress: unsafe extern "C" fn(
            *mut sys::libdeflate_compressor,
            *const c_void,
            usize,
            *mut c_void,
            usize,
        ) -> usize,
        input: &[u8],
        out: &'o mut [MaybeUninit<u8>],
    ) -> Option<&'o [u8]> {
        let (out_ptr, out_len) = out_raw(out);
        // SAFETY: self.raw is a live compressor used by this thread only
        // (&mut self); input is readable for input.len() bytes and out is
        // writable for out_len bytes (libdeflate never reads from out). The
        // return value is the number of bytes written, at most out_len, or 0.
        let n = unsafe {
            compress(
                self.raw.as_ptr(),
                input.as_ptr().cast::<c_void>(),
                input.len(),
                out_ptr,
                out_len,
            )
        };
        if n == 0 || n > out.len() {
            return None;
        }
        // SAFETY: libdeflate wrote exactly n <= out.len() bytes at out's start.
        Some(unsafe { assume_init(out, n) })
    }
}

impl Drop for Compressor {
    fn drop(&mut self) {
        // SAFETY: self.raw came from libdeflate_alloc_compressor, is owned by
        // this value alone and is freed exactly once, here.
        unsafe { sys::libdeflate_free_compressor(self.raw.as_ptr()) }
    }
}

/// Worst-case raw DEFLATE size of `in_len` input bytes at any level, or
/// `None` if that does not fit in a `usize`.
pub fn deflate_bound(in_len: usize) -> Option<usize> {
    // libdeflate's bound is in_len + 5 * ceil(in_len / 5000) (at least 5),
    // computed without overflow checks: keep in_len small enough for it.
    if in_len > usize::MAX / 2 {
        return None;
    }
    // SAFETY: a NULL compressor is documented to mean "the bound across any
    // compressor"; the function only does arithmetic on in_len.
    Some(unsafe { sys::libdeflate_deflate_compress_bound(ptr::null_mut(), in_len) })
}

/// Worst-case zlib-format size of `in_len` input bytes at any level.
pub fn zlib_bound(in_len: usize) -> Option<usize> {
    // zlib adds a 2-byte header and a 4-byte Adler-32 to the raw stream.
    deflate_bound(in_len)?.checked_add(6)
}

/// An owned `struct libdeflate_decompressor` (any format, any level).
pub struct Decompressor {
    raw: NonNull<sys::libdeflate_decompressor>,
}

/// The `*_decompress_ex` signature shared by the raw and zlib variants.
type DecompressExFn = unsafe extern "C" fn(
    *mut sys::libdeflate_decompressor,
    *const c_void,
    usize,
    *mut c_void,
    usize,
    *mut usize,
    *mut usize,
) -> sys::libdeflate_result;

impl Decompressor {
    /// A decompressor; `None` when libdeflate cannot allocate its state.
    pub fn new() -> Option<Decompressor> {
        // SAFETY: no arguments; the result is NULL or a decompressor we own.
        let raw = unsafe { sys::libdeflate_alloc_decompressor() };
        NonNull::new(raw).map(|raw| Decompressor { raw })
    }

    fn run<'o>(
        &mut self,
        f: DecompressExFn,
        input: &[u8],
        out: &'o mut [MaybeUninit<u8>],
    ) -> Result<(usize, &'o [u8]), DecompressError> {
        let (out_ptr, out_len) = out_raw(out);
        let mut in_used: usize = 0;
        let mut out_written: usize = 0;
        // SAFETY: self.raw is a live decompressor used by this thread only
        // (&mut self); input is readable for input.len() bytes; out is
        // writable for out_len bytes and libdeflate never reads from it before
        // writing; the two result pointers are valid &mut usize locals. `f` is
        // one of libdeflate's *_decompress_ex functions (see callers).
        let rc = unsafe {
            f(
                self.raw.as_ptr(),
                input.as_ptr().cast::<c_void>(),
                input.len(),
                out_ptr,
                out_len,
                &mut in_used,
                &mut out_written,
            )
        };
        match rc {
            sys::libdeflate_result_LIBDEFLATE_SUCCESS
                if out_written <= out.len() && in_used <= input.len() =>
            {
                // SAFETY: on success libdeflate wrote exactly out_written
                // bytes, checked above to be within out, from out's start.
                Ok((in_used, unsafe { assume_init(out, out_written) }))
            }
            sys::libdeflate_result_LIBDEFLATE_INSUFFICIENT_SPACE => {
                Err(DecompressError::InsufficientSpace)
            }
            // BAD_DATA; SHORT_OUTPUT cannot happen with a non-NULL
            // actual_out_nbytes_ret; anything else is treated as bad data.
            _ => Err(DecompressError::BadData),
        }
    }

    /// Decompress one `stream` from the front of `input` into `out`. On
    /// success: (input bytes the stream used, rounded up to a whole byte,
    /// with zlib's Adler-32; the decompressed bytes). Bytes after the stream
    /// are not looked at; a stream that does not end within `input` is
    /// `BadData`. zlib's header and Adler-32 are checked.
    pub fn decompress<'o>(
        &mut self,
        stream: Stream,
        input: &[u8],
        out: &'o mut [MaybeUninit<u8>],
    ) -> Result<(usize, &'o [u8]), DecompressError> {
        match stream {
            Stream::RawDeflate => self.run(sys::libdeflate_deflate_decompress_ex, input, out),
            Stream::Zlib => self.run(sys::libdeflate_zlib_decompress_ex, input, out),
        }
    }
}

impl Drop for Decompressor {
    fn drop(&mut self) {
        // SAFETY: self.raw came from libdeflate_alloc_decompressor, is owned
        // by this value alone and is freed exactly once, here.
        unsafe { sys::libdeflate_free_decompressor(self.raw.as_ptr()) }
    }
}

/// CRC-32 (gzip's) of `data`, continuing from `crc` (0 to start).
pub fn crc32(crc: u32, data: &[u8]) -> u32 {
    // SAFETY: data is readable for data.len() bytes; libdeflate only reads.
    unsafe { sys::libdeflate_crc32(crc, data.as_ptr().cast::<c_void>(), data.len()) }
}
