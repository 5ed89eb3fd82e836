//! Output capacities for decoders that write into the caller's buffer
//! (libdeflate, and libzstd decoding straight into it), when the output's
//! size is not known up front: a first guess, then on "no space" a retry
//! with twice as much, never past the caller's cap (`max_out`) nor past what
//! the input can expand to. A decompression bomb so costs at most `max_out`
//! bytes of memory and about twice that in work.
//!
//! ```text
//! first_capacity ──► decode ──► no space ──► next_capacity ──► decode ...
//!                                    └─ None: over max_out (TooBig)
//! ```
//!
//! The decoders answer "no space" with the capacity to try next
//! (`NeedSpace(n)`); [`decode_to_vec`] is the loop that follows those
//! answers for the engine's own callers (the `*_vec` functions). The XS runs
//! the same loop once, in `decode_to_sv`, to grow a Perl scalar instead.

use core::mem::MaybeUninit;

/// The smallest capacity offered when nothing better is known.
pub const MIN_CAPACITY: usize = 64 << 10;

/// How far a format's compressed bytes can expand, for sizing output.
#[derive(Debug, Clone, Copy)]
pub struct Expansion {
    /// The most output bytes one input byte can become.
    pub per_input_byte: usize,
    /// Output bytes possible on top of that.
    pub slack: usize,
    /// The first guess at the output's size: this many times the input.
    pub guess_factor: usize,
}

impl Expansion {
    /// The most `in_len` compressed bytes can decompress to.
    pub fn max_output(self, in_len: usize) -> usize {
        in_len
            .saturating_mul(self.per_input_byte)
            .saturating_add(self.slack)
    }

    /// The capacity to try when nothing is known about the output size: a
    /// few times the input, at least [`MIN_CAPACITY`], never more than the
    /// input can expand to nor more than `max_out`.
    pub fn first_capacity(self, in_len: usize, max_out: usize) -> usize {
        in_len
            .saturating_mul(self.guess_factor)
            .max(MIN_CAPACITY)
            .min(self.max_output(in_len))
            .min(max_out)
    }

    /// The capacity to retry with after `tried` bytes were too few; `None`
    /// when `tried` already reached `max_out`: the output is over the cap.
    /// Always more than `tried` (so the retries end, at `max_out` at the
    /// latest) and never more than `max_out`.
    pub fn next_capacity(self, tried: usize, in_len: usize, max_out: usize) -> Option<usize> {
        if tried >= max_out {
            return None;
        }
        // tried < max_out, so tried + 1 <= max_out.
        Some(
            tried
                .saturating_mul(2)
                .max(self.first_capacity(in_len, max_out))
                .max(tried + 1)
                .min(max_out),
        )
    }
}

/// Implements [`AsksForSpace`] for an error enum with the variants
/// `NeedSpace(usize)`, `TooBig` and `NoMemory`, as every decoder's has.
macro_rules! asks_for_space {
    ($error:ty) => {
        impl $crate::growth::AsksForSpace for $error {
            fn need_space(&self) -> Option<usize> {
                match *self {
                    Self::NeedSpace(n) => Some(n),
                    _ => None,
                }
            }
            fn too_big() -> Self {
                Self::TooBig
            }
            fn no_memory() -> Self {
                Self::NoMemory
            }
        }
    };
}

/// What [`decode_to_vec`] needs of the error type of a decoder that writes
/// into its caller's buffer: whether an error asks for more space, and the
/// two errors the loop makes itself.
pub trait AsksForSpace: Sized {
    /// `Some(n)` when the buffer was too small and `n` bytes are to be
    /// tried next (its `NeedSpace(n)`).
    fn need_space(&self) -> Option<usize>;
    /// The output exceeds `max_out`.
    fn too_big() -> Self;
    /// No memory for the output buffer.
    fn no_memory() -> Self;
}

/// Runs `decode` on ever larger buffers, from `first` bytes, as long as it
/// asks for more room, and returns its output in a `Vec`. A capacity asked
/// for that is not above the one just tried, or is above `max_out`, ends
/// the loop with `too_big` (decoders never ask for either; this guards the
/// promise). The buffer is allocated fallibly: `no_memory` if that fails.
///
/// # Safety
/// When `decode` returns `Ok(n)`, `n` is at most the length of the buffer
/// it was given and it has initialised the first `n` bytes of it.
pub unsafe fn decode_to_vec<E: AsksForSpace>(
    first: usize,
    max_out: usize,
    mut decode: impl FnMut(&mut [MaybeUninit<u8>]) -> Result<usize, E>,
) -> Result<Vec<u8>, E> {
    let mut cap = first.min(max_out);
    loop {
        let mut v = Vec::new();
        v.try_reserve_exact(cap).map_err(|_| E::no_memory())?;
        let spare = v.spare_capacity_mut();
        let spare_len = spare.len().min(cap);
        match decode(&mut spare[..spare_len]) {
            Ok(n) => {
                // SAFETY: decode initialised the first n bytes of the buffer
                // it was given, and n <= spare_len (the caller's contract);
                // that buffer is a prefix of the spare capacity.
                unsafe { v.set_len(n) };
                return Ok(v);
            }
            Err(e) => match e.need_space() {
                Some(next) if next > cap && next <= max_out => cap = next,
                Some(_) => return Err(E::too_big()),
                None => return Err(e),
            },
        }
    }
}

