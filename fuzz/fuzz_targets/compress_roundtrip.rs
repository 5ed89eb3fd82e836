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

use cmrx::deflate::DeflateError;
use cmrx::testing;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, input)) = data.split_first() else {
        return;
    };
    let level = i32::from(selector % 13);

    let gz = testing::gzip_vec(input, level).expect("gzip_vec");
    common::check_gzip_member(&gz, input);
    assert_eq!(
        testing::gunzip_vec(&gz, input.len()).as_deref(),
        Ok(input),
        "gzip level {level}"
    );

    // compress()'s levels are zlib's 0..=9; libdeflate's 10..=12 are gzip's only.
    let zlib_level = level.min(9);
    let z = testing::zlib_vec(input, zlib_level).expect("zlib_vec");
    common::check_zlib_stream(&z, input);
    assert_eq!(
        testing::uncompress_vec(&z, input.len()).as_deref(),
        Ok(input),
        "zlib level {level}"
    );

    if !input.is_empty() {
        assert_eq!(
            testing::gunzip_vec(&gz, input.len() - 1),
            Err(DeflateError::TooBig)
        );
        assert_eq!(
            testing::uncompress_vec(&z, input.len() - 1),
            Err(DeflateError::TooBig)
        );
    }

    // The same DEFLATE stream inside both framings (one compressor per level).
    if zlib_level == level {
        assert_eq!(
            gz[10..gz.len() - 8],
            z[2..z.len() - 4],
            "gzip and zlib bodies differ"
        );
    }

    // Levels out of range are refused, never clamped (-1 is the default).
    let bad = [-2, 13, i32::MIN, i32::MAX][usize::from(selector) % 4];
    assert_eq!(testing::gzip_vec(input, bad), Err(DeflateError::Arg));
    assert_eq!(testing::zlib_vec(input, bad.max(10)), Err(DeflateError::Arg));
});
