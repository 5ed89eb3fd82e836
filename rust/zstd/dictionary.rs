//! A standard zstd dictionary, loaded and prepared for both directions
//! ([`Dictionary`]), and a copy of one under another ID
//! ([`with_dictionary_id`]).

use std::fmt;
use std::sync::OnceLock;

use zstd::zstd_safe::{CDict, DDict};

use super::{compression_level, vec_with_room, Error, MAX_LEVEL, MIN_LEVEL};
use crate::counters::ValueCounters;

// What the documentation here links to.
#[cfg(doc)]
use super::{compress, decompress, train, DEFAULT_LEVEL};

/// The first four bytes of a standard zstd dictionary (magic number
/// 0xEC30A437, little-endian); its dictionary ID follows.
///
/// ```
/// assert_eq!(cmrx::zstd::DICT_MAGIC, 0xEC30_A437u32.to_le_bytes());
/// ```
pub const DICT_MAGIC: [u8; 4] = [0x37, 0xa4, 0x30, 0xec];

/// Number of compression levels a [`Dictionary`] can prepare tables for.
const LEVELS: usize = (MAX_LEVEL - MIN_LEVEL + 1) as usize;

/// A standard zstd dictionary, ready for both directions: its decompression
/// tables (a `ZSTD_DDict`) are made once, by [`Dictionary::from_bytes`]; its
/// compression tables (a `ZSTD_CDict`, which depends on the level) once per
/// level, the first time [`compress`] uses that level.
///
/// `Dictionary` is `Send + Sync`, to be shared behind an `Arc`: libzstd only
/// reads a prepared dictionary while (de)compressing, and documents that one
/// can be used by several threads at once; the per-level tables are set at
/// most once each, through a `OnceLock`. No `unsafe` here: the `Send`/`Sync`
/// of the tables are the `zstd` crate's, resting on that libzstd guarantee.
///
/// ```
/// use cmrx::zstd::{compress_vec, decompress_vec_with, train, Dictionary};
/// let samples: Vec<Vec<u8>> = (0..300)
///     .map(|i| format!(r#"{{"id":{i},"user":"user{}","tags":["a","b"]}}"#, i * 7).into_bytes())
///     .collect();
/// let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
/// let dict = Dictionary::from_bytes(&train(&refs, 4096).unwrap()).unwrap();
/// let frame = compress_vec(&samples[5], 3, Some(&dict)).unwrap();
/// assert_eq!(decompress_vec_with(&frame, Some(&dict), 1 << 20).unwrap(), samples[5]);
/// ```
pub struct Dictionary {
    id: u32,
    bytes: Box<[u8]>,
    ddict: DDict<'static>,
    /// The compression tables for level `MIN_LEVEL + i` at index `i`.
    cdicts: [OnceLock<CDict<'static>>; LEVELS],
    /// The cache values written and read with it.
    counters: ValueCounters,
}

/// The ID in a standard dictionary's header, or `BadDictionary`.
pub(super) fn dictionary_header_id(bytes: &[u8]) -> Result<u32, Error> {
    match bytes.get(..8) {
        Some([m0, m1, m2, m3, i0, i1, i2, i3]) if [*m0, *m1, *m2, *m3] == DICT_MAGIC => {
            match u32::from_le_bytes([*i0, *i1, *i2, *i3]) {
                0 => Err(Error::BadDictionary),
                id => Ok(id),
            }
        }
        _ => Err(Error::BadDictionary),
    }
}

impl Dictionary {
    /// Loads a standard zstd dictionary (as `zstd --train` or [`train`]
    /// writes it) and prepares its decompression tables. `BadDictionary`
    /// for anything else: no magic number (raw-content dictionaries are
    /// refused), an ID of 0 (a frame cannot name it), or tables libzstd
    /// cannot load.
    ///
    /// ```
    /// use cmrx::zstd::{Dictionary, Error};
    /// assert_eq!(Dictionary::from_bytes(b"raw content").unwrap_err(), Error::BadDictionary);
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Dictionary, Error> {
        let id = dictionary_header_id(bytes)?;
        let ddict = DDict::try_create(bytes).ok_or(Error::BadDictionary)?;
        Ok(Dictionary {
            id,
            bytes: bytes.into(),
            ddict,
            cdicts: std::array::from_fn(|_| OnceLock::new()),
            counters: ValueCounters::new(),
        })
    }

