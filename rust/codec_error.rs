//! How the codecs' errors read: the failures every codec shares, worded
//! once (see [`codec_error_display!`]).

/// Implements `Display` and `std::error::Error` for a codec's error enum.
///
/// Every codec's error has the variants `NeedSpace(usize)`, `Data`,
/// `TooBig`, `Arg` and `NoMemory` (the ones the C ABI reports alike); this
/// words them once, naming the codec's format. The arms after the `;` word
/// the codec's own variants, with the formatter named by the identifier
/// given first:
///
/// ```text
/// codec_error_display! {
///     /// doc of `fmt`, with its examples
///     Error, "zstd", f;
///     Self::Training => f.write_str("zstd dictionary training failed"),
/// }
/// ```
macro_rules! codec_error_display {
    (
        $(#[$doc:meta])*
        $error:ty, $format:literal, $f:ident;
        $($own:pat => $message:expr,)*
    ) => {
        impl core::fmt::Display for $error {
            $(#[$doc])*
            fn fmt(&self, $f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                match *self {
                    Self::NeedSpace(n) => write!($f, "output buffer too small: {n} bytes needed"),
                    Self::Data => $f.write_str(concat!("corrupt or truncated ", $format, " data")),
                    Self::TooBig => $f.write_str(concat!($format, " data larger than the size limit")),
                    Self::Arg => $f.write_str(concat!("bad argument to ", $format)),
                    Self::NoMemory => $f.write_str(concat!("out of memory in ", $format)),
                    $($own => $message,)*
                }
            }
        }

        impl std::error::Error for $error {}
    };
}
