//! The declaration of the engine's numbered codes (see [`abi_codes!`]).

/// Declares a `#[repr(i32)]` enum of C ABI codes together with the table of
/// their C names (and, in the second form, their messages), from one list,
/// so that nothing written beside it can drift apart from it.
macro_rules! abi_codes {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident = $value:expr => $cname:literal,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(i32)]
        pub enum $name {
            $($(#[$vmeta])* $variant = $value,)*
        }

        impl $name {
            /// Every code with its `cmrx.h` name, in declaration order.
            pub const ALL: &'static [($name, &'static str)] =
                &[$(($name::$variant, $cname),)*];

            /// The one with this code, if any.
            #[allow(dead_code)] // not every enum is read back from C
            pub fn from_code(code: i32) -> Option<$name> {
                $name::ALL
                    .iter()
                    .map(|&(known, _)| known)
                    .find(|&known| known as i32 == code)
            }
        }
    };
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident = $value:expr => $cname:literal : $message:literal,)*
        }
    ) => {
        abi_codes! {
            $(#[$meta])*
            pub enum $name {
                $($(#[$vmeta])* $variant = $value => $cname,)*
            }
        }

        impl $name {
            /// A short English description, for messages.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $message,)*
                }
            }
        }
    };
}