/// For the decoders' tests: follows the decoder's "no space" answers by
/// hand from `first` bytes, as [`decode_to_vec`] does, checking its promises
/// at every step (each capacity asked for is above the one tried and at most
/// `max_out`, and the asking ends); returns the result and the capacities
/// tried.
#[cfg(test)]
pub fn drive_checked<E: AsksForSpace>(
    first: usize,
    max_out: usize,
    mut decode: impl FnMut(&mut [MaybeUninit<u8>]) -> Result<usize, E>,
) -> (Result<Vec<u8>, E>, Vec<usize>) {
    assert!(first <= max_out, "hint {first} above max_out {max_out}");
    let mut cap = first;
    let mut tried = Vec::new();
    loop {
        tried.push(cap);
        assert!(tried.len() < 80, "growth loop does not end: {tried:?}");
        let mut buf: Vec<u8> = Vec::with_capacity(cap);
        match decode(&mut buf.spare_capacity_mut()[..cap]) {
            Ok(n) => {
                assert!(n <= cap);
                // SAFETY: Ok(n) means the decoder wrote the first n bytes.
                unsafe { buf.set_len(n) };
                return (Ok(buf), tried);
            }
            Err(e) => match e.need_space() {
                Some(next) => {
                    assert!(next > cap, "NeedSpace({next}) after {cap}");
                    assert!(next <= max_out, "NeedSpace({next}) above max_out {max_out}");
                    cap = next;
                }
                None => return (Err(e), tried),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const E: Expansion = Expansion {
        per_input_byte: 1032,
        slack: 1024,
        guess_factor: 4,
    };

    #[test]
    fn retries_double_and_end_at_the_cap() {
        let max_out = 10 << 20;
        let mut cap = E.first_capacity(100, max_out);
        assert_eq!(cap, MIN_CAPACITY.min(E.max_output(100)));
        let mut steps = 0;
        while let Some(next) = E.next_capacity(cap, 100, max_out) {
            assert!(next > cap && next <= max_out);
            cap = next;
            steps += 1;
        }
        assert_eq!(cap, max_out);
        assert!(steps < 64);
        assert_eq!(E.next_capacity(max_out + 5, 100, max_out), None);
        assert_eq!(E.first_capacity(100, 10), 10, "never above the cap");
        assert_eq!(E.max_output(usize::MAX), usize::MAX, "saturates");
    }

    #[derive(Debug, PartialEq)]
    enum TestError {
        NeedSpace(usize),
        TooBig,
        NoMemory,
        Bad,
    }

    asks_for_space!(TestError);

    /// A decoder of `len` bytes of 7s that asks for room the way the real
    /// ones do; the capacities it was given.
    fn sevens(
        len: usize,
        max_out: usize,
        first: usize,
    ) -> (Result<Vec<u8>, TestError>, Vec<usize>) {
        let mut tried = Vec::new();
        // SAFETY: on Ok(len) the closure has written the first len bytes.
        let got = unsafe {
            decode_to_vec(first, max_out, |buf| {
                tried.push(buf.len());
                if buf.len() < len {
                    return Err(E
                        .next_capacity(buf.len(), 100, max_out)
                        .map_or(TestError::TooBig, TestError::NeedSpace));
                }
                for b in &mut buf[..len] {
                    b.write(7);
                }
                Ok(len)
            })
        };
        (got, tried)
    }

    #[test]
    fn the_loop_follows_need_space_up_to_the_cap() {
        let (got, tried) = sevens(300_000, 1 << 20, 1000);
        assert_eq!(got, Ok(vec![7; 300_000]));
        assert_eq!(
            tried,
            [
                1000,
                MIN_CAPACITY,
                2 * MIN_CAPACITY,
                4 * MIN_CAPACITY,
                8 * MIN_CAPACITY
            ]
        );
        let (got, tried) = sevens(5, 1 << 20, 5);
        assert_eq!(
            (got, tried),
            (Ok(vec![7; 5]), vec![5]),
            "a right first guess is one call"
        );
        let (got, tried) = sevens(2_000_000, 1 << 20, 0);
        assert_eq!(got, Err(TestError::TooBig));
        assert_eq!(tried.last(), Some(&(1 << 20)), "the last try is the cap");
        let (got, tried) = sevens(100, 50, 1000);
        assert_eq!(
            (got, tried),
            (Err(TestError::TooBig), vec![50]),
            "the first try is capped too"
        );
    }

    #[test]
    fn the_loop_guards_the_decoders_promises() {
        for bad in [0, 64, 1 << 21] {
            // SAFETY: the closure never returns Ok.
            let got = unsafe { decode_to_vec(64, 1 << 20, |_| Err(TestError::NeedSpace(bad))) };
            assert_eq!(
                got,
                Err(TestError::TooBig),
                "NeedSpace({bad}) after 64 bytes, cap 1 MiB"
            );
        }
        // SAFETY: the closure never returns Ok.
        let got = unsafe { decode_to_vec(64, 1 << 20, |_| Err(TestError::Bad)) };
        assert_eq!(got, Err(TestError::Bad), "other errors pass through");
        // SAFETY: the closure never returns Ok.
        let got = unsafe { decode_to_vec(usize::MAX, usize::MAX, |_| Err(TestError::Bad)) };
        assert_eq!(got, Err(TestError::NoMemory), "no memory for the buffer");
    }
}
