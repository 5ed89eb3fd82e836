//! The C ABI's tests, through the exported functions as C calls them.

use std::ptr::{self, addr_of_mut};

use super::parser::PARSE_INTERNAL_MESSAGE;
use super::*;
use crate::counters::{self, TrafficKind};
use crate::zstd;

const HEADER_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/rust/cmrx.h");
const BEGIN: &str = "/* BEGIN GENERATED";
const END: &str = "/* END GENERATED */";

/// cmrx.h carries exactly the numbers of the Rust enums and constants.
/// With CMRX_UPDATE_HEADER=1 the generated part is rewritten instead.
#[test]
fn header_defines_match_the_rust() {
    let header = std::fs::read_to_string(HEADER_PATH).expect("read rust/cmrx.h");
    let begin = header
        .find(BEGIN)
        .expect("BEGIN GENERATED marker in cmrx.h");
    let body = begin
        + header[begin..]
            .find("*/\n")
            .expect("end of the BEGIN comment")
        + 3;
    let end = header.find(END).expect("END GENERATED marker in cmrx.h");
    let want = header_defines();
    if std::env::var_os("CMRX_UPDATE_HEADER").is_some() {
        let updated = format!("{}{}{}", &header[..body], want, &header[end..]);
        std::fs::write(HEADER_PATH, updated).expect("write rust/cmrx.h");
        return;
    }
    assert_eq!(
        &header[body..end],
        want,
        "rust/cmrx.h is out of date: run CMRX_UPDATE_HEADER=1 cargo test"
    );
    // No other line of the header defines a number.
    let outside = format!("{}{}", &header[..body], &header[end..]);
    for line in outside.lines() {
        assert!(
            !(line.starts_with("#define CMRX_") && line.split_whitespace().nth(2).is_some()),
            "a numeric #define outside the generated part: {line}"
        );
    }
}

#[test]
fn codes_are_unique_within_each_enum() {
    let mut kinds: Vec<i32> = EventKind::ALL.iter().map(|&(k, _)| k as i32).collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds.len(), EventKind::ALL.len());
    let mut statuses: Vec<i32> = ResultCode::ALL.iter().map(|&(s, _)| s as i32).collect();
    statuses.sort_unstable();
    statuses.dedup();
    assert_eq!(statuses.len(), ResultCode::ALL.len());
    let mut errors: Vec<i32> = ParseError::ALL.iter().map(|&(e, _)| e.code()).collect();
    errors.push(PARSE_INTERNAL);
    errors.sort_unstable();
    errors.dedup();
    assert_eq!(errors.len(), ParseError::ALL.len() + 1);
}

#[test]
fn parse_error_messages_come_from_the_enum() {
    for &(e, _) in ParseError::ALL {
        // SAFETY: cmrx_parse_error_str returns a static NUL-terminated string.
        let text = unsafe { std::ffi::CStr::from_ptr(cmrx_parse_error_str(e.code())) };
        assert_eq!(text.to_str().unwrap(), e.as_str());
    }
    for code in [PARSE_INTERNAL, 0, -5, 1000] {
        // SAFETY: cmrx_parse_error_str returns a static NUL-terminated string.
        let text = unsafe { std::ffi::CStr::from_ptr(cmrx_parse_error_str(code)) };
        assert_eq!(text.to_str().unwrap(), PARSE_INTERNAL_MESSAGE);
    }
}

