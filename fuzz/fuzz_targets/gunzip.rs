//! `testing::gunzip_vec` (memGunzip) on arbitrary bytes, with a 1 MiB cap.
//!
//! * never panics (libFuzzer reports a panic as a crash);
//! * never holds more than the cap in Rust heap memory at once (a counting
//!   global allocator measures the peak of live bytes during the call), and
//!   never returns more than the cap;
//! * decoding into one fixed buffer of exactly the cap gives the same result
//!   as the growth loop of `gunzip_vec`;
//! * whatever decodes re-encodes (`gzip_vec`, memGzip's framing) and decodes
//!   back to itself.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use cmrx::deflate::{self, DeflateError};
use cmrx::testing;
use libfuzzer_sys::fuzz_target;

const CAP: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    if let Ok(plain) = common::check_decoder(data, CAP, testing::gunzip_vec, deflate::gunzip) {
        // Re-encode at a level taken from the input (0..=9; 10..=12 are
        // exercised by compress_roundtrip) and decode again.
        let level = (data.len() % 10) as i32;
        let gz = testing::gzip_vec(&plain, level).expect("gzip_vec of decoded data");
        common::check_gzip_member(&gz, &plain);
        assert_eq!(
            testing::gunzip_vec(&gz, CAP).as_deref(),
            Ok(&plain[..]),
            "re-encoded at {level}"
        );
        // A cap one byte short of the data is TooBig.
        if !plain.is_empty() {
            assert_eq!(
                testing::gunzip_vec(&gz, plain.len() - 1),
                Err(DeflateError::TooBig)
            );
        }
    }
});
