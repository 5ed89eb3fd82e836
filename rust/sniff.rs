//! Telling already-compressed payloads by their magic bytes.
//!
//! Compressing a JPEG, a zip or a gzip stream again costs time and saves
//! nothing, so a caller can [`sniff`] a value first and store it raw when it
//! starts with the signature of a compressed format. Only formats with a
//! reliable signature are recognised (Brotli, raw DEFLATE and Snappy's raw
//! block format have none); uncompressed containers (TIFF, BMP, WAV, PDF, tar)
//! are deliberately not, since they usually compress well.
//!
//! The checks are stricter than the bare magic where the magic alone is short
//! or printable, so that text, JSON and Storable data are never taken for a
//! compressed format: a false positive leaves a value uncompressed, a false
//! negative only costs a compression attempt that Cache::Memcached throws away
//! when it saves less than 20 %.

/// A recognised compressed (or already-compressed media) format.
///
/// The numeric [`code`](Format::code)s are part of the C ABI
/// (`cmrx_sniff_compressed`) and never change; new formats get new codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// gzip member: `1f 8b 08`, reserved flag bits clear.
    Gzip,
    /// zlib stream: CMF `78` (DEFLATE, 32 KiB window) with FLG `01`, `9c` or
    /// `da` (levels 0–1, 6, 7–9; no preset dictionary).
    Zlib,
    /// Zstandard frame `28 b5 2f fd`, or a skippable frame `5? 2a 4d 18`.
    Zstd,
    /// zip archive (also docx/xlsx/odt/jar/apk/epub): `PK 03 04`,
    /// `PK 05 06` (empty), `PK 07 08` (spanned).
    Zip,
    /// bzip2: `BZh` + `1`..`9` + block or end-of-stream magic.
    Bzip2,
    /// xz: `fd 37 7a 58 5a 00`.
    Xz,
    /// 7-Zip: `37 7a bc af 27 1c`.
    SevenZip,
    /// LZ4 frame `04 22 4d 18` or legacy frame `02 21 4c 18`.
    Lz4,
    /// Snappy framing format stream identifier `ff 06 00 00 "sNaPpY"`.
    Snappy,
    /// `.lzma` (LZMA-alone) header: properties `5d`, a standard dictionary
    /// size, an unknown or sane uncompressed size.
    Lzma,
    /// lzip: `LZIP` + version 1.
    Lzip,
    /// RAR 1.5–4.x `Rar! 1a 07 00` or 5.x `Rar! 1a 07 01 00`.
    Rar,
    /// Unix `compress` (.Z, LZW): `1f 9d` + a sane flags byte.
    UnixCompress,
    /// JPEG: `ff d8 ff`.
    Jpeg,
    /// PNG: `89 "PNG" 0d 0a 1a 0a`.
    Png,
    /// GIF: `GIF87a` or `GIF89a`.
    Gif,
    /// WebP: `RIFF` size `WEBP`.
    Webp,
    /// AVIF: an ISO-BMFF `ftyp` box with brand `avif` or `avis`.
    Avif,
    /// HEIF/HEIC: an `ftyp` box with a HEIF brand (`heic`, `mif1`, ...).
    Heic,
    /// JPEG XL: codestream `ff 0a` or container `00 00 00 0c "JXL " 0d 0a 87 0a`.
    JpegXl,
    /// MP4 / M4A / 3GP and other ISO-BMFF files: an `ftyp` box.
    Mp4,
    /// QuickTime: an `ftyp` box with brand `qt  `.
    Mov,
    /// MPEG audio (MP3): an ID3v2 tag or an MPEG-1/2/2.5 layer II/III frame.
    Mp3,
    /// AAC in ADTS frames.
    Aac,
    /// Ogg (Vorbis, Opus, Theora): `OggS 00`.
    Ogg,
    /// FLAC: `fLaC` + a STREAMINFO block header.
    Flac,
    /// Matroska / WebM: EBML header `1a 45 df a3`.
    Matroska,
    /// WOFF 1.0 font: `wOFF` + an sfnt flavour.
    Woff,
    /// WOFF 2.0 font: `wOF2` + an sfnt flavour.
    Woff2,
}

/// Every format, in code order (code = index + 1).
const ALL: [Format; 29] = [
    Format::Gzip,
    Format::Zlib,
    Format::Zstd,
    Format::Zip,
    Format::Bzip2,
    Format::Xz,
    Format::SevenZip,
    Format::Lz4,
    Format::Snappy,
    Format::Lzma,
    Format::Lzip,
    Format::Rar,
    Format::UnixCompress,
    Format::Jpeg,
    Format::Png,
    Format::Gif,
    Format::Webp,
    Format::Avif,
    Format::Heic,
    Format::JpegXl,
    Format::Mp4,
    Format::Mov,
    Format::Mp3,
    Format::Aac,
    Format::Ogg,
    Format::Flac,
    Format::Matroska,
    Format::Woff,
    Format::Woff2,
];

