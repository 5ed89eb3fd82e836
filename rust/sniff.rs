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

/// Declares [`Format`] from one list: each format's doc, variant, stable
/// code and name, so that no second list can disagree with it.
macro_rules! formats {
    ($($(#[$doc:meta])* $variant:ident = $code:literal, $name:literal;)*) => {
        /// A recognised compressed (or already-compressed media) format.
        ///
        /// The numeric [`code`](Format::code)s are what `cmrx_sniff_compressed`
        /// returns through the C ABI and never change; new formats get new codes.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(i32)]
        pub enum Format {
            $($(#[$doc])* $variant = $code,)*
        }

        /// Every format, in code order.
        const ALL: &[Format] = &[$(Format::$variant,)*];

        impl Format {
            /// A short lower-case name: "gzip", "zlib", "jpeg", "png", ...
            pub fn name(self) -> &'static str {
                match self {
                    $(Format::$variant => $name,)*
                }
            }
        }
    };
}

formats! {
    /// gzip member: `1f 8b 08`, reserved flag bits clear.
    Gzip = 1, "gzip";
    /// zlib stream: CMF `78` (DEFLATE, 32 KiB window) with FLG `01`, `9c` or
    /// `da` (levels 0–1, 6, 7–9; no preset dictionary).
    Zlib = 2, "zlib";
    /// Zstandard frame `28 b5 2f fd`, or a skippable frame `5? 2a 4d 18`.
    Zstd = 3, "zstd";
    /// zip archive (also docx/xlsx/odt/jar/apk/epub): `PK 03 04`,
    /// `PK 05 06` (empty), `PK 07 08` (spanned).
    Zip = 4, "zip";
    /// bzip2: `BZh` + `1`..`9` + block or end-of-stream magic.
    Bzip2 = 5, "bzip2";
    /// xz: `fd 37 7a 58 5a 00`.
    Xz = 6, "xz";
    /// 7-Zip: `37 7a bc af 27 1c`.
    SevenZip = 7, "7z";
    /// LZ4 frame `04 22 4d 18` or legacy frame `02 21 4c 18`.
    Lz4 = 8, "lz4";
    /// Snappy framing format stream identifier `ff 06 00 00 "sNaPpY"`.
    Snappy = 9, "snappy";
    /// `.lzma` (LZMA-alone) header: properties `5d`, a standard dictionary
    /// size, an unknown or sane uncompressed size.
    Lzma = 10, "lzma";
    /// lzip: `LZIP` + version 1.
    Lzip = 11, "lzip";
    /// RAR 1.5–4.x `Rar! 1a 07 00` or 5.x `Rar! 1a 07 01 00`.
    Rar = 12, "rar";
    /// Unix `compress` (.Z, LZW): `1f 9d` + a sane flags byte.
    UnixCompress = 13, "compress";
    /// JPEG: `ff d8 ff`.
    Jpeg = 14, "jpeg";
    /// PNG: `89 "PNG" 0d 0a 1a 0a`.
    Png = 15, "png";
    /// GIF: `GIF87a` or `GIF89a`.
    Gif = 16, "gif";
    /// WebP: `RIFF` size `WEBP`.
    Webp = 17, "webp";
    /// AVIF: an ISO-BMFF `ftyp` box with brand `avif` or `avis`.
    Avif = 18, "avif";
    /// HEIF/HEIC: an `ftyp` box with a HEIF brand (`heic`, `mif1`, ...).
    Heic = 19, "heic";
    /// JPEG XL: codestream `ff 0a` or container `00 00 00 0c "JXL " 0d 0a 87 0a`.
    JpegXl = 20, "jxl";
    /// MP4 / M4A / 3GP and other ISO-BMFF files: an `ftyp` box.
    Mp4 = 21, "mp4";
    /// QuickTime: an `ftyp` box with brand `qt  `.
    Mov = 22, "mov";
    /// MPEG audio (MP3): an ID3v2 tag or an MPEG-1/2/2.5 layer II/III frame.
    Mp3 = 23, "mp3";
    /// AAC in ADTS frames.
    Aac = 24, "aac";
    /// Ogg (Vorbis, Opus, Theora): `OggS 00`.
    Ogg = 25, "ogg";
    /// FLAC: `fLaC` + a STREAMINFO block header.
    Flac = 26, "flac";
    /// Matroska / WebM: EBML header `1a 45 df a3`.
    Matroska = 27, "matroska";
    /// WOFF 1.0 font: `wOFF` + an sfnt flavour.
    Woff = 28, "woff";
    /// WOFF 2.0 font: `wOF2` + an sfnt flavour.
    Woff2 = 29, "woff2";
}

impl Format {
    /// The stable code, 1.. (`CMRX_FMT_NONE` is 0).
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The format for a code from [`code`](Format::code); `None` for 0 or an
    /// unknown code.
    pub fn from_code(code: i32) -> Option<Format> {
        ALL.iter().copied().find(|f| f.code() == code)
    }

    /// Every format, in code order.
    pub fn all() -> &'static [Format] {
        ALL
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
///
/// ```
/// use cmrx::sniff::{sniff, Format};
/// assert_eq!(sniff(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), Some(Format::Png));
/// assert_eq!(sniff(b"\x1f\x8b\x08\x00\0\0\0\0\0\xff"), Some(Format::Gzip));
/// assert_eq!(sniff(br#"{"json": true}"#), None);
/// assert_eq!(Format::Png.name(), "png");
/// assert_eq!(Format::from_code(Format::Png.code()), Some(Format::Png));
/// ```
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

/// Which decoder reads `data`, a value stored compressed, told by its magic
/// number: [`Format::Zstd`] for a zstd frame (`28 b5 2f fd`),
/// [`Format::Gzip`] for gzip (`1f 8b`), [`Format::Zlib`] for a zlib header
/// (compression method 8 and check bits that hold: `(CMF*256 + FLG) % 31 ==
/// 0`); `None` for anything else.
///
/// Looser than [`sniff`] on purpose: `sniff` must never take text for a
/// compressed format, while a value its client flagged as compressed is one,
/// and whether it is whole is for the decoder to say. A reader that knows
/// only these three formats (a memcached value's flags say "compressed", not
/// which way) tells them apart this way; the format's own decoder then
/// accepts or refuses the rest of the header.
///
/// ```
/// use cmrx::sniff::{decoder_format, Format};
/// assert_eq!(decoder_format(b"\x1f\x8b\x08\x00"), Some(Format::Gzip));
/// assert_eq!(decoder_format(b"\x78\x5e..."), Some(Format::Zlib)); // zlib level 2-5
/// assert_eq!(decoder_format(b"\x28\xb5\x2f\xfd..."), Some(Format::Zstd));
/// assert_eq!(decoder_format(b"plain text"), None);
/// ```
pub fn decoder_format(data: &[u8]) -> Option<Format> {
    if data.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        return Some(Format::Zstd);
    }
    if data.starts_with(&[0x1f, 0x8b]) {
        return Some(Format::Gzip);
    }
    let [cmf, flg] = bytes::<2>(data, 0)?;
    let deflate = cmf & ZLIB_METHOD_MASK == ZLIB_METHOD_DEFLATE;
    let check = (u32::from(cmf) * 256 + u32::from(flg)) % ZLIB_CHECK_DIVISOR == 0;
    (deflate && check).then_some(Format::Zlib)
}

/// RFC 1950: CMF's low four bits are the compression method, 8 for DEFLATE;
/// the two header bytes, read as a big-endian number, are a multiple of 31.
const ZLIB_METHOD_MASK: u8 = 0x0f;
const ZLIB_METHOD_DEFLATE: u8 = 8;
const ZLIB_CHECK_DIVISOR: u32 = 31;

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
    fn decoder_format_tells_the_three_decoders_apart() {
        let zstd = crate::zstd::compress_vec(b"a value", 3, None).unwrap();
        let gzip = crate::testing::gzip_vec(b"a value", 6).unwrap();
        assert_eq!(decoder_format(&zstd), Some(Format::Zstd));
        assert_eq!(decoder_format(&gzip), Some(Format::Gzip));
        for level in 0..=9 {
            let zlib = crate::testing::zlib_vec(b"a value", level).unwrap();
            assert_eq!(
                decoder_format(&zlib),
                Some(Format::Zlib),
                "zlib level {level}"
            );
        }
        // Every CMF/FLG pair: zlib exactly when method 8 and the check hold.
        for cmf in 0..=255u8 {
            for flg in 0..=255u8 {
                let want = cmf & 0x0f == 8 && (u32::from(cmf) * 256 + u32::from(flg)) % 31 == 0;
                let got = decoder_format(&[cmf, flg]);
                if cmf == 0x1f && flg == 0x8b {
                    assert_eq!(got, Some(Format::Gzip));
                } else {
                    assert_eq!(got == Some(Format::Zlib), want, "{cmf:#x} {flg:#x}");
                }
            }
        }
        // gzip by its two magic bytes (the decoder checks the rest); zstd by
        // all four.
        assert_eq!(decoder_format(b"\x1f\x8b"), Some(Format::Gzip));
        assert_eq!(decoder_format(b"\x28\xb5\x2f"), None);
        assert_eq!(decoder_format(b"\x28\xb5\x2f\xfe"), None);
        for none in [
            &b""[..],
            b"x",
            b"plain",
            b"{\"a\":1}",
            b"\x89PNG\r\n\x1a\n",
            b"\xff\xd8\xff",
        ] {
            assert_eq!(decoder_format(none), None, "{none:?}");
        }
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

    /// Checks that `sniff` finds each format in its header, padded to a
    /// realistic value.
    fn found(cases: &[(&[u8], Format)]) {
        for &(header, want) in cases {
            assert_eq!(sniff(&pad(header)), Some(want), "{header:?}");
        }
    }

    /// Checks that `sniff` finds no format in each header (padded), for
    /// the reason given.
    fn not_found(cases: &[(&[u8], &str)]) {
        for &(header, why) in cases {
            assert_eq!(sniff(&pad(header)), None, "{why}: {header:?}");
        }
    }

    #[test]
    fn images_audio_video_fonts() {
        found(&[
            (b"\xff\xd8\xff\xe0", Format::Jpeg),
            (b"\x89PNG\r\n\x1a\n", Format::Png),
            (b"GIF87a", Format::Gif),
            (b"GIF89a", Format::Gif),
            (b"RIFF\x24\x01\x00\x00WEBPVP8 ", Format::Webp),
            (b"\xff\x0a\xfa\x7f", Format::JpegXl),
            (b"\x00\x00\x00\x0cJXL \x0d\x0a\x87\x0a", Format::JpegXl),
            (b"ID3\x04\x00\x00\x00\x00\x0f\x76", Format::Mp3),
            (b"\xff\xfb\x90\x64", Format::Mp3),
            (b"\xff\xf3\x64\xc4", Format::Mp3),
            (b"\xff\xfd\x90\x64", Format::Mp3),
            (b"\xff\xf1\x50\x80", Format::Aac),
            (b"\xff\xf9\x50\x80", Format::Aac),
            (b"OggS\x00\x02", Format::Ogg),
            (b"fLaC\x00\x00\x00\x22", Format::Flac),
            (b"fLaC\x80\x00\x00\x22", Format::Flac),
            (b"\x1a\x45\xdf\xa3", Format::Matroska),
            (b"wOFF\x00\x01\x00\x00", Format::Woff),
            (b"wOFFOTTO", Format::Woff),
            (b"wOF2\x00\x01\x00\x00", Format::Woff2),
            (b"wOF2true", Format::Woff2),
        ]);
        not_found(&[
            (b"\xff\xd8\xfe", "not JPEG"),
            (b"\x89PNG\r\n\x1a\r", "not PNG"),
            (b"GIF88a", "no such GIF"),
            (b"RIFF\x24\x01\x00\x00WAVEfmt ", "WAV is not compressed"),
            (b"ID3\x03\x00\x00\x00\x00\x80\x76", "syncsafe"),
            (b"ID3 tags are", "text"),
            (b"\xff\xfb\xf0\x64", "bad bitrate"),
            (b"\xff\xfb\x9c\x64", "bad sample rate"),
            (b"\xff\xeb\x90\x64", "reserved version"),
            (b"\xff\xff\x90\x64", "layer I left out"),
            (b"\xff\xf1\x3c\x80", "bad frequency index"),
            (b"\xff\xe1\x50\x80", "11-bit sync only"),
            (b"OggS\x01", "Ogg version 1"),
            (b"fLaC is lossless", "text"),
            (b"wOFF, said the dog", "text"),
        ]);
        assert_eq!(sniff(b"\xff\xd8\xff"), Some(Format::Jpeg), "JPEG, unpadded");
        assert_eq!(sniff(b"RIFF\x24\x01\x00\x00WEB"), None, "RIFF cut short");
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
