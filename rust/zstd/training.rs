//! Training standard zstd dictionaries with ZDICT ([`train`],
//! [`train_with`]).

use core::ffi::c_void;
use core::mem::MaybeUninit;
use std::sync::{Mutex, PoisonError};

use zstd::zstd_safe::zstd_sys::{self, ZSTD_ErrorCode};
use zstd_sys::ZDICT_optimizeTrainFromBuffer_cover as train_cover;
use zstd_sys::ZDICT_optimizeTrainFromBuffer_fastCover as train_fast_cover;

use super::{compression_level, is_kind, vec_with_room, Error, DEFAULT_LEVEL};

// What the documentation here links to.
#[cfg(doc)]
use super::{compress, register, Dictionary};

/// The smallest dictionary [`train`] makes (ZDICT's `ZDICT_DICTSIZE_MIN`).
///
/// ```
/// use cmrx::zstd::{train, Error, MIN_DICT_SIZE};
/// let samples: Vec<&[u8]> = vec![&b"sample"[..]; 100];
/// assert_eq!(train(&samples, MIN_DICT_SIZE - 1), Err(Error::Arg));
/// ```
pub const MIN_DICT_SIZE: usize = 256;

/// The fewest samples [`train`] can work with: ZDICT's fastCover needs at
/// least 5 to train on (and [`train`] trains on every one). A useful
/// dictionary wants a few hundred.
///
/// ```
/// use cmrx::zstd::{train, Error, MIN_SAMPLES};
/// let samples: Vec<&[u8]> = vec![&b"a short sample value"[..]; MIN_SAMPLES - 1];
/// assert_eq!(train(&samples, 1024), Err(Error::Training));
/// ```
pub const MIN_SAMPLES: usize = 5;

/// ZDICT keeps its verbosity in a C global that every training call writes:
/// one training at a time.
static TRAINING: Mutex<()> = Mutex::new(());

/// Trains a standard zstd dictionary of at most `dict_size` bytes on
/// `samples`, ready for [`Dictionary::from_bytes`], [`register`] and
/// `zstd -D`. Its ID is drawn from its content (32768 or above).
///
/// ZDICT's fastCover, as `ZDICT_trainFromBuffer` and `zstd --train` run it
/// (segments of 6 and 8 bytes tried, the best of 4 segment counts kept, for
/// level 3), but built from every sample: they hold a quarter of the samples
/// out to compare the candidates on, so that quarter never reaches the
/// dictionary, and which quarter that is depends on the samples' order.
/// Measured on the benchmark corpus (`bench/data/values`, a dictionary per
/// family trained on half of its values, stored bytes over the other half
/// against gzip's): 0.37 instead of 0.53 for GitHub API responses, 0.36
/// instead of 0.48 for documentation HTML, 0.38 instead of 0.41 for browser
/// data JSON. [`train_with`] chooses another method, its parameters, the
/// level and the ID.
///
/// The samples should be typical values, a few hundred of them or more,
/// totalling about 100 times `dict_size` (ZDICT's advice); a 16 KiB
/// dictionary suits values of a few hundred bytes to a few KB. `Training`
/// when ZDICT cannot make one: fewer than [`MIN_SAMPLES`] samples, fewer
/// than 8 bytes in all, 4 GiB or more in all, or nothing in them worth a
/// dictionary. `Arg` for a `dict_size` below [`MIN_DICT_SIZE`]. Training
/// takes milliseconds to seconds and allocates a few MiB; calls from
/// several threads run one at a time.
///
/// ```
/// use cmrx::zstd::{train, Dictionary};
/// let samples: Vec<Vec<u8>> = (0..500)
///     .map(|i| format!(r#"{{"order":{i},"status":"{}","total":{}.{:02}}}"#,
///                      ["new", "paid", "shipped"][i % 3], i * 3 % 97, i % 100).into_bytes())
///     .collect();
/// let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
/// let bytes = train(&refs, 16 << 10).unwrap();
/// assert!(bytes.len() <= 16 << 10);
/// assert!(Dictionary::from_bytes(&bytes).unwrap().id() >= 32768);
/// ```
pub fn train(samples: &[&[u8]], dict_size: usize) -> Result<Vec<u8>, Error> {
    train_with(samples, dict_size, &Training::default()).map(|t| t.bytes)
}

