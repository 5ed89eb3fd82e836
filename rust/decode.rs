//! Which decoder a compressed value gets, and decoding it with that one.
//!
//! A reader is told one of five [`DecodeFormat`]s. Three name a decoder
//! outright (gzip, zlib, zstd). The other two are policies for values whose
//! writer is not known, and pick the decoder by the value's first bytes
//! ([`DecodeFormat::decoder_for`]):
//!
//! * [`DecodeFormat::Cached`]: a value Cache::Memcached flagged compressed
//!   (`F_COMPRESS`). Its clients only ever write gzip there, and this
//!   distribution adds zstd: a zstd frame (its magic number `28 B5 2F FD`)
//!   is zstd, anything else gzip, so a value that is neither fails as gzip
//!   does, as Cache::Memcached's own `memGunzip` would fail it.
//! * [`DecodeFormat::Any`]: what Cache::Memcached::Fast's decompressor is
//!   handed (it never sees the flags) and what any client of any language
//!   may have stored: zstd or gzip (`1F 8B`) by their magic numbers, else
//!   zlib, whose header is only two bytes with check bits.
//!
//! The magic numbers are read once, by [`sniff::decoder_format`], for both
//! policies and for tools that ask which decoder a stored value needs. The
//! formats are [`sniff::Format`]'s, the engine's one list of them: the three
//! named decode formats have their codes.
//!
//! [`decode`] and [`size_hint`] then run deflate's or zstd's function for
//! that decoder, with their growth-loop contract (`NeedSpace`, `max_out`).

use core::fmt;
use core::mem::MaybeUninit;

use crate::counters;
use crate::deflate::{self, DeflateError};
use crate::sniff::{self, Format};
use crate::zstd;

abi_codes! {
    /// What a reader asks to decode (`cmrx_decode`'s `format`).
    pub enum DecodeFormat {
        /// gzip, as `Compress::Zlib::memGunzip` (the code of [`Format::Gzip`]).
        Gzip = Format::Gzip as i32 => "CMRX_DECODE_GZIP",
        /// zlib, as `Compress::Zlib::uncompress` (the code of [`Format::Zlib`]).
        Zlib = Format::Zlib as i32 => "CMRX_DECODE_ZLIB",
        /// One zstd frame (the code of [`Format::Zstd`]).
        Zstd = Format::Zstd as i32 => "CMRX_DECODE_ZSTD",
        /// A compressed memcached value as the Perl clients write them: a
        /// zstd frame (by its magic number), else gzip.
        Cached = 4 => "CMRX_DECODE_CACHED",
        /// zstd or gzip by their magic numbers, else zlib: what any client
        /// (of any language) may have stored.
        Any = 5 => "CMRX_DECODE_ANY",
    }
}

impl DecodeFormat {
    /// The format `input` is decoded as under this one (see the module
    /// docs): [`Format::Gzip`], [`Format::Zlib`] or [`Format::Zstd`].
    /// [`Cached`](Self::Cached) and [`Any`](Self::Any) look at its magic
    /// bytes ([`sniff::decoder_format`]), the others name their format
    /// whatever the bytes are.
    ///
    /// ```
    /// use cmrx::decode::DecodeFormat;
    /// use cmrx::sniff::Format;
    /// let zstd_frame = [0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x00, 0x01, 0x00, 0x00];
    /// assert_eq!(DecodeFormat::Cached.decoder_for(&zstd_frame), Format::Zstd);
    /// assert_eq!(DecodeFormat::Cached.decoder_for(b"x\x9c..."), Format::Gzip);
    /// assert_eq!(DecodeFormat::Any.decoder_for(b"x\x9c..."), Format::Zlib);
    /// assert_eq!(DecodeFormat::Gzip.decoder_for(&zstd_frame), Format::Gzip);
    /// ```
    #[inline]
    pub fn decoder_for(self, input: &[u8]) -> Format {
        match self {
            DecodeFormat::Gzip => Format::Gzip,
            DecodeFormat::Zlib => Format::Zlib,
            DecodeFormat::Zstd => Format::Zstd,
            // Anything but a zstd frame is what the Perl clients write: gzip.
            DecodeFormat::Cached => match sniff::decoder_format(input) {
                Some(Format::Zstd) => Format::Zstd,
                _ => Format::Gzip,
            },
            // zlib has the weakest magic number: what has none of the three
            // is tried as zlib too, whose decoder then refuses it.
            DecodeFormat::Any => sniff::decoder_format(input).unwrap_or(Format::Zlib),
        }
    }
}

