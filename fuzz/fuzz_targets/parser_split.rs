//! Differential fuzzing of the get-response parser: however the bytes of a
//! response are split into reads, the events must be the same.
//!
//! Input layout (the seeds in fuzz/seeds/parser_split/ follow it):
//!
//! ```text
//! byte 0        value-length limit: 0 = the default (1 GiB), else this many
//!               bytes (1..=255), so that TooLarge is reachable
//! byte 1        k = byte & 7: how many chunk sizes follow
//! bytes 2..2+k  chunk sizes (0 means 1); used in turn, cycling. k = 0 feeds
//!               the response one byte at a time
//! the rest      the response bytes
//! ```
//!
//! The response is parsed once from one buffer and once fed in those chunks,
//! keeping unconsumed bytes and appending the next chunk as a real caller
//! does. The normalized event lists (value headers, data concatenated per
//! value, value ends, END, the error, and what is left over at the end) must
//! be identical. Along the way every promise of `ResponseParser::next` is
//! checked: `Partial` consumes nothing and leaves the parser as it was and
//! never happens with `MAX_LINE_LEN` or more bytes buffered (so a caller never
//! holds more than that of an unfinished line); `Complete` consumes 1..=len
//! bytes; events agree with the bytes they came from; errors are sticky.
//! The driver that checks all this, `cmrx::testing::feed` (rust/testing.rs,
//! behind the engine's `testing` feature), is the one the parser's unit tests
//! use.
#![no_main]

use cmrx::testing::{feed, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&max, rest)) = data.split_first() else {
        return;
    };
    let Some((&k, rest)) = rest.split_first() else {
        return;
    };
    let k = usize::from(k & 7).min(rest.len());
    let (sizes, input) = rest.split_at(k);

    let whole = parse(input, u64::from(max));

    let mut i = 0;
    let split = feed(input, u64::from(max), || {
        if sizes.is_empty() {
            return 1;
        }
        let s = sizes[i % sizes.len()];
        i += 1;
        usize::from(s).max(1)
    });
    assert_eq!(split, whole, "chunk sizes {sizes:?}");
});