/// How [`train_with`] builds a dictionary's content (the bytes frames copy
/// from); its entropy tables are always ZDICT's, from the samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// ZDICT's fastCover: segments chosen by hashed d-byte sequences (what
    /// `zstd --train` runs). Fast; [`train`]'s method.
    FastCover,
    /// ZDICT's cover: segments chosen by exact d-byte sequences, `k` bytes
    /// each (what `zstd --train-cover` runs). Slower (about 9 bytes of
    /// memory per sample byte, and each `k` tried is a training), often a
    /// little better.
    Cover,
    /// The samples themselves, back to back (the last ones whole when they
    /// do not all fit; a frame refers to the end of a dictionary most
    /// cheaply). What the selecting methods approach when the samples are
    /// few: when all of them fit, nothing is left out.
    Samples,
}

/// What [`train_with`] does: the method, its parameters (0 for "search" or
/// "ZDICT's default"), the level the dictionary is made for, and its ID.
///
/// ```
/// use cmrx::zstd::{Method, Training};
/// let t = Training::default();
/// assert_eq!((t.method, t.k, t.d, t.steps, t.level, t.id), (Method::FastCover, 0, 0, 4, 3, 0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Training {
    /// How the content is chosen.
    pub method: Method,
    /// Cover and fastCover: the segment size, at least `d` and at most the
    /// dictionary size; 0 searches [`TRAIN_MIN_K`]`..=`[`TRAIN_MAX_K`] in
    /// `steps` steps. [`Method::Samples`]: must be 0.
    pub k: u32,
    /// Cover and fastCover: the length of the byte sequences counted, 6 or
    /// 8; 0 tries both. [`Method::Samples`]: must be 0.
    pub d: u32,
    /// Cover and fastCover with `k` 0: how many values of `k` are tried
    /// (at most [`TRAIN_MAX_STEPS`]; 0 is ZDICT's default, 40); each is a
    /// training of its own. [`Method::Samples`]: must be 0.
    pub steps: u32,
    /// The compression level the entropy tables are made for, and the
    /// search judges candidates at (as [`compress`] takes it).
    pub level: i32,
    /// The dictionary's ID, which every frame names (1 byte in a frame
    /// for IDs below 256, 2 below 65536, else 4); 0 draws one from the
    /// content (32768 or above). The zstd format reserves IDs below 32768
    /// and from 2^31 for a public registry: use them for dictionaries of
    /// your own values only.
    pub id: u32,
}

impl Default for Training {
    /// [`train`]'s choices: fastCover, `k` searched in 4 steps, `d` 6 and 8
    /// tried, level 3, an ID drawn from the content.
    fn default() -> Training {
        Training {
            method: Method::FastCover,
            k: 0,
            d: 0,
            steps: FAST_COVER_STEPS,
            level: DEFAULT_LEVEL,
            id: 0,
        }
    }
}

/// The smallest segment size cover and fastCover search (ZDICT's).
///
/// ```
/// assert_eq!(cmrx::zstd::TRAIN_MIN_K, 50);
/// ```
pub const TRAIN_MIN_K: u32 = 50;

/// The largest segment size cover and fastCover search (ZDICT's).
///
/// ```
/// assert_eq!(cmrx::zstd::TRAIN_MAX_K, 2000);
/// ```
pub const TRAIN_MAX_K: u32 = 2000;

/// The most steps of a `k` search: one per segment size in
/// [`TRAIN_MIN_K`]`..=`[`TRAIN_MAX_K`] (ZDICT never takes more).
///
/// ```
/// use cmrx::zstd::{train_with, Error, Method, Training, TRAIN_MAX_STEPS};
/// let samples: Vec<&[u8]> = vec![&b"sample value"[..]; 10];
/// let how = Training { method: Method::Cover, steps: TRAIN_MAX_STEPS + 1, ..Training::default() };
/// assert_eq!(train_with(&samples, 1024, &how).unwrap_err(), Error::Arg);
/// ```
pub const TRAIN_MAX_STEPS: u32 = TRAIN_MAX_K - TRAIN_MIN_K + 1;

