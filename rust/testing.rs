//! Test support shared by the parser's unit tests (`rust/parser.rs`) and the
//! `parser_split` fuzz target (`fuzz/fuzz_targets/parser_split.rs`): a
//! normalized, owned form of the parser's events and a driver that feeds a
//! response to a [`ResponseParser`] in chunks, as a real caller does, checking
//! every promise of [`ResponseParser::next`] on the way.
//!
//! It also holds the small deterministic PRNG the engine's tests share, and
//! the deflate and zstd functions into a `Vec` that its tests and fuzz targets use.
//!
//! Compiled only for the crate's own tests and with the `testing` feature
//! (which the fuzz crate turns on); never part of the release library.

use core::mem::MaybeUninit;

use crate::deflate::{
    gunzip, gunzip_size_hint, gzip, gzip_bound, uncompress, uncompress_size_hint, zlib, zlib_bound,
    DeflateError,
};
use crate::parser::{
    Event, ParseError, ParseStatus, ResponseParser, DEFAULT_MAX_VALUE_LEN, MAX_KEY_LEN,
    MAX_LINE_LEN,
};

/// An event with its data owned; consecutive `Data` events are merged so
/// that responses read in different chunks compare equal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Norm {
    Value(Vec<u8>, u32, u64, Option<u64>),
    Data(Vec<u8>),
    ValueEnd,
    End,
    Err(ParseError),
    /// Input ran out without an error: the bytes left unconsumed, whether
    /// END was seen, and `data_remaining()`.
    Rest(Vec<u8>, bool, u64),
}

impl From<Event<'_>> for Norm {
    /// The event with its bytes owned.
    fn from(ev: Event<'_>) -> Norm {
        match ev {
            Event::Value {
                key,
                flags,
                len,
                cas,
            } => Norm::Value(key.to_vec(), flags, len, cas),
            Event::Data(d) => Norm::Data(d.to_vec()),
            Event::ValueEnd => Norm::ValueEnd,
            Event::End => Norm::End,
        }
    }
}

/// Feeds `input` to a fresh `ResponseParser::new(max)` in chunks whose sizes
/// `chunk` picks (clamped to 1 and to what is left), as a real caller would:
/// unconsumed bytes are kept and the next chunk appended. Returns the
/// normalized events, ending with `Norm::Err` or `Norm::Rest`.
///
/// Panics when the parser breaks a promise: `Partial` consumes nothing,
/// leaves the parser as it was, never happens with `MAX_LINE_LEN` or more
/// bytes buffered (so a caller never holds more than that of an unfinished
/// line) nor inside a value's data; `Complete` consumes 1..=len bytes; events
/// agree with the bytes they came from (`Data` is never empty, a `VALUE`
/// line is well-formed and within the limits); errors are sticky until
/// `reset`, which makes the parser usable again.
pub fn feed(input: &[u8], max: u64, chunk: impl FnMut() -> usize) -> Vec<Norm> {
    feed_with(input, max, chunk, Data::Events)
}

/// How a driver hands a value's data bytes to the parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Data {
    /// Through [`ResponseParser::next`], which returns them as `Data` events.
    Events,
    /// As a caller that reads them straight into its own buffer does: only
    /// their count, through [`ResponseParser::take_data`].
    Taken,
}

