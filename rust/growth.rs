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
}