/// The two sequence lengths (`d`) ZDICT's search tries.
const TRAIN_D: [u32; 2] = [6, 8];

/// A dictionary [`train_with`] made, with the parameters it used (those it
/// searched, as found; 0 for the Samples method).
///
/// ```
/// use cmrx::zstd::{train_with, Training};
/// let samples: Vec<Vec<u8>> = (0..300).map(|i| format!("item {i}: {}", i * 37).into_bytes()).collect();
/// let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
/// let t = train_with(&refs, 2048, &Training::default()).unwrap();
/// assert!(t.k >= 50 && (t.d == 6 || t.d == 8));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trained {
    /// The dictionary, in zstd's standard format.
    pub bytes: Vec<u8>,
    /// The segment size used.
    pub k: u32,
    /// The sequence length used.
    pub d: u32,
}

/// Trains a standard zstd dictionary of at most `dict_size` bytes on
/// `samples` as `how` says (see [`Training`]); [`train`] is
/// `train_with(samples, dict_size, &Training::default())`.
///
/// Which method and size store least depends on the values and on how many
/// there are: measure candidates on values held out of the training (what
/// `cmrx-dict` does). Measured on the benchmark corpus (three JSON
/// families, 31 to 69 training values each, stored bytes of the other
/// half, level 12): with so few samples, [`Method::Samples`] with all of
/// them (50-100 KB) stores 10 to 31 % fewer bytes than fastCover's 16 KiB
/// dictionary (GitHub API responses 31 %, package.json documents 13 %,
/// browser-support records 10 %).
///
/// `Arg` for a `dict_size` below [`MIN_DICT_SIZE`], a level [`compress`]
/// refuses, a `d` other than 0, 6 or 8, a `k` below `d` (or 8) or above
/// `dict_size`, more than [`TRAIN_MAX_STEPS`] steps, or parameters given to
/// the Samples method. `Training` when ZDICT cannot make a dictionary (as
/// for [`train`]; the Samples method also needs 128 bytes of samples).
///
/// ```
/// use cmrx::zstd::{compress_vec, frame_dictionary_id, train_with, Dictionary, Method, Training};
/// let samples: Vec<Vec<u8>> = (0..40)
///     .map(|i| format!(r#"{{"id":{i},"kind":"order","lines":[{{"sku":"A{}","qty":{}}}]}}"#, i * 7, i % 4).into_bytes())
///     .collect();
/// let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
/// let how = Training { method: Method::Samples, k: 0, d: 0, steps: 0, level: 9, id: 7 };
/// let dict = Dictionary::from_bytes(&train_with(&refs, 8192, &how).unwrap().bytes).unwrap();
/// assert_eq!(dict.id(), 7);
/// let frame = compress_vec(br#"{"id":99,"kind":"order","lines":[]}"#, 9, Some(&dict)).unwrap();
/// assert_eq!(frame_dictionary_id(&frame), Some(7));
/// ```
pub fn train_with(samples: &[&[u8]], dict_size: usize, how: &Training) -> Result<Trained, Error> {
    check_training(dict_size, how)?;
    let level = compression_level(how.level)?;
    let joined = JoinedSamples::new(samples)?;
    let mut dict: Vec<u8> = vec_with_room(dict_size)?;
    let zparams = zstd_sys::ZDICT_params_t {
        compressionLevel: level,
        notificationLevel: 0,
        dictID: how.id,
    };
    let _one_at_a_time = TRAINING.lock().unwrap_or_else(PoisonError::into_inner);
    let out = &mut dict.spare_capacity_mut()[..dict_size];
    let (n, k, d) = match how.method {
        Method::FastCover => {
            let mut params = zstd_sys::ZDICT_fastCover_params_t {
                k: how.k,
                d: how.d,
                f: 0,
                steps: how.steps,
                nbThreads: 1,
                splitPoint: ALL_SAMPLES,
                accel: 0,
                shrinkDict: 0,
                shrinkDictMaxRegression: 0,
                zParams: zparams,
            };
            (
                optimize(train_fast_cover, out, &joined, &mut params),
                params.k,
                params.d,
            )
        }
        Method::Cover => {
            let mut params = zstd_sys::ZDICT_cover_params_t {
                k: how.k,
                d: how.d,
                steps: how.steps,
                nbThreads: 1,
                splitPoint: ALL_SAMPLES,
                shrinkDict: 0,
                shrinkDictMaxRegression: 0,
                zParams: zparams,
            };
            (
                optimize(train_cover, out, &joined, &mut params),
                params.k,
                params.d,
            )
        }
        Method::Samples => {
            if joined.sizes.len() < MIN_SAMPLES {
                return Err(Error::Training);
            }
            (finalize_samples(out, &joined, zparams), 0, 0)
        }
    };
    // SAFETY: ZDICT_isError only looks at the number.
    if unsafe { zstd_sys::ZDICT_isError(n) } != 0 {
        return Err(
            if is_kind(n, ZSTD_ErrorCode::ZSTD_error_memory_allocation) {
                Error::NoMemory
            } else {
                Error::Training
            },
        );
    }
    let n = n.min(dict_size);
    // SAFETY: on success ZDICT wrote the first n bytes of the buffer it was
    // given, the first dict_size bytes of the spare capacity (n is at most
    // dict_size).
    unsafe { dict.set_len(n) };
    Ok(Trained { bytes: dict, k, d })
}

