//! State kept once per thread (compressors, decompressors and their
//! contexts), made on first use and reused, never made per call.

use core::cell::RefCell;
use std::thread::LocalKey;

/// Runs `f` with this thread's value in `slot`, made by `make` on first use.
/// When the slot cannot be used (the thread is being torn down, or the value
/// is already in use further up this thread's stack), a temporary value from
/// `make` serves instead. `None` when `make` cannot make one (no memory).
pub fn with<T: 'static, R>(
    slot: &'static LocalKey<RefCell<Option<T>>>,
    make: impl Fn() -> Option<T>,
    f: impl FnOnce(&mut T) -> R,
) -> Option<R> {
    with_in(slot, |value| Some(value), make, f)
}

/// [`with`] for a thread-local holding several values (one per level, say):
/// `pick` chooses the value's place in it, `None` when there is none.
pub fn with_in<S: 'static, T, R>(
    slots: &'static LocalKey<RefCell<S>>,
    pick: impl FnOnce(&mut S) -> Option<&mut Option<T>>,
    make: impl Fn() -> Option<T>,
    f: impl FnOnce(&mut T) -> R,
) -> Option<R> {
    let mut f = Some(f);
    let cached = slots.try_with(|cell| {
        let mut all = cell.try_borrow_mut().ok()?;
        let value = pick(&mut all)?;
        if value.is_none() {
            *value = make();
        }
        let value = value.as_mut()?;
        let f = f.take()?;
        Some(f(value))
    });
    if let Ok(Some(r)) = cached {
        return Some(r);
    }
    // `f` is only taken on the path that returned above.
    let f = f.take()?;
    let mut temporary = make()?;
    Some(f(&mut temporary))
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static COUNTER: RefCell<Option<u32>> = const { RefCell::new(None) };
    }

    #[test]
    fn made_once_then_reused_and_a_temporary_when_in_use() {
        let made = std::cell::Cell::new(0);
        let make = || {
            made.set(made.get() + 1);
            Some(0)
        };
        assert_eq!(
            with(&COUNTER, make, |v| {
                *v += 1;
                *v
            }),
            Some(1)
        );
        assert_eq!(
            with(&COUNTER, make, |v| {
                *v += 1;
                *v
            }),
            Some(2)
        );
        assert_eq!(made.get(), 1);
        // Nested use: the outer call holds the slot, the inner gets a fresh one.
        let inner = with(&COUNTER, make, |_| with(&COUNTER, make, |v| *v));
        assert_eq!(inner, Some(Some(0)));
        assert_eq!(made.get(), 2);
        assert_eq!(
            with(&COUNTER, || None::<u32>, |v| *v),
            Some(2),
            "made already"
        );
    }
}
