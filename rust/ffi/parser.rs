//! The C ABI of the response parser ([`crate::parser`]): plumbing only.

use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, addr_of_mut};

use super::{input, Messages, ResultCode};
use crate::parser::{Event, ParseError, ParseStatus, ResponseParser};

abi_codes! {
    /// What `cmrx_parser_next` returns: the kind of event it stored.
    pub enum EventKind {
        /// The response is bad: `error` says why; the parser is dead.
        Error = -1 => "CMRX_EV_ERROR",
        /// No complete event in the buffer: keep its bytes, read more.
        Partial = 0 => "CMRX_EV_PARTIAL",
        /// A `VALUE` line: key, flags, len (and cas) are set.
        Value = 1 => "CMRX_EV_VALUE",
        /// Data bytes of the current value: data, data_len.
        Data = 2 => "CMRX_EV_DATA",
        /// The value's data and its `\r\n` are complete.
        ValueEnd = 3 => "CMRX_EV_VALUE_END",
        /// `END\r\n`: the response is complete.
        End = 4 => "CMRX_EV_END",
    }
}

/// The parse error code of a caught panic (`CMRX_PE_INTERNAL`): a bug.
pub const PARSE_INTERNAL: i32 = 99;

/// The message of [`PARSE_INTERNAL`].
pub(super) const PARSE_INTERNAL_MESSAGE: &str = "internal error in the response parser";

/// Mirrors `struct cmrx_event` in cmrx.h field for field.
#[repr(C)]
pub struct CmrxEvent {
    /// Bytes of the buffer this event used (0 for PARTIAL).
    pub consumed: usize,
    /// VALUE: the key, pointing into the buffer.
    pub key: *const u8,
    /// VALUE: the key's length.
    pub key_len: usize,
    /// VALUE: client flags.
    pub flags: u32,
    /// VALUE: declared data length.
    pub len: u64,
    /// VALUE: cas unique, when `has_cas`.
    pub cas: u64,
    /// VALUE: whether `cas` is set.
    pub has_cas: i32,
    /// DATA: the bytes, pointing into the buffer.
    pub data: *const u8,
    /// DATA: how many.
    pub data_len: usize,
    /// ERROR: a `CMRX_PE_*` code.
    pub error: i32,
}

/// The opaque `cmrx_parser` of cmrx.h.
pub struct CmrxParser(ResponseParser);

/// A new parser (`cmrx_parser_new`): NULL if memory is short or on a panic.
#[no_mangle]
pub extern "C" fn cmrx_parser_new(max_value_len: u64) -> *mut CmrxParser {
    catch_unwind(|| Box::into_raw(Box::new(CmrxParser(ResponseParser::new(max_value_len)))))
        .unwrap_or(ptr::null_mut())
}

/// Frees a parser (`cmrx_parser_free`).
///
/// # Safety
/// `parser` is NULL or came from `cmrx_parser_new` and is not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn cmrx_parser_free(parser: *mut CmrxParser) {
    if !parser.is_null() {
        // SAFETY: the pointer came from Box::into_raw in cmrx_parser_new and the
        // caller gives up its ownership here. Dropping a parser cannot panic.
        drop(unsafe { Box::from_raw(parser) });
    }
}

/// Writes the fields of `ev` that `kind` defines, through the raw pointer:
/// the caller's struct may be uninitialised, so no reference to it is made.
///
/// # Safety
/// `ev` is non-NULL and points to a writable `cmrx_event`.
unsafe fn store_event(ev: *mut CmrxEvent, consumed: usize, event: &Event<'_>) -> EventKind {
    // SAFETY: ev points to a writable cmrx_event (the caller's contract);
    // addr_of_mut! takes each field's address without creating a reference
    // to possibly uninitialised memory, and write() neither reads nor drops
    // the old value.
    unsafe {
        addr_of_mut!((*ev).consumed).write(consumed);
        match *event {
            Event::Data(data) => {
                addr_of_mut!((*ev).data).write(data.as_ptr());
                addr_of_mut!((*ev).data_len).write(data.len());
                EventKind::Data
            }
            Event::ValueEnd => EventKind::ValueEnd,
            Event::Value {
                key,
                flags,
                len,
                cas,
            } => {
                addr_of_mut!((*ev).key).write(key.as_ptr());
                addr_of_mut!((*ev).key_len).write(key.len());
                addr_of_mut!((*ev).flags).write(flags);
                addr_of_mut!((*ev).len).write(len);
                addr_of_mut!((*ev).has_cas).write(i32::from(cas.is_some()));
                addr_of_mut!((*ev).cas).write(cas.unwrap_or(0));
                EventKind::Value
            }
            Event::End => EventKind::End,
        }
    }
}