impl Format {
    /// The stable C ABI code, 1.. (`CMRX_FMT_NONE` is 0).
    pub fn code(self) -> i32 {
        match self {
            Format::Gzip => 1,
            Format::Zlib => 2,
            Format::Zstd => 3,
            Format::Zip => 4,
            Format::Bzip2 => 5,
            Format::Xz => 6,
            Format::SevenZip => 7,
            Format::Lz4 => 8,
            Format::Snappy => 9,
            Format::Lzma => 10,
            Format::Lzip => 11,
            Format::Rar => 12,
            Format::UnixCompress => 13,
            Format::Jpeg => 14,
            Format::Png => 15,
            Format::Gif => 16,
            Format::Webp => 17,
            Format::Avif => 18,
            Format::Heic => 19,
            Format::JpegXl => 20,
            Format::Mp4 => 21,
            Format::Mov => 22,
            Format::Mp3 => 23,
            Format::Aac => 24,
            Format::Ogg => 25,
            Format::Flac => 26,
            Format::Matroska => 27,
            Format::Woff => 28,
            Format::Woff2 => 29,
        }
    }

    /// The format for a code from [`code`](Format::code); `None` for 0 or an
    /// unknown code.
    pub fn from_code(code: i32) -> Option<Format> {
        let index = usize::try_from(code).ok()?.checked_sub(1)?;
        ALL.get(index).copied()
    }

    /// A short lower-case name: "gzip", "zlib", "jpeg", "png", ...
    pub fn name(self) -> &'static str {
        match self {
            Format::Gzip => "gzip",
            Format::Zlib => "zlib",
            Format::Zstd => "zstd",
            Format::Zip => "zip",
            Format::Bzip2 => "bzip2",
            Format::Xz => "xz",
            Format::SevenZip => "7z",
            Format::Lz4 => "lz4",
            Format::Snappy => "snappy",
            Format::Lzma => "lzma",
            Format::Lzip => "lzip",
            Format::Rar => "rar",
            Format::UnixCompress => "compress",
            Format::Jpeg => "jpeg",
            Format::Png => "png",
            Format::Gif => "gif",
            Format::Webp => "webp",
            Format::Avif => "avif",
            Format::Heic => "heic",
            Format::JpegXl => "jxl",
            Format::Mp4 => "mp4",
            Format::Mov => "mov",
            Format::Mp3 => "mp3",
            Format::Aac => "aac",
            Format::Ogg => "ogg",
            Format::Flac => "flac",
            Format::Matroska => "matroska",
            Format::Woff => "woff",
            Format::Woff2 => "woff2",
        }
    }

    /// Every format, in code order.
    pub fn all() -> &'static [Format] {
        &ALL
    }
}

/// `data[at..at + N]` as an array, or `None` if `data` is too short.
fn bytes<const N: usize>(data: &[u8], at: usize) -> Option<[u8; N]> {
    data.get(at..at.checked_add(N)?)?.try_into().ok()
}

fn u32_le(data: &[u8], at: usize) -> Option<u32> {
    bytes::<4>(data, at).map(u32::from_le_bytes)
}

fn u32_be(data: &[u8], at: usize) -> Option<u32> {
    bytes::<4>(data, at).map(u32::from_be_bytes)
}

/// The format `data` starts with, if it is a known compressed format.
///
/// Looks at no more than the first 16 bytes; never panics.
pub fn sniff(data: &[u8]) -> Option<Format> {
    let b0 = *data.first()?;
    match b0 {
        0x1f => sniff_1f(data),
        0x78 => sniff_zlib(data),
        0x28 if data.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) => Some(Format::Zstd),
        0x50 => sniff_p(data),
        0x42 if is_bzip2(data) => Some(Format::Bzip2),
        0xfd if data.starts_with(&[0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]) => Some(Format::Xz),
        0x37 if data.starts_with(&[0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]) => Some(Format::SevenZip),
        0x04 if data.starts_with(&[0x04, 0x22, 0x4d, 0x18]) => Some(Format::Lz4),
        0x02 if data.starts_with(&[0x02, 0x21, 0x4c, 0x18]) => Some(Format::Lz4),
        0x5d if is_lzma_alone(data) => Some(Format::Lzma),
        0x4c if data.len() >= 5 && data.starts_with(b"LZIP\x01") => Some(Format::Lzip),
        0x52 => sniff_r(data),
        0xff => sniff_ff(data),
        0x89 if data.starts_with(b"\x89PNG\r\n\x1a\n") => Some(Format::Png),
        0x47 if data.starts_with(b"GIF87a") || data.starts_with(b"GIF89a") => Some(Format::Gif),
        0x00 => sniff_00(data),
        0x49 if is_id3(data) => Some(Format::Mp3),
        0x4f if data.starts_with(b"OggS\x00") => Some(Format::Ogg),
        0x66 if is_flac(data) => Some(Format::Flac),
        0x1a if data.starts_with(&[0x1a, 0x45, 0xdf, 0xa3]) => Some(Format::Matroska),
        0x77 => sniff_woff(data),
        _ => None,
    }
}

