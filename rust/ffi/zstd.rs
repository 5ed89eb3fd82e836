//! The C ABI of zstd and its dictionaries ([`crate::zstd`]): plumbing only.

use std::mem::MaybeUninit;
use std::panic::catch_unwind;
use std::ptr;
use std::slice;

use super::{input, inspect, status_of, with_buffers, Failure, ResultCode};
use crate::zstd;

abi_codes! {
    /// How `cmrx_zstd_train_with` builds a dictionary ([`zstd::Method`]).
    pub enum TrainMethod {
        /// ZDICT's fastCover.
        FastCover = 1 => "CMRX_TRAIN_FASTCOVER",
        /// ZDICT's cover.
        Cover = 2 => "CMRX_TRAIN_COVER",
        /// The samples themselves as the content.
        Samples = 3 => "CMRX_TRAIN_SAMPLES",
    }
}

impl TrainMethod {
    /// The engine's method of this one.
    fn method(self) -> zstd::Method {
        match self {
            TrainMethod::FastCover => zstd::Method::FastCover,
            TrainMethod::Cover => zstd::Method::Cover,
            TrainMethod::Samples => zstd::Method::Samples,
        }
    }
}

/// Mirrors `struct cmrx_training` in cmrx.h field for field: what
/// `cmrx_zstd_train_with` does ([`zstd::Training`]), and, after it, the
/// segment size and sequence length it used.
#[repr(C)]
pub struct CmrxTraining {
    /// A `CMRX_TRAIN_*` code.
    pub method: i32,
    /// Segment size (0: search); set to the one used.
    pub k: u32,
    /// Sequence length, 6 or 8 (0: both tried); set to the one used.
    pub d: u32,
    /// Segment sizes tried when `k` is 0 (0: ZDICT's default).
    pub steps: u32,
    /// The level the dictionary is made for.
    pub level: i32,
    /// The dictionary's ID (0: drawn from its content).
    pub id: u32,
}

number_exports! {
    /// Largest frame `cmrx_zstd_compress` can make of `in_len` bytes
    /// (`cmrx_zstd_compress_bound`).
    fn cmrx_zstd_compress_bound(in_len: usize) -> usize = zstd::compress_bound(in_len);
    /// 1 if `cmrx_zstd_compress` accepts `level` (0 for the default, or
    /// [`zstd::MIN_LEVEL`]`..=`[`zstd::MAX_LEVEL`]), else 0
    /// (`cmrx_zstd_level_valid`).
    fn cmrx_zstd_level_valid(level: i32) -> i32 = i32::from(zstd::compression_level(level).is_ok());
}

/// One zstd frame of `input` at `level`, with the loaded dictionary
/// `dictionary` (0: none) (`cmrx_zstd_compress`).
///
/// # Safety
/// As in cmrx.h: `input` readable for `in_len`, `out` writable for `out_cap`.
#[no_mangle]
pub unsafe extern "C" fn cmrx_zstd_compress(
    input: *const u8,
    in_len: usize,
    level: i32,
    dictionary: u32,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> i32 {
    // SAFETY: the caller's contract is with_buffers's.
    unsafe {
        with_buffers(input, in_len, out, out_cap, out_len, |i, o| {
            let dict = match dictionary {
                0 => None,
                id => Some(zstd::lookup(id).ok_or(zstd::Error::UnknownDictionary(id))?),
            };
            Ok(zstd::compress(i, level, dict.as_deref(), o)?)
        })
    }
}

/// Loads the standard zstd dictionary `bytes` for the whole process
/// (`cmrx_zstd_register`); `*id` gets its ID (also when it conflicts).
///
/// # Safety
/// `bytes` readable for `len` bytes, `id` writable.
#[no_mangle]
pub unsafe extern "C" fn cmrx_zstd_register(bytes: *const u8, len: usize, id: *mut u32) -> i32 {
    if id.is_null() || (bytes.is_null() && len != 0) {
        return ResultCode::Arg as i32;
    }
    // SAFETY: checked for NULL; readability is the caller's contract.
    let src = unsafe { input(bytes, len) };
    let (status, number) = match catch_unwind(|| zstd::register(src)) {
        Ok(Ok(registered)) => (ResultCode::Ok, registered),
        Ok(Err(e)) => {
            let failure = Failure::from(e);
            (failure.status, u32::try_from(failure.number).unwrap_or(0))
        }
        Err(_) => (ResultCode::Panic, 0),
    };
    // SAFETY: id was checked non-NULL and is writable (contract).
    unsafe { id.write(number) };
    status as i32
}

/// The `count` samples of a C array pair as slices (a NULL sample is
/// empty); `None` when an array is NULL with a count.
///
/// # Safety
/// `samples` and `lens` point to `count` entries (or are NULL); each
/// `samples[i]` is readable for `lens[i]` bytes, for `'a`.
unsafe fn sample_slices<'a>(
    samples: *const *const u8,
    lens: *const usize,
    count: usize,
) -> Option<Vec<&'a [u8]>> {
    if count == 0 {
        return Some(Vec::new());
    }
    if samples.is_null() || lens.is_null() {
        return None;
    }
    // SAFETY: both arrays hold count entries (contract, non-NULL here), and
    // each sample is readable for its length.
    unsafe {
        let ptrs = slice::from_raw_parts(samples, count);
        let sizes = slice::from_raw_parts(lens, count);
        Some(
            ptrs.iter()
                .zip(sizes)
                .map(|(&p, &n)| if p.is_null() { &[][..] } else { input(p, n) })
                .collect(),
        )
    }
}