/// Why [`decode`] produced no output: the error of the decoder it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// gzip's or zlib's.
    Deflate(DeflateError),
    /// zstd's (with the ID of a dictionary that is not registered).
    Zstd(zstd::Error),
}

impl fmt::Display for Error {
    /// The decoder's own message.
    ///
    /// ```
    /// use cmrx::decode::{decode, DecodeFormat};
    /// let mut out = vec![std::mem::MaybeUninit::new(0u8); 16];
    /// let e = decode(DecodeFormat::Zstd, b"not zstd", &mut out, 16).unwrap_err();
    /// assert_eq!(e.to_string(), "corrupt or truncated zstd data");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Deflate(e) => fmt::Display::fmt(e, f),
            Error::Zstd(e) => fmt::Display::fmt(e, f),
        }
    }
}

/// The decoder's error is this one's message, not a cause beneath it: no
/// `source`, so that a report does not say it twice.
impl std::error::Error for Error {}

impl From<DeflateError> for Error {
    fn from(e: DeflateError) -> Error {
        Error::Deflate(e)
    }
}

impl From<zstd::Error> for Error {
    fn from(e: zstd::Error) -> Error {
        Error::Zstd(e)
    }
}

/// What [`decode`] produced: `len` bytes at the front of the output, from
/// the first `input_used` bytes of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded {
    /// Bytes written to the front of the output buffer.
    pub len: usize,
    /// How much of the input the data took up: for gzip what `memGunzip`
    /// consumes ([`deflate::Inflated::input_used`]), for the others the whole
    /// input (zlib ignores bytes after its stream, zstd refuses them).
    pub input_used: usize,
}

/// A first output capacity for [`decode`]`(format, input, .., max_out)`:
/// the size hint of the decoder `input` gets ([`deflate::gunzip_size_hint`],
/// [`deflate::uncompress_size_hint`], [`zstd::size_hint`]).
///
/// ```
/// use cmrx::decode::{size_hint, DecodeFormat};
/// let frame = cmrx::zstd::compress_vec(&[1u8; 5000], 3, None).unwrap();
/// assert_eq!(size_hint(DecodeFormat::Any, &frame, 1 << 20), 5000);
/// ```
pub fn size_hint(format: DecodeFormat, input: &[u8], max_out: usize) -> usize {
    match format.decoder_for(input) {
        Format::Gzip => deflate::gunzip_size_hint(input, max_out),
        Format::Zlib => deflate::uncompress_size_hint(input, max_out),
        Format::Zstd => zstd::size_hint(input, max_out),
        _ => 0, // decoder_for names none other
    }
}

