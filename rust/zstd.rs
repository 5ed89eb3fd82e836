//! zstd for cache values, on top of libzstd (the `zstd` crate's bindings to
//! the C library it bundles).
//!
//! * A cache value is one zstd frame: [`compress`] writes one, with the
//!   content size in its header (so [`decompress`] can decode it in one call
//!   into an exactly sized buffer), without a checksum, and with the
//!   dictionary's ID when a [`Dictionary`] is used. Nothing may stand before
//!   or after the frame: a second frame, a skippable frame or any trailing
//!   byte is [`Error::Data`] (a cache value is never a concatenation, and
//!   garbage after a frame is better refused than ignored).
//! * [`decompress`] has the growth-loop contract of `codec::gunzip`: start
//!   from [`size_hint`], and on [`Error::NeedSpace`]`(n)` retry with `n`
//!   bytes. A frame that states its content size (the normal case: every
//!   one-shot encoder, and the `zstd` command reading a file) needs exactly
//!   that capacity; one whose size is above `max_out` is [`Error::TooBig`]
//!   before anything is decoded or allocated. A frame that does not state it
//!   (a streaming encoder, `zstd` reading a pipe) is decoded in one pass
//!   into the buffer given, with retries that double it up to `max_out`; so a
//!   decompression bomb costs at most `max_out` bytes of memory and about
//!   twice that in work. libzstd never allocates a window buffer here: it
//!   decodes straight into the caller's buffer.
//! * Dictionaries are zstd's standard format (magic `37 A4 30 EC`, as written
//!   by `zstd --train` and by [`train`]). A [`Dictionary`] prepares its
//!   decompression tables once and its compression tables once per level, on
//!   first use; it is `Send + Sync` and meant to be shared behind an `Arc`.
//!   The process-wide registry ([`register`], [`lookup`]) is where
//!   [`decompress`] finds the dictionary named by a frame's header.
//! * Compression and decompression contexts are kept one per thread, made on
//!   first use and reused, never made per call (as `codec` keeps libdeflate's
//!   state). libzstd 1.5.7 sizes them to the work: a compression context
//!   holds about 260 KiB at level 3 after values of a few KB (1.3 MiB after a
//!   1 MiB value, 18 MiB at level 19; it shrinks back when it stays
//!   oversized), a decompression context 94 KiB. A 16 KiB dictionary's
//!   decompression tables take 43 KiB, its compression tables 415 KiB at
//!   level 3 (63 KiB at level 1).
//! * No checksum: it would cost 4 bytes a value (1 to 4 % more stored bytes
//!   on JSON values of a few hundred bytes with a dictionary) and 5 to 18 %
//!   more decompression time. Without it, a corrupted frame is refused only
//!   when the corruption breaks its structure, which catches about three in
//!   four random corruptions of a JSON value's frame but not a changed byte
//!   of literals stored as they are (a gzip value's CRC-32 catches all).
//!   Frames that carry a checksum (the `zstd` command writes one) are
//!   checked.
//!
//! Output buffers are `&mut [MaybeUninit<u8>]` (a Perl scalar's spare
//! capacity). On `Ok(n)` every function here has initialised `out[..n]`.
//!
//! Levels are zstd's: 1..=22, 0 meaning the default (3), and the fast levels
//! -1..=-7 (`zstd --fast=1` .. `--fast=7`).

use core::cell::RefCell;
use core::mem::MaybeUninit;
use std::collections::btree_map::{BTreeMap, Entry};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};

use zstd::zstd_safe::{
    self, zstd_sys, zstd_sys::ZSTD_ErrorCode, CCtx, CDict, DCtx, DDict, WriteBuf,
};

#[cfg(test)]
use crate::growth::MIN_CAPACITY;
use crate::growth::{self, Expansion, GrowthError};
use crate::per_thread;

/// The first four bytes of every zstd frame (magic number 0xFD2FB528,
/// little-endian).
///
/// ```
/// assert_eq!(cmrx::zstd::MAGIC, 0xFD2F_B528u32.to_le_bytes());
/// ```
pub const MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The first four bytes of a standard zstd dictionary (magic number
/// 0xEC30A437, little-endian); its dictionary ID follows.
///
/// ```
/// assert_eq!(cmrx::zstd::DICT_MAGIC, 0xEC30_A437u32.to_le_bytes());
/// ```
pub const DICT_MAGIC: [u8; 4] = [0x37, 0xa4, 0x30, 0xec];

/// The lowest level [`compress`] accepts: zstd's fast level 7
/// (`zstd --fast=7`).
///
/// ```
/// use cmrx::zstd::{compress_vec, MIN_LEVEL};
/// assert!(compress_vec(b"abc", MIN_LEVEL, None).is_ok());
/// assert!(compress_vec(b"abc", MIN_LEVEL - 1, None).is_err());
/// ```
pub const MIN_LEVEL: i32 = -7;

/// The highest level [`compress`] accepts (zstd's `--ultra -22`).
///
/// ```
/// use cmrx::zstd::{compress_vec, MAX_LEVEL};
/// assert!(compress_vec(b"abc", MAX_LEVEL, None).is_ok());
/// assert!(compress_vec(b"abc", MAX_LEVEL + 1, None).is_err());
/// ```
pub const MAX_LEVEL: i32 = 22;

/// zstd's default level, which level 0 also means.
///
/// ```
/// use cmrx::zstd::{compress_vec, DEFAULT_LEVEL};
/// let data = b"the same bytes, the same frame ".repeat(20);
/// assert_eq!(
///     compress_vec(&data, 0, None).unwrap(),
///     compress_vec(&data, DEFAULT_LEVEL, None).unwrap()
/// );
/// ```
pub const DEFAULT_LEVEL: i32 = 3;

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

/// Why a zstd call did not produce output. (The C ABI's numbers for these
/// are `ffi::ResultCode`'s.)
///
/// ```
/// use cmrx::zstd::{decompress_vec, Error};
/// assert_eq!(decompress_vec(b"not zstd", 1 << 20), Err(Error::Data));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// The output buffer is too small: retry with at least this capacity.
    /// For decompression the value is never above `max_out` and always above
    /// the capacity just tried.
    NeedSpace(usize),
    /// Not one whole, valid zstd frame: a wrong magic number, a bad header,
    /// a truncated or corrupt frame, bytes after the frame, or a frame whose
    /// data disagrees with the content size its header states.
    Data,
    /// The output would exceed `max_out`, or the input is too large for zstd
    /// to compress.
    TooBig,
    /// A bad argument: a level outside [`MIN_LEVEL`]`..=`[`MAX_LEVEL`], or a
    /// dictionary size below [`MIN_DICT_SIZE`].
    Arg,
    /// The frame's header names a dictionary (this ID) that is not
    /// registered ([`decompress`]) or not the one given
    /// ([`decompress_with`]).
    UnknownDictionary(u32),
    /// Not a standard zstd dictionary: no magic number (raw-content
    /// dictionaries are not accepted), an ID of 0, or tables libzstd
    /// cannot load.
    BadDictionary,
    /// [`register`]: another dictionary with this ID is already registered.
    DictionaryConflict(u32),
    /// [`train`]: ZDICT could not make a dictionary of these samples (fewer
    /// than [`MIN_SAMPLES`], less than 8 bytes in all, 4 GiB or more in all,
    /// or nothing worth a dictionary in them).
    Training,
    /// libzstd (or a buffer this module needed) could not be allocated.
    NoMemory,
}

impl fmt::Display for Error {
    /// A short English description, for error messages.
    ///
    /// ```
    /// use cmrx::zstd::Error;
    /// assert_eq!(
    ///     Error::UnknownDictionary(42).to_string(),
    ///     "zstd frame needs dictionary 42, which is not loaded"
    /// );
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NeedSpace(n) => write!(f, "output buffer too small: {n} bytes needed"),
            Error::Data => f.write_str("not a valid zstd frame"),
            Error::TooBig => f.write_str("zstd data larger than the size limit"),
            Error::Arg => f.write_str("bad argument to zstd"),
            Error::UnknownDictionary(id) => {
                write!(f, "zstd frame needs dictionary {id}, which is not loaded")
            }
            Error::BadDictionary => f.write_str("not a zstd dictionary"),
            Error::DictionaryConflict(id) => write!(
                f,
                "a different zstd dictionary with ID {id} is already loaded"
            ),
            Error::Training => f.write_str("zstd dictionary training failed"),
            Error::NoMemory => f.write_str("out of memory in zstd"),
        }
    }
}

impl std::error::Error for Error {}

impl GrowthError for Error {
    fn need_space(&self) -> Option<usize> {
        match *self {
            Error::NeedSpace(n) => Some(n),
            _ => None,
        }
    }
    fn too_big() -> Self {
        Error::TooBig
    }
    fn no_memory() -> Self {
        Error::NoMemory
    }
}

// ------------------------------------------------------------ output buffer

/// `&mut [MaybeUninit<u8>]` as the output buffer libzstd writes to.
struct Out<'a> {
    buf: &'a mut [MaybeUninit<u8>],
    /// How many bytes at the front of `buf` libzstd reported writing.
    filled: usize,
}

impl<'a> Out<'a> {
    fn new(buf: &'a mut [MaybeUninit<u8>]) -> Out<'a> {
        Out { buf, filled: 0 }
    }
}

// SAFETY: the three promises of `WriteBuf`: `as_mut_ptr()` points at `buf`,
// valid for writes of `capacity()` = `buf.len()` bytes; `as_slice()` covers
// `buf[..filled]` only, and `filled` is only ever set by `filled_until(n)`,
// whose caller guarantees that the first n bytes were written (zstd-safe
// also asserts n <= capacity before calling it); `filled_until(n)` makes
// `as_slice()` cover exactly those n bytes.
unsafe impl WriteBuf for Out<'_> {
    fn as_slice(&self) -> &[u8] {
        let n = self.filled.min(self.buf.len());
        // SAFETY: buf[..filled] was written (see the impl's SAFETY comment),
        // n <= buf.len(), and MaybeUninit<u8> has the layout of u8.
        unsafe { core::slice::from_raw_parts(self.buf.as_ptr().cast::<u8>(), n) }
    }