/// Copies a dictionary the engine made into the caller's buffer; its
/// length (`TooBig` if it does not fit).
fn copy_dictionary(dict: &[u8], o: &mut [MaybeUninit<u8>]) -> Result<usize, Failure> {
    let dst = o
        .get_mut(..dict.len())
        .ok_or(Failure::from(zstd::Error::TooBig))?;
    for (d, &b) in dst.iter_mut().zip(dict) {
        d.write(b);
    }
    Ok(dict.len())
}

// ------------------------------------------------ dictionary sets' helpers

/// Prepares the compression tables of loaded dictionary `id` at `level`
/// now (`cmrx_zstd_prepare`), so that processes forked afterwards share
/// them: `CMRX_E_UNKNOWN_DICTIONARY` if it is not loaded, `CMRX_E_ARG` for a
/// level out of range, `CMRX_E_NO_MEMORY`.
#[no_mangle]
pub extern "C" fn cmrx_zstd_prepare(id: u32, level: i32) -> i32 {
    let prepared = catch_unwind(|| {
        zstd::lookup(id)
            .ok_or(zstd::Error::UnknownDictionary(id))?
            .prepare(level)
    });
    status_of(prepared)
}

/// The ID of the standard zstd dictionary `bytes`, once libzstd has loaded
/// its tables (`cmrx_zstd_dictionary_id`): `CMRX_E_BAD_DICTIONARY` if it
/// cannot. Loads nothing into the process.
///
/// # Safety
/// `bytes` readable for `len` bytes, `id` writable.
#[no_mangle]
pub unsafe extern "C" fn cmrx_zstd_dictionary_id(
    bytes: *const u8,
    len: usize,
    id: *mut u32,
) -> i32 {
    if id.is_null() || (bytes.is_null() && len != 0) {
        return ResultCode::Arg as i32;
    }
    // SAFETY: checked for NULL; readability is the caller's contract.
    let src = unsafe { input(bytes, len) };
    let (status, number) = match catch_unwind(|| zstd::Dictionary::from_bytes(src)) {
        Ok(Ok(d)) => (ResultCode::Ok, d.id()),
        Ok(Err(e)) => (Failure::from(e).status, 0),
        Err(_) => (ResultCode::Panic, 0),
    };
    // SAFETY: id was checked non-NULL and is writable (contract).
    unsafe { id.write(number) };
    status as i32
}

/// Copies the standard zstd dictionary `bytes` into `out` (which holds
/// `len` bytes) with `id` in its header instead of its own
/// (`cmrx_zstd_dictionary_with_id`): `CMRX_E_ARG` for an ID of 0,
/// `CMRX_E_BAD_DICTIONARY` for bytes that are not a loadable dictionary.
///
/// # Safety
/// `bytes` readable for `len` bytes, `out` writable for `len` bytes and not
/// overlapping `bytes`, `out_len` writable.
#[no_mangle]
pub unsafe extern "C" fn cmrx_zstd_dictionary_with_id(
    bytes: *const u8,
    len: usize,
    id: u32,
    out: *mut u8,
    out_len: *mut usize,
) -> i32 {
    // SAFETY: the caller's contract is with_buffers's, with out_cap = len.
    unsafe {
        with_buffers(bytes, len, out, len, out_len, |i, o| {
            copy_dictionary(&zstd::with_dictionary_id(i, id)?, o)
        })
    }
}

abi_codes! {
    /// What `cmrx_zstd_loaded_state` says of an ID and a dictionary's bytes.
    pub enum LoadedState {
        /// No dictionary with that ID is loaded.
        NotLoaded = 0 => "CMRX_DICT_NOT_LOADED",
        /// The dictionary loaded with that ID is these bytes.
        Same = 1 => "CMRX_DICT_SAME",
        /// A different dictionary is loaded with that ID.
        Different = 2 => "CMRX_DICT_DIFFERENT",
        /// A NULL pointer with a length, or a caught panic.
        Error = -1 => "CMRX_DICT_ERROR",
    }
}

/// Whether dictionary `id` is loaded, and whether it is `bytes`
/// (`cmrx_zstd_loaded_state`): a `CMRX_DICT_*` code.
///
/// # Safety
/// `bytes` readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn cmrx_zstd_loaded_state(id: u32, bytes: *const u8, len: usize) -> i32 {
    // SAFETY: the caller's contract is inspect's.
    let state = unsafe {
        inspect(
            bytes,
            len,
            LoadedState::Error,
            |src| match zstd::registered(id, src) {
                zstd::Registered::No => LoadedState::NotLoaded,
                zstd::Registered::Same => LoadedState::Same,
                zstd::Registered::Different => LoadedState::Different,
            },
        )
    };
    state as i32
}

