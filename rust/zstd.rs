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
//! * [`decompress`] has the growth-loop contract of `deflate::gunzip`: start
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
//!   first use and reused, never made per call (as `deflate` keeps libdeflate's
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
//!
//! Each part is a file of its own under `rust/zstd/`: `frame.rs` reads what
//! a frame's header says, `dictionary.rs` is the [`Dictionary`] type,
//! `registry.rs` the process-wide dictionaries by ID (and the once-per-ID
//! report of a missing one), `training.rs` ZDICT's training. This file is
//! the codec itself: [`compress`] and [`decompress`], with the per-thread
//! contexts they share.

use core::cell::RefCell;
use core::mem::MaybeUninit;

use zstd::zstd_safe::{self, zstd_sys::ZSTD_ErrorCode, CCtx, DCtx, WriteBuf};

use crate::counters;
use crate::growth;
use crate::per_thread;

mod dictionary;
mod frame;
mod registry;
#[cfg(test)]
mod test_support;
mod training;

pub use dictionary::{with_dictionary_id, Dictionary, DICT_MAGIC};
use frame::{frame_content_size, max_inflated, ZSTD_FRAME};
pub use frame::{frame_dictionary_id, frame_header_dictionary_id, is_zstd_frame, size_hint, MAGIC};
pub use registry::{lookup, register, registered, registered_dictionaries, Registered};
pub use training::{
    train, train_with, Method, Trained, Training, MIN_DICT_SIZE, MIN_SAMPLES, TRAIN_MAX_K,
    TRAIN_MAX_STEPS, TRAIN_MIN_K,
};

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

/// The level that asks for [`DEFAULT_LEVEL`] (libzstd's own convention), as
/// [`crate::deflate::USE_DEFAULT_LEVEL`] asks gzip and zlib for theirs.
pub const USE_DEFAULT_LEVEL: i32 = 0;

/// zstd's default level, which [`USE_DEFAULT_LEVEL`] also means.
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

codec_error_display! {
    /// A short English description, for error messages.
    ///
    /// ```
    /// use cmrx::zstd::Error;
    /// assert_eq!(
    ///     Error::UnknownDictionary(42).to_string(),
    ///     "zstd frame needs dictionary 42, which is not loaded"
    /// );
    /// assert_eq!(Error::TooBig.to_string(), "zstd data larger than the size limit");
    /// ```
    Error, "zstd", f;
    Self::UnknownDictionary(id) => {
        write!(f, "zstd frame needs dictionary {id}, which is not loaded")
    },
    Self::BadDictionary => f.write_str("not a zstd dictionary"),
    Self::DictionaryConflict(id) => {
        write!(f, "a different zstd dictionary with ID {id} is already loaded")
    },
    Self::Training => f.write_str("zstd dictionary training failed"),
}

asks_for_space!(Error);

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

/// An empty `Vec` with room for `n` items, or `NoMemory`: the buffers this
/// module makes are allocated fallibly.
fn vec_with_room<T>(n: usize) -> Result<Vec<T>, Error> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Error::NoMemory)?;
    Ok(v)
}

// ---------------------------------------------------------------- compress

/// The level [`compress`] uses for `level`: [`USE_DEFAULT_LEVEL`] is
/// [`DEFAULT_LEVEL`],
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
        USE_DEFAULT_LEVEL => Ok(DEFAULT_LEVEL),
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
    let mut v = vec_with_room(compress_bound(input.len()))?;
    let n = compress(input, level, dictionary, v.spare_capacity_mut())?;
    // SAFETY: on Ok(n), compress has initialised the first n bytes of the
    // spare capacity, and n <= capacity.
    unsafe { v.set_len(n) };
    Ok(v)
}

/// The error for an output of unknown size that did not fit in `tried`
/// bytes.
fn grow(tried: usize, in_len: usize, max_out: usize) -> Error {
    ZSTD_FRAME
        .next_capacity(tried, in_len, max_out)
        .map_or(Error::TooBig, Error::NeedSpace)
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
    let len = decompress_with(input, dictionary.as_deref(), out, max_out)?;
    // A value read: counted with its dictionary (crate::counters).
    dictionary
        .as_deref()
        .map_or(&counters::ZSTD_PLAIN, Dictionary::counters)
        .read
        .add(len, input.len());
    Ok(len)
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
        (Some(id), Some(d)) if d.id() == id => Some(d.ddict()),
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
    let mut scratch: Vec<u8> = vec_with_room(compress_bound(longest))?;
    let mut sizes = vec_with_room(samples.len())?;
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
    use super::test_support::*;
    use super::*;
    use crate::growth::{drive_checked, MIN_CAPACITY};
    use crate::testing::{decode_from_a_tiny_buffer, Rng};

    // ---------------------------------------------------------------- helpers

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
        drive_checked(size_hint(input, max_out), max_out, |buf| {
            decompress(input, buf, max_out)
        })
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
        let (v, steps) =
            decode_from_a_tiny_buffer(max_out, |cap| decompress_cap(&frame, cap, max_out));
        assert_eq!(v, data);
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
}