/// What ZDICT's two searching trainers, `ZDICT_optimizeTrainFromBuffer_cover`
/// and `_fastCover`, take: the dictionary's buffer and capacity, the samples
/// (see [`JoinedSamples::zdict_args`]), and the parameters (the searched
/// ones set to those found); they return the dictionary's size or an error
/// code.
type OptimizeFn<P> =
    unsafe extern "C" fn(*mut c_void, usize, *const c_void, *const usize, u32, *mut P) -> usize;

/// Runs one of ZDICT's searching trainers (`train`, with the parameters
/// `params` of its kind) on the samples, into `out`.
fn optimize<P>(
    train: OptimizeFn<P>,
    out: &mut [MaybeUninit<u8>],
    joined: &JoinedSamples,
    params: &mut P,
) -> usize {
    let (samples, sizes, count) = joined.zdict_args();
    // SAFETY: out is out.len() writable bytes; the samples are as ZDICT
    // takes them (JoinedSamples); params is a valid parameter block of the
    // kind `train` takes. ZDICT writes at most out.len() bytes.
    unsafe {
        train(
            out.as_mut_ptr().cast(),
            out.len(),
            samples,
            sizes,
            count,
            params,
        )
    }
}

/// The Samples method: as much of the end of the samples as fits in `out`
/// after the header and entropy tables, finalized by ZDICT; ZDICT's size
/// or error code. ZDICT_finalizeDictionary keeps the *start* of a content
/// that does not fit (whatever its documentation says), and the end is
/// what frames reach most cheaply, so the content is cut here: first to
/// `out`'s size, then, when the header did not leave room for it all, to
/// what the header leaves, and at the last try with room for the largest
/// header.
fn finalize_samples(
    out: &mut [MaybeUninit<u8>],
    joined: &JoinedSamples,
    zparams: zstd_sys::ZDICT_params_t,
) -> usize {
    let capacity = out.len();
    let all = &joined.bytes[..];
    let (samples, sizes, count) = joined.zdict_args();
    let mut room = 0;
    let mut attempt = 1;
    loop {
        if attempt == FINALIZE_ATTEMPTS {
            room = room.max(DICT_HEADER_MAX);
        }
        let content_len = all.len().min(capacity.saturating_sub(room));
        let content = &all[all.len() - content_len..];
        // SAFETY: out is capacity writable bytes, content readable and at
        // most capacity bytes (in another buffer than out); the samples are
        // as ZDICT takes them (JoinedSamples). ZDICT writes at most capacity
        // bytes.
        let n = unsafe {
            zstd_sys::ZDICT_finalizeDictionary(
                out.as_mut_ptr().cast(),
                capacity,
                content.as_ptr().cast(),
                content.len(),
                samples,
                sizes,
                count,
                zparams,
            )
        };
        // SAFETY: ZDICT_isError only looks at the number; on success ZDICT
        // wrote out[..n] (n <= capacity), which ZDICT_getDictHeaderSize
        // reads.
        let header = unsafe {
            if zstd_sys::ZDICT_isError(n) != 0 {
                return n;
            }
            zstd_sys::ZDICT_getDictHeaderSize(out.as_ptr().cast(), n.min(capacity))
        };
        // SAFETY: as above.
        if unsafe { zstd_sys::ZDICT_isError(header) } != 0 {
            return header;
        }
        if header + content_len <= capacity || attempt == FINALIZE_ATTEMPTS {
            return n;
        }
        room = header;
        attempt += 1;
    }
}