/// Decodes `input` as `format` into `out`, producing at most `max_out`
/// bytes, with the decoder [`DecodeFormat::decoder_for`] picks and its
/// contract: on `NeedSpace(n)` call again with `n` bytes; `TooBig` over
/// `max_out`; `Data` for bad input; `UnknownDictionary(id)` for a zstd frame
/// whose dictionary is not registered. On `Ok(decoded)`,
/// `out[..decoded.len]` is initialised.
///
/// ```
/// use cmrx::decode::{decode, DecodeFormat, Decoded};
/// let frame = cmrx::zstd::compress_vec(b"hello", 3, None).unwrap();
/// let mut out = vec![std::mem::MaybeUninit::new(0u8); 16];
/// let got = decode(DecodeFormat::Cached, &frame, &mut out, 16).unwrap();
/// assert_eq!(got, Decoded { len: 5, input_used: frame.len() });
/// ```
#[inline]
pub fn decode(
    format: DecodeFormat,
    input: &[u8],
    out: &mut [MaybeUninit<u8>],
    max_out: usize,
) -> Result<Decoded, Error> {
    let (counted, decoded) = match format.decoder_for(input) {
        Format::Gzip => (
            &counters::GZIP,
            deflate::gunzip_member(input, out, max_out).map(|inflated| Decoded {
                len: inflated.len,
                input_used: inflated.input_used,
            }),
        ),
        Format::Zlib => (
            &counters::ZLIB,
            deflate::uncompress(input, out, max_out).map(|len| Decoded {
                len,
                input_used: input.len(),
            }),
        ),
        // zstd counts what it reads, with the dictionary it found.
        Format::Zstd => {
            return zstd::decompress(input, out, max_out)
                .map(|len| Decoded {
                    len,
                    input_used: input.len(),
                })
                .map_err(|e| count_miss(e.into()));
        }
        // decoder_for names none other.
        _ => return Err(count_miss(DeflateError::Data.into())),
    };
    let decoded = decoded.map_err(|e| count_miss(e.into()))?;
    counted.read.add(decoded.len, decoded.input_used);
    Ok(decoded)
}