    fn capacity(&self) -> usize {
        self.buf.len()
    }

    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.buf.as_mut_ptr().cast::<u8>()
    }

    unsafe fn filled_until(&mut self, n: usize) {
        self.filled = n;
    }
}

// ------------------------------------------------------- per-thread contexts

thread_local! {
    /// This thread's compression context, made on first use.
    static CCTX: RefCell<Option<CCtx<'static>>> = const { RefCell::new(None) };
    /// This thread's decompression context, made on first use.
    static DCTX: RefCell<Option<DCtx<'static>>> = const { RefCell::new(None) };
}

/// Run `f` with this thread's compression context, made on first use.
fn with_cctx<R>(f: impl FnOnce(&mut CCtx<'static>) -> R) -> Result<R, Error> {
    per_thread::with(&CCTX, CCtx::try_create, f).ok_or(Error::NoMemory)
}

/// Run `f` with this thread's decompression context, made on first use.
fn with_dctx<R>(f: impl FnOnce(&mut DCtx<'static>) -> R) -> Result<R, Error> {
    per_thread::with(&DCTX, DCtx::try_create, f).ok_or(Error::NoMemory)
}

fn is_kind(code: usize, kind: ZSTD_ErrorCode) -> bool {
    zstd_safe::is_error_kind(code, kind)
}

// -------------------------------------------------------------- dictionaries

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
}

/// The ID in a standard dictionary's header, or `BadDictionary`.
fn dictionary_header_id(bytes: &[u8]) -> Result<u32, Error> {
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
        })
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

    /// The compression tables for `level` (already checked and normalised),
    /// made on first use. Two threads may both make them the first time; one
    /// set is kept and the other dropped.
    fn cdict(&self, level: i32) -> Result<&CDict<'static>, Error> {
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

/// The process-wide dictionaries, by ID.
static REGISTRY: RwLock<BTreeMap<u32, Arc<Dictionary>>> = RwLock::new(BTreeMap::new());

/// Loads a standard zstd dictionary (see [`Dictionary::from_bytes`]) into
/// the process-wide registry, where [`decompress`] and [`lookup`] find it by
/// its ID, and returns that ID. Registering the same bytes again is a no-op;
/// different bytes with an ID already registered are
/// `DictionaryConflict(id)`. Dictionaries stay registered for the life of
/// the process.
///
/// ```
/// use cmrx::zstd::{lookup, register, train};
/// let samples: Vec<Vec<u8>> = (0..200).map(|i| format!("session:{i}:{}", i % 5).into_bytes()).collect();
/// let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
/// let bytes = train(&refs, 1024).unwrap();
/// let id = register(&bytes).unwrap();
/// assert_eq!(register(&bytes), Ok(id));
/// assert_eq!(lookup(id).unwrap().id(), id);
/// ```
pub fn register(bytes: &[u8]) -> Result<u32, Error> {
    let id = dictionary_header_id(bytes)?;
    let same = |d: &Dictionary| {
        if d.as_bytes() == bytes {
            Ok(id)
        } else {
            Err(Error::DictionaryConflict(id))
        }
    };
    if let Some(d) = lookup(id) {
        return same(&d);
    }
    // Prepared outside the lock: readers are never held up by it.
    let dictionary = Arc::new(Dictionary::from_bytes(bytes)?);
    let mut map = REGISTRY.write().unwrap_or_else(PoisonError::into_inner);
    match map.entry(id) {
        Entry::Occupied(e) => same(e.get()),
        Entry::Vacant(e) => {
            e.insert(dictionary);
            Ok(id)
        }
    }
}

/// The registered dictionary with this ID, if any.
///
/// ```
/// assert!(cmrx::zstd::lookup(1).is_none());
/// ```
pub fn lookup(id: u32) -> Option<Arc<Dictionary>> {
    let map = REGISTRY.read().unwrap_or_else(PoisonError::into_inner);
    map.get(&id).cloned()
}

/// The IDs of the missing dictionaries reported so far in this process.
static MISSING_REPORTED: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

/// Whether this is the process's first report that dictionary `id` is
/// missing (a frame named it, and it is not registered): true once per ID,
/// false from then on. A reader warns once per dictionary, not once per
/// value: in a cache full of values made with a dictionary this process
/// lacks, every read would warn otherwise. Registering the dictionary later
/// does not make its ID new again.
///
/// ```
/// use cmrx::zstd::first_missing_report;
/// assert!(first_missing_report(4_000_001));
/// assert!(!first_missing_report(4_000_001));
/// assert!(first_missing_report(4_000_002));
/// ```
pub fn first_missing_report(id: u32) -> bool {
    MISSING_REPORTED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(id)
}

/// What the registry holds for an ID, compared with some dictionary's bytes
/// (see [`registered`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registered {
    /// No dictionary with that ID is registered.
    No,
    /// The dictionary registered with that ID has exactly these bytes.
    Same,
    /// Another dictionary has that ID: registering these bytes would be
    /// `DictionaryConflict`.
    Different,
}

