//! `zstd::decompress` (what the readers do with a zstd value) on arbitrary
//! bytes, with a 1 MiB cap, with and without a loaded dictionary.
//!
//! * never panics (libFuzzer reports a panic as a crash);
//! * never holds more than the cap in Rust heap memory at once, and never
//!   returns more than the cap;
//! * decoding into one fixed buffer of exactly the cap gives the same result
//!   as the growth loop of `decompress_vec` (but for a corrupt frame longer
//!   than the cap, which either may call corrupt or too big);
//! * a frame naming the loaded dictionary decodes the same through the
//!   registry and with the dictionary given; one naming another is
//!   `UnknownDictionary`, never decoded with the wrong one;
//! * whatever decodes re-encodes, with and without the dictionary, and
//!   decodes back to itself.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use std::mem::MaybeUninit;
use std::sync::{Arc, OnceLock};

use cmrx::zstd::{self, Dictionary, Error};
use libfuzzer_sys::fuzz_target;

const CAP: usize = 1 << 20;

/// A dictionary trained on fixed JSON-like samples and loaded into the
/// registry once, as a reader process loads its dictionaries.
fn dictionary() -> Arc<Dictionary> {
    static DICT: OnceLock<Arc<Dictionary>> = OnceLock::new();
    DICT.get_or_init(|| {
        let samples: Vec<Vec<u8>> = (0..400)
            .map(|i| {
                format!(
                    r#"{{"id":{i},"user":"user{}","plan":"{}","tags":["a","b{}"]}}"#,
                    i * 7 % 101,
                    ["free", "pro", "team"][i % 3],
                    i % 11
                )
                .into_bytes()
            })
            .collect();
        let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
        let bytes = zstd::train(&refs, 4096).expect("training the fuzz dictionary");
        let id = zstd::register(&bytes).expect("registering it");
        zstd::lookup(id).expect("and finding it")
    })
    .clone()
}

fuzz_target!(|data: &[u8]| {
    let dict = dictionary();
    let (r, peak) = common::peak_heap(|| zstd::decompress_vec(data, CAP));
    assert!(peak <= CAP, "{peak} bytes of heap live at once, cap {CAP}");
    match &r {
        Ok(v) => assert!(v.len() <= CAP),
        Err(Error::Data | Error::TooBig) => {}
        Err(Error::UnknownDictionary(id)) => {
            assert_ne!(*id, dict.id(), "the loaded dictionary is unknown");
            assert_eq!(zstd::frame_dictionary_id(data), Some(*id));
        }
        Err(e) => panic!("decompress_vec returned {e:?}"),
    }

    // One call into a buffer of exactly the cap agrees with the loop.
    let mut fixed = vec![MaybeUninit::new(0xa5u8); CAP];
    let once = zstd::decompress(data, &mut fixed, CAP).map(|n| {
        assert!(n <= CAP);
        // SAFETY: the buffer was initialised when it was made.
        unsafe { std::slice::from_raw_parts(fixed.as_ptr().cast::<u8>(), n) }.to_vec()
    });
    match (&once, &r) {
        // libzstd's one-shot decoder finds some corruptions only when its
        // output reaches them: a corrupt frame that would run past the cap
        // can be "too big" in the whole cap and "corrupt" in a smaller
        // buffer of the growth loop (zstd(1) calls such a frame corrupt).
        // Both are failures; neither hands back data.
        (Err(Error::TooBig), Err(Error::Data)) | (Err(Error::Data), Err(Error::TooBig)) => {}
        _ => assert_eq!(once, r, "fixed {CAP}-byte buffer vs the growth loop"),
    }

    // Through the registry or with the dictionary given: the same.
    if zstd::frame_dictionary_id(data) == Some(dict.id()) {
        assert_eq!(zstd::decompress_vec_with(data, Some(&dict), CAP), r);
    }

    if let Ok(plain) = r {
        let level = i32::from(data.first().copied().unwrap_or(0) % 20) - 3;
        for with in [None, Some(&*dict)] {
            let frame = zstd::compress_vec(&plain, level, with).expect("re-encoding");
            assert!(frame.len() <= zstd::compress_bound(plain.len()));
            assert_eq!(
                zstd::decompress_vec(&frame, CAP).as_deref(),
                Ok(&plain[..]),
                "re-encoded at {level}, dictionary {}",
                with.is_some()
            );
            if !plain.is_empty() {
                assert_eq!(
                    zstd::decompress_vec(&frame, plain.len() - 1),
                    Err(Error::TooBig)
                );
            }
        }
    }
});