#[test]
fn parser_round_trip_through_the_abi() {
    let resp = b"VALUE k 5 3\r\nabc\r\nEND\r\n";
    let p = cmrx_parser_new(0);
    assert!(!p.is_null());
    // Uninitialised on purpose: the ABI must only ever write into it.
    let mut ev = MaybeUninit::<CmrxEvent>::uninit();
    let mut at = 0;
    let mut kinds = Vec::new();
    // SAFETY: p is live until freed at the end; every buffer passed is a
    // live slice with its length; ev is only read through raw pointers,
    // field by field, after the ABI wrote those fields.
    unsafe {
        loop {
            let k = cmrx_parser_next(p, resp[at..].as_ptr(), resp.len() - at, ev.as_mut_ptr());
            kinds.push(k);
            let consumed = addr_of_mut!((*ev.as_mut_ptr()).consumed).read();
            if k == EventKind::Value as i32 {
                let e = ev.as_ptr();
                let key = slice::from_raw_parts((*e).key, (*e).key_len);
                assert_eq!(key, b"k");
                assert_eq!(((*e).flags, (*e).len), (5, 3));
            }
            if k <= EventKind::Partial as i32 || k == EventKind::End as i32 {
                break;
            }
            at += consumed;
        }
        cmrx_parser_free(p);
    }
    assert_eq!(
        kinds,
        [
            EventKind::Value,
            EventKind::Data,
            EventKind::ValueEnd,
            EventKind::End
        ]
        .map(|k| k as i32)
    );
}

#[test]
fn data_read_elsewhere_is_taken_through_the_abi() {
    let line = b"VALUE k 0 10\r\n";
    let p = cmrx_parser_new(0);
    let mut ev = MaybeUninit::<CmrxEvent>::zeroed();
    // SAFETY: p is live until freed at the end (or NULL on purpose where
    // the ABI must refuse it); buffers are live slices with their
    // lengths; ev is zeroed, so reading it is sound.
    unsafe {
        let next =
            |bytes: &[u8], ev: *mut CmrxEvent| cmrx_parser_next(p, bytes.as_ptr(), bytes.len(), ev);
        assert_eq!(next(line, ev.as_mut_ptr()), EventKind::Value as i32);
        assert_eq!(
            cmrx_parser_take_data(p, 11),
            ResultCode::Arg as i32,
            "more than the value has"
        );
        assert_eq!(
            cmrx_parser_data_remaining(p),
            10,
            "... refused, nothing taken"
        );
        assert_eq!(cmrx_parser_take_data(p, 4), ResultCode::Ok as i32);
        assert_eq!(cmrx_parser_data_remaining(p), 6);
        assert_eq!(
            next(b"efghij\r\nEND\r\n", ev.as_mut_ptr()),
            EventKind::Data as i32
        );
        assert_eq!(ev.assume_init_ref().data_len, 6);
        assert_eq!(
            cmrx_parser_take_data(p, 1),
            ResultCode::Arg as i32,
            "no data left"
        );
        assert_eq!(cmrx_parser_take_data(p, 0), ResultCode::Ok as i32);
        assert_eq!(
            next(b"\r\nEND\r\n", ev.as_mut_ptr()),
            EventKind::ValueEnd as i32
        );
        assert_eq!(
            cmrx_parser_take_data(ptr::null_mut(), 0),
            ResultCode::Arg as i32
        );
        cmrx_parser_free(p);
    }
}

#[test]
fn parser_errors_carry_codes() {
    let p = cmrx_parser_new(0);
    let mut ev = MaybeUninit::<CmrxEvent>::zeroed();
    let line = b"SERVER_ERROR out of memory\r\n";
    // SAFETY: p is live until freed at the end; buffers are live slices
    // with their lengths (or NULL with 0, or NULL on purpose where the
    // ABI must refuse it); ev is zeroed, so reading it is sound.
    unsafe {
        assert_eq!(
            cmrx_parser_next(p, line.as_ptr(), line.len(), ev.as_mut_ptr()),
            EventKind::Error as i32
        );
        assert_eq!(ev.assume_init_ref().error, ParseError::ServerError.code());
        assert_eq!(
            cmrx_parser_next(ptr::null_mut(), ptr::null(), 0, ev.as_mut_ptr()),
            EventKind::Error as i32
        );
        assert_eq!(ev.assume_init_ref().error, PARSE_INTERNAL);
        assert_eq!(
            cmrx_parser_next(p, ptr::null(), 5, ev.as_mut_ptr()),
            EventKind::Error as i32
        );
        assert_eq!(
            cmrx_parser_next(p, line.as_ptr(), line.len(), ptr::null_mut()),
            EventKind::Error as i32
        );
        cmrx_parser_free(p);
    }
}