/// Trains a standard zstd dictionary of at most `dict_size` bytes on
/// `count` samples into `out`, which holds `dict_size`, as `how` says
/// (`cmrx_zstd_train_with`): a method, its parameters, a level and an ID.
/// On `CMRX_OK`, `how->k` and `how->d` are the ones used.
///
/// # Safety
/// `samples` and `lens` point to `count` entries; each `samples[i]` is
/// readable for `lens[i]` bytes; `out` writable for `dict_size` bytes;
/// `out_len` writable; `how` points to a readable and writable
/// `cmrx_training`.
#[no_mangle]
pub unsafe extern "C" fn cmrx_zstd_train_with(
    samples: *const *const u8,
    lens: *const usize,
    count: usize,
    dict_size: usize,
    how: *mut CmrxTraining,
    out: *mut u8,
    out_len: *mut usize,
) -> i32 {
    // SAFETY: how is NULL or a valid cmrx_training (contract).
    let Some(how) = (unsafe { how.as_mut() }) else {
        return ResultCode::Arg as i32;
    };
    let Some(method) = TrainMethod::from_code(how.method).map(TrainMethod::method) else {
        return ResultCode::Arg as i32;
    };
    // SAFETY: the caller's contract is sample_slices'.
    let Some(inputs) = (unsafe { sample_slices(samples, lens, count) }) else {
        return ResultCode::Arg as i32;
    };
    let training = zstd::Training {
        method,
        k: how.k,
        d: how.d,
        steps: how.steps,
        level: how.level,
        id: how.id,
    };
    let mut used = (how.k, how.d);
    // SAFETY: out is writable for dict_size bytes and out_len writable
    // (contract); with_buffers checks them for NULL.
    let status = unsafe {
        with_buffers(ptr::null(), 0, out, dict_size, out_len, |_, o| {
            let trained = zstd::train_with(&inputs, dict_size, &training)?;
            used = (trained.k, trained.d);
            copy_dictionary(&trained.bytes, o)
        })
    };
    if status == ResultCode::Ok as i32 {
        (how.k, how.d) = used;
    }
    status
}

/// The size of the frame `cmrx_zstd_compress` would make of each of
/// `count` samples at `level`, with the standard dictionary `dict` (not
/// loaded, and not kept; `dict_len` 0: none) (`cmrx_zstd_frame_sizes`),
/// into `sizes[0..count)`.
///
/// # Safety
/// `dict` readable for `dict_len` bytes; `samples` and `lens` as for
/// `cmrx_zstd_train_with`; `sizes` writable for `count` entries.
#[no_mangle]
pub unsafe extern "C" fn cmrx_zstd_frame_sizes(
    dict: *const u8,
    dict_len: usize,
    level: i32,
    samples: *const *const u8,
    lens: *const usize,
    count: usize,
    sizes: *mut usize,
) -> i32 {
    if (dict.is_null() && dict_len != 0) || (sizes.is_null() && count != 0) {
        return ResultCode::Arg as i32;
    }
    // SAFETY: the caller's contract is sample_slices'.
    let Some(inputs) = (unsafe { sample_slices(samples, lens, count) }) else {
        return ResultCode::Arg as i32;
    };
    // SAFETY: dict is readable for dict_len bytes (contract; checked for
    // NULL above).
    let dict_bytes = unsafe { input(dict, dict_len) };
    let measured = catch_unwind(|| {
        let dictionary = match dict_len {
            0 => None,
            _ => Some(zstd::Dictionary::from_bytes(dict_bytes)?),
        };
        let measured = zstd::frame_sizes(&inputs, level, dictionary.as_ref())?;
        // SAFETY: sizes is writable for count entries (contract; non-NULL
        // when count > 0), and measured has count of them.
        unsafe {
            for (i, &n) in measured.iter().enumerate().take(count) {
                sizes.add(i).write(n);
            }
        }
        Ok::<(), zstd::Error>(())
    });
    status_of(measured)
}

/// The dictionary ID in the header of the zstd frame `input` starts with
/// (`cmrx_zstd_frame_dictionary`): `CMRX_OK` with `*id` set (0 when the
/// frame names none), or `CMRX_E_DATA` when `input` does not start with a
/// whole zstd frame header (see [`zstd::frame_header_dictionary_id`]).
///
/// # Safety
/// `input` readable for `in_len` bytes, `id` writable.
#[no_mangle]
pub unsafe extern "C" fn cmrx_zstd_frame_dictionary(
    input: *const u8,
    in_len: usize,
    id: *mut u32,
) -> i32 {
    if id.is_null() {
        return ResultCode::Arg as i32;
    }
    // SAFETY: the caller's contract is inspect's.
    let found = unsafe {
        inspect(input, in_len, Err(ResultCode::Arg), |src| {
            zstd::frame_header_dictionary_id(src).map_err(|e| Failure::from(e).status)
        })
    };
    match found {
        Ok(named) => {
            // SAFETY: id was checked non-NULL and is writable (contract).
            unsafe { id.write(named.unwrap_or(0)) };
            ResultCode::Ok as i32
        }
        Err(status) => status as i32,
    }
}
