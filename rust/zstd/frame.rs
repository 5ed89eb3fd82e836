//! What a zstd frame's header says, read without decoding the frame: the
//! magic number, the dictionary ID it names, the content size it states,
//! and from that the first output capacity [`decompress`] is offered.

use zstd::zstd_safe;

use super::Error;
use crate::growth::Expansion;

// What the documentation here links to.
#[cfg(doc)]
use super::decompress;

/// The first four bytes of every zstd frame (magic number 0xFD2FB528,
/// little-endian).
///
/// ```
/// assert_eq!(cmrx::zstd::MAGIC, 0xFD2F_B528u32.to_le_bytes());
/// ```
pub const MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// Whether `input` starts with the zstd frame magic number. Only the magic
/// is looked at: a skippable frame or a pre-0.8 (legacy) frame is not one.
///
/// ```
/// use cmrx::zstd::is_zstd_frame;
/// assert!(is_zstd_frame(b"\x28\xb5\x2f\xfd..."));
/// assert!(!is_zstd_frame(b"\x1f\x8b\x08"));
/// ```
pub fn is_zstd_frame(input: &[u8]) -> bool {
    input.starts_with(&MAGIC)
}

/// The dictionary ID named in the header of the zstd frame `input`; `None`
/// if the frame names none (made without a dictionary, or with zstd's
/// `--no-dictID`), or `input` does not start with a complete zstd frame
/// header.
///
/// ```
/// use cmrx::zstd::{compress_vec, frame_dictionary_id};
/// assert_eq!(frame_dictionary_id(&compress_vec(b"no dictionary", 3, None).unwrap()), None);
/// ```
pub fn frame_dictionary_id(input: &[u8]) -> Option<u32> {
    if !is_zstd_frame(input) {
        return None;
    }
    zstd_safe::get_dict_id_from_frame(input).map(u32::from)
}

/// The dictionary ID named in the header of the zstd frame `input` starts
/// with: `Ok(None)` for a frame that names none, [`Error::Data`] when
/// `input` does not start with a whole, valid zstd frame header (no magic
/// number, too short, reserved bits set). Unlike [`frame_dictionary_id`],
/// it tells "no dictionary" from "not a frame".
///
/// ```
/// use cmrx::zstd::{compress_vec, frame_header_dictionary_id, Error};
/// let frame = compress_vec(b"no dictionary", 3, None).unwrap();
/// assert_eq!(frame_header_dictionary_id(&frame), Ok(None));
/// assert_eq!(frame_header_dictionary_id(b"\x1f\x8b gzip"), Err(Error::Data));
/// assert_eq!(frame_header_dictionary_id(&frame[..4]), Err(Error::Data));
/// ```
pub fn frame_header_dictionary_id(input: &[u8]) -> Result<Option<u32>, Error> {
    // A header that states a content size, or none, is whole and valid.
    frame_content_size(input)?;
    Ok(frame_dictionary_id(input))
}

/// The content size stated by the header of the zstd frame `input`
/// (`Ok(None)` if it states none); `Data` if `input` does not start with a
/// complete zstd frame header.
pub(super) fn frame_content_size(input: &[u8]) -> Result<Option<u64>, Error> {
    if !is_zstd_frame(input) {
        return Err(Error::Data);
    }
    zstd_safe::get_frame_content_size(input).map_err(|_| Error::Data)
}

/// How far one zstd frame can expand: an RLE block (a 3-byte header and 1
/// byte) regenerates up to 128 KiB, 32 Ki output bytes per input byte; a
/// first guess of 8 times the input for a frame that does not state its
/// size.
pub(super) const ZSTD_FRAME: Expansion = Expansion {
    per_input_byte: 32 << 10,
    slack: 0,
    guess_factor: 8,
};

/// The most `in_len` bytes of one zstd frame can decompress to.
pub(super) fn max_inflated(in_len: usize) -> usize {
    ZSTD_FRAME.max_output(in_len)
}

/// A first output capacity for [`decompress`]`(input, .., max_out)`: the
/// content size the frame's header states, if it has one; for a frame that
/// states none, a few times the input length, at least 64 KiB, at most
/// `max_out`. 0 when decompress will fail at once, without writing: the
/// stated size is above `max_out` or more than the frame could hold, or
/// `input` does not start with a zstd frame header. Only a hint: a wrong one
/// costs a retry, never more than `max_out` bytes.
///
/// ```
/// use cmrx::zstd::{compress_vec, size_hint};
/// let data = vec![7u8; 100_000];
/// let frame = compress_vec(&data, 3, None).unwrap();
/// assert_eq!(size_hint(&frame, 1 << 20), 100_000);
/// assert_eq!(size_hint(&frame, 50_000), 0); // TooBig without allocating
/// ```
pub fn size_hint(input: &[u8], max_out: usize) -> usize {
    match frame_content_size(input) {
        Ok(Some(size)) => match usize::try_from(size) {
            Ok(size) if size <= max_out && size <= max_inflated(input.len()) => size,
            _ => 0,
        },
        Ok(None) => ZSTD_FRAME.first_capacity(input.len(), max_out),
        Err(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zstd::compress_vec;
    use crate::zstd::test_support::{craft, json_values, unregistered_dict, Block};

    #[test]
    fn frame_header_dictionary_ids() {
        let other = unregistered_dict();
        let data = json_values(3, 13).concat();
        let with = compress_vec(&data, 3, Some(other)).unwrap();
        let without = compress_vec(&data, 3, None).unwrap();
        assert_eq!(frame_header_dictionary_id(&with), Ok(Some(other.id())));
        assert_eq!(frame_header_dictionary_id(&without), Ok(None));
        // Every ID field size (1, 2 and 4 bytes) and a header alone.
        for id in [0x7f, 0x1234, 0xdead_beef] {
            let frame = craft(None, 17, Some(id), &[Block::Raw(b"x")]);
            assert_eq!(frame_header_dictionary_id(&frame), Ok(Some(id)));
        }
        for (fhd, id, id_len) in [(0x01u8, 0x7fu32, 1), (0x02, 0x1234, 2)] {
            let mut f = MAGIC.to_vec();
            f.extend_from_slice(&[fhd, 7 << 3]);
            f.extend_from_slice(&id.to_le_bytes()[..id_len]);
            assert_eq!(frame_header_dictionary_id(&f), Ok(Some(id)), "{f:02x?}");
        }
        // Not a frame: another format, a skippable frame, a cut header, a
        // reserved bit set.
        let skippable = [&[0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0][..], b"abc"].concat();
        let mut reserved = without.clone();
        reserved[4] |= 0x08;
        for bad in [
            &b""[..],
            b"\x1f\x8b\x08\x00",
            &skippable,
            &MAGIC,
            &with[..6],
            &reserved,
        ] {
            assert_eq!(
                frame_header_dictionary_id(bad),
                Err(Error::Data),
                "{bad:02x?}"
            );
        }
    }
}