/// How many times [`finalize_samples`] cuts the content at most.
const FINALIZE_ATTEMPTS: u32 = 3;
/// The largest header and entropy tables ZDICT writes before a content
/// (its HBUFFSIZE of 256, and the 8 bytes of magic number and ID).
const DICT_HEADER_MAX: usize = 264;

/// `Arg` unless `how` is something [`train_with`] can run for `dict_size`.
fn check_training(dict_size: usize, how: &Training) -> Result<(), Error> {
    if dict_size < MIN_DICT_SIZE || how.steps > TRAIN_MAX_STEPS {
        return Err(Error::Arg);
    }
    compression_level(how.level)?;
    match how.method {
        Method::Samples if (how.k, how.d, how.steps) != (0, 0, 0) => Err(Error::Arg),
        Method::Samples => Ok(()),
        Method::FastCover | Method::Cover => {
            if how.d != 0 && !TRAIN_D.contains(&how.d) {
                return Err(Error::Arg);
            }
            let shortest_k = how.d.max(TRAIN_D[1]);
            let fits = usize::try_from(how.k).is_ok_and(|k| k <= dict_size);
            if how.k != 0 && (how.k < shortest_k || !fits) {
                return Err(Error::Arg);
            }
            Ok(())
        }
    }
}

/// The samples as ZDICT takes them: back to back in one buffer, with their
/// lengths, which add up to its length. Fewer than 2^32 samples, and fewer
/// than 4 GiB in all: ZDICT counts both in 32 bits.
struct JoinedSamples {
    bytes: Vec<u8>,
    sizes: Vec<usize>,
}

impl JoinedSamples {
    /// `samples`, joined; `Training` for more samples than a u32 counts or
    /// 4 GiB or more in all.
    fn new(samples: &[&[u8]]) -> Result<JoinedSamples, Error> {
        if u32::try_from(samples.len()).is_err() {
            return Err(Error::Training);
        }
        let total = samples
            .iter()
            .try_fold(0usize, |sum, s| sum.checked_add(s.len()))
            .filter(|&t| u32::try_from(t).is_ok())
            .ok_or(Error::Training)?;
        let mut bytes = vec_with_room(total)?;
        let mut sizes = vec_with_room(samples.len())?;
        for s in samples {
            bytes.extend_from_slice(s);
            sizes.push(s.len());
        }
        Ok(JoinedSamples { bytes, sizes })
    }

    /// ZDICT's three arguments for the samples: the buffer, the lengths and
    /// their count (which fits: see [`JoinedSamples::new`]).
    fn zdict_args(&self) -> (*const c_void, *const usize, u32) {
        (
            self.bytes.as_ptr().cast(),
            self.sizes.as_ptr(),
            self.sizes.len() as u32,
        )
    }
}

