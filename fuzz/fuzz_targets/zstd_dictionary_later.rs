//! Frames whose dictionary is registered only later, as a dictionary set's
//! rescan does it: readers meet values of a dictionary before the process
//! has loaded it. The input chooses a dictionary ID (1..=4096, the small IDs
//! a set gives; the same ID always means the same dictionary, the base
//! dictionary renumbered), a level, whether to register the dictionary
//! now, a byte to corrupt, and the data.
//!
//! * before its dictionary is registered, a frame is `UnknownDictionary`
//!   with its ID, never decoded (not with another dictionary, not without
//!   one), through the registry and with another dictionary given;
//! * once it is registered, the frame decodes to exactly the data;
//! * a different dictionary with the same ID (a replaced file) is refused
//!   by the registry, and the frame still decodes to the data;
//! * a corrupted frame never panics; if its header then names an ID that
//!   is not registered, it is `UnknownDictionary` with that ID.
#![no_main]

use std::sync::OnceLock;

use cmrx::zstd::{self, Dictionary, Error};
use libfuzzer_sys::fuzz_target;

const CAP: usize = 1 << 20;
/// IDs the input can name: every registration stays for the life of the
/// process, so this bounds the memory the registry holds.
const IDS: u16 = 4096;
/// Bytes of the input before the data: ID (2), level, register now, where
/// to corrupt.
const HEAD: usize = 5;

/// JSON-like samples of a seed.
fn samples(seed: usize) -> Vec<Vec<u8>> {
    (0..400)
        .map(|i| {
            format!(
                r#"{{"id":{i},"user":"user{}","plan":"{}","seed":{seed},"tags":["a","b{}"]}}"#,
                (i * 7 + seed) % 101,
                ["free", "pro", "team"][(i + seed) % 3],
                i % 11
            )
            .into_bytes()
        })
        .collect()
}

fn trained(seed: usize) -> Vec<u8> {
    let values = samples(seed);
    let refs: Vec<&[u8]> = values.iter().map(|s| &s[..]).collect();
    zstd::train(&refs, 4096).expect("training a fuzz dictionary")
}

/// The dictionary the set gives ID `id`, and another one with that ID
/// (another set's file, or a replaced one).
fn dictionaries() -> &'static (Vec<u8>, Vec<u8>) {
    static BASES: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    BASES.get_or_init(|| (trained(0), trained(1)))
}

fn numbered(base: &[u8], id: u32) -> Vec<u8> {
    zstd::with_dictionary_id(base, id).expect("renumbering")
}

fuzz_target!(|input: &[u8]| {
    if input.len() < HEAD {
        return;
    }
    let (head, data) = input.split_at(HEAD);
    let id = u32::from(u16::from_le_bytes([head[0], head[1]]) % IDS + 1);
    let level = i32::from(head[2] % 23) - 3;
    let register_now = head[3] & 1 == 1;
    let corrupt_at = usize::from(head[4]);
    let (base, twin) = dictionaries();
    let bytes = numbered(base, id);
    let dict = Dictionary::from_bytes(&bytes).expect("a renumbered dictionary loads");
    assert_eq!(dict.id(), id);
    let frame = zstd::compress_vec(data, level, Some(&dict)).expect("compressing");
    assert_eq!(zstd::frame_dictionary_id(&frame), Some(id));

    if zstd::lookup(id).is_none() {
        assert_eq!(
            zstd::decompress_vec(&frame, CAP),
            Err(Error::UnknownDictionary(id)),
            "a frame whose dictionary is not registered"
        );
        let other = Dictionary::from_bytes(&numbered(twin, id % u32::from(IDS) + 1)).unwrap();
        assert_eq!(
            zstd::decompress_vec_with(&frame, Some(&other), CAP),
            Err(Error::UnknownDictionary(id))
        );
        assert_eq!(
            zstd::decompress_vec_with(&frame, None, CAP),
            Err(Error::UnknownDictionary(id))
        );
        if !register_now {
            return;
        }
        assert_eq!(zstd::register(&bytes), Ok(id));
    }

    // Registered (now or before): exactly the data.
    assert_eq!(zstd::decompress_vec(&frame, CAP).as_deref(), Ok(data));
    // Another dictionary with this ID is refused, and changes nothing.
    assert_eq!(
        zstd::register(&numbered(twin, id)),
        Err(Error::DictionaryConflict(id))
    );
    assert_eq!(zstd::decompress_vec(&frame, CAP).as_deref(), Ok(data));

    // A corrupted byte: no panic; an unregistered ID is never decoded.
    let mut bad = frame.clone();
    let at = corrupt_at % bad.len();
    bad[at] ^= head[4] | 1;
    let result = zstd::decompress_vec(&bad, CAP);
    if let Some(named) = zstd::frame_dictionary_id(&bad) {
        if zstd::lookup(named).is_none() {
            assert_eq!(result, Err(Error::UnknownDictionary(named)), "byte {at}");
        }
    }
    if let Ok(v) = result {
        assert!(v.len() <= CAP);
    }
});
