//! What this process wrote and read as cache values, counted: per
//! dictionary (each zstd dictionary holds its own [`ValueCounters`]), per format
//! without one ([`ZSTD_PLAIN`], [`GZIP`], [`ZLIB`]), and the events that
//! made a value a miss or left it uncompressed ([`Event`]).
//!
//! Counting is a few relaxed atomic additions per value: no lock, and
//! nothing a reader waits for. The counts are process-wide (threads add to
//! the same ones) and only grow; a forked child starts from its parent's.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::sniff::Format;

/// Values that went one way, with their bytes before and after compression.
#[derive(Debug, Default)]
pub struct Traffic {
    values: AtomicU64,
    raw_bytes: AtomicU64,
    stored_bytes: AtomicU64,
}

/// A [`Traffic`]'s counts at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrafficCounts {
    /// Values.
    pub values: u64,
    /// Their bytes uncompressed.
    pub raw_bytes: u64,
    /// Their bytes compressed, as memcached holds them.
    pub stored_bytes: u64,
}

impl Traffic {
    /// No values yet.
    pub const fn new() -> Traffic {
        Traffic {
            values: AtomicU64::new(0),
            raw_bytes: AtomicU64::new(0),
            stored_bytes: AtomicU64::new(0),
        }
    }

    /// One more value, of `raw` bytes uncompressed and `stored` compressed.
    ///
    /// ```
    /// let t = cmrx::counters::Traffic::new();
    /// t.add(1000, 300);
    /// t.add(500, 200);
    /// let c = t.counts();
    /// assert_eq!((c.values, c.raw_bytes, c.stored_bytes), (2, 1500, 500));
    /// ```
    #[inline]
    pub fn add(&self, raw: usize, stored: usize) {
        // Relaxed: each count is a tally on its own; a snapshot taken while
        // values are counted may see one count a value ahead of another.
        self.values.fetch_add(1, Ordering::Relaxed);
        self.raw_bytes.fetch_add(raw as u64, Ordering::Relaxed);
        self.stored_bytes
            .fetch_add(stored as u64, Ordering::Relaxed);
    }

    /// The counts now.
    pub fn counts(&self) -> TrafficCounts {
        TrafficCounts {
            values: self.values.load(Ordering::Relaxed),
            raw_bytes: self.raw_bytes.load(Ordering::Relaxed),
            stored_bytes: self.stored_bytes.load(Ordering::Relaxed),
        }
    }
}

/// What went each way in one format (with one dictionary, or none).
#[derive(Debug, Default)]
pub struct ValueCounters {
    /// Values compressed and kept for memcached.
    pub written: Traffic,
    /// Values decoded from what memcached held.
    pub read: Traffic,
}

impl ValueCounters {
    /// Nothing counted yet.
    pub const fn new() -> ValueCounters {
        ValueCounters {
            written: Traffic::new(),
            read: Traffic::new(),
        }
    }
}

/// zstd frames made or read without a dictionary.
pub static ZSTD_PLAIN: ValueCounters = ValueCounters::new();
/// gzip values.
pub static GZIP: ValueCounters = ValueCounters::new();
/// zlib values.
pub static ZLIB: ValueCounters = ValueCounters::new();

abi_codes! {
    /// Whose values a row of traffic counts, and what a value written is
    /// counted as: a format of [`Format`], by its code, or zstd with a
    /// dictionary. Which counter each kind of traffic goes to is
    /// [`crate::traffic`]'s.
    pub enum TrafficKind {
        /// zstd with the dictionary whose ID the row gives.
        ZstdDictionary = 0 => "CMRX_TRAFFIC_ZSTD_DICTIONARY",
        /// zstd without a dictionary.
        ZstdPlain = Format::Zstd as i32 => "CMRX_TRAFFIC_ZSTD",
        /// gzip.
        Gzip = Format::Gzip as i32 => "CMRX_TRAFFIC_GZIP",
        /// zlib.
        Zlib = Format::Zlib as i32 => "CMRX_TRAFFIC_ZLIB",
    }
}

/// The counters of the kinds without a dictionary, with their kinds.
pub fn plain_traffic() -> [(TrafficKind, &'static ValueCounters); 3] {
    [
        (TrafficKind::ZstdPlain, &ZSTD_PLAIN),
        (TrafficKind::Gzip, &GZIP),
        (TrafficKind::Zlib, &ZLIB),
    ]
}

abi_codes! {
    /// What befell a value, beside being written or read: why a compressed
    /// value was a miss, or why one was left uncompressed.
    pub enum Event {
        /// A miss: a zstd frame named a dictionary this process lacks.
        UnknownDictionary = 0 => "CMRX_EVENT_UNKNOWN_DICTIONARY",
        /// A miss: corrupt, truncated, or not its magic number's format.
        Undecodable = 1 => "CMRX_EVENT_UNDECODABLE",
        /// A miss: it would decode past the reader's cap.
        TooBig = 2 => "CMRX_EVENT_TOO_BIG",
        /// Left alone by the compressor: JPEG, PNG, gzip, zstd, ...
        AlreadyCompressed = 3 => "CMRX_EVENT_ALREADY_COMPRESSED",
        /// Left alone by the compressor: it did not shrink enough.
        Incompressible = 4 => "CMRX_EVENT_INCOMPRESSIBLE",
        /// Left uncompressed by the client: under its threshold.
        TooSmall = 5 => "CMRX_EVENT_TOO_SMALL",
    }
}

/// How many kinds of [`Event`] there are.
pub const EVENTS: usize = Event::ALL.len();

// A named constant, as the array's repeated element (inline `const`
// blocks need a newer Rust than the crate's rust-version); each element is
// a separate atomic.
#[allow(clippy::declare_interior_mutable_const)]
const NO_EVENTS: AtomicU64 = AtomicU64::new(0);
static EVENT_COUNTS: [AtomicU64; EVENTS] = [NO_EVENTS; EVENTS];

impl Event {
    /// Counts one more of it.
    ///
    /// ```
    /// use cmrx::counters::{event_counts, Event};
    /// let before = event_counts()[Event::TooSmall as usize];
    /// Event::TooSmall.note();
    /// assert!(event_counts()[Event::TooSmall as usize] > before);
    /// ```
    #[inline]
    pub fn note(self) {
        EVENT_COUNTS[self as usize].fetch_add(1, Ordering::Relaxed);
    }
}

/// How many of each [`Event`] so far, indexed by its code.
pub fn event_counts() -> [u64; EVENTS] {
    std::array::from_fn(|i| EVENT_COUNTS[i].load(Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_numbered_by_their_index() {
        for (i, (event, _)) in Event::ALL.iter().enumerate() {
            assert_eq!(*event as usize, i);
            assert_eq!(Event::from_code(i as i32), Some(*event));
        }
    }

    #[test]
    fn traffic_adds_up() {
        let t = Traffic::new();
        for n in 1..=10 {
            t.add(n * 10, n);
        }
        assert_eq!(
            t.counts(),
            TrafficCounts {
                values: 10,
                raw_bytes: 550,
                stored_bytes: 55
            }
        );
    }
}