/// How many segment counts fastCover tries (ZDICT_trainFromBuffer's 4).
const FAST_COVER_STEPS: u32 = 4;
/// The split point when every sample both trains and judges.
const ALL_SAMPLES: f64 = 1.0;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zstd::test_support::*;
    use crate::zstd::{
        compress_vec, decompress_vec, decompress_vec_with, frame_dictionary_id, frame_sizes,
        register, with_dictionary_id, Dictionary, MAX_LEVEL,
    };

    // ---------------------------------------------------------------- training

    #[test]
    fn training_limits() {
        let values = json_values(50, 17);
        let all = refs(&values);
        assert_eq!(train(&all, MIN_DICT_SIZE - 1), Err(Error::Arg));
        assert_eq!(train(&all, 0), Err(Error::Arg));
        assert_eq!(train(&[], 1024), Err(Error::Training));
        assert_eq!(train(&all[..MIN_SAMPLES - 1], 1024), Err(Error::Training));
        assert_eq!(train(&[&b""[..]; 100], 1024), Err(Error::Training));
        let tiny = train(&all[..MIN_SAMPLES], MIN_DICT_SIZE).unwrap();
        assert!(tiny.len() <= MIN_DICT_SIZE);
        let d = Dictionary::from_bytes(&tiny).unwrap();
        let frame = compress_vec(&values[20], 3, Some(&d)).unwrap();
        assert_eq!(
            decompress_vec_with(&frame, Some(&d), 1 << 20).unwrap(),
            values[20]
        );
        // A dictionary of the size asked for, or smaller.
        let bytes = train(&all, 4096).unwrap();
        assert!(bytes.len() <= 4096);
        let id = Dictionary::from_bytes(&bytes).unwrap().id();
        assert!(id >= 32768, "{id}");
    }

    /// Every method and parameter choice makes a dictionary that loads,
    /// keeps its size bound and the ID asked for, and round-trips.
    #[test]
    fn training_methods_and_ids() {
        let values = json_values(120, 21);
        let all = refs(&values);
        let held = json_values(20, 22);
        for method in [Method::FastCover, Method::Cover, Method::Samples] {
            for (id, dict_size) in [(0u32, 4096usize), (1, 8192), (300, 2048), (70_000, 16384)] {
                let searched = method != Method::Samples;
                let how = Training {
                    method,
                    steps: if searched { 4 } else { 0 },
                    level: 9,
                    id,
                    ..Training::default()
                };
                let what = format!("{method:?} id {id} size {dict_size}");
                let t = train_with(&all, dict_size, &how).unwrap();
                assert!(t.bytes.len() <= dict_size, "{what}");
                if searched {
                    assert!(t.k >= TRAIN_D[0] && TRAIN_D.contains(&t.d), "{what}: {t:?}");
                } else {
                    assert_eq!((t.k, t.d), (0, 0), "{what}");
                }
                let d = Dictionary::from_bytes(&t.bytes).unwrap();
                if id == 0 {
                    assert!(d.id() >= 32768, "{what}: {}", d.id());
                } else {
                    assert_eq!(d.id(), id, "{what}");
                }
                let sizes = frame_sizes(&refs(&held), 9, Some(&d)).unwrap();
                for (v, &n) in held.iter().zip(&sizes) {
                    let frame = compress_vec(v, 9, Some(&d)).unwrap();
                    assert_eq!(frame.len(), n, "{what}");
                    assert_eq!(frame_dictionary_id(&frame), Some(d.id()), "{what}");
                    assert_eq!(decompress_vec_with(&frame, Some(&d), 1 << 20).unwrap(), *v);
                }
            }
        }
        // Fixed parameters are used as given.
        let how = Training {
            method: Method::Cover,
            k: 200,
            d: 8,
            steps: 0,
            level: 3,
            id: 0,
        };
        let t = train_with(&all, 4096, &how).unwrap();
        assert_eq!((t.k, t.d), (200, 8));
    }

    /// The Samples method (which takes no parameters) at `level`, with ID
    /// `id`.
    fn samples_method(level: i32, id: u32) -> Training {
        Training {
            method: Method::Samples,
            k: 0,
            d: 0,
            steps: 0,
            level,
            id,
        }
    }

    /// A small ID takes fewer bytes in every frame, and nothing else
    /// changes: the frame is the one a 4-byte ID gives, less 3 bytes (IDs
    /// below 256) or 2 (below 65536).
    #[test]
    fn small_ids_make_shorter_frames() {
        let values = json_values(100, 23);
        let all = refs(&values);
        let frames = |id: u32| {
            let how = samples_method(3, id);
            let d = Dictionary::from_bytes(&train_with(&all, 8192, &how).unwrap().bytes).unwrap();
            frame_sizes(&all[..20], 3, Some(&d)).unwrap()
        };
        let (wide, mid, one) = (frames(1 << 20), frames(1000), frames(5));
        for i in 0..20 {
            assert_eq!(mid[i] + 2, wide[i], "{i}");
            assert_eq!(one[i] + 3, wide[i], "{i}");
        }
    }

    /// The Samples method's content is the samples themselves, their end
    /// ending the dictionary.
    #[test]
    fn samples_method_keeps_the_last_samples() {
        let values = json_values(60, 24);
        let all = refs(&values);
        let how = samples_method(3, 9);
        let joined = values.concat();
        // All fit: the dictionary ends with all of them.
        let big = train_with(&all, joined.len() + 4096, &how).unwrap().bytes;
        assert!(big.ends_with(&joined));
        // Not all fit: it ends with the last bytes of them (the header and
        // entropy tables take the rest).
        let small = train_with(&all, 4096, &how).unwrap().bytes;
        assert!(small.len() <= 4096);
        assert!(small.ends_with(&joined[joined.len() - 2048..]));
    }

    /// Bad parameters are `Arg`, bad samples `Training`, and neither
    /// panics, however odd the samples.
    #[test]
    fn training_refuses_cleanly() {
        let values = json_values(50, 25);
        let all = refs(&values);
        let arg = |how: Training, size: usize| {
            assert_eq!(
                train_with(&all, size, &how),
                Err(Error::Arg),
                "{how:?} {size}"
            );
        };
        let cover = Training {
            method: Method::Cover,
            ..Training::default()
        };
        let samples = samples_method(DEFAULT_LEVEL, 0);
        arg(cover, MIN_DICT_SIZE - 1);
        arg(samples, MIN_DICT_SIZE - 1);
        arg(Training { d: 7, ..cover }, 4096);
        arg(Training { d: 12, ..cover }, 4096);
        arg(
            Training {
                k: 6,
                d: 8,
                ..cover
            },
            4096,
        );
        arg(Training { k: 4097, ..cover }, 4096);
        arg(
            Training {
                steps: TRAIN_MAX_STEPS + 1,
                ..cover
            },
            4096,
        );
        arg(
            Training {
                level: MAX_LEVEL + 1,
                ..cover
            },
            4096,
        );
        arg(Training { k: 100, ..samples }, 4096);
        arg(Training { d: 8, ..samples }, 4096);
        arg(
            Training {
                steps: 1,
                ..samples
            },
            4096,
        );
        let odd: [(&str, Vec<Vec<u8>>); 6] = [
            ("none", vec![]),
            ("four", values[..MIN_SAMPLES - 1].to_vec()),
            ("empty", vec![Vec::new(); 100]),
            ("one byte each", vec![b"x".to_vec(); 100]),
            ("identical", vec![values[0].clone(); 100]),
            ("zeros", vec![vec![0u8; 5000]; 20]),
        ];
        for (name, set) in &odd {
            let set = refs(set);
            for method in [Method::FastCover, Method::Cover, Method::Samples] {
                let steps = if method == Method::Samples { 0 } else { 2 };
                let how = Training {
                    method,
                    steps,
                    ..Training::default()
                };
                match train_with(&set, 4096, &how) {
                    Err(Error::Training) => {}
                    // What ZDICT does make of them must still be a
                    // dictionary that round-trips.
                    Ok(t) => {
                        let d = Dictionary::from_bytes(&t.bytes).unwrap();
                        let frame = compress_vec(&values[3], 3, Some(&d)).unwrap();
                        assert_eq!(
                            decompress_vec_with(&frame, Some(&d), 1 << 20).unwrap(),
                            values[3]
                        );
                    }
                    Err(e) => panic!("{name} {method:?}: {e:?}"),
                }
            }
        }
        assert_eq!(frame_sizes(&all, MAX_LEVEL + 1, None), Err(Error::Arg));
        assert_eq!(frame_sizes(&[], 3, None), Ok(vec![]));
    }

    #[test]
    fn dictionaries_trained_by_the_zstd_command_and_by_us_interoperate() {
        let Some(()) =
            zstd_command("dictionaries_trained_by_the_zstd_command_and_by_us_interoperate")
        else {
            return;
        };
        let tmp = TempDir::new();
        let samples = json_values(400, 19);
        let dir = tmp.0.join("samples");
        std::fs::create_dir(&dir).unwrap();
        let mut files = Vec::new();
        for (i, s) in samples.iter().enumerate() {
            let p = dir.join(format!("{i}.json"));
            std::fs::write(&p, s).unwrap();
            files.push(path_arg(&p));
        }
        let values = json_values(30, 20);

        // zstd --train, with its own ID and with one we choose.
        for chosen in [None, Some(123_456u32)] {
            let out = tmp.0.join("trained");
            let mut args: Vec<String> = vec!["--train".into(), "--maxdict=16384".into()];
            if let Some(id) = chosen {
                args.push(format!("--dictID={id}"));
            }
            args.extend(["-o".into(), path_arg(&out)]);
            args.extend(files.iter().cloned());
            let argv: Vec<&dyn AsRef<std::ffi::OsStr>> = args
                .iter()
                .map(|a| a as &dyn AsRef<std::ffi::OsStr>)
                .collect();
            zstd(&argv, b"");
            let bytes = std::fs::read(&out).unwrap();
            let d = Dictionary::from_bytes(&bytes).unwrap();
            if let Some(id) = chosen {
                assert_eq!(d.id(), id);
            }
            let id = register(&bytes).unwrap();
            assert_eq!(id, d.id());
            let out_arg = path_arg(&out);
            for v in &values {
                // zstd -D frames name the ID we read, and decode through the
                // registry.
                let frame = zstd(&[&"-c", &"-D", &out_arg], v);
                assert_eq!(frame_dictionary_id(&frame), Some(id));
                assert_eq!(decompress_vec(&frame, 1 << 20).unwrap(), *v);
                // Ours decode with zstd -D.
                let ours = compress_vec(v, 3, Some(&d)).unwrap();
                assert_eq!(zstd(&[&"-d", &"-c", &"-D", &out_arg], &ours), *v);
            }
        }

        // A dictionary whose ID we rewrote: zstd -D reads our frames and
        // writes frames that name the new ID.
        let small = with_dictionary_id(&train(&refs(&samples), 16 << 10).unwrap(), 3).unwrap();
        let d = Dictionary::from_bytes(&small).unwrap();
        let small_arg = path_arg(&tmp.write("small-id", &small));
        for v in &values {
            let ours = compress_vec(v, 9, Some(&d)).unwrap();
            assert_eq!(frame_dictionary_id(&ours), Some(3));
            assert_eq!(zstd(&[&"-d", &"-c", &"-D", &small_arg], &ours), *v);
            let theirs = zstd(&[&"-c", &"-D", &small_arg], v);
            assert_eq!(frame_dictionary_id(&theirs), Some(3));
            assert_eq!(decompress_vec_with(&theirs, Some(&d), 1 << 20).unwrap(), *v);
        }

        // Ours, used by zstd -D both ways.
        let bytes = train(&refs(&samples), 16 << 10).unwrap();
        let d = Dictionary::from_bytes(&bytes).unwrap();
        let ours_arg = path_arg(&tmp.write("ours", &bytes));
        for v in &values {
            let frame = zstd(&[&"-c", &"-D", &ours_arg], v);
            assert_eq!(frame_dictionary_id(&frame), Some(d.id()));
            assert_eq!(decompress_vec_with(&frame, Some(&d), 1 << 20).unwrap(), *v);
            let ours = compress_vec(v, 3, Some(&d)).unwrap();
            assert_eq!(zstd(&[&"-d", &"-c", &"-D", &ours_arg], &ours), *v);
        }
    }
}
