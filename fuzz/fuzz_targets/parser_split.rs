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
#![no_main]

use cmrx::parser::{Event, ParseError, ResponseParser, Status, MAX_KEY_LEN, MAX_LINE_LEN};
use libfuzzer_sys::fuzz_target;

/// An event with owned bytes; consecutive data chunks merged.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Norm {
    Value(Vec<u8>, u32, u64, Option<u64>),
    Data(Vec<u8>),
    ValueEnd,
    End,
    Err(ParseError),
    /// Input ran out without an error: bytes left unconsumed, whether END was
    /// seen, and `data_remaining()`.
    Rest(Vec<u8>, bool, u64),
}

/// Feeds `input` to a fresh parser in chunks of the sizes `chunk` returns.
fn feed(input: &[u8], max: u64, mut chunk: impl FnMut() -> usize) -> Vec<Norm> {
    let mut p = ResponseParser::new(max);
    let limit = if max == 0 {
        cmrx::parser::DEFAULT_MAX_VALUE_LEN
    } else {
        max
    };
    let mut out: Vec<Norm> = Vec::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut pos = 0;
    loop {
        loop {
            let before = p.clone();
            let remaining = p.data_remaining();
            match p.next(&pending) {
                Ok(Status::Partial) => {
                    // ResponseParser has no PartialEq; its Debug shows all of it.
                    assert_eq!(
                        format!("{p:?}"),
                        format!("{before:?}"),
                        "Partial changed the parser"
                    );
                    assert!(
                        pending.len() < MAX_LINE_LEN,
                        "Partial with {} bytes buffered (MAX_LINE_LEN {MAX_LINE_LEN})",
                        pending.len()
                    );
                    assert!(remaining == 0 || pending.is_empty(), "Partial inside data");
                    break;
                }
                Ok(Status::Complete((n, ev))) => {
                    assert!(
                        n >= 1 && n <= pending.len(),
                        "consumed {n} of {}",
                        pending.len()
                    );
                    let norm = match ev {
                        Event::Value {
                            key,
                            flags,
                            len,
                            cas,
                        } => {
                            assert_eq!(remaining, 0);
                            assert!(!key.is_empty() && key.len() <= MAX_KEY_LEN);
                            assert!(key.iter().all(|&b| b > b' ' && b != 0x7f));
                            assert_eq!(&pending[..6], b"VALUE ");
                            assert_eq!(&pending[6..6 + key.len()], key);
                            assert!(n <= MAX_LINE_LEN, "VALUE line of {n} bytes");
                            assert_eq!(&pending[n - 2..n], b"\r\n");
                            assert!(len <= limit, "len {len} over the limit {limit}");
                            assert_eq!(p.data_remaining(), len);
                            Norm::Value(key.to_vec(), flags, len, cas)
                        }
                        Event::Data(d) => {
                            assert!(!d.is_empty(), "empty Data event");
                            assert_eq!(d.len(), n);
                            assert_eq!(d, &pending[..n]);
                            assert!(n as u64 <= remaining, "Data past the value's end");
                            assert_eq!(p.data_remaining(), remaining - n as u64);
                            Norm::Data(d.to_vec())
                        }
                        Event::ValueEnd => {
                            assert_eq!(n, 2);
                            assert_eq!(&pending[..2], b"\r\n");
                            Norm::ValueEnd
                        }
                        Event::End => {
                            assert_eq!(&pending[..n], b"END\r\n");
                            assert!(p.is_complete());
                            Norm::End
                        }
                    };
                    match (out.last_mut(), norm) {
                        (Some(Norm::Data(acc)), Norm::Data(d)) => acc.extend_from_slice(&d),
                        (_, norm) => out.push(norm),
                    }
                    pending.drain(..n);
                }
                Err(e) => {
                    // Sticky until reset, whatever is offered next.
                    assert_eq!(p.next(&pending), Err(e));
                    assert_eq!(p.next(b""), Err(e));
                    assert_eq!(p.next(b"END\r\n"), Err(e));
                    assert!(!p.is_complete());
                    assert!((1..=12).contains(&e.code()));
                    // reset makes it usable again.
                    p.reset();
                    assert_eq!(p.next(b"END\r\n"), Ok(Status::Complete((5, Event::End))));
                    out.push(Norm::Err(e));
                    return out;
                }
            }
        }
        if pos == input.len() {
            out.push(Norm::Rest(pending, p.is_complete(), p.data_remaining()));
            return out;
        }
        let k = chunk().clamp(1, input.len() - pos);
        pending.extend_from_slice(&input[pos..pos + k]);
        pos += k;
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&max, rest)) = data.split_first() else {
        return;
    };
    let Some((&k, rest)) = rest.split_first() else {
        return;
    };
    let k = usize::from(k & 7).min(rest.len());
    let (sizes, input) = rest.split_at(k);

    let whole = feed(input, u64::from(max), || usize::MAX);

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
