//! The engine of Cache::Memcached::RustXS.
//!
//! Bytes in, bytes or events out: no I/O and no Perl. [`parser`] turns the
//! bytes of a memcached text-protocol `get` response into events; [`deflate`]
//! is gzip and zlib with Compress::Zlib's semantics on top of libdeflate;
//! [`zstd`] is zstd with trained dictionaries on top of libzstd; [`decode`]
//! picks the decoder a compressed value gets by its magic bytes; [`sniff`]
//! tells already-compressed payloads by their magic bytes; [`counters`]
//! counts what the process wrote and read, and [`traffic`] says which
//! counters a value goes to. [`ffi`] is the C
//! ABI that the XS shim (`perl/RustXS.xs`) calls, declared in `rust/cmrx.h`:
//! it only converts between C and these modules and forwards.
//!
//! The functions are pure but for the state they keep for speed (per-thread
//! compressors and contexts, a dictionary's tables prepared on first use)
//! and the process-wide tables: zstd's registry of dictionaries by ID, with
//! when each missing one was last reported, and the [`counters`].

#![deny(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]
#![warn(unsafe_op_in_unsafe_fn)]

#[macro_use]
mod abi_codes;
// Before the codecs, which word their errors with its codec_error_display!.
#[macro_use]
mod codec_error;
// Before the decoders, which use its asks_for_space! macro.
#[macro_use]
mod growth;

pub mod counters;
pub mod decode;
pub mod deflate;
pub mod ffi;
pub mod parser;
mod per_thread;
pub mod sniff;
/// Test support for the parser: its unit tests and the `parser_split` fuzz
/// target (which enables the `testing` feature) share it.
#[cfg(any(test, feature = "testing"))]
#[doc(hidden)]
pub mod testing;
pub mod traffic;
pub mod warning_rate;
pub mod zstd;

/// The engine's version: the distribution's one version number.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

#[cfg(test)]
mod tests {
    /// Every error type of the engine is a `std::error::Error` (so also
    /// `Display`), and can cross threads.
    #[test]
    fn every_error_type_is_an_error() {
        fn is_error<E: std::error::Error + Send + Sync + 'static>() {}
        is_error::<crate::deflate::DeflateError>();
        is_error::<crate::decode::Error>();
        is_error::<crate::parser::ParseError>();
        is_error::<crate::parser::DataOverrun>();
        is_error::<crate::zstd::Error>();
    }
}
