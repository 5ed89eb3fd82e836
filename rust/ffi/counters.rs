//! The C ABI of the counters ([`crate::counters`]) and of the reports said
//! once per interval ([`crate::warning_rate`]): plumbing only.

use std::panic::catch_unwind;

use super::{inspect, ResultCode};
use crate::counters::{self, TrafficKind};
use crate::traffic;
use crate::warning_rate;

/// 1 when reporting `text` is due at `now` (seconds), `interval` seconds
/// after the last report of it, else 0 (`cmrx_report_due`): the policy is
/// [`warning_rate::report_due`]'s. 0 for a NULL text with a length, or a panic.
///
/// # Safety
/// `text` readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn cmrx_report_due(
    text: *const u8,
    len: usize,
    now: u64,
    interval: u64,
) -> i32 {
    // SAFETY: the caller's contract is inspect's.
    unsafe {
        inspect(text, len, 0, |text| {
            i32::from(warning_rate::report_due(text, now, interval))
        })
    }
}

/// Mirrors `struct cmrx_traffic` in cmrx.h field for field: the values of
/// one kind written and read ([`counters::ValueCounters`]).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CmrxTraffic {
    /// A `CMRX_TRAFFIC_*` code.
    pub kind: i32,
    /// The dictionary's ID (`CMRX_TRAFFIC_ZSTD_DICTIONARY`), else 0.
    pub dictionary: u32,
    /// Values written.
    pub written: u64,
    /// Their bytes uncompressed.
    pub written_raw: u64,
    /// Their bytes compressed.
    pub written_stored: u64,
    /// Values read.
    pub read: u64,
    /// Their bytes uncompressed.
    pub read_raw: u64,
    /// Their bytes compressed.
    pub read_stored: u64,
}

impl CmrxTraffic {
    fn of(kind: TrafficKind, dictionary: u32, counted: &counters::ValueCounters) -> CmrxTraffic {
        let (w, r) = (counted.written.counts(), counted.read.counts());
        CmrxTraffic {
            kind: kind as i32,
            dictionary,
            written: w.values,
            written_raw: w.raw_bytes,
            written_stored: w.stored_bytes,
            read: r.values,
            read_raw: r.raw_bytes,
            read_stored: r.stored_bytes,
        }
    }
}

/// Counts a value written (`cmrx_note_written`): compressed as `kind`,
/// with dictionary `dictionary` for `CMRX_TRAFFIC_ZSTD_DICTIONARY`, from
/// `raw` bytes to `stored`. `CMRX_E_UNKNOWN_DICTIONARY` when that
/// dictionary is not loaded, `CMRX_E_ARG` for an unknown kind.
#[no_mangle]
pub extern "C" fn cmrx_note_written(kind: i32, dictionary: u32, raw: usize, stored: usize) -> i32 {
    let noted = catch_unwind(|| match TrafficKind::from_code(kind) {
        Some(kind) => match traffic::note_written(kind, dictionary, raw, stored) {
            Ok(()) => ResultCode::Ok,
            Err(traffic::DictionaryNotLoaded) => ResultCode::UnknownDictionary,
        },
        None => ResultCode::Arg,
    });
    noted.unwrap_or(ResultCode::Panic) as i32
}

/// Counts one `CMRX_EVENT_*` (`cmrx_note_event`): `CMRX_E_ARG` for an
/// unknown code.
#[no_mangle]
pub extern "C" fn cmrx_note_event(event: i32) -> i32 {
    let noted = catch_unwind(|| match counters::Event::from_code(event) {
        Some(e) => {
            e.note();
            ResultCode::Ok
        }
        None => ResultCode::Arg,
    });
    noted.unwrap_or(ResultCode::Panic) as i32
}

/// The traffic counters (`cmrx_traffic_counts`): zstd without a dictionary, gzip,
/// zlib, then each loaded dictionary by ID, as many as fit in `rows`
/// (`cap` of them); returns how many there are (call again with more room
/// when that is above `cap`). 0 on a panic.
///
/// # Safety
/// `rows` writable for `cap` entries (or NULL with `cap` 0).
#[no_mangle]
pub unsafe extern "C" fn cmrx_traffic_counts(rows: *mut CmrxTraffic, cap: usize) -> usize {
    let all = catch_unwind(|| {
        let mut all = Vec::new();
        traffic::each_traffic(|kind, dictionary, counted| {
            all.push(CmrxTraffic::of(kind, dictionary, counted));
        });
        all
    });
    let Ok(all) = all else { return 0 };
    if !rows.is_null() {
        for (i, row) in all.iter().take(cap).enumerate() {
            // SAFETY: i < cap, and rows is writable for cap entries (contract).
            unsafe { rows.add(i).write(*row) };
        }
    }
    all.len()
}

/// How many of each `CMRX_EVENT_*` so far (`cmrx_event_counts`), indexed by
/// code, as many as fit in `counts` (`cap` of them); returns how many kinds
/// there are (`CMRX_EVENTS`).
///
/// # Safety
/// `counts` writable for `cap` entries (or NULL with `cap` 0).
#[no_mangle]
pub unsafe extern "C" fn cmrx_event_counts(counts: *mut u64, cap: usize) -> usize {
    let all = counters::event_counts();
    if !counts.is_null() {
        for (i, n) in all.iter().take(cap).enumerate() {
            // SAFETY: i < cap, and counts is writable for cap entries (contract).
            unsafe { counts.add(i).write(*n) };
        }
    }
    all.len()
}