    /// The cache values this process wrote and read with this dictionary
    /// (see [`crate::counters`]): [`decompress`] counts what it reads, the
    /// writers what they keep.
    ///
    /// ```
    /// use cmrx::zstd::{compress_vec, decompress_vec, register, lookup, train};
    /// let samples: Vec<Vec<u8>> = (0..200).map(|i| format!("visit:{i}:{}", i % 11).into_bytes()).collect();
    /// let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
    /// let dict = lookup(register(&train(&refs, 1024).unwrap()).unwrap()).unwrap();
    /// let frame = compress_vec(&samples[3], 3, Some(&dict)).unwrap();
    /// decompress_vec(&frame, 1 << 20).unwrap();
    /// let read = dict.counters().read.counts();
    /// assert_eq!((read.values, read.stored_bytes), (1, frame.len() as u64));
    /// ```
    pub fn counters(&self) -> &ValueCounters {
        &self.counters
    }

    /// The dictionary's ID, which every frame compressed with it names.
    ///
    /// ```
    /// use cmrx::zstd::{compress_vec, frame_dictionary_id, train, Dictionary};
    /// let samples: Vec<Vec<u8>> = (0..200).map(|i| format!("key:{i}:value:{}", i % 13).into_bytes()).collect();
    /// let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
    /// let dict = Dictionary::from_bytes(&train(&refs, 1024).unwrap()).unwrap();
    /// let frame = compress_vec(b"key:7:value:7", 3, Some(&dict)).unwrap();
    /// assert_eq!(frame_dictionary_id(&frame), Some(dict.id()));
    /// ```
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The dictionary as it was loaded (to save it, or compare it).
    ///
    /// ```
    /// use cmrx::zstd::{train, Dictionary};
    /// let samples: Vec<Vec<u8>> = (0..200).map(|i| format!("row {i} of {}", i * 31).into_bytes()).collect();
    /// let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
    /// let bytes = train(&refs, 1024).unwrap();
    /// assert_eq!(Dictionary::from_bytes(&bytes).unwrap().as_bytes(), &bytes[..]);
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Makes the compression tables for `level` now, instead of at the
    /// first [`compress`] at that level (0 is [`DEFAULT_LEVEL`]; `Arg` for a
    /// level out of range). A process that prepares its dictionaries before
    /// it forks shares the tables with its children, copy-on-write: libzstd
    /// only reads them afterwards. Preparing a level again does nothing.
    ///
    /// ```
    /// use cmrx::zstd::{compress_vec, train, Dictionary, Error};
    /// let samples: Vec<Vec<u8>> = (0..200).map(|i| format!("order:{i}:{}", i % 9).into_bytes()).collect();
    /// let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
    /// let dict = Dictionary::from_bytes(&train(&refs, 1024).unwrap()).unwrap();
    /// dict.prepare(9).unwrap();
    /// assert_eq!(dict.prepare(23), Err(Error::Arg));
    /// assert!(compress_vec(b"order:5:5", 9, Some(&dict)).is_ok());
    /// ```
    pub fn prepare(&self, level: i32) -> Result<(), Error> {
        self.cdict(compression_level(level)?).map(|_| ())
    }

    /// The decompression tables.
    pub(super) fn ddict(&self) -> &DDict<'static> {
        &self.ddict
    }

    /// The compression tables for `level` (already checked and normalised),
    /// made on first use. Two threads may both make them the first time; one
    /// set is kept and the other dropped.
    pub(super) fn cdict(&self, level: i32) -> Result<&CDict<'static>, Error> {
        let slot = usize::try_from(level - MIN_LEVEL)
            .ok()
            .and_then(|i| self.cdicts.get(i))
            .ok_or(Error::Arg)?;
        if let Some(cdict) = slot.get() {
            return Ok(cdict);
        }
        // NULL from ZSTD_createCDict: out of memory (the same bytes already
        // made a DDict, so they are a dictionary libzstd can load).
        let cdict = CDict::try_create(&self.bytes, level).ok_or(Error::NoMemory)?;
        // Another thread may have set it first: then ours is dropped.
        let _ = slot.set(cdict);
        slot.get().ok_or(Error::NoMemory)
    }
}