/// Stores an error code in `ev` (which may be uninitialised).
///
/// # Safety
/// `ev` is non-NULL and points to a writable `cmrx_event`.
unsafe fn store_error(ev: *mut CmrxEvent, code: i32) -> i32 {
    // SAFETY: as in store_event.
    unsafe {
        addr_of_mut!((*ev).consumed).write(0);
        addr_of_mut!((*ev).error).write(code);
    }
    EventKind::Error as i32
}

/// The next event at the front of `buf[0..len)` (`cmrx_parser_next`).
///
/// # Safety
/// `parser` is a live pointer from `cmrx_parser_new` (or NULL), used by one
/// thread at a time; `buf` points to `len` readable bytes; `ev` to a
/// writable, possibly uninitialised `cmrx_event`. The key and data pointers
/// stored in `ev` point into `buf`.
#[no_mangle]
pub unsafe extern "C" fn cmrx_parser_next(
    parser: *mut CmrxParser,
    buf: *const u8,
    len: usize,
    ev: *mut CmrxEvent,
) -> i32 {
    if ev.is_null() {
        return EventKind::Error as i32; // nowhere to say more
    }
    // SAFETY: parser is NULL or live and not shared during the call (the
    // caller's contract); as_mut yields None for NULL.
    let Some(parser) = (unsafe { parser.as_mut() }) else {
        // SAFETY: ev was checked non-NULL and is writable (contract).
        return unsafe { store_error(ev, PARSE_INTERNAL) };
    };
    if buf.is_null() && len != 0 {
        // SAFETY: as above.
        return unsafe { store_error(ev, PARSE_INTERNAL) };
    }
    // SAFETY: buf/len describe readable memory for the duration of the call
    // (contract; NULL only with len 0, checked above).
    let bytes = unsafe { input(buf, len) };
    // Only the fields the returned kind defines are written (cmrx.h): this
    // runs three times per value on the hot path.
    let outcome = catch_unwind(AssertUnwindSafe(|| parser.0.next(bytes)));
    match outcome {
        Ok(Ok(ParseStatus::Complete((consumed, event)))) => {
            // SAFETY: ev checked non-NULL, writable by contract.
            unsafe { store_event(ev, consumed, &event) as i32 }
        }
        Ok(Ok(ParseStatus::Partial)) => {
            // SAFETY: ev checked non-NULL, writable by contract.
            unsafe { addr_of_mut!((*ev).consumed).write(0) };
            EventKind::Partial as i32
        }
        Ok(Err(e)) => {
            // SAFETY: ev checked non-NULL, writable by contract.
            unsafe { store_error(ev, e.code()) }
        }
        Err(_) => {
            // SAFETY: ev checked non-NULL, writable by contract.
            unsafe { store_error(ev, PARSE_INTERNAL) }
        }
    }
}

/// Data bytes still expected for the current value
/// (`cmrx_parser_data_remaining`).
///
/// # Safety
/// `parser` is NULL or a live pointer from `cmrx_parser_new`.
#[no_mangle]
pub unsafe extern "C" fn cmrx_parser_data_remaining(parser: *const CmrxParser) -> u64 {
    // SAFETY: parser is NULL or live (contract); as_ref yields None for NULL.
    unsafe { parser.as_ref() }.map_or(0, |p| p.0.data_remaining())
}

/// Counts `n` data bytes of the current value as consumed, bytes the
/// caller read straight into its own buffer (`cmrx_parser_take_data`, see
/// [`ResponseParser::take_data`]): `CMRX_OK`, or `CMRX_E_ARG` for a NULL
/// parser or more bytes than the value has left (the parser unchanged).
///
/// # Safety
/// `parser` is NULL or a live pointer from `cmrx_parser_new`, used by one
/// thread at a time.
#[no_mangle]
pub unsafe extern "C" fn cmrx_parser_take_data(parser: *mut CmrxParser, n: u64) -> i32 {
    // SAFETY: parser is NULL or live and not shared during the call (the
    // caller's contract); as_mut yields None for NULL.
    let Some(parser) = (unsafe { parser.as_mut() }) else {
        return ResultCode::Arg as i32;
    };
    match catch_unwind(AssertUnwindSafe(|| parser.0.take_data(n))) {
        Ok(Ok(())) => ResultCode::Ok as i32,
        Ok(Err(_)) => ResultCode::Arg as i32,
        Err(_) => ResultCode::Panic as i32,
    }
}

/// A static, NUL-terminated description of a `CMRX_PE_*` code
/// (`cmrx_parse_error_str`): [`ParseError`]'s own message, the one table;
/// an unknown code gets `CMRX_PE_INTERNAL`'s.
#[no_mangle]
pub extern "C" fn cmrx_parse_error_str(error: i32) -> *const c_char {
    static MESSAGES: Messages = Messages::new();
    MESSAGES.find(error, PARSE_INTERNAL, || {
        ParseError::ALL
            .iter()
            .map(|&(e, _)| (e.code(), e.as_str()))
            .chain([(PARSE_INTERNAL, PARSE_INTERNAL_MESSAGE)])
            .collect()
    })
}