/// gzip (`1f 8b`) or Unix compress (`1f 9d`).
fn sniff_1f(data: &[u8]) -> Option<Format> {
    let [_, b1, b2] = bytes::<3>(data, 0)?;
    match b1 {
        // Method 8 (DEFLATE), the only one defined; FLG's top three bits are
        // reserved and must be zero (memGunzip rejects them).
        0x8b if b2 == 0x08 && bytes::<1>(data, 3)?[0] & 0xe0 == 0 => Some(Format::Gzip),
        // Flags byte: bits 0-4 max code bits (9..=16), bits 5-6 unused.
        0x9d if (9..=16).contains(&(b2 & 0x1f)) && b2 & 0x60 == 0 => Some(Format::UnixCompress),
        _ => None,
    }
}

/// zlib: only CMF 0x78 with the three FLG bytes zlib and every other common
/// implementation write (levels 0-1, 6 and 7-9). CMF values with smaller
/// windows and the level 2-5 FLG `5e` ("x^") are left out: together they
/// match about one in thirty printable two-byte prefixes ("H", "X", "h", "(",
/// "x^2 + ..."), and a missed zlib stream only costs a compression attempt.
/// The first DEFLATE block type must not be the reserved 3, and the stream
/// must be at least as long as the shortest zlib stream (8 bytes).
fn sniff_zlib(data: &[u8]) -> Option<Format> {
    if data.len() < 8 {
        return None;
    }
    let [cmf, flg, first] = bytes::<3>(data, 0)?;
    let header_ok = cmf == 0x78 && matches!(flg, 0x01 | 0x9c | 0xda);
    // Header check bits: (CMF*256 + FLG) is a multiple of 31 for all three.
    debug_assert!(!header_ok || (u32::from(cmf) * 256 + u32::from(flg)) % 31 == 0);
    let btype = (first >> 1) & 3;
    (header_ok && btype != 3).then_some(Format::Zlib)
}

/// zip: `PK 03 04`, `PK 05 06`, `PK 07 08`.
fn sniff_p(data: &[u8]) -> Option<Format> {
    match bytes::<4>(data, 0)? {
        [b'P', b'K', 3, 4] | [b'P', b'K', 5, 6] | [b'P', b'K', 7, 8] => Some(Format::Zip),
        _ => None,
    }
}

/// bzip2: `BZh1`..`BZh9` then the first block's magic (BCD pi) or, for an
/// empty stream, the end-of-stream magic (BCD sqrt(pi)).
fn is_bzip2(data: &[u8]) -> bool {
    let Some(head) = bytes::<10>(data, 0) else {
        return false;
    };
    head[..3] == *b"BZh"
        && (b'1'..=b'9').contains(&head[3])
        && (head[4..] == [0x31, 0x41, 0x59, 0x26, 0x53, 0x59]
            || head[4..] == [0x17, 0x72, 0x45, 0x38, 0x50, 0x90])
}

/// LZMA-alone (`.lzma`, lzma_alone / LZMA SDK): 13-byte header of the
/// properties byte (only the universal default lc=3 lp=0 pb=2, `5d`), a
/// dictionary size of 2^n or 2^n + 2^(n-1) (n >= 12), and an uncompressed
/// size that is either unknown (all ones) or below 256 GiB — the same rules
/// xz-utils uses to accept the format.
fn is_lzma_alone(data: &[u8]) -> bool {
    let (Some(dict), Some(size)) = (u32_le(data, 1), bytes::<8>(data, 5)) else {
        return false;
    };
    let size = u64::from_le_bytes(size);
    let dict_ok = dict >= 1 << 12 && {
        let top = 1u32 << (31 - dict.leading_zeros());
        dict == top || dict == top + (top >> 1)
    };
    data.first() == Some(&0x5d) && dict_ok && (size == u64::MAX || size < 1 << 38)
}

/// RAR 1.5-4.x and 5.x; WebP (`RIFF` size `WEBP`).
fn sniff_r(data: &[u8]) -> Option<Format> {
    if data.starts_with(b"Rar!\x1a\x07\x00") || data.starts_with(b"Rar!\x1a\x07\x01\x00") {
        return Some(Format::Rar);
    }
    (bytes::<4>(data, 0)? == *b"RIFF" && bytes::<4>(data, 8)? == *b"WEBP").then_some(Format::Webp)
}