impl fmt::Debug for Dictionary {
    /// The ID and size (the tables are opaque).
    ///
    /// ```
    /// use cmrx::zstd::{train, Dictionary};
    /// let samples: Vec<Vec<u8>> = (0..200).map(|i| format!("line {i}").into_bytes()).collect();
    /// let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
    /// let dict = Dictionary::from_bytes(&train(&refs, 512).unwrap()).unwrap();
    /// assert!(format!("{dict:?}").starts_with("Dictionary { id: "));
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dictionary")
            .field("id", &self.id)
            .field("len", &self.bytes.len())
            .finish_non_exhaustive()
    }
}

/// Where a standard dictionary's ID sits: after the 4-byte magic number,
/// 4 bytes little-endian.
const DICT_ID_BYTES: core::ops::Range<usize> = 4..8;

/// A copy of the standard zstd dictionary `bytes` whose header names `id`
/// instead: frames made with it then name `id` (an ID below 256 takes 1 byte
/// in each frame, below 65536 2 bytes, any other 4), and any zstd reader
/// with the copy decodes them (`zstd -d -D`); nothing but the ID changes.
/// `Arg` for an ID of 0 (a frame cannot name it); `BadDictionary` if
/// `bytes` is not a standard dictionary libzstd can load.
///
/// ```
/// use cmrx::zstd::{compress_vec, decompress_vec_with, frame_dictionary_id, train, with_dictionary_id, Dictionary};
/// let samples: Vec<Vec<u8>> = (0..200).map(|i| format!("feed:{i}:{}", i % 11).into_bytes()).collect();
/// let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
/// let small = Dictionary::from_bytes(&with_dictionary_id(&train(&refs, 1024).unwrap(), 7).unwrap()).unwrap();
/// assert_eq!(small.id(), 7);
/// let frame = compress_vec(b"feed:3:3", 3, Some(&small)).unwrap();
/// assert_eq!(frame_dictionary_id(&frame), Some(7));
/// assert_eq!(decompress_vec_with(&frame, Some(&small), 1 << 10).unwrap(), b"feed:3:3");
/// ```
pub fn with_dictionary_id(bytes: &[u8], id: u32) -> Result<Vec<u8>, Error> {
    if id == 0 {
        return Err(Error::Arg);
    }
    dictionary_header_id(bytes)?;
    let mut copy = vec_with_room(bytes.len())?;
    copy.extend_from_slice(bytes);
    copy.get_mut(DICT_ID_BYTES)
        .ok_or(Error::BadDictionary)?
        .copy_from_slice(&id.to_le_bytes());
    // Tables libzstd can load, as for any dictionary given to us.
    DDict::try_create(&copy).ok_or(Error::BadDictionary)?;
    Ok(copy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zstd::test_support::{dict, json_values, refs};
    use crate::zstd::{
        compress_vec, decompress_vec, decompress_vec_with, frame_dictionary_id, register, train,
    };
    use std::sync::Arc;

    #[test]
    fn dictionary_validation() {
        let bytes = dict().as_bytes().to_vec();
        assert_eq!(bytes[..4], DICT_MAGIC);
        let id = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
        assert_eq!(dict().id(), id);
        let d = Dictionary::from_bytes(&bytes).unwrap();
        assert_eq!(d.id(), id);
        assert_eq!(d.as_bytes(), &bytes[..]);
        // Raw content, no magic.
        assert_eq!(
            Dictionary::from_bytes(&bytes[8..]).unwrap_err(),
            Error::BadDictionary
        );
        assert_eq!(
            Dictionary::from_bytes(b"").unwrap_err(),
            Error::BadDictionary
        );
        // ID 0.
        let mut zero = bytes.clone();
        zero[4..8].copy_from_slice(&[0; 4]);
        assert_eq!(
            Dictionary::from_bytes(&zero).unwrap_err(),
            Error::BadDictionary
        );
        assert_eq!(register(&zero), Err(Error::BadDictionary));
        // Magic and ID, then garbage instead of entropy tables.
        let garbage = [&bytes[..8], &[0xff; 200][..]].concat();
        assert_eq!(
            Dictionary::from_bytes(&garbage).unwrap_err(),
            Error::BadDictionary
        );
        // Cut inside the tables.
        for cut in [8, 9, 20, 100] {
            assert_eq!(
                Dictionary::from_bytes(&bytes[..cut]).unwrap_err(),
                Error::BadDictionary,
                "{cut}"
            );
        }
        // Any cut: an error or a dictionary, never a panic.
        for cut in (0..bytes.len()).step_by(97) {
            let _ = Dictionary::from_bytes(&bytes[..cut]);
        }
    }

    #[test]
    fn dictionary_ids_rewritten() {
        let samples = json_values(300, 21);
        let bytes = train(&refs(&samples), 4096).unwrap();
        let own = Dictionary::from_bytes(&bytes).unwrap().id();
        let value = &json_values(1, 22)[0];
        // The frame header's dictionary ID field: 1, 2 or 4 bytes.
        for (id, field) in [
            (1u32, 1usize),
            (255, 1),
            (256, 2),
            (65_535, 2),
            (65_536, 4),
            (own, 4),
        ] {
            let copy = with_dictionary_id(&bytes, id).unwrap();
            assert_eq!(copy.len(), bytes.len());
            assert_eq!(copy[..4], bytes[..4]);
            assert_eq!(copy[8..], bytes[8..], "only the ID changes");
            let d = Dictionary::from_bytes(&copy).unwrap();
            assert_eq!(d.id(), id);
            let frame = compress_vec(value, 9, Some(&d)).unwrap();
            assert_eq!(frame_dictionary_id(&frame), Some(id));
            let plain =
                compress_vec(value, 9, Some(&Dictionary::from_bytes(&bytes).unwrap())).unwrap();
            // Same body; the header's ID field is all that differs in size.
            assert_eq!(frame.len() + 4 - field, plain.len(), "ID {id}");
            assert_eq!(
                decompress_vec_with(&frame, Some(&d), 1 << 20).unwrap(),
                *value
            );
            if id != own {
                assert_eq!(
                    decompress_vec_with(
                        &frame,
                        Some(&Dictionary::from_bytes(&bytes).unwrap()),
                        1 << 20
                    ),
                    Err(Error::UnknownDictionary(id))
                );
            }
        }
        assert_eq!(with_dictionary_id(&bytes, 0), Err(Error::Arg));
        assert_eq!(
            with_dictionary_id(b"raw content, no magic", 5),
            Err(Error::BadDictionary)
        );
        assert_eq!(
            with_dictionary_id(&bytes[..7], 5),
            Err(Error::BadDictionary)
        );
        // A header whose tables are cut short: not loadable.
        assert_eq!(
            with_dictionary_id(&bytes[..40], 5),
            Err(Error::BadDictionary)
        );
    }

    #[test]
    fn dictionary_is_send_and_sync() {
        fn shareable<T: Send + Sync>() {}
        shareable::<Dictionary>();
        shareable::<Arc<Dictionary>>();
        shareable::<Error>();
    }

    #[test]
    fn threads_share_a_dictionary() {
        let d = Arc::clone(dict());
        // A fresh dictionary too, so that its compression tables are made
        // by racing threads.
        let samples = json_values(200, 15);
        let fresh =
            Arc::new(Dictionary::from_bytes(&train(&refs(&samples), 4096).unwrap()).unwrap());
        let barrier = std::sync::Barrier::new(4);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let (d, fresh, barrier) = (&d, &fresh, &barrier);
                s.spawn(move || {
                    let values = json_values(150, 100 + t);
                    barrier.wait();
                    for (i, v) in values.iter().enumerate() {
                        let level = [1, 3, 9, -1][(i + t as usize) % 4];
                        let frame = compress_vec(v, level, Some(d)).unwrap();
                        assert_eq!(decompress_vec(&frame, 1 << 20).unwrap(), *v);
                        let frame = compress_vec(v, level, Some(fresh)).unwrap();
                        assert_eq!(
                            decompress_vec_with(&frame, Some(fresh), 1 << 20).unwrap(),
                            *v
                        );
                        let frame = compress_vec(v, level, None).unwrap();
                        assert_eq!(decompress_vec(&frame, 1 << 20).unwrap(), *v);
                    }
                });
            }
        });
        // The same frames whichever thread made the tables.
        let v = json_values(1, 16).remove(0);
        let here = compress_vec(&v, 9, Some(&fresh)).unwrap();
        let there = std::thread::spawn({
            let (v, fresh) = (v.clone(), Arc::clone(&fresh));
            move || compress_vec(&v, 9, Some(&fresh)).unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(here, there);
    }
}
