//! Compression round trips: the first byte picks the level (`% 13`, so
//! 0..=12: libdeflate's whole range), the rest is the data.
//!
//! * `gzip_vec` then `gunzip_vec` gives the data back, and so does
//!   `zlib_vec` then `uncompress_vec`, even with the cap set to exactly the
//!   data's length; one byte less is `TooBig`;
//! * the gzip output is framed as memGzip frames it (header, CRC-32, ISIZE,
//!   checked against independent implementations), the zlib output is what
//!   Compress::Zlib::compress writes (CMF 0x78, FCHECK, Adler-32);
//! * both stay within `gzip_bound` / `zlib_bound`;
//! * both framings hold the same DEFLATE stream;
//! * out-of-range levels are `Arg`.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use cmrx::codec::{self, CodecError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, input)) = data.split_first() else {
        return;
    };
    let level = i32::from(selector % 13);

    let gz = codec::gzip_vec(input, level).expect("gzip_vec");
    common::check_gzip_member(&gz, input);
    assert_eq!(
        codec::gunzip_vec(&gz, input.len()).as_deref(),
        Ok(input),
        "gzip level {level}"
    );

    let z = codec::zlib_vec(input, level).expect("zlib_vec");
    common::check_zlib_stream(&z, input);
    assert_eq!(
        codec::uncompress_vec(&z, input.len()).as_deref(),
        Ok(input),
        "zlib level {level}"
    );

    if !input.is_empty() {
        assert_eq!(
            codec::gunzip_vec(&gz, input.len() - 1),
            Err(CodecError::TooBig)
        );
        assert_eq!(
            codec::uncompress_vec(&z, input.len() - 1),
            Err(CodecError::TooBig)
        );
    }

    // The same DEFLATE stream inside both framings (one compressor per level).
    assert_eq!(
        gz[10..gz.len() - 8],
        z[2..z.len() - 4],
        "gzip and zlib bodies differ"
    );

    // Levels outside 0..=12 are refused, never clamped.
    let bad = [-1, 13, i32::MIN, i32::MAX][usize::from(selector) % 4];
    assert_eq!(codec::gzip_vec(input, bad), Err(CodecError::Arg));
    assert_eq!(codec::zlib_vec(input, bad), Err(CodecError::Arg));
});