/// cmrx_decode with every out-parameter, for the tests.
fn decode(
    format: DecodeFormat,
    input: &[u8],
    cap: usize,
    max_out: usize,
) -> (i32, Vec<u8>, usize, u32) {
    let mut out = vec![0u8; cap];
    let (mut n, mut used, mut dict) = (0, 0, 0);
    // SAFETY: every pointer is a live buffer with its length, or a
    // writable local.
    let rc = unsafe {
        cmrx_decode(
            format as i32,
            input.as_ptr(),
            input.len(),
            out.as_mut_ptr(),
            out.len(),
            max_out,
            &mut n,
            &mut used,
            &mut dict,
        )
    };
    if rc == ResultCode::Ok as i32 {
        out.truncate(n);
    }
    (
        rc,
        out,
        if rc == ResultCode::NeedSpace as i32 {
            n
        } else {
            used
        },
        dict,
    )
}

#[test]
fn codec_round_trip_and_need_space_through_the_abi() {
    let ok = ResultCode::Ok as i32;
    let data = vec![b'a'; 100_000];
    let mut gz = vec![0u8; cmrx_gzip_bound(data.len())];
    let mut n = 0;
    // SAFETY: every pointer passed is a live buffer with its length (or
    // NULL on purpose where the ABI must refuse it).
    unsafe {
        let rc = cmrx_gzip(
            data.as_ptr(),
            data.len(),
            6,
            gz.as_mut_ptr(),
            gz.len(),
            &mut n,
        );
        assert_eq!(rc, ok);
        gz.truncate(n);
        let mut out = vec![0u8; 64];
        let rc = cmrx_gzip(ptr::null(), 5, 6, out.as_mut_ptr(), out.len(), &mut n);
        assert_eq!(rc, ResultCode::Arg as i32);
        let rc = cmrx_gzip(data.as_ptr(), 5, 13, out.as_mut_ptr(), out.len(), &mut n);
        assert_eq!(rc, ResultCode::Arg as i32);
        let rc = cmrx_zlib(data.as_ptr(), 5, 10, out.as_mut_ptr(), out.len(), &mut n);
        assert_eq!(rc, ResultCode::Arg as i32, "zlib's levels stop at 9");
        let rc = cmrx_zlib(data.as_ptr(), 5, -1, out.as_mut_ptr(), out.len(), &mut n);
        assert_eq!(rc, ok, "-1 is the default level");
        let hint = cmrx_decode_size_hint(DecodeFormat::Gzip as i32, gz.as_ptr(), gz.len(), 1 << 20);
        assert_eq!(hint, data.len());
    }
    let (rc, _, want, _) = decode(DecodeFormat::Gzip, &gz, 10, 1 << 20);
    assert_eq!(rc, ResultCode::NeedSpace as i32);
    assert!(want > 10 && want <= 1 << 20);
    // Trailing bytes after the member are not part of it.
    let mut two = gz.clone();
    two.extend_from_slice(b"next member");
    let (rc, out, used, _) = decode(DecodeFormat::Gzip, &two, data.len(), 1 << 20);
    assert_eq!((rc, &out[..], used), (ok, &data[..], gz.len()));
    let (rc, ..) = decode(DecodeFormat::Gzip, &gz, 1000, 1000);
    assert_eq!(rc, ResultCode::TooBig as i32);
    let (rc, ..) = decode(DecodeFormat::Gzip, b"nope!nope!nope", 100, 1 << 20);
    assert_eq!(rc, ResultCode::Data as i32);
    assert_eq!(cmrx_gzip_level_valid(12), 1);
    assert_eq!(cmrx_gzip_level_valid(-1), 1);
    assert_eq!(cmrx_gzip_level_valid(13), 0);
    assert_eq!(cmrx_gzip_level_valid(-2), 0);
}