/// Whether a dictionary with ID `id` is registered, and if so whether it is
/// `bytes` (so a tool can refuse an ID before it writes a dictionary that
/// could not be loaded beside the ones already in use).
///
/// ```
/// use cmrx::zstd::{register, registered, train, Registered};
/// let samples: Vec<Vec<u8>> = (0..200).map(|i| format!("cart:{i}:{}", i % 7).into_bytes()).collect();
/// let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
/// let bytes = train(&refs, 1024).unwrap();
/// let id = register(&bytes).unwrap();
/// assert_eq!(registered(id, &bytes), Registered::Same);
/// assert_eq!(registered(id, b"other bytes"), Registered::Different);
/// assert_eq!(registered(3, &bytes), Registered::No);
/// ```
pub fn registered(id: u32, bytes: &[u8]) -> Registered {
    match lookup(id) {
        None => Registered::No,
        Some(d) if d.as_bytes() == bytes => Registered::Same,
        Some(_) => Registered::Different,
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
    let mut copy = Vec::new();
    copy.try_reserve_exact(bytes.len())
        .map_err(|_| Error::NoMemory)?;
    copy.extend_from_slice(bytes);
    copy.get_mut(DICT_ID_BYTES)
        .ok_or(Error::BadDictionary)?
        .copy_from_slice(&id.to_le_bytes());
    // Tables libzstd can load, as for any dictionary given to us.
    DDict::try_create(&copy).ok_or(Error::BadDictionary)?;
    Ok(copy)
}

// ---------------------------------------------------------------- compress

/// The level [`compress`] uses for `level`: 0 is [`DEFAULT_LEVEL`],
/// [`MIN_LEVEL`]`..=`[`MAX_LEVEL`] are themselves, anything else is `Arg`.
/// The one place the zstd level range is checked.
///
/// ```
/// use cmrx::zstd::{compression_level, Error, DEFAULT_LEVEL};
/// assert_eq!(compression_level(0), Ok(DEFAULT_LEVEL));
/// assert_eq!(compression_level(-7), Ok(-7));
/// assert_eq!(compression_level(23), Err(Error::Arg));
/// ```
pub fn compression_level(level: i32) -> Result<i32, Error> {
    match level {
        0 => Ok(DEFAULT_LEVEL),
        MIN_LEVEL..=MAX_LEVEL => Ok(level),
        _ => Err(Error::Arg),
    }
}

/// Largest frame [`compress`] can produce for `in_len` input bytes, at any
/// level, with or without a dictionary (`usize::MAX` if that does not fit).
///
/// ```
/// use cmrx::zstd::compress_bound;
/// assert!(compress_bound(0) >= 9);
/// assert!(compress_bound(1000) > 1000);
/// ```
pub fn compress_bound(in_len: usize) -> usize {
    let bound = zstd_safe::compress_bound(in_len);
    // An error code (srcSize_wrong) for inputs zstd refuses (2^64 - 2^56
    // bytes or more on 64-bit targets).
    if bound < in_len || is_kind(bound, ZSTD_ErrorCode::ZSTD_error_srcSize_wrong) {
        usize::MAX
    } else {
        bound
    }
}

/// Compresses `input` at `level` into `out` as one zstd frame that states
/// its content size and, with a `dictionary`, names the dictionary's ID
/// (no checksum). `Ok(n)`: `out[..n]` is the frame. An `out` of
/// [`compress_bound`]`(input.len())` bytes always fits; a smaller one that
/// does not is `NeedSpace(compress_bound(..))`. `Arg` for a level outside
/// [`MIN_LEVEL`]`..=`[`MAX_LEVEL`] (0 is [`DEFAULT_LEVEL`]).
///
/// The dictionary's compression tables for `level` are made on its first
/// use at that level, then reused by every thread.
///
/// ```
/// use cmrx::zstd::{compress, compress_bound, decompress_vec, DEFAULT_LEVEL};
/// let input = b"{\"user\":42,\"name\":\"Ann\"}".repeat(10);
/// // Compress into the spare capacity of a Vec (a Perl scalar's, in the XS).
/// let mut frame: Vec<u8> = Vec::with_capacity(compress_bound(input.len()));
/// let n = compress(&input, DEFAULT_LEVEL, None, frame.spare_capacity_mut()).unwrap();
/// // SAFETY: compress initialised the first n bytes of the spare capacity.
/// unsafe { frame.set_len(n) };
/// assert_eq!(decompress_vec(&frame, 1 << 20).unwrap(), input);
/// ```
pub fn compress(
    input: &[u8],
    level: i32,
    dictionary: Option<&Dictionary>,
    out: &mut [MaybeUninit<u8>],
) -> Result<usize, Error> {
    let level = compression_level(level)?;
    let bound = compress_bound(input.len());
    let out_len = out.len();
    let mut dst = Out::new(out);
    let result = match dictionary {
        Some(d) => {
            let cdict = d.cdict(level)?;
            with_cctx(|c| c.compress_using_cdict(&mut dst, input, cdict))?
        }
        None => with_cctx(|c| c.compress(&mut dst, input, level))?,
    };
    match result {
        Ok(n) => Ok(n),
        Err(code) if is_kind(code, ZSTD_ErrorCode::ZSTD_error_dstSize_tooSmall) => {
            // Cannot happen with out_len >= bound (zstd's guarantee).
            Err(if out_len >= bound {
                Error::TooBig
            } else {
                Error::NeedSpace(bound)
            })
        }
        Err(code) if is_kind(code, ZSTD_ErrorCode::ZSTD_error_memory_allocation) => {
            Err(Error::NoMemory)
        }
        // srcSize_wrong: an input larger than zstd's ZSTD_MAX_INPUT_SIZE.
        Err(_) => Err(Error::TooBig),
    }
}

/// [`compress`] into a new `Vec`.
///
/// ```
/// use cmrx::zstd::{compress_vec, is_zstd_frame};
/// let frame = compress_vec(b"hello hello hello hello", 3, None).unwrap();
/// assert!(is_zstd_frame(&frame));
/// ```
pub fn compress_vec(
    input: &[u8],
    level: i32,
    dictionary: Option<&Dictionary>,
) -> Result<Vec<u8>, Error> {
    compression_level(level)?;
    let mut v = Vec::new();
    v.try_reserve_exact(compress_bound(input.len()))
        .map_err(|_| Error::NoMemory)?;
    let n = compress(input, level, dictionary, v.spare_capacity_mut())?;
    // SAFETY: on Ok(n), compress has initialised the first n bytes of the
    // spare capacity, and n <= capacity.
    unsafe { v.set_len(n) };
    Ok(v)
}

// --------------------------------------------------------------- frame info

/// Whether `input` starts with the zstd frame magic number. Only the magic
/// is looked at: a skippable frame or a pre-0.8 (legacy) frame is not one.
///
/// ```
/// use cmrx::zstd::is_zstd_frame;
/// assert!(is_zstd_frame(b"\x28\xb5\x2f\xfd..."));
/// assert!(!is_zstd_frame(b"\x1f\x8b\x08"));
/// ```
pub fn is_zstd_frame(input: &[u8]) -> bool {
    input.starts_with(&MAGIC)
}

/// The dictionary ID named in the header of the zstd frame `input`; `None`
/// if the frame names none (made without a dictionary, or with zstd's
/// `--no-dictID`), or `input` does not start with a complete zstd frame
/// header.
///
/// ```
/// use cmrx::zstd::{compress_vec, frame_dictionary_id};
/// assert_eq!(frame_dictionary_id(&compress_vec(b"no dictionary", 3, None).unwrap()), None);
/// ```
pub fn frame_dictionary_id(input: &[u8]) -> Option<u32> {
    if !is_zstd_frame(input) {
        return None;
    }
    zstd_safe::get_dict_id_from_frame(input).map(u32::from)
}

/// The dictionary ID named in the header of the zstd frame `input` starts
/// with: `Ok(None)` for a frame that names none, [`Error::Data`] when
/// `input` does not start with a whole, valid zstd frame header (no magic
/// number, too short, reserved bits set). Unlike [`frame_dictionary_id`],
/// it tells "no dictionary" from "not a frame".
///
/// ```
/// use cmrx::zstd::{compress_vec, frame_header_dictionary_id, Error};
/// let frame = compress_vec(b"no dictionary", 3, None).unwrap();
/// assert_eq!(frame_header_dictionary_id(&frame), Ok(None));
/// assert_eq!(frame_header_dictionary_id(b"\x1f\x8b gzip"), Err(Error::Data));
/// assert_eq!(frame_header_dictionary_id(&frame[..4]), Err(Error::Data));
/// ```
pub fn frame_header_dictionary_id(input: &[u8]) -> Result<Option<u32>, Error> {
    // A header that states a content size, or none, is whole and valid.
    frame_content_size(input)?;
    Ok(frame_dictionary_id(input))
}

/// The content size stated by the header of the zstd frame `input`
/// (`Ok(None)` if it states none); `Data` if `input` does not start with a
/// complete zstd frame header.
fn frame_content_size(input: &[u8]) -> Result<Option<u64>, Error> {
    if !is_zstd_frame(input) {
        return Err(Error::Data);
    }
    zstd_safe::get_frame_content_size(input).map_err(|_| Error::Data)
}

/// How far one zstd frame can expand: an RLE block (a 3-byte header and 1
/// byte) regenerates up to 128 KiB, 32 Ki output bytes per input byte; a
/// first guess of 8 times the input for a frame that does not state its
/// size.
const ZSTD_FRAME: Expansion = Expansion {
    per_input_byte: 32 << 10,
    slack: 0,
    guess_factor: 8,
};

/// The most `in_len` bytes of one zstd frame can decompress to.
fn max_inflated(in_len: usize) -> usize {
    ZSTD_FRAME.max_output(in_len)
}

/// The error for an output of unknown size that did not fit in `tried`
/// bytes.
fn grow(tried: usize, in_len: usize, max_out: usize) -> Error {
    ZSTD_FRAME
        .next_capacity(tried, in_len, max_out)
        .map_or(Error::TooBig, Error::NeedSpace)
}

/// A first output capacity for [`decompress`]`(input, .., max_out)`: the
/// content size the frame's header states, if it has one; for a frame that
/// states none, a few times the input length, at least 64 KiB, at most
/// `max_out`. 0 when decompress will fail at once, without writing: the
/// stated size is above `max_out` or more than the frame could hold, or
/// `input` does not start with a zstd frame header. Only a hint: a wrong one
/// costs a retry, never more than `max_out` bytes.
///
/// ```
/// use cmrx::zstd::{compress_vec, size_hint};
/// let data = vec![7u8; 100_000];
/// let frame = compress_vec(&data, 3, None).unwrap();
/// assert_eq!(size_hint(&frame, 1 << 20), 100_000);
/// assert_eq!(size_hint(&frame, 50_000), 0); // TooBig without allocating
/// ```
pub fn size_hint(input: &[u8], max_out: usize) -> usize {
    match frame_content_size(input) {
        Ok(Some(size)) => match usize::try_from(size) {
            Ok(size) if size <= max_out && size <= max_inflated(input.len()) => size,
            _ => 0,
        },
        Ok(None) => ZSTD_FRAME.first_capacity(input.len(), max_out),
        Err(_) => 0,
    }
}

// --------------------------------------------------------------- decompress

/// Decompresses the zstd frame `input` into `out`, producing at most
/// `max_out` bytes, with the registered dictionary its header names (see
/// [`register`]). `Ok(n)`: `out[..n]` is the data. `NeedSpace(m)`: call
/// again with `m` bytes (`m <= max_out`). `TooBig`: the data is longer than
/// `max_out` (for a frame that states its size, known from the header
/// alone). `UnknownDictionary(id)`: the header names a dictionary that is
/// not registered (known from the header alone). `Data`: not exactly one
/// valid zstd frame (see [`Error::Data`]).
///
/// A frame whose header states no dictionary ID is decoded without a
/// dictionary, so a frame made with a dictionary but without its ID
/// (`zstd --no-dictID`) is `Data`.
///
/// ```
/// use std::mem::MaybeUninit;
/// use cmrx::zstd::{compress_vec, decompress, size_hint, Error};
/// let frame = compress_vec(&vec![b'x'; 5000], 3, None).unwrap();
/// let max_out = 1 << 20;
/// let mut cap = size_hint(&frame, max_out);
/// let data = loop {
///     let mut buf: Vec<u8> = Vec::with_capacity(cap);
///     match decompress(&frame, buf.spare_capacity_mut(), max_out) {
///         Ok(n) => {
///             // SAFETY: decompress initialised the first n bytes.
///             unsafe { buf.set_len(n) };
///             break buf;
///         }
///         Err(Error::NeedSpace(next)) => cap = next,
///         Err(e) => panic!("{e}"),
///     }
/// };
/// assert_eq!(data, vec![b'x'; 5000]);
/// ```
pub fn decompress(
    input: &[u8],
    out: &mut [MaybeUninit<u8>],
    max_out: usize,
) -> Result<usize, Error> {
    let dictionary = match frame_dictionary_id(input) {
        Some(id) => Some(lookup(id).ok_or(Error::UnknownDictionary(id))?),
        None => None,
    };
    decompress_with(input, dictionary.as_deref(), out, max_out)
}

/// [`decompress`] with the caller's dictionary instead of the registry's:
/// a frame whose header names `dictionary`'s ID is decoded with it, one
/// naming another ID is `UnknownDictionary(id)`, and one naming none is
/// decoded without a dictionary (a frame made without one must never see
/// one: the dictionary would change how it decodes).
///
/// ```
/// use cmrx::zstd::{compress_vec, decompress_vec_with};
/// let frame = compress_vec(b"plain frame, no dictionary", 3, None).unwrap();
/// assert_eq!(decompress_vec_with(&frame, None, 100).unwrap(), b"plain frame, no dictionary");
/// ```
pub fn decompress_with(
    input: &[u8],
    dictionary: Option<&Dictionary>,
    out: &mut [MaybeUninit<u8>],
    max_out: usize,
) -> Result<usize, Error> {
    let content_size = frame_content_size(input)?;
    let ddict = match (frame_dictionary_id(input), dictionary) {
        (Some(id), Some(d)) if d.id == id => Some(&d.ddict),
        (Some(id), _) => return Err(Error::UnknownDictionary(id)),
        (None, _) => None,
    };
    let stated = match content_size {
        Some(size) => {
            let size = usize::try_from(size).map_err(|_| Error::TooBig)?;
            if size > max_out {
                return Err(Error::TooBig);
            }
            Some(size)
        }
        None => None,
    };
    // Exactly one frame: no truncation, nothing after it. This walks the
    // block headers only.
    match zstd_safe::find_frame_compressed_size(input) {
        Ok(n) if n == input.len() => {}
        _ => return Err(Error::Data),
    }
    let usable = match stated {
        // More than the frame could hold: its header lies.
        Some(size) if size > max_inflated(input.len()) => return Err(Error::Data),
        Some(size) if out.len() < size => return Err(Error::NeedSpace(size)),
        Some(size) => size,
        None => out.len().min(max_out),
    };
    let buf = out.get_mut(..usable).ok_or(Error::Data)?;
    let mut dst = Out::new(buf);
    let result = with_dctx(|dctx| match ddict {
        Some(ddict) => dctx.decompress_using_ddict(&mut dst, input, ddict),
        None => dctx.decompress(&mut dst, input),
    })?;
    match (result, stated) {
        // libzstd checks the decoded length against the stated one; this
        // only guards that promise.
        (Ok(n), Some(size)) if n != size => Err(Error::Data),
        (Ok(n), _) => Ok(n),
        // The data is longer than its header says.
        (Err(code), Some(_)) if is_kind(code, ZSTD_ErrorCode::ZSTD_error_dstSize_tooSmall) => {
            Err(Error::Data)
        }
        (Err(code), None) if is_kind(code, ZSTD_ErrorCode::ZSTD_error_dstSize_tooSmall) => {
            Err(grow(usable, input.len(), max_out))
        }
        (Err(code), _) if is_kind(code, ZSTD_ErrorCode::ZSTD_error_memory_allocation) => {
            Err(Error::NoMemory)
        }
        (Err(_), _) => Err(Error::Data),
    }
}

/// Decompress into a new `Vec`, running the `NeedSpace` growth loop.
fn decompress_loop(
    input: &[u8],
    dictionary: Option<&Dictionary>,
    registry: bool,
    max_out: usize,
) -> Result<Vec<u8>, Error> {
    // SAFETY: on Ok(n), decompress and decompress_with have initialised the
    // first n bytes of the buffer they were given, and n is at most its
    // length (their contract: "out[..n] is the data").
    unsafe {
        growth::decode_to_vec(size_hint(input, max_out), max_out, |buf| {
            if registry {
                decompress(input, buf, max_out)
            } else {
                decompress_with(input, dictionary, buf, max_out)
            }
        })
    }
}

/// [`decompress`] into a new `Vec`, at most `max_out` bytes.
///
/// ```
/// use cmrx::zstd::{compress_vec, decompress_vec, Error};
/// let frame = compress_vec(&[0u8; 10_000], 3, None).unwrap();
/// assert_eq!(decompress_vec(&frame, 10_000).unwrap().len(), 10_000);
/// assert_eq!(decompress_vec(&frame, 9_999), Err(Error::TooBig));
/// ```
pub fn decompress_vec(input: &[u8], max_out: usize) -> Result<Vec<u8>, Error> {
    decompress_loop(input, None, true, max_out)
}

/// [`decompress_with`] into a new `Vec`, at most `max_out` bytes.
///
/// ```
/// use cmrx::zstd::{compress_vec, decompress_vec_with, train, Dictionary, Error};
/// let samples: Vec<Vec<u8>> = (0..200).map(|i| format!("<li id=\"{i}\">item {}</li>", i % 9).into_bytes()).collect();
/// let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
/// let dict = Dictionary::from_bytes(&train(&refs, 1024).unwrap()).unwrap();
/// let frame = compress_vec(&samples[3], 3, Some(&dict)).unwrap();
/// assert_eq!(decompress_vec_with(&frame, Some(&dict), 1000).unwrap(), samples[3]);
/// assert_eq!(decompress_vec_with(&frame, None, 1000), Err(Error::UnknownDictionary(dict.id())));
/// ```
pub fn decompress_vec_with(
    input: &[u8],
    dictionary: Option<&Dictionary>,
    max_out: usize,
) -> Result<Vec<u8>, Error> {
    decompress_loop(input, dictionary, false, max_out)
}

// ------------------------------------------------------------------ training

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
    let (joined, sizes) = join_samples(samples)?;
    let mut dict: Vec<u8> = Vec::new();
    dict.try_reserve_exact(dict_size)
        .map_err(|_| Error::NoMemory)?;
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
            // SAFETY: out is dict_size writable bytes; joined holds the
            // samples back to back and sizes their lengths (summing to
            // joined.len(), a count that fits a u32: join_samples); params
            // is a valid parameter block. ZDICT writes at most dict_size
            // bytes.
            let n = unsafe {
                zstd_sys::ZDICT_optimizeTrainFromBuffer_fastCover(
                    out.as_mut_ptr().cast(),
                    dict_size,
                    joined.as_ptr().cast(),
                    sizes.as_ptr(),
                    sizes.len() as u32,
                    &mut params,
                )
            };
            (n, params.k, params.d)
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
            // SAFETY: as for fastCover above.
            let n = unsafe {
                zstd_sys::ZDICT_optimizeTrainFromBuffer_cover(
                    out.as_mut_ptr().cast(),
                    dict_size,
                    joined.as_ptr().cast(),
                    sizes.as_ptr(),
                    sizes.len() as u32,
                    &mut params,
                )
            };
            (n, params.k, params.d)
        }
        Method::Samples => {
            if sizes.len() < MIN_SAMPLES {
                return Err(Error::Training);
            }
            (finalize_samples(out, &joined, &sizes, zparams), 0, 0)
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

/// The Samples method: as much of the end of `joined` as fits in `out`
/// after the header and entropy tables, finalized by ZDICT; ZDICT's size
/// or error code. ZDICT_finalizeDictionary keeps the *start* of a content
/// that does not fit (whatever its documentation says), and the end is
/// what frames reach most cheaply, so the content is cut here: first to
/// `out`'s size, then, when the header did not leave room for it all, to
/// what the header leaves, and at the last try with room for the largest
/// header.
fn finalize_samples(
    out: &mut [MaybeUninit<u8>],
    joined: &[u8],
    sizes: &[usize],
    zparams: zstd_sys::ZDICT_params_t,
) -> usize {
    let capacity = out.len();
    let mut room = 0;
    let mut attempt = 1;
    loop {
        if attempt == FINALIZE_ATTEMPTS {
            room = room.max(DICT_HEADER_MAX);
        }
        let content_len = joined.len().min(capacity.saturating_sub(room));
        let content = &joined[joined.len() - content_len..];
        // SAFETY: out is capacity writable bytes, content readable and at
        // most capacity bytes (in another buffer than out); joined and
        // sizes describe the samples (sizes summing to joined.len(), a
        // count that fits a u32: join_samples). ZDICT writes at most
        // capacity bytes.
        let n = unsafe {
            zstd_sys::ZDICT_finalizeDictionary(
                out.as_mut_ptr().cast(),
                capacity,
                content.as_ptr().cast(),
                content.len(),
                joined.as_ptr().cast(),
                sizes.as_ptr(),
                sizes.len() as u32,
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

/// The samples back to back and their lengths, as ZDICT takes them;
/// `Training` for more samples than a u32 counts or 4 GiB or more in all.
fn join_samples(samples: &[&[u8]]) -> Result<(Vec<u8>, Vec<usize>), Error> {
    if u32::try_from(samples.len()).is_err() {
        return Err(Error::Training);
    }
    let total = samples
        .iter()
        .try_fold(0usize, |sum, s| sum.checked_add(s.len()))
        .filter(|&t| u32::try_from(t).is_ok())
        .ok_or(Error::Training)?;
    let mut joined: Vec<u8> = Vec::new();
    joined
        .try_reserve_exact(total)
        .map_err(|_| Error::NoMemory)?;
    let mut sizes: Vec<usize> = Vec::new();
    sizes
        .try_reserve_exact(samples.len())
        .map_err(|_| Error::NoMemory)?;
    for s in samples {
        joined.extend_from_slice(s);
        sizes.push(s.len());
    }
    Ok((joined, sizes))
}

/// How many segment counts fastCover tries (ZDICT_trainFromBuffer's 4).
const FAST_COVER_STEPS: u32 = 4;
/// The split point when every sample both trains and judges.
const ALL_SAMPLES: f64 = 1.0;

/// The size of each sample's frame at `level` with `dictionary` (which
/// need not be registered), as [`compress`] writes it: what a candidate
/// dictionary or level would store, measured without keeping the frames.
///
/// ```
/// use cmrx::zstd::{compress_vec, frame_sizes};
/// let values = [&b"one value, one value, one value"[..], b"another"];
/// let sizes = frame_sizes(&values, 3, None).unwrap();
/// assert_eq!(sizes[0], compress_vec(values[0], 3, None).unwrap().len());
/// ```
pub fn frame_sizes(
    samples: &[&[u8]],
    level: i32,
    dictionary: Option<&Dictionary>,
) -> Result<Vec<usize>, Error> {
    compression_level(level)?;
    let longest = samples.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut scratch: Vec<u8> = Vec::new();
    scratch
        .try_reserve_exact(compress_bound(longest))
        .map_err(|_| Error::NoMemory)?;
    let mut sizes: Vec<usize> = Vec::new();
    sizes
        .try_reserve_exact(samples.len())
        .map_err(|_| Error::NoMemory)?;
    for s in samples {
        sizes.push(compress(
            s,
            level,
            dictionary,
            scratch.spare_capacity_mut(),
        )?);
    }
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};
    use std::sync::atomic::{AtomicUsize, Ordering};

    // ---------------------------------------------------------------- helpers

    /// A JSON value like a cached API response: a user record with a few
    /// nested lists, 100 B to a few KB.
    fn json_value(rng: &mut Rng) -> Vec<u8> {
        let names = ["alice", "bob", "carol", "dave", "erin", "frank", "grace"];
        let langs = ["Perl", "Rust", "C", "Go", "Python", "JavaScript"];
        let id = rng.below(10_000_000);
        let mut s = format!(
            r#"{{"id":{id},"login":"{}{}","node_id":"MDQ6VXNlcj{:08x}","type":"User","site_admin":{},"url":"https://api.example.com/users/{id}","created_at":"20{:02}-{:02}-{:02}T{:02}:{:02}:00Z""#,
            names[rng.below(names.len())],
            rng.below(1000),
            rng.next_u64() as u32,
            rng.below(2) == 0,
            10 + rng.below(15),
            1 + rng.below(12),
            1 + rng.below(28),
            rng.below(24),
            rng.below(60),
        );
        let repos = rng.below(12);
        s.push_str(r#","repos":["#);
        for r in 0..repos {
            if r > 0 {
                s.push(',');
            }
            s.push_str(&format!(
                r#"{{"name":"project-{}","language":"{}","stargazers_count":{},"fork":{},"description":"A {} library for {} things"}}"#,
                rng.below(500),
                langs[rng.below(langs.len())],
                rng.below(5000),
                rng.below(3) == 0,
                langs[rng.below(langs.len())],
                names[rng.below(names.len())],
            ));
        }
        s.push_str("]}");
        s.into_bytes()
    }

    fn json_values(n: usize, seed: u64) -> Vec<Vec<u8>> {
        let mut rng = Rng(seed);
        (0..n).map(|_| json_value(&mut rng)).collect()
    }

    fn refs(values: &[Vec<u8>]) -> Vec<&[u8]> {
        values.iter().map(|v| &v[..]).collect()
    }

    /// A 16 KiB dictionary trained once on 600 JSON values, registered.
    fn dict() -> &'static Arc<Dictionary> {
        static DICT: OnceLock<Arc<Dictionary>> = OnceLock::new();
        DICT.get_or_init(|| {
            let samples = json_values(600, 1);
            let bytes = train(&refs(&samples), 16 << 10).unwrap();
            let id = register(&bytes).unwrap();
            lookup(id).unwrap()
        })
    }

    /// Another trained dictionary, never registered.
    fn unregistered_dict() -> &'static Dictionary {
        static DICT: OnceLock<Dictionary> = OnceLock::new();
        DICT.get_or_init(|| {
            let samples = json_values(300, 99);
            Dictionary::from_bytes(&train(&refs(&samples), 4096).unwrap()).unwrap()
        })
    }

    fn corpus() -> Vec<(&'static str, Vec<u8>)> {
        let mut rng = Rng(0x1234_5678_9abc_def0);
        let values = json_values(20, 2);
        vec![
            ("empty", Vec::new()),
            ("one byte", b"x".to_vec()),
            ("nul", vec![0]),
            ("all bytes", (0..=255u8).collect()),
            ("json small", values[0].clone()),
            ("json values", values.concat()),
            ("zeros 1 MiB", vec![0; 1 << 20]),
            ("random 100 KiB", rng.bytes(100 << 10)),
            ("random 31", rng.bytes(31)),
        ]
    }

    /// The frame header fields of `frame`: (content size, dictionary ID,
    /// checksum flag), parsed here independently of libzstd.
    fn header(frame: &[u8]) -> (Option<u64>, Option<u32>, bool) {
        assert_eq!(frame[..4], MAGIC);
        let fhd = frame[4];
        let single = fhd & 0x20 != 0;
        let mut pos = 5 + usize::from(!single);
        let did_len = [0, 1, 2, 4][usize::from(fhd & 3)];
        let mut did = 0u32;
        for i in 0..did_len {
            did |= u32::from(frame[pos + i]) << (8 * i);
        }
        pos += did_len;
        let fcs_len = match fhd >> 6 {
            0 => usize::from(single),
            1 => 2,
            2 => 4,
            _ => 8,
        };
        let mut fcs = 0u64;
        for i in 0..fcs_len {
            fcs |= u64::from(frame[pos + i]) << (8 * i);
        }
        if fcs_len == 2 {
            fcs += 256;
        }
        (
            (fcs_len > 0).then_some(fcs),
            (did_len > 0 && did != 0).then_some(did),
            fhd & 4 != 0,
        )
    }

    /// A block of a hand-made frame.
    enum Block<'a> {
        Raw(&'a [u8]),
        Rle(u8, usize),
    }

    /// A zstd frame made by hand: a window of 2^window_log bytes, 8-byte
    /// content size field if `content_size` is given, 4-byte dictionary ID if
    /// `dict_id` is, then `blocks` (at most 128 KiB each).
    fn craft(
        content_size: Option<u64>,
        window_log: u8,
        dict_id: Option<u32>,
        blocks: &[Block],
    ) -> Vec<u8> {
        let mut f = MAGIC.to_vec();
        let fcs_flag = if content_size.is_some() { 3 << 6 } else { 0 };
        let did_flag = if dict_id.is_some() { 3 } else { 0 };
        f.push(fcs_flag | did_flag);
        f.push((window_log - 10) << 3);
        if let Some(id) = dict_id {
            f.extend_from_slice(&id.to_le_bytes());
        }
        if let Some(size) = content_size {
            f.extend_from_slice(&size.to_le_bytes());
        }
        for (i, block) in blocks.iter().enumerate() {
            let last = u32::from(i + 1 == blocks.len());
            let (kind, size) = match block {
                Block::Raw(b) => (0u32, b.len()),
                Block::Rle(_, n) => (1u32, *n),
            };
            let head = last | (kind << 1) | ((size as u32) << 3);
            f.extend_from_slice(&head.to_le_bytes()[..3]);
            match block {
                Block::Raw(b) => f.extend_from_slice(b),
                Block::Rle(v, _) => f.push(*v),
            }
        }
        f
    }

    /// `total` copies of `byte` as 128 KiB RLE blocks.
    fn rle_blocks(byte: u8, total: usize) -> Vec<Block<'static>> {
        let mut blocks = Vec::new();
        let mut left = total;
        while left > 0 {
            let n = left.min(128 << 10);
            blocks.push(Block::Rle(byte, n));
            left -= n;
        }
        if blocks.is_empty() {
            blocks.push(Block::Raw(&[]));
        }
        blocks
    }

    /// Decompress (registry) into a fresh buffer of exactly `cap` bytes,
    /// pre-filled so that writes past the result can be seen.
    fn decompress_cap(input: &[u8], cap: usize, max_out: usize) -> Result<Vec<u8>, Error> {
        let mut buf = vec![MaybeUninit::new(0xa5u8); cap];
        let r = decompress(input, &mut buf, max_out);
        // SAFETY: buf was fully initialised above.
        let bytes: Vec<u8> = buf.iter().map(|b| unsafe { b.assume_init() }).collect();
        let n = r?;
        Ok(bytes[..n].to_vec())
    }

    /// Run the NeedSpace protocol by hand from the size hint, checking every
    /// step; returns the result and the capacities tried.
    fn drive(input: &[u8], max_out: usize) -> (Result<Vec<u8>, Error>, Vec<usize>) {
        let mut cap = size_hint(input, max_out);
        assert!(cap <= max_out, "hint {cap} above max_out {max_out}");
        let mut tried = Vec::new();
        loop {
            tried.push(cap);
            assert!(tried.len() < 80, "growth loop does not end: {tried:?}");
            let mut buf: Vec<u8> = Vec::with_capacity(cap);
            match decompress(input, &mut buf.spare_capacity_mut()[..cap], max_out) {
                Ok(n) => {
                    assert!(n <= cap);
                    // SAFETY: Ok(n) means the first n bytes were written.
                    unsafe { buf.set_len(n) };
                    return (Ok(buf), tried);
                }
                Err(Error::NeedSpace(next)) => {
                    assert!(next > cap, "NeedSpace({next}) after {cap}");
                    assert!(next <= max_out, "NeedSpace({next}) above max_out {max_out}");
                    cap = next;
                }
                Err(e) => return (Err(e), tried),
            }
        }
    }

    /// The memory this thread's decompression context holds.
    fn dctx_size() -> usize {
        with_dctx(|d| d.sizeof()).unwrap()
    }

    // ------------------------------------------------------------ round trips

    #[test]
    fn round_trips_at_several_levels_with_and_without_dictionary() {
        let dict = dict();
        for (name, data) in corpus() {
            for level in [MIN_LEVEL, -1, 0, 1, 3, 9, 19, MAX_LEVEL] {
                if data.len() > 64 << 10 && level > 9 {
                    continue; // slow, and nothing new
                }
                for d in [None, Some(&**dict)] {
                    let what = format!("{name} level {level} dict {}", d.is_some());
                    let frame = compress_vec(&data, level, d).unwrap();
                    assert!(frame.len() <= compress_bound(data.len()), "{what}");
                    assert!(is_zstd_frame(&frame), "{what}");
                    let (size, id, checksum) = header(&frame);
                    assert_eq!(size, Some(data.len() as u64), "{what}");
                    assert_eq!(id, d.map(|d| d.id()), "{what}");
                    assert_eq!(frame_dictionary_id(&frame), d.map(|d| d.id()), "{what}");
                    assert!(!checksum, "{what}");
                    assert_eq!(size_hint(&frame, 1 << 30), data.len(), "{what}");
                    // One call into an exactly sized buffer.
                    assert_eq!(
                        decompress_cap(&frame, data.len(), data.len()).unwrap(),
                        data,
                        "{what}"
                    );
                    assert_eq!(decompress_vec(&frame, 1 << 30).unwrap(), data, "{what}");
                    assert_eq!(
                        decompress_vec_with(&frame, d, 1 << 30).unwrap(),
                        data,
                        "{what}"
                    );
                }
            }
        }
    }

    #[test]
    fn dictionary_makes_small_values_smaller() {
        let dict = dict();
        let values = json_values(200, 3); // not the training samples
        let plain: usize = values
            .iter()
            .map(|v| compress_vec(v, 3, None).unwrap().len())
            .sum();
        let with: usize = values
            .iter()
            .map(|v| compress_vec(v, 3, Some(dict)).unwrap().len())
            .sum();
        let raw: usize = values.iter().map(Vec::len).sum();
        assert!(
            with * 2 < plain,
            "raw {raw}, plain {plain}, with dictionary {with}"
        );
    }

    #[test]
    fn levels() {
        let data = json_values(5, 4).concat();
        for level in [MIN_LEVEL - 1, MAX_LEVEL + 1, i32::MIN, i32::MAX, -100] {
            assert_eq!(compress_vec(&data, level, None), Err(Error::Arg), "{level}");
            assert_eq!(compress_vec(&data, level, Some(dict())), Err(Error::Arg));
            let mut out = vec![MaybeUninit::new(0u8); 1 << 16];
            assert_eq!(compress(&data, level, None, &mut out), Err(Error::Arg));
        }
        assert_eq!(
            compress_vec(&data, 0, Some(dict())).unwrap(),
            compress_vec(&data, DEFAULT_LEVEL, Some(dict())).unwrap()
        );
        // Higher levels compress this at least as well as lower ones.
        let fast = compress_vec(&data, MIN_LEVEL, None).unwrap().len();
        let slow = compress_vec(&data, 19, None).unwrap().len();
        assert!(slow < fast, "{slow} {fast}");
    }

    #[test]
    fn compress_need_space() {
        let data = json_values(30, 5).concat();
        let bound = compress_bound(data.len());
        let frame = compress_vec(&data, 3, None).unwrap();
        for d in [None, Some(&**dict())] {
            // Too small for the frame: NeedSpace(bound), never a partial frame.
            for cap in [0, 1, 8, frame.len() / 2] {
                let mut out = vec![MaybeUninit::new(0u8); cap];
                assert_eq!(
                    compress(&data, 3, d, &mut out),
                    Err(Error::NeedSpace(bound))
                );
            }
            // Smaller than the bound but enough for this data: fine.
            let frame = compress_vec(&data, 3, d).unwrap();
            let mut out = vec![MaybeUninit::new(0u8); frame.len() + 10];
            assert_eq!(compress(&data, 3, d, &mut out), Ok(frame.len()));
        }
        // Incompressible data needs (a little) more than its size.
        let random = Rng(6).bytes(50_000);
        let mut out = vec![MaybeUninit::new(0u8); random.len()];
        assert_eq!(
            compress(&random, 3, None, &mut out),
            Err(Error::NeedSpace(compress_bound(random.len())))
        );
        assert!(compress_vec(&random, 3, None).unwrap().len() <= compress_bound(random.len()));
        assert_eq!(compress_bound(usize::MAX), usize::MAX);
    }

    // ------------------------------------------------------------- decompress

    #[test]
    fn size_hint_and_one_call() {
        let data = json_values(40, 7).concat();
        let frame = compress_vec(&data, 3, None).unwrap();
        assert_eq!(size_hint(&frame, 1 << 20), data.len());
        assert_eq!(size_hint(&frame, data.len()), data.len());
        assert_eq!(size_hint(&frame, data.len() - 1), 0);
        assert_eq!(
            decompress_cap(&frame, 0, data.len() - 1),
            Err(Error::TooBig)
        );
        assert_eq!(
            decompress_cap(&frame, data.len(), data.len() - 1),
            Err(Error::TooBig)
        );
        // A buffer below the stated size: NeedSpace(that size), at once.
        assert_eq!(
            decompress_cap(&frame, data.len() - 1, 1 << 20),
            Err(Error::NeedSpace(data.len()))
        );
        // Bigger than needed: only the stated size is written.
        let mut buf = vec![MaybeUninit::new(0xa5u8); data.len() + 100];
        assert_eq!(decompress(&frame, &mut buf, 1 << 20), Ok(data.len()));
        assert!(buf[data.len()..]
            .iter()
            // SAFETY: buf was fully initialised.
            .all(|b| unsafe { b.assume_init() } == 0xa5));
        // Not a frame: nothing to allocate.
        for junk in [&b""[..], b"junk", &MAGIC, &frame[..5]] {
            assert_eq!(size_hint(junk, 1 << 20), 0);
            assert_eq!(decompress_cap(junk, 0, 1 << 20), Err(Error::Data));
        }
        // No size stated: a few times the input, 64 KiB at least.
        let unsized_frame = craft(None, 17, None, &rle_blocks(b'a', 1000));
        assert_eq!(size_hint(&unsized_frame, 1 << 20), MIN_CAPACITY);
        assert_eq!(size_hint(&unsized_frame, 1000), 1000);
        assert_eq!(
            decompress_vec(&unsized_frame, 1000).unwrap(),
            vec![b'a'; 1000]
        );
    }

    #[test]
    fn need_space_protocol_for_frames_without_a_size() {
        let data = vec![b'z'; 1 << 20];
        let frame = craft(None, 17, None, &rle_blocks(b'z', data.len()));
        assert_eq!(frame_content_size(&frame), Ok(None));
        // From a tiny buffer, each step grows and stays within max_out.
        let max_out = 10 << 20;
        let mut cap = 10;
        let mut steps = 0;
        loop {
            match decompress_cap(&frame, cap, max_out) {
                Ok(v) => {
                    assert_eq!(v, data);
                    break;
                }
                Err(Error::NeedSpace(next)) => {
                    assert!(next > cap && next <= max_out, "{cap} -> {next}");
                    cap = next;
                    steps += 1;
                }
                Err(e) => panic!("{e:?}"),
            }
        }
        assert!(steps <= 6, "{steps} steps");
        let (r, tried) = drive(&frame, max_out);
        assert_eq!(r.unwrap(), data);
        assert!(tried.len() <= 6, "{tried:?}");
        // Exactly enough, both as buffer and as cap.
        assert_eq!(
            decompress_cap(&frame, data.len(), data.len()).unwrap(),
            data
        );
        // One byte short of the cap: TooBig, whatever the buffer size, and
        // nothing written past max_out.
        for cap in [data.len() - 1, data.len(), data.len() + 100] {
            let mut buf = vec![MaybeUninit::new(0xa5u8); cap];
            assert_eq!(
                decompress(&frame, &mut buf, data.len() - 1),
                Err(Error::TooBig)
            );
            assert!(buf[data.len() - 1..]
                .iter()
                // SAFETY: buf was fully initialised.
                .all(|b| unsafe { b.assume_init() } == 0xa5));
        }
        // A buffer smaller than the cap: NeedSpace up to the cap.
        assert_eq!(
            decompress_cap(&frame, 1000, 1500),
            Err(Error::NeedSpace(1500))
        );
        assert_eq!(decompress_cap(&frame, 1500, 1500), Err(Error::TooBig));
        assert_eq!(decompress_cap(&frame, 0, 0), Err(Error::TooBig));
        // An empty frame without a size.
        let empty = craft(None, 10, None, &[Block::Raw(&[])]);
        assert_eq!(decompress_cap(&empty, 0, 0).unwrap(), b"");
        assert_eq!(decompress_vec(&empty, 100).unwrap(), b"");
    }

    #[test]
    fn bombs_are_too_big_without_allocating_past_the_cap() {
        let zeros = vec![0u8; 100 << 20];
        let max_out = 1 << 20;
        let before = dctx_size();

        // Ours, with the content size: TooBig from the header, nothing tried.
        let frame = compress_vec(&zeros, 3, None).unwrap();
        assert!(frame.len() < 16 << 10, "{}", frame.len());
        assert!(max_inflated(frame.len()) >= zeros.len());
        assert_eq!(size_hint(&frame, max_out), 0);
        let (r, tried) = drive(&frame, max_out);
        assert_eq!(r, Err(Error::TooBig));
        assert_eq!(tried, [0]);
        assert_eq!(decompress_cap(&frame, max_out, max_out), Err(Error::TooBig));
        // And with the cap at the size, it all comes back.
        assert_eq!(
            decompress_vec(&frame, zeros.len()).unwrap().len(),
            zeros.len()
        );

        // The same without a content size (hand-made RLE blocks): every
        // capacity asked for is within the cap, which is the last one.
        let frame = craft(None, 27, None, &rle_blocks(0, zeros.len()));
        assert!(frame.len() < 4000);
        let (r, tried) = drive(&frame, max_out);
        assert_eq!(r, Err(Error::TooBig));
        assert!(tried.iter().all(|&c| c <= max_out), "{tried:?}");
        assert_eq!(*tried.last().unwrap(), max_out);
        assert!(tried.len() <= 6, "{tried:?}");
        assert_eq!(decompress_vec(&frame, max_out), Err(Error::TooBig));

        // libzstd decodes into our buffer: its own state did not grow to
        // hold a window (the frame above asks for 128 MiB).
        let after = dctx_size();
        assert!(
            after < 512 << 10,
            "decompression context {before} -> {after} bytes"
        );
    }

    #[test]
    fn lying_content_sizes() {
        let data = vec![b'q'; 1000];
        let blocks = rle_blocks(b'q', data.len());
        // The truth decodes.
        let honest = craft(Some(1000), 17, None, &blocks);
        assert_eq!(decompress_vec(&honest, 1 << 20).unwrap(), data);
        // Too small, too large: Data, whatever the buffer.
        for stated in [0, 1, 500, 999, 1001, 2000, 100_000] {
            let frame = craft(Some(stated), 17, None, &blocks);
            assert_eq!(size_hint(&frame, 1 << 20), stated as usize);
            for cap in [stated as usize, stated as usize + 5000] {
                assert_eq!(
                    decompress_cap(&frame, cap, 1 << 20),
                    Err(Error::Data),
                    "stated {stated}, cap {cap}"
                );
            }
            assert_eq!(decompress_vec(&frame, 1 << 20), Err(Error::Data));
        }
        // More than the frame could ever hold: Data at once, and the hint
        // asks for nothing.
        let frame = craft(Some(60 << 20), 17, None, &blocks);
        assert!(max_inflated(frame.len()) < 60 << 20);
        assert_eq!(size_hint(&frame, 64 << 20), 0);
        assert_eq!(decompress_cap(&frame, 0, 64 << 20), Err(Error::Data));
        // Above max_out: TooBig at once.
        assert_eq!(decompress_cap(&frame, 0, 1 << 20), Err(Error::TooBig));
        // The largest size (all ones) is zstd's "unknown": the growth loop.
        let frame = craft(Some(u64::MAX), 17, None, &blocks);
        assert_eq!(frame_content_size(&frame), Ok(None));
        assert_eq!(decompress_vec(&frame, 1 << 20).unwrap(), data);
        assert_eq!(decompress_vec(&frame, 999), Err(Error::TooBig));
        // One below it is zstd's "error": Data.
        let frame = craft(Some(u64::MAX - 1), 17, None, &blocks);
        assert_eq!(decompress_vec(&frame, 1 << 20), Err(Error::Data));
        assert_eq!(decompress_vec(&frame, usize::MAX), Err(Error::Data));

        // A real frame with its size field changed.
        let data = json_values(10, 8).concat();
        let frame = compress_vec(&data, 3, None).unwrap();
        let (stated, _, _) = header(&frame);
        assert_eq!(stated, Some(data.len() as u64));
        assert_eq!(frame[4] >> 6, 1, "2-byte size field expected");
        let at = 5 + usize::from(frame[4] & 0x20 == 0);
        for delta in [-1i64, 1, 100] {
            let mut bad = frame.clone();
            let v = (data.len() as i64 - 256 + delta) as u16;
            bad[at..at + 2].copy_from_slice(&v.to_le_bytes());
            assert_eq!(decompress_vec(&bad, 1 << 20), Err(Error::Data), "{delta}");
        }
    }

    #[test]
    fn truncated_frames() {
        let data = json_values(8, 9).concat();
        let frames = [
            compress_vec(&data, 3, None).unwrap(),
            compress_vec(&data, 3, Some(dict())).unwrap(),
            compress_vec(b"", 3, None).unwrap(),
            compress_vec(b"x", 3, Some(dict())).unwrap(),
            craft(None, 17, None, &rle_blocks(b'r', 300_000)),
        ];
        for frame in &frames {
            assert!(decompress_vec(frame, 1 << 20).is_ok());
            for cut in 0..frame.len() {
                assert_eq!(
                    decompress_vec(&frame[..cut], 1 << 20),
                    Err(Error::Data),
                    "cut {cut} of {}",
                    frame.len()
                );
            }
        }
    }

    #[test]
    fn trailing_bytes_and_other_frames_are_refused() {
        let a = compress_vec(b"first value", 3, None).unwrap();
        let b = compress_vec(b"second value", 3, None).unwrap();
        // A skippable frame: magic 0x184D2A50, 4-byte size, contents.
        let skippable = [&[0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0][..], b"abc"].concat();
        let cases = [
            [&a[..], b"x"].concat(),
            [&a[..], &[0]].concat(),
            [&a[..], &b[..]].concat(),
            [&a[..], &skippable[..]].concat(),
            [&skippable[..], &a[..]].concat(),
            skippable.clone(),
            MAGIC.to_vec(),
            Vec::new(),
            b"\x1f\x8b\x08\x00".to_vec(),
        ];
        for case in &cases {
            assert_eq!(
                decompress_vec(case, 1 << 20),
                Err(Error::Data),
                "{case:02x?}"
            );
            let mut buf = vec![MaybeUninit::new(0u8); 1 << 16];
            assert_eq!(decompress(case, &mut buf, 1 << 20), Err(Error::Data));
        }
        assert!(!is_zstd_frame(&skippable));
        assert_eq!(frame_dictionary_id(&skippable), None);
    }

    #[test]
    fn corrupt_frames_never_panic_nor_overrun() {
        let data = json_values(12, 10).concat();
        let random = Rng(11).bytes(3000);
        let cases = [
            ("json", &data, None),
            ("json, dictionary, level 19", &data, Some(&**dict())),
            ("random", &random, None),
        ];
        let mut rng = Rng(12);
        for (name, original, d) in cases {
            let level = if d.is_some() { 19 } else { 3 };
            let frame = compress_vec(original, level, d).unwrap();
            // (errors, right output, wrong output)
            let mut seen = [0usize; 3];
            let mut check = |bad: &[u8]| {
                let max_out = 1 << 20;
                let (r, tried) = drive(bad, max_out);
                assert!(tried.iter().all(|&c| c <= max_out));
                match r {
                    Ok(v) if v == *original => seen[1] += 1,
                    Ok(v) => {
                        // Never more than the frame states.
                        assert_eq!(v.len(), original.len());
                        seen[2] += 1;
                    }
                    Err(Error::Data | Error::TooBig | Error::UnknownDictionary(_)) => seen[0] += 1,
                    Err(e) => panic!("{e:?}"),
                }
            };
            // Every bit of the frame header and the first block header.
            for at in 0..20.min(frame.len()) {
                for bit in 0..8 {
                    let mut bad = frame.clone();
                    bad[at] ^= 1 << bit;
                    check(&bad);
                }
            }
            // Random bytes anywhere.
            for _ in 0..500 {
                let mut bad = frame.clone();
                for _ in 0..1 + rng.below(3) {
                    let at = rng.below(bad.len());
                    bad[at] ^= 1 + (rng.next_u64() >> 57) as u8;
                }
                check(&bad);
            }
            // Without a checksum, a changed literal goes unseen: that is the
            // price of the 4 bytes saved (see the module documentation).
            eprintln!(
                "{name}: {} corruptions refused, {} decoded to the original, {} to other data",
                seen[0], seen[1], seen[2]
            );
        }
    }

    #[test]
    fn unknown_dictionaries() {
        let other = unregistered_dict();
        assert!(lookup(other.id()).is_none());
        let data = json_values(3, 13).concat();
        let frame = compress_vec(&data, 3, Some(other)).unwrap();
        assert_eq!(frame_dictionary_id(&frame), Some(other.id()));
        let unknown = Err(Error::UnknownDictionary(other.id()));
        assert_eq!(decompress_vec(&frame, 1 << 20), unknown);
        assert_eq!(decompress_cap(&frame, data.len(), 1 << 20), unknown);
        assert_eq!(decompress_vec_with(&frame, None, 1 << 20), unknown);
        assert_eq!(decompress_vec_with(&frame, Some(dict()), 1 << 20), unknown);
        assert_eq!(
            decompress_vec_with(&frame, Some(other), 1 << 20).unwrap(),
            data
        );
        // A frame made without a dictionary never gets one.
        let plain = compress_vec(&data, 3, None).unwrap();
        assert_eq!(
            decompress_vec_with(&plain, Some(other), 1 << 20).unwrap(),
            data
        );
        // Hand-made, with an ID nobody has.
        let frame = craft(Some(5), 17, Some(0xdead_beef), &[Block::Raw(b"hello")]);
        assert_eq!(frame_dictionary_id(&frame), Some(0xdead_beef));
        assert_eq!(
            decompress_vec(&frame, 1 << 20),
            Err(Error::UnknownDictionary(0xdead_beef))
        );
        assert_eq!(
            Error::UnknownDictionary(0xdead_beef).to_string(),
            "zstd frame needs dictionary 3735928559, which is not loaded"
        );
    }

    #[test]
    fn frame_header_dictionary_ids() {
        let other = unregistered_dict();
        let data = json_values(3, 13).concat();
        let with = compress_vec(&data, 3, Some(other)).unwrap();
        let without = compress_vec(&data, 3, None).unwrap();
        assert_eq!(frame_header_dictionary_id(&with), Ok(Some(other.id())));
        assert_eq!(frame_header_dictionary_id(&without), Ok(None));
        // Every ID field size (1, 2 and 4 bytes) and a header alone.
        for id in [0x7f, 0x1234, 0xdead_beef] {
            let frame = craft(None, 17, Some(id), &[Block::Raw(b"x")]);
            assert_eq!(frame_header_dictionary_id(&frame), Ok(Some(id)));
        }
        for (fhd, id, id_len) in [(0x01u8, 0x7fu32, 1), (0x02, 0x1234, 2)] {
            let mut f = MAGIC.to_vec();
            f.extend_from_slice(&[fhd, 7 << 3]);
            f.extend_from_slice(&id.to_le_bytes()[..id_len]);
            assert_eq!(frame_header_dictionary_id(&f), Ok(Some(id)), "{f:02x?}");
        }
        // Not a frame: another format, a skippable frame, a cut header, a
        // reserved bit set.
        let skippable = [&[0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0][..], b"abc"].concat();
        let mut reserved = without.clone();
        reserved[4] |= 0x08;
        for bad in [
            &b""[..],
            b"\x1f\x8b\x08\x00",
            &skippable,
            &MAGIC,
            &with[..6],
            &reserved,
        ] {
            assert_eq!(
                frame_header_dictionary_id(bad),
                Err(Error::Data),
                "{bad:02x?}"
            );
        }
    }

    // ----------------------------------------------------------- dictionaries

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
    fn registry() {
        let d = dict();
        let bytes = d.as_bytes().to_vec();
        assert_eq!(register(&bytes), Ok(d.id()));
        assert!(
            Arc::ptr_eq(&lookup(d.id()).unwrap(), d),
            "re-registering is a no-op"
        );
        // Same ID, different content.
        let mut other = bytes.clone();
        let last = other.len() - 1;
        other[last] ^= 1;
        assert_eq!(register(&other), Err(Error::DictionaryConflict(d.id())));
        assert!(Arc::ptr_eq(&lookup(d.id()).unwrap(), d));
        assert_eq!(register(b"not a dictionary"), Err(Error::BadDictionary));
        assert!(lookup(0).is_none());

        // Several threads registering the same new dictionary: one wins, all
        // get its ID.
        let samples = json_values(200, 14);
        let fresh = train(&refs(&samples), 2048).unwrap();
        let ids: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4).map(|_| s.spawn(|| register(&fresh))).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let id = Dictionary::from_bytes(&fresh).unwrap().id();
        assert!(ids.iter().all(|r| *r == Ok(id)), "{ids:?}");
        assert_eq!(lookup(id).unwrap().as_bytes(), &fresh[..]);
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
    fn prepared_tables_and_registry_state() {
        let samples = json_values(300, 23);
        let bytes = with_dictionary_id(&train(&refs(&samples), 4096).unwrap(), 4242).unwrap();
        assert_eq!(registered(4242, &bytes), Registered::No);
        let id = register(&bytes).unwrap();
        assert_eq!(id, 4242);
        assert_eq!(registered(4242, &bytes), Registered::Same);
        let mut other = bytes.clone();
        let last = other.len() - 1;
        other[last] ^= 1;
        assert_eq!(registered(4242, &other), Registered::Different);
        let d = lookup(id).unwrap();
        for level in [0, -7, 1, 9, 19, 22] {
            d.prepare(level).unwrap();
        }
        assert_eq!(d.prepare(MAX_LEVEL + 1), Err(Error::Arg));
        assert_eq!(d.prepare(MIN_LEVEL - 1), Err(Error::Arg));
        // A prepared level gives the frames a lazily prepared one does.
        let fresh = Dictionary::from_bytes(&bytes).unwrap();
        let v = &json_values(1, 24)[0];
        assert_eq!(
            compress_vec(v, 9, Some(&d)).unwrap(),
            compress_vec(v, 9, Some(&fresh)).unwrap()
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

    /// A small ID takes fewer bytes in every frame, and nothing else
    /// changes: the frame is the one a 4-byte ID gives, less 3 bytes (IDs
    /// below 256) or 2 (below 65536).
    #[test]
    fn small_ids_make_shorter_frames() {
        let values = json_values(100, 23);
        let all = refs(&values);
        let frames = |id: u32| {
            let how = Training {
                method: Method::Samples,
                k: 0,
                d: 0,
                steps: 0,
                level: 3,
                id,
            };
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
        let how = Training {
            method: Method::Samples,
            k: 0,
            d: 0,
            steps: 0,
            level: 3,
            id: 9,
        };
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
        let samples = Training {
            method: Method::Samples,
            k: 0,
            d: 0,
            steps: 0,
            ..Training::default()
        };
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

    // -------------------------------------------------------------- error codes

    #[test]
    fn every_error_has_a_message() {
        let all = [
            Error::NeedSpace(77),
            Error::Data,
            Error::TooBig,
            Error::Arg,
            Error::UnknownDictionary(5),
            Error::BadDictionary,
            Error::DictionaryConflict(6),
            Error::Training,
            Error::NoMemory,
        ];
        for e in all {
            assert!(!e.to_string().is_empty(), "{e:?}");
        }
    }

    // ------------------------------------------------------ the zstd command

    /// The `zstd` command, if it runs; else prints why the test is skipped.
    fn zstd_command(test: &str) -> Option<()> {
        let ok = Command::new("zstd")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            eprintln!("{test}: skipped: the zstd command is not available");
        }
        ok.then_some(())
    }

    /// A temporary directory, removed on drop.
    struct TempDir(PathBuf);
    impl TempDir {
        fn new() -> TempDir {
            static N: AtomicUsize = AtomicUsize::new(0);
            let path = std::env::temp_dir().join(format!(
                "cmrx-zstd-test-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&path).unwrap();
            TempDir(path)
        }
        fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
            let p = self.0.join(name);
            std::fs::write(&p, bytes).unwrap();
            p
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// Run `zstd args...` with `stdin` piped in (so that zstd does not know
    /// its size); returns stdout, panicking on failure.
    fn zstd(args: &[&dyn AsRef<std::ffi::OsStr>], stdin: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut child = Command::new("zstd")
            .args(args.iter().map(|a| a.as_ref()))
            .arg("-q")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        let stdin = stdin.to_vec();
        let writer = std::thread::spawn(move || input.write_all(&stdin));
        let out = child.wait_with_output().unwrap();
        // zstd reading a file instead may close its stdin unread.
        match writer.join().unwrap() {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("{e}"),
            _ => {}
        }
        assert!(
            out.status.success(),
            "zstd {:?}: {}",
            args.iter()
                .map(|a| a.as_ref().to_owned())
                .collect::<Vec<_>>(),
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    fn path_arg(p: &Path) -> String {
        p.to_str().unwrap().to_owned()
    }

    #[test]
    fn frames_made_by_the_zstd_command_decode() {
        let Some(()) = zstd_command("frames_made_by_the_zstd_command_decode") else {
            return;
        };
        let tmp = TempDir::new();
        let dict_path = tmp.write("dict", dict().as_bytes());
        let dict_arg = path_arg(&dict_path);
        for (name, data) in corpus() {
            let file = tmp.write("input", &data);
            let file_arg = path_arg(&file);
            let cases: [(&str, Vec<&dyn AsRef<std::ffi::OsStr>>, bool); 7] = [
                ("file", vec![&"-c", &file_arg], true),
                (
                    "file --no-content-size",
                    vec![&"-c", &"--no-content-size", &file_arg],
                    false,
                ),
                ("pipe", vec![&"-c"], false),
                (
                    "pipe -19 --no-check",
                    vec![&"-c", &"-19", &"--no-check"],
                    false,
                ),
                (
                    "pipe --fast=3 --long=27",
                    vec![&"-c", &"--fast=3", &"--long=27"],
                    false,
                ),
                ("file -D", vec![&"-c", &"-D", &dict_arg, &file_arg], true),
                ("pipe -D", vec![&"-c", &"-D", &dict_arg], false),
            ];
            for (how, args, sized) in cases {
                let frame = zstd(&args, &data);
                let what = format!("{name}: {how}");
                let (stated, id, _) = header(&frame);
                // (An empty input gets its size, 0, even from a pipe.)
                if !data.is_empty() {
                    assert_eq!(stated.is_some(), sized, "{what}");
                }
                let uses_dict = how.contains("-D");
                assert_eq!(id, uses_dict.then(|| dict().id()), "{what}");
                assert_eq!(decompress_vec(&frame, 1 << 30).unwrap(), data, "{what}");
                // The exact cap is enough, one byte less is not.
                assert_eq!(decompress_vec(&frame, data.len()).unwrap(), data, "{what}");
                if !data.is_empty() {
                    assert_eq!(
                        decompress_vec(&frame, data.len() - 1),
                        Err(Error::TooBig),
                        "{what}"
                    );
                }
            }
        }
        // The command's checksum is checked.
        let data = json_values(10, 18).concat();
        let frame = zstd(&[&"-c"], &data);
        assert!(header(&frame).2, "zstd writes a checksum by default");
        let mut bad = frame.clone();
        let last = bad.len() - 1;
        bad[last] ^= 0x40;
        assert_eq!(decompress_vec(&bad, 1 << 20), Err(Error::Data));
        // A 100 MiB bomb from a pipe, cap 1 MiB.
        let frame = zstd(&[&"-c"], &vec![0u8; 100 << 20]);
        assert_eq!(header(&frame).0, None);
        let (r, tried) = drive(&frame, 1 << 20);
        assert_eq!(r, Err(Error::TooBig));
        assert!(tried.iter().all(|&c| c <= 1 << 20), "{tried:?}");
        // The same with its size: TooBig from the header.
        let file = tmp.write("zeros", &vec![0u8; 100 << 20]);
        let frame = zstd(&[&"-c", &path_arg(&file)], b"");
        assert_eq!(header(&frame).0, Some(100 << 20));
        assert_eq!(drive(&frame, 1 << 20), (Err(Error::TooBig), vec![0]));
    }

    #[test]
    fn our_frames_decode_with_the_zstd_command() {
        let Some(()) = zstd_command("our_frames_decode_with_the_zstd_command") else {
            return;
        };
        let tmp = TempDir::new();
        let dict_arg = path_arg(&tmp.write("dict", dict().as_bytes()));
        for (name, data) in corpus() {
            for level in [-3, 1, 3, 19] {
                let frame = compress_vec(&data, level, None).unwrap();
                assert_eq!(zstd(&[&"-d", &"-c"], &frame), data, "{name} {level}");
                let frame = compress_vec(&data, level, Some(dict())).unwrap();
                assert_eq!(
                    zstd(&[&"-d", &"-c", &"-D", &dict_arg], &frame),
                    data,
                    "{name} {level} with dictionary"
                );
            }
        }
        // Dictionaries with IDs of 1 and 2 bytes in the frame, and one made
        // of the samples themselves.
        let values = json_values(80, 26);
        for (method, id) in [
            (Method::Samples, 1u32),
            (Method::Cover, 255),
            (Method::FastCover, 40_000),
        ] {
            let steps = if method == Method::Samples { 0 } else { 2 };
            let how = Training {
                method,
                k: 0,
                d: 0,
                steps,
                level: 9,
                id,
            };
            let bytes = train_with(&refs(&values), 8192, &how).unwrap().bytes;
            let d = Dictionary::from_bytes(&bytes).unwrap();
            let path = path_arg(&tmp.write(&format!("dict{id}"), &bytes));
            for v in &values[..5] {
                let frame = compress_vec(v, 9, Some(&d)).unwrap();
                assert_eq!(header(&frame).1, Some(id));
                assert_eq!(
                    zstd(&[&"-d", &"-c", &"-D", &path], &frame),
                    *v,
                    "{method:?} {id}"
                );
            }
        }
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

    #[test]
    fn a_missing_dictionary_is_reported_once_across_threads() {
        // IDs no other test uses: the set is the process's.
        let ids = [3_000_001u32, 3_000_002, 3_000_003];
        let firsts = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..10 {
                        for &id in &ids {
                            if first_missing_report(id) {
                                firsts.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                });
            }
        });
        assert_eq!(
            firsts.load(Ordering::Relaxed),
            ids.len(),
            "one first report per ID"
        );
        assert!(!first_missing_report(ids[0]));
        assert!(first_missing_report(3_000_004), "another ID is new");
    }
}
