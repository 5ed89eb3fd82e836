//! When a warning is due: the first time its text is reported, and again
//! once an interval has passed since the last time, never once per value.
//! A reader that meets a value made with a dictionary this process lacks
//! warns once per interval and dictionary, not at every read of a cache full
//! of them; nor once per process, which would hide a problem that lasts. A
//! dictionary set that cannot be read again is said the same way. The
//! callers' clock is theirs (seconds), so tests move time.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

/// Seconds between two reports of one text, unless the caller says
/// otherwise (`$Cache::Memcached::RustXS::Zstd::WarnInterval`'s default).
pub const DEFAULT_WARN_INTERVAL: u64 = 60;

/// When each text was last reported in this process, in the callers'
/// seconds.
static REPORTED: Mutex<BTreeMap<Vec<u8>, u64>> = Mutex::new(BTreeMap::new());

/// Whether reporting `text` is due at `now`: the first time, and again once
/// `interval` has passed since the last report (an interval of 0: every
/// time). A `true` counts as reported.
///
/// ```
/// use cmrx::warning_rate::report_due;
/// assert!(report_due(b"dictionary 4000001 missing", 100, 60));
/// assert!(!report_due(b"dictionary 4000001 missing", 159, 60));
/// assert!(report_due(b"dictionary 4000001 missing", 160, 60));
/// assert!(report_due(b"dictionary 4000002 missing", 159, 60));
/// ```
pub fn report_due(text: &[u8], now: u64, interval: u64) -> bool {
    let mut reported = REPORTED.lock().unwrap_or_else(PoisonError::into_inner);
    match reported.get(text) {
        Some(&last) if now.saturating_sub(last) < interval => false,
        Some(_) | None => {
            reported.insert(text.to_vec(), now);
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_text_is_reported_once_per_interval_across_threads() {
        // Texts no other test uses: the reports are the process's.
        let texts: [&[u8]; 3] = [b"test 3000001", b"test 3000002", b"test 3000003"];
        let reports = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..10 {
                        for text in texts {
                            if report_due(text, 1000, 60) {
                                reports.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                });
            }
        });
        assert_eq!(reports.load(Ordering::Relaxed), texts.len(), "one each");
        assert!(
            !report_due(texts[0], 1059, 60),
            "not again within the interval"
        );
        assert!(report_due(texts[0], 1060, 60), "again once it has passed");
        assert!(report_due(b"test 3000004", 1000, 60), "another text is new");
        assert!(
            report_due(b"test 3000005", 1000, 0) && report_due(b"test 3000005", 1000, 0),
            "interval 0: every time"
        );
    }
}
