//! The C ABI of gzip and zlib ([`crate::deflate`]): plumbing only.

use std::mem::MaybeUninit;
use std::panic::catch_unwind;

use super::{inspect, with_buffers};
use crate::deflate;

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
            // SAFETY: the caller's contract is with_buffers's.
            unsafe { with_buffers(input, in_len, out, out_cap, out_len, compress) }
        }
    )*};
}

number_exports! {
    /// Largest gzip output for `in_len` bytes (`cmrx_gzip_bound`).
    fn cmrx_gzip_bound(in_len: usize) -> usize = deflate::gzip_bound(in_len);
    /// Largest zlib output for `in_len` bytes (`cmrx_zlib_bound`).
    fn cmrx_zlib_bound(in_len: usize) -> usize = deflate::zlib_bound(in_len);
    /// 1 if `level` is one `cmrx_gzip` accepts, else 0
    /// (`cmrx_gzip_level_valid`).
    fn cmrx_gzip_level_valid(level: i32) -> i32 = i32::from(deflate::gzip_level(level).is_ok());
}

deflate_exports! {
    /// gzip with memGzip's framing (`cmrx_gzip`).
    fn cmrx_gzip = deflate::gzip;
    /// zlib format with Compress::Zlib::compress's levels (`cmrx_zlib`).
    fn cmrx_zlib = deflate::zlib;
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
            i32::from(deflate::looks_incompressible(src))
        })
    }
}