/// Counts what made a value a miss ([`counters::Event`]), and gives the
/// error back. A request for more output space is no miss yet, nor is a
/// dictionary that is not loaded: the caller may load it and decode again,
/// and counts the miss when it gives up.
fn count_miss(e: Error) -> Error {
    let event = match e {
        Error::Deflate(DeflateError::NeedSpace(_))
        | Error::Zstd(zstd::Error::NeedSpace(_) | zstd::Error::UnknownDictionary(_)) => return e,
        Error::Deflate(DeflateError::TooBig) | Error::Zstd(zstd::Error::TooBig) => {
            counters::Event::TooBig
        }
        _ => counters::Event::Undecodable,
    };
    event.note();
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{gzip_vec, zlib_vec};

    /// `decode` into a fresh buffer of `cap` bytes; the output on success.
    fn decode_vec(
        format: DecodeFormat,
        input: &[u8],
        cap: usize,
        max_out: usize,
    ) -> Result<(Vec<u8>, usize), Error> {
        let mut out = vec![MaybeUninit::new(0u8); cap];
        let got = decode(format, input, &mut out, max_out)?;
        // SAFETY: the buffer was initialised (to 0) when it was made.
        let bytes = out[..got.len]
            .iter()
            .map(|b| unsafe { b.assume_init() })
            .collect();
        Ok((bytes, got.input_used))
    }

    #[test]
    fn codes_round_trip() {
        for &(format, _) in DecodeFormat::ALL {
            assert_eq!(DecodeFormat::from_code(format as i32), Some(format));
        }
        for code in [0, 6, -1, 99] {
            assert_eq!(DecodeFormat::from_code(code), None);
        }
    }

    #[test]
    fn each_policy_picks_its_decoder_by_magic() {
        let data = b"the same data in three formats ".repeat(20);
        let gz = gzip_vec(&data, 6).unwrap();
        let z = zlib_vec(&data, 6).unwrap();
        let zs = zstd::compress_vec(&data, 3, None).unwrap();
        let cases: [(&[u8], Format, Format); 5] = [
            (&gz, Format::Gzip, Format::Gzip),
            (&z, Format::Gzip, Format::Zlib),
            (&zs, Format::Zstd, Format::Zstd),
            (b"", Format::Gzip, Format::Zlib),
            // Only the whole magic number counts.
            (&zs[..3], Format::Gzip, Format::Zlib),
        ];
        for (input, cached, any) in cases {
            assert_eq!(DecodeFormat::Cached.decoder_for(input), cached);
            assert_eq!(DecodeFormat::Any.decoder_for(input), any);
            assert_eq!(DecodeFormat::Gzip.decoder_for(input), Format::Gzip);
            assert_eq!(DecodeFormat::Zlib.decoder_for(input), Format::Zlib);
            assert_eq!(DecodeFormat::Zstd.decoder_for(input), Format::Zstd);
        }
        for (name, input) in [("gzip", &gz), ("zlib", &z), ("zstd", &zs)] {
            let n = data.len();
            assert_eq!(
                decode_vec(DecodeFormat::Any, input, n, n).map(|(d, _)| d),
                Ok(data.clone()),
                "Any reads {name}"
            );
            let want = if name == "zlib" {
                Err(Error::Deflate(DeflateError::Data))
            } else {
                Ok(data.clone())
            };
            assert_eq!(
                decode_vec(DecodeFormat::Cached, input, n, n).map(|(d, _)| d),
                want,
                "Cached reads zstd and gzip, not {name}"
            );
        }
        assert_eq!(
            decode_vec(DecodeFormat::Gzip, &zs, 100, 100),
            Err(Error::Deflate(DeflateError::Data))
        );
        assert_eq!(
            decode_vec(DecodeFormat::Zstd, &gz, 100, 100),
            Err(Error::Zstd(zstd::Error::Data))
        );
    }

    #[test]
    fn input_used_and_hints_are_the_decoders() {
        let data = vec![b'a'; 100_000];
        let gz = gzip_vec(&data, 6).unwrap();
        let mut two = gz.clone();
        two.extend_from_slice(b"next member");
        assert_eq!(
            decode_vec(DecodeFormat::Cached, &two, data.len(), 1 << 20),
            Ok((data.clone(), gz.len())),
            "gzip: what memGunzip consumes, not what follows"
        );
        assert_eq!(
            size_hint(DecodeFormat::Cached, &gz, 1 << 20),
            deflate::gunzip_size_hint(&gz, 1 << 20)
        );
        match decode_vec(DecodeFormat::Cached, &gz, 10, 1 << 20) {
            Err(Error::Deflate(DeflateError::NeedSpace(n))) => assert!(n > 10 && n <= 1 << 20),
            other => panic!("10 bytes for 100 000: {other:?}"),
        }
        let zs = zstd::compress_vec(&data, 3, None).unwrap();
        assert_eq!(size_hint(DecodeFormat::Any, &zs, 1 << 20), data.len());
        assert_eq!(
            decode_vec(DecodeFormat::Any, &zs, data.len(), data.len() - 1),
            Err(Error::Zstd(zstd::Error::TooBig))
        );
        let z = zlib_vec(&data, 6).unwrap();
        assert_eq!(
            size_hint(DecodeFormat::Any, &z, 1 << 20),
            deflate::uncompress_size_hint(&z, 1 << 20)
        );
        assert_eq!(
            decode_vec(DecodeFormat::Any, &z, data.len(), 1 << 20),
            Ok((data, z.len()))
        );
    }

    #[test]
    fn reads_and_misses_are_counted() {
        use crate::counters::{event_counts, Event, GZIP};
        // The counts are the process's, and other tests decode at the same
        // time: what this test adds is a lower bound of what they grow by.
        let gz = gzip_vec(&[7u8; 1234], 6).unwrap();
        let before = GZIP.read.counts();
        assert_eq!(
            decode_vec(DecodeFormat::Any, &gz, 2000, 1 << 20)
                .unwrap()
                .0
                .len(),
            1234
        );
        let after = GZIP.read.counts();
        assert!(after.values > before.values);
        assert!(after.raw_bytes >= before.raw_bytes + 1234);
        assert!(after.stored_bytes >= before.stored_bytes + gz.len() as u64);
        let misses = event_counts();
        assert!(decode_vec(DecodeFormat::Any, &gz[..20], 4096, 1 << 20).is_err());
        assert!(event_counts()[Event::Undecodable as usize] > misses[Event::Undecodable as usize]);
    }
}