/// Starting with `ff`: JPEG, Snappy framing, JPEG XL codestream, MPEG audio
/// frame, ADTS AAC.
fn sniff_ff(data: &[u8]) -> Option<Format> {
    let b1 = *data.get(1)?;
    if b1 == 0xd8 {
        return (data.get(2) == Some(&0xff)).then_some(Format::Jpeg);
    }
    if b1 == 0x06 {
        return data
            .starts_with(b"\xff\x06\x00\x00sNaPpY")
            .then_some(Format::Snappy);
    }
    if b1 == 0x0a {
        // JPEG XL codestream signature `ff 0a`; then a SizeHeader, no fixed
        // bytes. Two bytes is weak, but neither is printable nor UTF-8.
        return (data.len() >= 4).then_some(Format::JpegXl);
    }
    if b1 & 0xe0 != 0xe0 {
        return None;
    }
    // Frame sync (11 bits set). MPEG audio: version != reserved (01),
    // layer II or III (layer I is all but extinct, and its `ff fe`/`ff ff`
    // would take UTF-16LE text with a BOM for audio), bitrate index != 1111,
    // sample rate index != 11.
    let b2 = *data.get(2)?;
    let version = (b1 >> 3) & 3;
    let layer = (b1 >> 1) & 3;
    if layer == 0 {
        // ADTS: 12-bit sync (MPEG version bit free), layer 00, sampling
        // frequency index 0..=12.
        let adts_sync = b1 & 0xf0 == 0xf0;
        let sf_index = (b2 >> 2) & 0x0f;
        return (adts_sync && sf_index <= 12 && data.len() >= 7).then_some(Format::Aac);
    }
    let bitrate = b2 >> 4;
    let rate = (b2 >> 2) & 3;
    let layer_ok = layer == 1 || layer == 2;
    (version != 1 && layer_ok && bitrate != 0x0f && rate != 3 && data.len() >= 4)
        .then_some(Format::Mp3)
}

/// Starting with `00`: an ISO-BMFF `ftyp` box (MP4, MOV, AVIF, HEIC) or the
/// JPEG XL container.
fn sniff_00(data: &[u8]) -> Option<Format> {
    if data.starts_with(b"\x00\x00\x00\x0cJXL \x0d\x0a\x87\x0a") {
        return Some(Format::JpegXl);
    }
    let size = u32_be(data, 0)?;
    if bytes::<4>(data, 4)? != *b"ftyp" {
        return None;
    }
    // ftyp = size, type, major brand, minor version, 4-byte compatible
    // brands: at least 16 bytes and a multiple of 4; real ones are small.
    if !(16..=4096).contains(&size) || size % 4 != 0 {
        return None;
    }
    let brand = bytes::<4>(data, 8)?;
    Some(match &brand {
        b"avif" | b"avis" => Format::Avif,
        b"heic" | b"heix" | b"hevc" | b"hevx" | b"heim" | b"heis" | b"hevm" | b"hevs" | b"mif1"
        | b"msf1" => Format::Heic,
        b"qt  " => Format::Mov,
        _ => Format::Mp4,
    })
}

/// ID3v2 tag (before MP3 frames): `ID3`, major version 2..=4, revision not
/// `ff`, flags, four syncsafe size bytes (top bit clear).
fn is_id3(data: &[u8]) -> bool {
    let Some(h) = bytes::<10>(data, 0) else {
        return false;
    };
    h[..3] == *b"ID3" && (2..=4).contains(&h[3]) && h[4] != 0xff && h[6..].iter().all(|&b| b < 0x80)
}

/// FLAC: `fLaC`, then the mandatory STREAMINFO metadata block header: type 0
/// (the top bit is the last-block flag) and length 34.
fn is_flac(data: &[u8]) -> bool {
    match bytes::<8>(data, 0) {
        Some(h) => h[..4] == *b"fLaC" && h[4] & 0x7f == 0 && h[5..] == [0, 0, 34],
        None => false,
    }
}

