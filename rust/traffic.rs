//! Which counters a value's traffic goes to: those of its format
//! ([`counters::plain_traffic`]) or those of the loaded zstd dictionary it
//! was written with. Above both [`counters`] and [`zstd`], so that neither
//! imports the other back (the dictionaries hold counters; the counters know
//! nothing of dictionaries).

use crate::counters::{self, TrafficKind, ValueCounters};
use crate::zstd;

/// A value written with a dictionary that is not loaded: it has no
/// counters to go to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DictionaryNotLoaded;

/// Counts a value written as `kind` (with the loaded dictionary
/// `dictionary` for [`TrafficKind::ZstdDictionary`], whose own counters
/// take it), from `raw` bytes to `stored`.
pub fn note_written(
    kind: TrafficKind,
    dictionary: u32,
    raw: usize,
    stored: usize,
) -> Result<(), DictionaryNotLoaded> {
    if kind == TrafficKind::ZstdDictionary {
        let d = zstd::lookup(dictionary).ok_or(DictionaryNotLoaded)?;
        d.counters().written.add(raw, stored);
        return Ok(());
    }
    if let Some((_, counted)) = counters::plain_traffic()
        .into_iter()
        .find(|(k, _)| *k == kind)
    {
        counted.written.add(raw, stored);
    }
    Ok(())
}

/// Calls `f` with each row of traffic: the kinds without a dictionary,
/// then each loaded dictionary by ID.
pub fn each_traffic(mut f: impl FnMut(TrafficKind, u32, &ValueCounters)) {
    for (kind, counted) in counters::plain_traffic() {
        f(kind, 0, counted);
    }
    for d in zstd::registered_dictionaries() {
        f(TrafficKind::ZstdDictionary, d.id(), d.counters());
    }
}