/// [`feed`], handing the data bytes to the parser as `data` says; the
/// events are the same either way (a `Taken` run still records the bytes
/// taken as `Norm::Data`).
pub fn feed_with(
    input: &[u8],
    max: u64,
    mut chunk: impl FnMut() -> usize,
    data: Data,
) -> Vec<Norm> {
    let mut p = ResponseParser::new(max);
    let limit = if max == 0 { DEFAULT_MAX_VALUE_LEN } else { max };
    let mut out: Vec<Norm> = Vec::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut pos = 0;
    loop {
        loop {
            let before = p.clone();
            let remaining = p.data_remaining();
            if data == Data::Taken && remaining > 0 && !pending.is_empty() {
                // Never more than the value has left: refused, nothing changed.
                if let Some(over) = remaining.checked_add(1) {
                    assert!(p.take_data(over).is_err());
                    assert_eq!(
                        format!("{p:?}"),
                        format!("{before:?}"),
                        "a refused take changed the parser"
                    );
                }
                let n = usize::try_from(remaining).map_or(pending.len(), |r| r.min(pending.len()));
                assert_eq!(p.take_data(n as u64), Ok(()));
                assert_eq!(p.data_remaining(), remaining - n as u64);
                match out.last_mut() {
                    Some(Norm::Data(acc)) => acc.extend_from_slice(&pending[..n]),
                    _ => out.push(Norm::Data(pending[..n].to_vec())),
                }
                pending.drain(..n);
                continue;
            }
            match p.next(&pending) {
                Ok(ParseStatus::Partial) => {
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
                Ok(ParseStatus::Complete((n, ev))) => {
                    assert!(
                        n >= 1 && n <= pending.len(),
                        "consumed {n} of {}",
                        pending.len()
                    );
                    match ev {
                        Event::Value { key, len, .. } => {
                            assert_eq!(remaining, 0);
                            assert!(!key.is_empty() && key.len() <= MAX_KEY_LEN);
                            assert!(!key.iter().any(|&b| matches!(b, 0 | b'\n' | b' ')));
                            assert_eq!(&pending[..6], b"VALUE ");
                            assert_eq!(&pending[6..6 + key.len()], key);
                            assert!(n <= MAX_LINE_LEN, "VALUE line of {n} bytes");
                            assert_eq!(&pending[n - 2..n], b"\r\n");
                            assert!(len <= limit, "len {len} over the limit {limit}");
                            assert_eq!(p.data_remaining(), len);
                        }
                        Event::Data(d) => {
                            assert!(!d.is_empty(), "empty Data event");
                            assert_eq!(d.len(), n);
                            assert_eq!(d, &pending[..n]);
                            assert!(n as u64 <= remaining, "Data past the value's end");
                            assert_eq!(p.data_remaining(), remaining - n as u64);
                        }
                        Event::ValueEnd => {
                            assert_eq!(n, 2);
                            assert_eq!(&pending[..2], b"\r\n");
                        }
                        Event::End => {
                            assert_eq!(n, 5);
                            assert_eq!(&pending[..n], b"END\r\n");
                            assert!(p.is_complete());
                        }
                    }
                    match (out.last_mut(), Norm::from(ev)) {
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
                    assert_eq!(
                        p.next(b"END\r\n"),
                        Ok(ParseStatus::Complete((5, Event::End)))
                    );
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

/// The whole input in one buffer.
pub fn parse(input: &[u8], max: u64) -> Vec<Norm> {
    feed(input, max, || usize::MAX)
}

/// A small deterministic PRNG (xorshift64*), so test failures reproduce.
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 pseudo-random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// `n` pseudo-random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| (self.next_u64() >> 56) as u8).collect()
    }
}

// ----------------------------------------------------- deflate into a Vec

/// The signature of [`gzip`](deflate::gzip) and [`zlib`](deflate::zlib).
pub type CompressFn = fn(&[u8], i32, &mut [MaybeUninit<u8>]) -> Result<usize, DeflateError>;
/// The signature of [`gunzip`](deflate::gunzip) and [`uncompress`](deflate::uncompress).
pub type DecompressFn = fn(&[u8], &mut [MaybeUninit<u8>], usize) -> Result<usize, DeflateError>;

/// Compress into a new `Vec` of the bound's capacity.
fn compress_vec(
    input: &[u8],
    level: i32,
    bound: usize,
    f: CompressFn,
) -> Result<Vec<u8>, DeflateError> {
    let mut v = Vec::new();
    v.try_reserve_exact(bound)
        .map_err(|_| DeflateError::NoMemory)?;
    let n = f(input, level, v.spare_capacity_mut())?;
    // SAFETY: on Ok(n), f (gzip or zlib) has initialised the first n bytes of
    // the spare capacity, and n <= capacity.
    unsafe { v.set_len(n) };
    Ok(v)
}

/// Decompress into a new `Vec`, running the `NeedSpace` growth loop.
fn decompress_vec(
    input: &[u8],
    max_out: usize,
    hint: usize,
    f: DecompressFn,
) -> Result<Vec<u8>, DeflateError> {
    // SAFETY: on Ok(n), f (gunzip or uncompress) has initialised the first n
    // bytes of the buffer it was given, and n is at most its length.
    unsafe { crate::growth::decode_to_vec(hint, max_out, |buf| f(input, buf, max_out)) }
}

/// [`gzip`](deflate::gzip) into a new `Vec`.
pub fn gzip_vec(input: &[u8], level: i32) -> Result<Vec<u8>, DeflateError> {
    compress_vec(input, level, gzip_bound(input.len()), gzip)
}

/// [`zlib`](deflate::zlib) into a new `Vec`.
pub fn zlib_vec(input: &[u8], level: i32) -> Result<Vec<u8>, DeflateError> {
    compress_vec(input, level, zlib_bound(input.len()), zlib)
}

/// [`gunzip`](deflate::gunzip) into a new `Vec`, at most `max_out` bytes.
pub fn gunzip_vec(input: &[u8], max_out: usize) -> Result<Vec<u8>, DeflateError> {
    decompress_vec(input, max_out, gunzip_size_hint(input, max_out), gunzip)
}

/// [`uncompress`](deflate::uncompress) into a new `Vec`, at most `max_out` bytes.
pub fn uncompress_vec(input: &[u8], max_out: usize) -> Result<Vec<u8>, DeflateError> {
    decompress_vec(
        input,
        max_out,
        uncompress_size_hint(input, max_out),
        uncompress,
    )
}

/// Drives a decoder that writes into its caller's buffer through the "need
/// space" protocol ([`crate::growth`]) from a 10-byte buffer: calls
/// `decode(capacity)` with each capacity it asks for, checking that every
/// ask grows and stays within `max_out`, until it succeeds. Returns its
/// output and how many times it asked for more.
#[cfg(test)]
pub(crate) fn decode_from_a_tiny_buffer<T, E>(
    max_out: usize,
    mut decode: impl FnMut(usize) -> Result<T, E>,
) -> (T, usize)
where
    E: crate::growth::AsksForSpace + core::fmt::Debug,
{
    let mut cap = 10;
    let mut steps = 0;
    loop {
        match decode(cap) {
            Ok(out) => return (out, steps),
            Err(e) => {
                let next = e.need_space().unwrap_or_else(|| panic!("{e:?}"));
                assert!(next > cap && next <= max_out, "{cap} -> {next}");
                cap = next;
                steps += 1;
            }
        }
    }
}