#[test]
fn decode_formats_by_magic() {
    let ok = ResultCode::Ok as i32;
    let data = b"the same data in three formats ".repeat(20);
    let gz = crate::testing::gzip_vec(&data, 6).unwrap();
    let z = crate::testing::zlib_vec(&data, 6).unwrap();
    let zs = zstd::compress_vec(&data, 3, None).unwrap();
    for (name, input) in [("gzip", &gz), ("zlib", &z), ("zstd", &zs)] {
        let (rc, out, ..) = decode(DecodeFormat::Any, input, data.len(), 1 << 20);
        assert_eq!((rc, out), (ok, data.clone()), "Any reads {name}");
        let (rc, ..) = decode(DecodeFormat::Cached, input, data.len(), 1 << 20);
        let want = if name == "zlib" {
            ResultCode::Data as i32
        } else {
            ok
        };
        assert_eq!(rc, want, "Cached reads zstd and gzip, not {name}");
    }
    let (rc, ..) = decode(DecodeFormat::Gzip, &zs, data.len(), 1 << 20);
    assert_eq!(rc, ResultCode::Data as i32, "Gzip is gzip only");
    let (rc, ..) = decode(DecodeFormat::Zstd, &gz, data.len(), 1 << 20);
    assert_eq!(rc, ResultCode::Data as i32, "Zstd is zstd only");
    let (rc, ..) = decode(DecodeFormat::Zstd, &zs, data.len() - 1, data.len() - 1);
    assert_eq!(rc, ResultCode::TooBig as i32);
    // SAFETY: a live slice and its length.
    let rc = unsafe { cmrx_decode_size_hint(99, zs.as_ptr(), zs.len(), 1 << 20) };
    assert_eq!(rc, 0, "an unknown format has no hint");
    let (rc, ..) = {
        let mut n = 0;
        let mut out = [0u8; 8];
        // SAFETY: live buffers with their lengths; NULL optional outputs.
        let rc = unsafe {
            cmrx_decode(
                99,
                zs.as_ptr(),
                zs.len(),
                out.as_mut_ptr(),
                8,
                8,
                &mut n,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        (rc, ())
    };
    assert_eq!(
        rc,
        ResultCode::Arg as i32,
        "an unknown format is a bad argument"
    );
}

/// A `cmrx_training` as a C caller fills it in: `k` 0 (searched), the
/// rest as given.
fn c_training(method: i32, d: u32, steps: u32, level: i32, id: u32) -> CmrxTraining {
    CmrxTraining {
        method,
        k: 0,
        d,
        steps,
        level,
        id,
    }
}

#[test]
fn zstd_training_choices_and_frame_sizes_through_the_abi() {
    let ok = ResultCode::Ok as i32;
    let samples: Vec<Vec<u8>> = (0..200)
        .map(|i| format!(r#"{{"id":{i},"kind":"event","at":{}}}"#, i * 977).into_bytes())
        .collect();
    let ptrs: Vec<*const u8> = samples.iter().map(|s| s.as_ptr()).collect();
    let lens: Vec<usize> = samples.iter().map(Vec::len).collect();
    let mut dict = vec![0u8; 4096];
    let mut dict_len = 0;
    let train_from =
        |count: usize, how: &mut CmrxTraining, dict: &mut Vec<u8>, dict_len: &mut usize| {
            assert!(count <= ptrs.len());
            // SAFETY: the sample arrays hold at least count entries of live
            // buffers; dict is writable for its length; how and dict_len
            // are writable locals.
            unsafe {
                cmrx_zstd_train_with(
                    ptrs.as_ptr(),
                    lens.as_ptr(),
                    count,
                    dict.len(),
                    how,
                    dict.as_mut_ptr(),
                    dict_len,
                )
            }
        };
    let train = |how: &mut CmrxTraining, dict: &mut Vec<u8>, dict_len: &mut usize| {
        train_from(ptrs.len(), how, dict, dict_len)
    };
    let mut how = c_training(TrainMethod::Cover as i32, 8, 3, 9, 17);
    assert_eq!(train(&mut how, &mut dict, &mut dict_len), ok);
    assert!(how.k >= zstd::TRAIN_MIN_K, "the k found: {}", how.k);
    assert_eq!(how.d, 8);
    let bytes = dict[..dict_len].to_vec();
    assert_eq!(zstd::Dictionary::from_bytes(&bytes).unwrap().id(), 17);
    let mut default = c_training(TrainMethod::FastCover as i32, 0, 4, 3, 0);
    assert_eq!(
        train_from(2, &mut default, &mut dict, &mut dict_len),
        ResultCode::Training as i32,
        "two samples are too few"
    );
    // Unknown methods and bad parameters are refused, and how is left
    // as it was.
    for (method, d) in [(0, 0), (4, 0), (TrainMethod::Samples as i32, 6)] {
        let mut bad = c_training(method, d, 0, 3, 0);
        assert_eq!(
            train(&mut bad, &mut dict, &mut dict_len),
            ResultCode::Arg as i32
        );
        assert_eq!((bad.k, bad.d), (0, d));
    }
    // SAFETY: NULL is refused before anything is read.
    let rc = unsafe {
        cmrx_zstd_train_with(
            ptrs.as_ptr(),
            lens.as_ptr(),
            ptrs.len(),
            dict.len(),
            ptr::null_mut(),
            dict.as_mut_ptr(),
            &mut dict_len,
        )
    };
    assert_eq!(rc, ResultCode::Arg as i32);

    // The sizes of the frames, with that dictionary, without one, and
    // with bytes that are not one.
    let d = zstd::Dictionary::from_bytes(&bytes).unwrap();
    let measure = |dict: &[u8], level: i32| {
        let mut sizes = vec![0usize; 10];
        let dict_ptr = if dict.is_empty() {
            ptr::null()
        } else {
            dict.as_ptr()
        };
        // SAFETY: the dictionary (NULL when empty) and the sample arrays
        // are live buffers with their lengths; sizes holds as many
        // entries as it is told.
        let rc = unsafe {
            cmrx_zstd_frame_sizes(
                dict_ptr,
                dict.len(),
                level,
                ptrs.as_ptr(),
                lens.as_ptr(),
                sizes.len(),
                sizes.as_mut_ptr(),
            )
        };
        (rc, sizes)
    };
    for (with, level) in [(true, 9), (false, 3)] {
        let dict = if with { &bytes[..] } else { &[][..] };
        let (rc, sizes) = measure(dict, level);
        assert_eq!(rc, ok);
        for (s, &n) in samples.iter().zip(&sizes) {
            let frame = zstd::compress_vec(s, level, with.then_some(&d)).unwrap();
            assert_eq!(frame.len(), n);
        }
    }
    assert_eq!(measure(b"nope", 3).0, ResultCode::BadDictionary as i32);
    assert_eq!(measure(&[], 23).0, ResultCode::Arg as i32);
    let mut sizes = vec![0usize; 10];
    // SAFETY: NULL arrays with a count are refused before anything is
    // read.
    let rc = unsafe {
        cmrx_zstd_frame_sizes(
            ptr::null(),
            0,
            3,
            ptr::null(),
            ptr::null(),
            10,
            sizes.as_mut_ptr(),
        )
    };
    assert_eq!(rc, ResultCode::Arg as i32);
}

#[test]
fn zstd_through_the_abi() {
    let ok = ResultCode::Ok as i32;
    let samples: Vec<Vec<u8>> = (0..300)
        .map(|i| format!(r#"{{"id":{i},"name":"user{}","roles":["a","b"]}}"#, i * 13).into_bytes())
        .collect();
    let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
    let dict = zstd::train(&refs, 4096).unwrap();
    let (mut id, mut again, mut bad) = (0, 0, 77);
    // SAFETY: every pointer is a live buffer with its length, or a
    // writable local.
    unsafe {
        assert_eq!(cmrx_zstd_register(dict.as_ptr(), dict.len(), &mut id), ok);
        assert!(id != 0);
        assert_eq!(
            cmrx_zstd_register(dict.as_ptr(), dict.len(), &mut again),
            ok
        );
        assert_eq!(again, id, "registering the same bytes again");
        assert_eq!(
            cmrx_zstd_register(b"not a dictionary".as_ptr(), 16, &mut bad),
            ResultCode::BadDictionary as i32
        );
        assert_eq!(bad, 0);
    }
    let compress = |dictionary: u32| {
        let value = &samples[7];
        let mut frame = vec![0u8; cmrx_zstd_compress_bound(value.len())];
        let mut frame_len = 0;
        // SAFETY: live buffers with their lengths, a writable local.
        let rc = unsafe {
            cmrx_zstd_compress(
                value.as_ptr(),
                value.len(),
                3,
                dictionary,
                frame.as_mut_ptr(),
                frame.len(),
                &mut frame_len,
            )
        };
        frame.truncate(frame_len);
        (rc, frame)
    };
    assert_eq!(compress(12345).0, ResultCode::UnknownDictionary as i32);
    let (rc, frame) = compress(id);
    assert_eq!(rc, ok);
    let (rc, out, ..) = decode(DecodeFormat::Cached, &frame, samples[7].len(), 1 << 20);
    assert_eq!((rc, out), (ok, samples[7].clone()));
    // A frame naming a dictionary nobody loaded: its ID comes back.
    let mut other = frame.clone();
    let at = 5; // after the magic and the frame header descriptor
    other[at] ^= 0x55;
    if zstd::frame_dictionary_id(&other).is_some_and(|d| d != id) {
        let (rc, _, _, missing) = decode(DecodeFormat::Cached, &other, 4096, 1 << 20);
        assert_eq!(rc, ResultCode::UnknownDictionary as i32);
        assert_eq!(Some(missing), zstd::frame_dictionary_id(&other));
    }
    let text = b"ffi test 77777";
    // SAFETY: text is readable for its length.
    let due = |now| unsafe { cmrx_report_due(text.as_ptr(), text.len(), now, 60) };
    assert_eq!(due(500), 1);
    assert_eq!(due(501), 0);
    assert_eq!(due(560), 1);
    assert_eq!(cmrx_zstd_level_valid(0), 1);
    assert_eq!(cmrx_zstd_level_valid(22), 1);
    assert_eq!(cmrx_zstd_level_valid(23), 0);
    // SAFETY: cmrx_status_str returns a static NUL-terminated string.
    let text =
        unsafe { std::ffi::CStr::from_ptr(cmrx_status_str(ResultCode::UnknownDictionary as i32)) };
    assert_eq!(
        text.to_str().unwrap(),
        ResultCode::UnknownDictionary.as_str()
    );
}

#[test]
fn dictionary_set_helpers_through_the_abi() {
    let ok = ResultCode::Ok as i32;
    let samples: Vec<Vec<u8>> = (0..300)
        .map(|i| format!(r#"{{"order":{i},"item":"sku{}","qty":{}}}"#, i * 17, i % 4).into_bytes())
        .collect();
    let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
    let dict = zstd::train(&refs, 2048).unwrap();
    let mut copy = vec![0u8; dict.len()];
    let (mut copy_len, mut id) = (0, 0);
    // SAFETY: every pointer is a live buffer of the length given, or a
    // writable local.
    unsafe {
        assert_eq!(
            cmrx_zstd_dictionary_id(dict.as_ptr(), dict.len(), &mut id),
            ok
        );
        assert_eq!(id, zstd::Dictionary::from_bytes(&dict).unwrap().id());
        assert_eq!(
            cmrx_zstd_dictionary_id(b"nope".as_ptr(), 4, &mut id),
            ResultCode::BadDictionary as i32
        );
        assert_eq!(
            cmrx_zstd_dictionary_id(dict.as_ptr(), 1, ptr::null_mut()),
            ResultCode::Arg as i32
        );
        let rc = cmrx_zstd_dictionary_with_id(
            dict.as_ptr(),
            dict.len(),
            90_001,
            copy.as_mut_ptr(),
            &mut copy_len,
        );
        assert_eq!((rc, copy_len), (ok, dict.len()));
        assert_eq!(
            cmrx_zstd_dictionary_id(copy.as_ptr(), copy_len, &mut id),
            ok
        );
        assert_eq!(id, 90_001);
        let rc = cmrx_zstd_dictionary_with_id(
            dict.as_ptr(),
            dict.len(),
            0,
            copy.as_mut_ptr(),
            &mut copy_len,
        );
        assert_eq!(rc, ResultCode::Arg as i32);
        let rc =
            cmrx_zstd_dictionary_with_id(b"nope".as_ptr(), 4, 9, copy.as_mut_ptr(), &mut copy_len);
        assert_eq!(rc, ResultCode::BadDictionary as i32);

        assert_eq!(
            cmrx_zstd_prepare(90_001, 9),
            ResultCode::UnknownDictionary as i32
        );
        assert_eq!(
            cmrx_zstd_loaded_state(90_001, copy.as_ptr(), copy.len()),
            LoadedState::NotLoaded as i32
        );
        assert_eq!(cmrx_zstd_register(copy.as_ptr(), copy.len(), &mut id), ok);
        assert_eq!(cmrx_zstd_prepare(90_001, 9), ok);
        assert_eq!(cmrx_zstd_prepare(90_001, 99), ResultCode::Arg as i32);
        assert_eq!(
            cmrx_zstd_loaded_state(90_001, copy.as_ptr(), copy.len()),
            LoadedState::Same as i32
        );
        assert_eq!(
            cmrx_zstd_loaded_state(90_001, dict.as_ptr(), dict.len()),
            LoadedState::Different as i32
        );
        assert_eq!(
            cmrx_zstd_loaded_state(90_001, ptr::null(), 5),
            LoadedState::Error as i32,
            "a NULL pointer with a length is refused"
        );
    }
}

#[test]
fn stored_values_inspected_through_the_abi() {
    let data = b"a value stored compressed ".repeat(10);
    let zs = zstd::compress_vec(&data, 3, None).unwrap();
    let cases: [(&[u8], i32); 5] = [
        (&zs, DecodeFormat::Zstd as i32),
        (
            &crate::testing::gzip_vec(&data, 6).unwrap(),
            DecodeFormat::Gzip as i32,
        ),
        (
            &crate::testing::zlib_vec(&data, 6).unwrap(),
            DecodeFormat::Zlib as i32,
        ),
        (b"never compressed", 0),
        (b"", 0),
    ];
    for (input, want) in cases {
        // SAFETY: a live slice and its length.
        let got = unsafe { cmrx_decoder_format(input.as_ptr(), input.len()) };
        assert_eq!(got, want);
    }
    // SAFETY: NULL with a length is refused without a read.
    assert_eq!(unsafe { cmrx_decoder_format(ptr::null(), 4) }, 0);
    let mut id = 77;
    // SAFETY: live slices with their lengths, a writable local, or NULL on
    // purpose where the ABI must refuse it.
    unsafe {
        assert_eq!(
            cmrx_zstd_frame_dictionary(zs.as_ptr(), zs.len(), &mut id),
            ResultCode::Ok as i32
        );
        assert_eq!(id, 0, "a frame without a dictionary");
        let gz = b"\x1f\x8b\x08\x00";
        assert_eq!(
            cmrx_zstd_frame_dictionary(gz.as_ptr(), gz.len(), &mut id),
            ResultCode::Data as i32
        );
        assert_eq!(
            cmrx_zstd_frame_dictionary(zs.as_ptr(), 5, &mut id),
            ResultCode::Data as i32
        );
        assert_eq!(
            cmrx_zstd_frame_dictionary(ptr::null(), 5, &mut id),
            ResultCode::Arg as i32
        );
        assert_eq!(
            cmrx_zstd_frame_dictionary(zs.as_ptr(), zs.len(), ptr::null_mut()),
            ResultCode::Arg as i32
        );
    }
    let mut named = zstd::compress_vec(&data, 3, None).unwrap();
    // A hand-made header naming dictionary 0x01020304 (no content size,
    // a window byte).
    named.splice(4..named.len(), [0x03, 7 << 3, 4, 3, 2, 1]);
    // SAFETY: a live slice and its length, a writable local.
    let rc = unsafe { cmrx_zstd_frame_dictionary(named.as_ptr(), named.len(), &mut id) };
    assert_eq!((rc, id), (ResultCode::Ok as i32, 0x0102_0304));
}

#[test]
fn version_is_the_crates() {
    // SAFETY: cmrx_version returns a static NUL-terminated string.
    let v = unsafe { std::ffi::CStr::from_ptr(cmrx_version()) };
    assert_eq!(v.to_str().unwrap(), crate::VERSION);
}

#[test]
fn counters_through_the_abi() {
    // Process-wide counts: only what this test adds is asserted.
    let rows = || {
        // SAFETY: NULL with a capacity of 0 only counts the rows.
        let n = unsafe { cmrx_traffic_counts(ptr::null_mut(), 0) };
        let mut rows = vec![CmrxTraffic::default(); n];
        // SAFETY: rows is writable for n entries.
        let got = unsafe { cmrx_traffic_counts(rows.as_mut_ptr(), n) };
        rows.truncate(got.min(n));
        rows
    };
    let gzip_written = |rows: &[CmrxTraffic]| {
        let row = rows
            .iter()
            .find(|r| r.kind == TrafficKind::Gzip as i32)
            .unwrap();
        (row.written, row.written_raw, row.written_stored)
    };
    let before = gzip_written(&rows());
    assert_eq!(
        cmrx_note_written(TrafficKind::Gzip as i32, 0, 1000, 300),
        ResultCode::Ok as i32
    );
    let after = gzip_written(&rows());
    assert_eq!(
        (after.0 - before.0, after.1 - before.1, after.2 - before.2),
        (1, 1000, 300)
    );
    assert!(
        rows().len() >= counters::plain_traffic().len(),
        "the kinds without a dictionary, always"
    );
    assert_eq!(
        cmrx_note_written(TrafficKind::ZstdDictionary as i32, 4_100_000_001, 10, 5),
        ResultCode::UnknownDictionary as i32
    );
    assert_eq!(cmrx_note_written(99, 0, 10, 5), ResultCode::Arg as i32);

    let mut events = [0u64; counters::EVENTS];
    let count = |events: &mut [u64]| {
        // SAFETY: events is writable for its length.
        unsafe { cmrx_event_counts(events.as_mut_ptr(), events.len()) }
    };
    assert_eq!(count(&mut events), counters::EVENTS);
    let before = events[counters::Event::TooSmall as usize];
    assert_eq!(
        cmrx_note_event(counters::Event::TooSmall as i32),
        ResultCode::Ok as i32
    );
    count(&mut events);
    assert!(events[counters::Event::TooSmall as usize] > before);
    assert_eq!(cmrx_note_event(-5), ResultCode::Arg as i32);
    // SAFETY: NULL with a capacity of 0 only counts the kinds.
    let kinds = unsafe { cmrx_event_counts(ptr::null_mut(), 0) };
    assert_eq!(kinds, counters::EVENTS);
}
