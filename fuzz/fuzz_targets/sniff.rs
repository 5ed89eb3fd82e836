//! The magic sniffer on arbitrary bytes: never panics; a format it returns
//! round-trips through its C ABI code (`Format::from_code(f.code()) ==
//! Some(f)`, codes 1..=len of `Format::all()`, a non-empty name); and, as
//! documented, it looks at no more than the first 16 bytes.
#![no_main]

use cmrx::sniff::{sniff, Format};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let got = sniff(data);
    if let Some(f) = got {
        assert_eq!(Format::from_code(f.code()), Some(f), "{f:?}");
        let code = usize::try_from(f.code()).expect("code >= 1");
        assert!(
            (1..=Format::all().len()).contains(&code),
            "{f:?} code {code}"
        );
        assert_eq!(Format::all()[code - 1], f);
        assert!(!f.name().is_empty());
    }
    assert_eq!(
        sniff(&data[..data.len().min(16)]),
        got,
        "looked past byte 16"
    );
});