/// WOFF / WOFF2: signature then the sfnt flavour (TrueType `00 01 00 00`,
/// CFF `OTTO`, Apple `true`, `typ1`, or a collection `ttcf`).
fn sniff_woff(data: &[u8]) -> Option<Format> {
    let sig = bytes::<4>(data, 0)?;
    let flavor = bytes::<4>(data, 4)?;
    let flavor_ok = matches!(
        &flavor,
        b"\x00\x01\x00\x00" | b"OTTO" | b"true" | b"typ1" | b"ttcf"
    );
    match &sig {
        b"wOFF" if flavor_ok => Some(Format::Woff),
        b"wOF2" if flavor_ok => Some(Format::Woff2),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pad(prefix: &[u8]) -> Vec<u8> {
        let mut v = prefix.to_vec();
        v.extend_from_slice(&[0x55; 32]);
        v
    }

    #[test]
    fn codes_are_stable_and_round_trip() {
        for (i, &f) in Format::all().iter().enumerate() {
            assert_eq!(f.code(), i as i32 + 1, "{f:?}");
            assert_eq!(Format::from_code(f.code()), Some(f));
            assert!(!f.name().is_empty());
            assert!(f.name().bytes().all(|b| b.is_ascii_graphic()));
        }
        assert_eq!(Format::from_code(0), None);
        assert_eq!(Format::from_code(-1), None);
        assert_eq!(Format::from_code(i32::MIN), None);
        assert_eq!(Format::from_code(30), None);
        assert_eq!(Format::from_code(i32::MAX), None);
        // A few codes pinned explicitly: they are ABI.
        assert_eq!(Format::Gzip.code(), 1);
        assert_eq!(Format::Zlib.code(), 2);
        assert_eq!(Format::Jpeg.code(), 14);
        assert_eq!(Format::Png.code(), 15);
        assert_eq!(Format::Woff2.code(), 29);
        let mut names: Vec<_> = Format::all().iter().map(|f| f.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Format::all().len(), "names are unique");
    }

    #[test]
    fn gzip() {
        assert_eq!(sniff(&pad(b"\x1f\x8b\x08\x00")), Some(Format::Gzip));
        assert_eq!(
            sniff(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\x03\x00"),
            Some(Format::Gzip)
        );
        assert_eq!(sniff(&pad(b"\x1f\x8b\x08\x1f")), Some(Format::Gzip));
        assert_eq!(sniff(&pad(b"\x1f\x8b\x08\x20")), None, "reserved flag");
        assert_eq!(sniff(&pad(b"\x1f\x8b\x07\x00")), None, "method");
        assert_eq!(sniff(b"\x1f\x8b\x08"), None, "no flags byte");
        assert_eq!(sniff(&pad(b"\x1f\x9d\x90")), Some(Format::UnixCompress));
        assert_eq!(sniff(&pad(b"\x1f\x9d\x10")), Some(Format::UnixCompress));
        assert_eq!(sniff(&pad(b"\x1f\x9d\x08")), None);
        assert_eq!(sniff(&pad(b"\x1f\x9d\x11")), None);
        assert_eq!(sniff(&pad(b"\x1f\x9d\xb0")), None);
    }

    #[test]
    fn zlib() {
        for flg in [0x01u8, 0x9c, 0xda] {
            assert_eq!(sniff(&[0x78, flg, 0x03, 0, 0, 0, 0, 1]), Some(Format::Zlib));
            assert_eq!(sniff(&pad(&[0x78, flg, 0x4b])), Some(Format::Zlib));
            assert_eq!(sniff(&[0x78, flg, 0x03, 0, 0, 0, 0]), None, "too short");
            assert_eq!(sniff(&pad(&[0x78, flg, 0x06])), None, "block type 3");
        }
        assert_eq!(sniff(&pad(b"x^")), None, "level 2-5 FLG left out");
        assert_eq!(sniff(&pad(&[0x78, 0x9d])), None, "bad FCHECK");
        assert_eq!(sniff(&pad(&[0x78, 0xbb])), None, "FDICT");
        assert_eq!(sniff(&pad(&[0x58, 0x85])), None, "small window left out");
    }

    #[test]
    fn archives() {
        assert_eq!(sniff(&pad(b"\x28\xb5\x2f\xfd")), Some(Format::Zstd));
        assert_eq!(sniff(&pad(b"\x28\xb5\x2f\xfe")), None);
        assert_eq!(sniff(&pad(b"PK\x03\x04")), Some(Format::Zip));
        assert_eq!(
            sniff(b"PK\x05\x06\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"),
            Some(Format::Zip)
        );
        assert_eq!(sniff(&pad(b"PK\x07\x08")), Some(Format::Zip));
        assert_eq!(sniff(&pad(b"PK\x03\x05")), None);
        assert_eq!(sniff(b"PK"), None);
        assert_eq!(sniff(&pad(b"BZh91AY&SY")), Some(Format::Bzip2));
        assert_eq!(
            sniff(b"BZh9\x17\x72\x45\x38\x50\x90\0\0\0\0"),
            Some(Format::Bzip2)
        );
        assert_eq!(sniff(&pad(b"BZh01AY&SY")), None);
        assert_eq!(sniff(&pad(b"BZh9 is not bzip2")), None);
        assert_eq!(sniff(&pad(b"\xfd7zXZ\x00")), Some(Format::Xz));
        assert_eq!(sniff(&pad(b"\xfd7zXZ\x01")), None);
        assert_eq!(sniff(&pad(b"7z\xbc\xaf\x27\x1c")), Some(Format::SevenZip));
        assert_eq!(sniff(&pad(b"7z\xbc\xaf\x27\x1d")), None);
        assert_eq!(sniff(&pad(b"\x04\x22\x4d\x18")), Some(Format::Lz4));
        assert_eq!(sniff(&pad(b"\x02\x21\x4c\x18")), Some(Format::Lz4));
        assert_eq!(sniff(&pad(b"\x04\x22\x4d\x19")), None);
        assert_eq!(sniff(&pad(b"\xff\x06\x00\x00sNaPpY")), Some(Format::Snappy));
        assert_eq!(sniff(&pad(b"\xff\x06\x00\x00snappy")), None);
        assert_eq!(sniff(&pad(b"LZIP\x01")), Some(Format::Lzip));
        assert_eq!(sniff(&pad(b"LZIP\x00")), None);
        assert_eq!(sniff(&pad(b"LZIP is a format")), None);
        assert_eq!(sniff(&pad(b"Rar!\x1a\x07\x00")), Some(Format::Rar));
        assert_eq!(sniff(&pad(b"Rar!\x1a\x07\x01\x00")), Some(Format::Rar));
        assert_eq!(sniff(&pad(b"Rar! is not rar")), None);
    }

    #[test]
    fn lzma_alone() {
        let mut h = vec![0x5d];
        h.extend_from_slice(&(8u32 << 20).to_le_bytes());
        h.extend_from_slice(&[0xff; 8]);
        assert_eq!(sniff(&pad(&h)), Some(Format::Lzma));
        h[5..13].copy_from_slice(&12345u64.to_le_bytes());
        assert_eq!(sniff(&pad(&h)), Some(Format::Lzma));
        h[1..5].copy_from_slice(&(3u32 << 20).to_le_bytes());
        assert_eq!(sniff(&pad(&h)), Some(Format::Lzma), "2^n + 2^(n-1)");
        h[1..5].copy_from_slice(&(5u32 << 20).to_le_bytes());
        assert_eq!(sniff(&pad(&h)), None, "odd dictionary size");
        h[1..5].copy_from_slice(&(8u32 << 20).to_le_bytes());
        h[5..13].copy_from_slice(&(1u64 << 40).to_le_bytes());
        assert_eq!(sniff(&pad(&h)), None, "absurd size");
        h[5..13].copy_from_slice(&[0xff; 8]);
        assert_eq!(sniff(&h[..12]), None, "short header");
        assert_eq!(sniff(b"]\x00\x00\x80\x00not lzma"), None);
        assert_eq!(sniff(b"] this is text, not lzma"), None);
    }

    #[test]
    fn images() {
        assert_eq!(sniff(&pad(b"\xff\xd8\xff\xe0")), Some(Format::Jpeg));
        assert_eq!(sniff(b"\xff\xd8\xff"), Some(Format::Jpeg));
        assert_eq!(sniff(&pad(b"\xff\xd8\xfe")), None);
        assert_eq!(sniff(&pad(b"\x89PNG\r\n\x1a\n")), Some(Format::Png));
        assert_eq!(sniff(&pad(b"\x89PNG\r\n\x1a\r")), None);
        assert_eq!(sniff(&pad(b"GIF87a")), Some(Format::Gif));
        assert_eq!(sniff(&pad(b"GIF89a")), Some(Format::Gif));
        assert_eq!(sniff(&pad(b"GIF88a")), None);
        assert_eq!(
            sniff(&pad(b"RIFF\x24\x01\x00\x00WEBPVP8 ")),
            Some(Format::Webp)
        );
        assert_eq!(
            sniff(&pad(b"RIFF\x24\x01\x00\x00WAVEfmt ")),
            None,
            "WAV is not compressed"
        );
        assert_eq!(sniff(b"RIFF\x24\x01\x00\x00WEB"), None);
        assert_eq!(sniff(&pad(b"\xff\x0a\xfa\x7f")), Some(Format::JpegXl));
        assert_eq!(
            sniff(&pad(b"\x00\x00\x00\x0cJXL \x0d\x0a\x87\x0a")),
            Some(Format::JpegXl)
        );
    }

    fn ftyp(brand: &[u8; 4]) -> Vec<u8> {
        let mut v = vec![0, 0, 0, 0x1c];
        v.extend_from_slice(b"ftyp");
        v.extend_from_slice(brand);
        v.extend_from_slice(&[0, 0, 0, 0]);
        v.extend_from_slice(b"isommp41mp42");
        v
    }

    #[test]
    fn iso_bmff() {
        assert_eq!(sniff(&ftyp(b"avif")), Some(Format::Avif));
        assert_eq!(sniff(&ftyp(b"avis")), Some(Format::Avif));
        assert_eq!(sniff(&ftyp(b"heic")), Some(Format::Heic));
        assert_eq!(sniff(&ftyp(b"mif1")), Some(Format::Heic));
        assert_eq!(sniff(&ftyp(b"qt  ")), Some(Format::Mov));
        assert_eq!(sniff(&ftyp(b"isom")), Some(Format::Mp4));
        assert_eq!(sniff(&ftyp(b"M4A ")), Some(Format::Mp4));
        assert_eq!(sniff(&ftyp(b"3gp4")), Some(Format::Mp4));
        let mut bad = ftyp(b"isom");
        bad[3] = 0x1d;
        assert_eq!(sniff(&bad), None, "size not a multiple of 4");
        bad[3] = 0x08;
        assert_eq!(sniff(&bad), None, "size too small");
        bad[2] = 0x80;
        assert_eq!(sniff(&bad), None, "size too large");
        let mut bad = ftyp(b"isom");
        bad[4] = b'F';
        assert_eq!(sniff(&bad), None);
        assert_eq!(sniff(&ftyp(b"isom")[..11]), None, "short");
    }

    #[test]
    fn audio_video_fonts() {
        assert_eq!(
            sniff(&pad(b"ID3\x04\x00\x00\x00\x00\x0f\x76")),
            Some(Format::Mp3)
        );
        assert_eq!(
            sniff(&pad(b"ID3\x03\x00\x00\x00\x00\x80\x76")),
            None,
            "syncsafe"
        );
        assert_eq!(sniff(&pad(b"ID3 tags are")), None);
        assert_eq!(
            sniff(&pad(b"\xff\xfb\x90\x64")),
            Some(Format::Mp3),
            "MPEG-1 layer III"
        );
        assert_eq!(
            sniff(&pad(b"\xff\xf3\x64\xc4")),
            Some(Format::Mp3),
            "MPEG-2 layer III"
        );
        assert_eq!(sniff(&pad(b"\xff\xfb\xf0\x64")), None, "bad bitrate");
        assert_eq!(sniff(&pad(b"\xff\xfb\x9c\x64")), None, "bad sample rate");
        assert_eq!(sniff(&pad(b"\xff\xeb\x90\x64")), None, "reserved version");
        assert_eq!(
            sniff(&pad(b"\xff\xfd\x90\x64")),
            Some(Format::Mp3),
            "MPEG-1 layer II"
        );
        assert_eq!(sniff(&pad(b"\xff\xff\x90\x64")), None, "layer I left out");
        assert_eq!(sniff(&pad(b"\xff\xf1\x50\x80")), Some(Format::Aac));
        assert_eq!(sniff(&pad(b"\xff\xf9\x50\x80")), Some(Format::Aac));
        assert_eq!(
            sniff(&pad(b"\xff\xf1\x3c\x80")),
            None,
            "bad frequency index"
        );
        assert_eq!(sniff(&pad(b"\xff\xe1\x50\x80")), None, "11-bit sync only");
        assert_eq!(sniff(&pad(b"OggS\x00\x02")), Some(Format::Ogg));
        assert_eq!(sniff(&pad(b"OggS\x01")), None);
        assert_eq!(sniff(&pad(b"fLaC\x00\x00\x00\x22")), Some(Format::Flac));
        assert_eq!(sniff(&pad(b"fLaC\x80\x00\x00\x22")), Some(Format::Flac));
        assert_eq!(sniff(&pad(b"fLaC is lossless")), None);
        assert_eq!(sniff(&pad(b"\x1a\x45\xdf\xa3")), Some(Format::Matroska));
        assert_eq!(sniff(&pad(b"wOFF\x00\x01\x00\x00")), Some(Format::Woff));
        assert_eq!(sniff(&pad(b"wOFFOTTO")), Some(Format::Woff));
        assert_eq!(sniff(&pad(b"wOF2\x00\x01\x00\x00")), Some(Format::Woff2));
        assert_eq!(sniff(&pad(b"wOF2true")), Some(Format::Woff2));
        assert_eq!(sniff(&pad(b"wOFF, said the dog")), None);
    }

    #[test]
    fn short_and_empty_inputs_never_panic() {
        assert_eq!(sniff(b""), None);
        for b0 in 0..=255u8 {
            for len in 0..20 {
                let mut v = vec![b0];
                v.resize(len.max(1), 0xff);
                let _ = sniff(&v[..len.min(v.len())]);
                v.fill(0);
                v[0] = b0;
                let _ = sniff(&v);
            }
        }
        // Every prefix of every positive example.
        let examples: [&[u8]; 6] = [
            b"\x89PNG\r\n\x1a\n",
            b"BZh91AY&SY",
            b"\x00\x00\x00\x1cftypavif",
            b"\xff\x06\x00\x00sNaPpY",
            b"ID3\x04\x00\x00\x00\x00\x0f\x76",
            b"\x5d\x00\x00\x80\x00\xff\xff\xff\xff\xff\xff\xff\xff",
        ];
        for ex in examples {
            assert!(sniff(ex).is_some(), "{ex:?}");
            for n in 0..ex.len() {
                assert_eq!(sniff(&ex[..n]), None, "{ex:?} cut at {n}");
            }
        }
    }

    /// The start of t/data/seed.json (a typical memcached JSON value).
    const SEED_JSON_HEAD: &str = r#"[[{"catalog":"Book","img":"http://ecx.images-amazon.com/images/I/417K6qXAgvL._SL75_.jpg","media":"大型本","imagefilesmall":"http://ecx.images-amazon.com/images/I/417K6qXAgvL._SL75_.jpg","mobile_url":"http://www.amazon.co.jp/gp/aw/rd.html?url=/gp/aw/d.html&lc=msn&dl=1&a=4798119172&at=-m-&uid="}]]"#;

    /// The start of perl's perldiag.pod (bench/data/perldiag.pod).
    const PERLDIAG_HEAD: &str = "=head1 NAME\n\nperldiag - various Perl diagnostics\n\n=head1 DESCRIPTION\n\nThese messages are classified as follows (listed in increasing order of\ndesperation):\n\n    (W) A warning (optional).\n    (D) A deprecation (enabled by default).\n";

    #[test]
    fn text_is_not_sniffed() {
        let samples: &[&[u8]] = &[
            SEED_JSON_HEAD.as_bytes(),
            PERLDIAG_HEAD.as_bytes(),
            b"{\"a\":1}",
            b"[]",
            b"null",
            b"<?xml version=\"1.0\"?><a/>",
            b"<!DOCTYPE html><html></html>",
            b"%PDF-1.7\n",
            b"x^2 + y^2 = z^2, and more text after it",
            b"xx",
            b"x",
            b"PK",
            b"BZh9",
            b"GIF",
            b"RIFF",
            b"Rar!",
            b"LZIP",
            b"fLaC",
            b"OggS",
            b"ID3v2 is a tag format",
            b"(define (f x) x)",
            b"Hello, world! This is plain text.",
            b"\xef\xbb\xbfUTF-8 with a BOM",
            b"\xff\xfeU\x00T\x00F\x00-\x001\x006\x00",
            b"\xfe\xff\x00U\x00T\x00F",
            // Storable's nfreeze / freeze headers.
            b"\x05\x0b\x03\x00\x00\x00\x01\x04\x03\x00\x00\x00\x00",
            b"pst0\x05\x0b\x04\x08\x08\x08\x03\x00",
        ];
        for s in samples {
            assert_eq!(sniff(s), None, "{:?}", String::from_utf8_lossy(s));
        }
        // Every line (and every suffix start) of the perldiag excerpt.
        for line in PERLDIAG_HEAD.lines().chain(SEED_JSON_HEAD.split(',')) {
            for i in 0..line.len() {
                assert_eq!(sniff(&line.as_bytes()[i..]), None, "{line:?}[{i}..]");
            }
        }
    }

    /// No three printable ASCII bytes followed by printable text start a
    /// format we recognise.
    #[test]
    fn no_printable_prefix_is_sniffed() {
        let printable: Vec<u8> = (0x20..0x7f).chain([b'\t', b'\n', b'\r']).collect();
        let tails: [&[u8]; 3] = [
            b"aaaaaaaaaaaaaaaaaaaa",
            b"&&&&&&&&&&&&&&&&&&&&",
            b"     9999  XYZ 1234",
        ];
        let mut buf = [0u8; 23];
        for &a in &printable {
            for &b in &printable {
                for &c in &printable {
                    for tail in tails {
                        buf[0] = a;
                        buf[1] = b;
                        buf[2] = c;
                        buf[3..3 + tail.len()].copy_from_slice(tail);
                        let s = &buf[..3 + tail.len()];
                        assert_eq!(sniff(s), None, "{:?}", String::from_utf8_lossy(s));
                    }
                }
            }
        }
    }

    /// The distribution's two real sample files: a production JSON value and
    /// perl's perldiag.pod, whole.
    #[test]
    fn real_sample_files_are_not_sniffed() {
        let samples: [(&str, &[u8]); 2] = [
            ("t/data/seed.json", include_bytes!("../t/data/seed.json")),
            (
                "bench/data/perldiag.pod",
                include_bytes!("../bench/data/perldiag.pod"),
            ),
        ];
        for (path, data) in samples {
            assert_eq!(sniff(data), None, "{path}");
        }
    }
}
