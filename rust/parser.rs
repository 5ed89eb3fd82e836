//! A sans-I/O parser of memcached text-protocol `get` / `gets` responses.
//!
//! In the spirit of `httparse`: the caller owns the bytes and the socket, the
//! parser only looks at whatever the caller has buffered and says what is at
//! the front of it. It never allocates and holds a few integers of state, so it
//! can be resumed at any byte boundary.
//!
//! A response is
//!
//! ```text
//! VALUE <key> <flags> <bytes>[ <cas unique>]\r\n
//! <data block of exactly <bytes> bytes>\r\n
//! ... more VALUE items ...
//! END\r\n
//! ```
//!
//! or, instead of any line, `ERROR`, `CLIENT_ERROR <msg>` or `SERVER_ERROR
//! <msg>`. Each call to [`ResponseParser::next`] returns one [`Event`] and how
//! many bytes it used, [`ParseStatus::Partial`] when the buffer does not yet hold a
//! whole event (nothing is used then: the caller keeps its bytes, appends more
//! and calls again), or a [`ParseError`].
//!
//! The parser is strict, and it fails fast: an error is reported as soon as the
//! buffered bytes prove it, never after waiting for bytes that cannot make the
//! response valid (the old Perl and XS parsers wait for a timeout instead).
//! Lines are checked left to right, byte by byte, so the error reported for a
//! bad response is the same however its bytes were split into reads. (A whole
//! well-formed line already in the buffer takes a quicker one-pass path to the
//! same result.)
//!
//! A key is whatever memcached lets through its text protocol: 1 to
//! [`MAX_KEY_LEN`] bytes, none of them NUL, space or `\n`. Every other byte
//! (tab, `\r`, the other control bytes, DEL, bytes from 0x80 up) is stored by
//! memcached's `set` and returned by its `get`, anywhere in a key, while NUL
//! cuts its command line short, a space separates keys and `\n` ends the line
//! (measured on memcached 1.6.18). Clients such as Cache::Memcached do not
//! check keys, so a response may hold any of them, and one odd key must not
//! fail the others. A `\r` is a key byte unless a `\n` follows it and makes it
//! the line end. A bad key fails as follows, however the line is split into
//! reads:
//!
//! * a NUL byte, or a key byte past the 250th: [`ParseError::BadKey`] at that
//!   byte (a `\r` there shows it only once the next byte is not `\n`);
//! * an empty key: [`ParseError::BadKey`] at the space after it;
//! * a `\n` without `\r` before it: [`ParseError::BadLineEnd`], the line
//!   having ended there (after the bytes before it are judged);
//! * `\r\n` right after the key: [`ParseError::BadValueLine`], a line
//!   without flags and length.
//!
//! Memory stays bounded even for a hostile server: a line is at most
//! [`MAX_LINE_LEN`] bytes including its `\r\n`, so a caller never buffers more
//! than that of an unfinished line; data blocks are handed out as
//! [`Event::Data`] chunks as they arrive, and a declared length is only
//! compared with the limit, never used to reserve memory.

use memchr::memchr;

/// The default limit on a value's declared length: 1 GiB, the largest item
/// `memcached -I` allows.
pub const DEFAULT_MAX_VALUE_LEN: u64 = 1 << 30;

/// The longest key memcached accepts, in bytes.
pub const MAX_KEY_LEN: usize = 250;

/// The longest response line (`VALUE`, `END` or an error line), in bytes,
/// counting its `\r\n`. Buffered bytes that reach this length without a line
/// end are [`ParseError::LineTooLong`]. A real `VALUE` line is at most about
/// 310 bytes; the rest is room for long server error messages and leading
/// zeros.
pub const MAX_LINE_LEN: usize = 2048;

/// The outcome of a successful [`ResponseParser::next`] call: a whole event,
/// or not yet one (httparse's `Status`, named for what it reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseStatus<T> {
    /// A whole event was at the front of the buffer.
    Complete(T),
    /// The buffer holds no whole event yet: nothing was consumed; append more
    /// bytes and call again.
    Partial,
}

/// One piece of a `get` response. Slices point into the caller's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    /// `VALUE <key> <flags> <bytes>[ <cas>]\r\n`; `len` data bytes follow.
    Value {
        /// The key, 1 to [`MAX_KEY_LEN`] bytes, none of them NUL, space or `\n`;
        /// any other byte may be in it, as in memcached's own keys: tab, `\r`,
        /// other control bytes, DEL, bytes of 0x80 and above (UTF-8 keys).
        key: &'a [u8],
        /// The item's client flags.
        flags: u32,
        /// The declared length of the data block, at most the parser's limit.
        len: u64,
        /// The cas unique, present in `gets` responses.
        cas: Option<u64>,
    },
    /// Some bytes of the current value's data block (never more than remain,
    /// never empty).
    Data(&'a [u8]),
    /// The data block and the `\r\n` after it are complete.
    ValueEnd,
    /// `END\r\n`: the response is complete.
    End,
}

abi_codes! {
    /// Why a response is bad. Once a parser has returned one, it returns the same
    /// error on every later call until [`ResponseParser::reset`].
    pub enum ParseError {
        /// The server replied `SERVER_ERROR <msg>`.
        ServerError = 1 => "CMRX_PE_SERVER_ERROR"
            : "server replied SERVER_ERROR",
        /// The server replied `CLIENT_ERROR <msg>`.
        ClientError = 2 => "CMRX_PE_CLIENT_ERROR"
            : "server replied CLIENT_ERROR",
        /// The server replied `ERROR`.
        Error = 3 => "CMRX_PE_ERROR"
            : "server replied ERROR",
        /// A line that is neither `VALUE`, `END` nor an error line (including an
        /// empty line, and `END` followed by anything).
        UnknownLine = 4 => "CMRX_PE_UNKNOWN_LINE"
            : "unexpected line in get response",
        /// A `VALUE` line with a wrong number of fields or an empty number field.
        BadValueLine = 5 => "CMRX_PE_BAD_VALUE_LINE"
            : "malformed VALUE line",
        /// A key that is empty or longer than [`MAX_KEY_LEN`], or has a NUL byte
        /// in it. (A space ends the key; a `\n` in it ends the line, which is
        /// [`BadLineEnd`](Self::BadLineEnd) without a `\r` before it; other
        /// bytes, `\r` and control bytes included, are key bytes: see the module
        /// docs.)
        BadKey = 6 => "CMRX_PE_BAD_KEY"
            : "bad key in VALUE line",
        /// Flags, length or cas with a non-digit in it, or too big for its type
        /// (`u32` for flags, `u64` for the others).
        BadNumber = 7 => "CMRX_PE_BAD_NUMBER"
            : "bad flags, length or cas in VALUE line",
        /// A declared data length over the parser's limit.
        TooLarge = 8 => "CMRX_PE_TOO_LARGE"
            : "value length over the limit",
        /// The two bytes after a data block are not `\r\n`.
        BadTerminator = 9 => "CMRX_PE_BAD_TERMINATOR"
            : "data block not followed by \\r\\n",
        /// [`MAX_LINE_LEN`] bytes without a line end.
        LineTooLong = 10 => "CMRX_PE_LINE_TOO_LONG"
            : "response line too long",
        /// A line ended by `\n` without `\r` before it.
        BadLineEnd = 11 => "CMRX_PE_BAD_LINE_END"
            : "line ended by \\n without \\r",
        /// Bytes after `END\r\n`.
        AfterEnd = 12 => "CMRX_PE_AFTER_END"
            : "bytes after END",
    }
}

impl ParseError {
    /// The stable code of the error (1 to 12), its `CMRX_PE_*` value in
    /// `rust/cmrx.h`.
    #[must_use]
    pub fn code(self) -> i32 {
        self as i32
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::error::Error for ParseError {}

/// [`ResponseParser::take_data`] was told of more data bytes than the
/// current value has left: a bug of the caller, not of the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataOverrun {
    /// The bytes the caller said it consumed.
    pub taken: u64,
    /// The data bytes the value had left.
    pub remaining: u64,
}

impl std::fmt::Display for DataOverrun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} data bytes taken, {} left in the value",
            self.taken, self.remaining
        )
    }
}

impl std::error::Error for DataOverrun {}

/// Where the parser is within a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// At the start of a line: `VALUE`, `END` or an error line. Nothing of an
    /// unfinished line is ever consumed, so no line state is kept.
    Line,
    /// Inside a data block, with this many bytes (at least 1) still to come.
    Data(u64),
    /// After a data block, expecting its `\r\n`.
    Terminator,
    /// `END\r\n` seen.
    Done,
    /// A bad response; the error is repeated on every call.
    Failed(ParseError),
}

/// The field of a `VALUE` line being scanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Key,
    Flags,
    Bytes,
    Cas,
}

/// A resumable parser of one `get` response (see the module docs).
#[derive(Debug, Clone)]
pub struct ResponseParser {
    state: State,
    max_value_len: u64,
}

impl Default for ResponseParser {
    /// A parser with [`DEFAULT_MAX_VALUE_LEN`].
    fn default() -> Self {
        ResponseParser::new(DEFAULT_MAX_VALUE_LEN)
    }
}

impl ResponseParser {
    /// A parser accepting values of at most `max_value_len` bytes; 0 means
    /// [`DEFAULT_MAX_VALUE_LEN`] (0 is the C ABI's "no preference").
    #[must_use]
    pub fn new(max_value_len: u64) -> Self {
        let max_value_len = if max_value_len == 0 {
            DEFAULT_MAX_VALUE_LEN
        } else {
            max_value_len
        };
        ResponseParser {
            state: State::Line,
            max_value_len,
        }
    }

    /// Forgets the current response (and any error): ready for a new one.
    pub fn reset(&mut self) {
        self.state = State::Line;
    }

    /// The next event at the front of `buf`.
    ///
    /// `Ok(Complete((consumed, event)))`: the caller drops `consumed` bytes
    /// (at least 1) from the front of its buffer; `event` borrows from `buf`.
    /// `Ok(Partial)`: `buf` holds no complete event, nothing consumed; the
    /// caller keeps `buf`'s bytes, appends more and calls again (an empty `buf`
    /// is always `Partial`).
    ///
    /// # Errors
    ///
    /// The response is bad, as soon as the bytes in `buf` prove it; see
    /// [`ParseError`] for the reasons. The parser stays failed and returns the
    /// same error on every later call, until [`reset`](Self::reset).
    ///
    /// ```
    /// use cmrx::parser::{Event, ParseStatus, ResponseParser};
    /// let response = b"VALUE greeting 0 5\r\nhello\r\nEND\r\n";
    /// let mut p = ResponseParser::default();
    /// // Bytes that hold no whole event yet: read more.
    /// assert_eq!(p.next(&response[..10]), Ok(ParseStatus::Partial));
    /// let (mut at, mut value) = (0, Vec::new());
    /// while !p.is_complete() {
    ///     let Ok(ParseStatus::Complete((used, event))) = p.next(&response[at..]) else {
    ///         panic!("the whole response is there, and good");
    ///     };
    ///     if let Event::Data(bytes) = event {
    ///         value.extend_from_slice(bytes);
    ///     }
    ///     at += used;
    /// }
    /// assert_eq!((at, &value[..]), (response.len(), &b"hello"[..]));
    /// ```
    #[inline]
    pub fn next<'a>(
        &mut self,
        buf: &'a [u8],
    ) -> Result<ParseStatus<(usize, Event<'a>)>, ParseError> {
        // The common cases first, each settled by a few comparisons: a whole
        // data block or part of one, its `\r\n`, a whole well-formed `VALUE`
        // line, `END\r\n`. Everything else (unfinished lines, errors, rare
        // but valid lines) is judged by `next_slow`, byte by byte.
        match self.state {
            State::Data(remaining) if !buf.is_empty() => {
                return Ok(ParseStatus::Complete(self.next_data(buf, remaining)));
            }
            State::Terminator if buf.starts_with(b"\r\n") => {
                self.state = State::Line;
                return Ok(ParseStatus::Complete((2, Event::ValueEnd)));
            }
            State::Line => {
                if let Some(done) = self.fast_line(buf) {
                    return Ok(ParseStatus::Complete(done));
                }
            }
            _ => {}
        }
        self.next_slow(buf)
    }

    /// [`next`](Self::next) for everything its fast paths leave.
    #[cold]
    #[inline(never)]
    fn next_slow<'a>(
        &mut self,
        buf: &'a [u8],
    ) -> Result<ParseStatus<(usize, Event<'a>)>, ParseError> {
        let result = match self.state {
            State::Failed(e) => return Err(e),
            State::Line => self.next_line(buf),
            State::Data(_) => Ok(ParseStatus::Partial), // buf is empty
            State::Terminator => self.next_terminator(buf),
            State::Done if buf.is_empty() => Ok(ParseStatus::Partial),
            State::Done => Err(ParseError::AfterEnd),
        };
        if let Err(e) = result {
            self.state = State::Failed(e);
        }
        result
    }

    /// Data bytes still expected for the current value; 0 outside a data
    /// block (including while waiting for the `\r\n` after it).
    #[must_use]
    pub fn data_remaining(&self) -> u64 {
        match self.state {
            State::Data(remaining) => remaining,
            _ => 0,
        }
    }

    /// Counts `n` data bytes of the current value as consumed, for a caller
    /// that read them straight into its own buffer without showing them to
    /// [`next`](Self::next): data is never looked at, so its count is all the
    /// parser needs. The parser then stands where a `next` call that returned
    /// [`Event::Data`] of those `n` bytes would have left it (after the last
    /// data byte, it expects the value's `\r\n`). `n` may be 0.
    ///
    /// # Errors
    ///
    /// `n` is more than [`data_remaining`](Self::data_remaining) (which is 0
    /// outside a data block): the caller's bytes are not this value's. The
    /// parser is left as it was.
    ///
    /// ```
    /// use cmrx::parser::{Event, ResponseParser, ParseStatus};
    /// let mut p = ResponseParser::default();
    /// p.next(b"VALUE k 0 5\r\n").unwrap();
    /// assert_eq!(p.take_data(3), Ok(()));
    /// assert_eq!(p.data_remaining(), 2);
    /// assert!(p.take_data(3).is_err());
    /// assert_eq!(p.next(b"de\r\n"), Ok(ParseStatus::Complete((2, Event::Data(b"de")))));
    /// ```
    pub fn take_data(&mut self, n: u64) -> Result<(), DataOverrun> {
        let remaining = self.data_remaining();
        if n > remaining {
            return Err(DataOverrun {
                taken: n,
                remaining,
            });
        }
        if n > 0 {
            self.state = if n == remaining {
                State::Terminator
            } else {
                State::Data(remaining - n)
            };
        }
        Ok(())
    }

    /// True once `END\r\n` has been seen, unless an error came after it
    /// ([`ParseError::AfterEnd`]): a failed parser never claims a clean
    /// response, so a caller can trust the connection when this is true.
    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.state == State::Done
    }

    /// A data block: hand out what is there (`buf` is not empty), up to what
    /// the value still needs.
    #[inline]
    fn next_data<'a>(&mut self, buf: &'a [u8], remaining: u64) -> (usize, Event<'a>) {
        // A remaining count too big for usize is necessarily more than buf.
        let n = usize::try_from(remaining).map_or(buf.len(), |r| r.min(buf.len()));
        let left = remaining - n as u64;
        self.state = if left == 0 {
            State::Terminator
        } else {
            State::Data(left)
        };
        (n, Event::Data(&buf[..n]))
    }

    /// The `\r\n` after a data block. A first byte other than `\r` already
    /// proves the error, so it is reported without waiting for the second.
    fn next_terminator<'a>(
        &mut self,
        buf: &'a [u8],
    ) -> Result<ParseStatus<(usize, Event<'a>)>, ParseError> {
        match buf {
            [] | [b'\r'] => Ok(ParseStatus::Partial),
            [b'\r', b'\n', ..] => {
                self.state = State::Line;
                Ok(ParseStatus::Complete((2, Event::ValueEnd)))
            }
            _ => Err(ParseError::BadTerminator),
        }
    }

    /// A whole well-formed `VALUE` line, or `END\r\n`, at the front of `buf`:
    /// what [`next_line`](Self::next_line) would return for it, with the
    /// state it would set, found in one pass without looking past the line
    /// end. `None` for anything else, unfinished and bad lines included,
    /// which are left to `next_line`; so this only makes the common case
    /// cheaper and never changes an outcome.
    ///
    /// To keep the loops simple it also declines two kinds of valid lines:
    /// numbers of more than 19 digits (the most that cannot overflow a `u64`,
    /// counting leading zeros), and lines longer than [`MAX_LINE_LEN`] (which
    /// `next_line` rejects anyway; a line taken here is at most 318 bytes).
    #[inline]
    fn fast_line<'a>(&mut self, buf: &'a [u8]) -> Option<(usize, Event<'a>)> {
        let buf = &buf[..buf.len().min(MAX_LINE_LEN)];
        let Some(fields) = buf.strip_prefix(b"VALUE ") else {
            if buf.starts_with(b"END\r\n") {
                self.state = State::Done;
                return Some((5, Event::End));
            }
            return None;
        };
        // The key: 1 to MAX_KEY_LEN key bytes, then a space.
        let key_len = key_prefix_len(fields);
        if key_len == 0 || key_len > MAX_KEY_LEN || fields.get(key_len) != Some(&b' ') {
            return None;
        }
        let (flags, at, b' ') = fast_number(fields, key_len + 1)? else {
            return None;
        };
        let flags = u32::try_from(flags).ok()?;
        let (len, mut at, mut stop) = fast_number(fields, at + 1)?;
        if len > self.max_value_len {
            return None;
        }
        let mut cas = None;
        if stop == b' ' {
            let (n, end, after) = fast_number(fields, at + 1)?;
            (cas, at, stop) = (Some(n), end, after);
        }
        if stop != b'\r' || fields.get(at + 1) != Some(&b'\n') {
            return None;
        }
        self.state = if len == 0 {
            State::Terminator
        } else {
            State::Data(len)
        };
        let event = Event::Value {
            key: &fields[..key_len],
            flags,
            len,
            cas,
        };
        Some((6 + at + 2, event))
    }

    /// A `VALUE`, `END` or error line, or as much of one as `buf` holds.
    ///
    /// Only the first [`MAX_LINE_LEN`] bytes are looked at: a line end beyond
    /// them would make the line too long anyway. An unfinished line is checked
    /// as a prefix, so bytes that can no longer start a valid line fail now.
    /// Nothing of an unfinished line is remembered between calls, so it is
    /// scanned again from its start on each call; [`MAX_LINE_LEN`] bounds that
    /// work, and callers reading in large chunks rarely repeat it.
    fn next_line<'a>(
        &mut self,
        buf: &'a [u8],
    ) -> Result<ParseStatus<(usize, Event<'a>)>, ParseError> {
        let window = &buf[..buf.len().min(MAX_LINE_LEN)];
        let Some(nl) = memchr(b'\n', window) else {
            // A final `\r` may be the start of the line end, so it is not
            // judged as part of the line until the next byte shows which.
            let line = window.strip_suffix(b"\r").unwrap_or(window);
            self.check_line(line, false)?;
            return if window.len() == MAX_LINE_LEN {
                Err(ParseError::LineTooLong)
            } else {
                Ok(ParseStatus::Partial)
            };
        };
        if nl == 0 || window[nl - 1] != b'\r' {
            // Check what comes before the bare `\n` first: a reader that got
            // the bytes one at a time would already have failed on them.
            self.check_line(&window[..nl], false)?;
            return Err(ParseError::BadLineEnd);
        }
        let event = self
            .check_line(&window[..nl - 1], true)?
            .ok_or(ParseError::UnknownLine)?;
        self.state = match event {
            Event::Value { len: 0, .. } => State::Terminator,
            Event::Value { len, .. } => State::Data(len),
            _ => State::Done,
        };
        Ok(ParseStatus::Complete((nl + 1, event)))
    }

    /// Judges a line without its `\r\n`. When `complete` is false, `line` is
    /// only the start of a line: `Ok(None)` means it can still become a valid
    /// one. When `complete` is true, `Ok(Some(_))` is a `VALUE` or `END` event.
    ///
    /// Every error a prefix shows is reported the same way for the whole line
    /// (the checks run left to right and only add end-of-line checks when
    /// `complete`), which keeps errors independent of how reads split a line.
    fn check_line<'a>(
        &self,
        line: &'a [u8],
        complete: bool,
    ) -> Result<Option<Event<'a>>, ParseError> {
        // What a line starting with each keyword means. No keyword is a prefix
        // of another, so at most one of them can match.
        const WORDS: [(&[u8], Option<ParseError>); 5] = [
            (b"VALUE", None),
            (b"END", None),
            (b"ERROR", Some(ParseError::Error)),
            (b"CLIENT_ERROR", Some(ParseError::ClientError)),
            (b"SERVER_ERROR", Some(ParseError::ServerError)),
        ];
        if let Some(fields) = line.strip_prefix(b"VALUE ") {
            return self.check_value_line(fields, complete);
        }
        for (word, error) in WORDS {
            let n = line.len().min(word.len());
            if line[..n] != word[..n] {
                continue;
            }
            if line.len() < word.len() {
                // "VAL", "SERVER_ER", "" ...: more bytes may finish the word.
                return if complete {
                    Err(ParseError::UnknownLine)
                } else {
                    Ok(None)
                };
            }
            let rest = &line[word.len()..];
            return match (error, rest.first()) {
                // An error line may carry a message after a space; the line
                // is only reported once complete, as the server meant it.
                (Some(e), None | Some(b' ')) => {
                    if complete {
                        Err(e)
                    } else {
                        Ok(None)
                    }
                }
                // "VALUE" alone: a VALUE line whose fields are missing (a
                // space would have been taken as "VALUE " above).
                (None, None) if word == b"VALUE" => {
                    if complete {
                        Err(ParseError::BadValueLine)
                    } else {
                        Ok(None)
                    }
                }
                (None, None) => Ok(complete.then_some(Event::End)),
                // "ENDX", "END ", "ERRORS", "VALUEX" ...
                _ => Err(ParseError::UnknownLine),
            };
        }
        Err(ParseError::UnknownLine)
    }

    /// Judges the fields of a `VALUE` line (what follows `"VALUE "`), as
    /// [`check_line`](Self::check_line) does.
    ///
    /// Each byte is checked as soon as it is seen: a NUL in the key, a key
    /// over 250 bytes, a non-digit or a number overflowing its type fail at
    /// that byte (`fields` never holds a `\n`: the line ends before it).
    /// Whether a length is over the limit is decided when its field ends,
    /// because until then more digits could still make it a `u64` overflow
    /// ([`ParseError::BadNumber`]) instead.
    fn check_value_line<'a>(
        &self,
        fields: &'a [u8],
        complete: bool,
    ) -> Result<Option<Event<'a>>, ParseError> {
        let mut field = Field::Key;
        let mut start = 0; // where the current field begins in `fields`
        let mut num: u64 = 0; // the current number field's value so far
        let (mut key_len, mut flags, mut len) = (0, 0u32, 0u64);
        for (i, &b) in fields.iter().enumerate() {
            if b == b' ' {
                let empty = i == start;
                field = match field {
                    Field::Key if empty => return Err(ParseError::BadKey),
                    Field::Key => {
                        key_len = i;
                        Field::Flags
                    }
                    Field::Flags | Field::Bytes | Field::Cas if empty => {
                        return Err(ParseError::BadValueLine)
                    }
                    Field::Flags => {
                        // Cannot fail: push_digit kept it within u32.
                        flags = u32::try_from(num).map_err(|_| ParseError::BadNumber)?;
                        Field::Bytes
                    }
                    Field::Bytes => {
                        len = self.check_len(num)?;
                        Field::Cas
                    }
                    // A fifth field.
                    Field::Cas => return Err(ParseError::BadValueLine),
                };
                start = i + 1;
                num = 0;
            } else if field == Field::Key {
                if !is_key_byte(b) || i >= MAX_KEY_LEN {
                    return Err(ParseError::BadKey);
                }
            } else {
                let max = if field == Field::Flags {
                    u64::from(u32::MAX)
                } else {
                    u64::MAX
                };
                num = push_digit(num, b, max)?;
            }
        }
        if !complete {
            return Ok(None);
        }
        let cas = match field {
            Field::Key | Field::Flags => return Err(ParseError::BadValueLine),
            _ if start == fields.len() => return Err(ParseError::BadValueLine),
            Field::Bytes => {
                len = self.check_len(num)?;
                None
            }
            Field::Cas => Some(num),
        };
        Ok(Some(Event::Value {
            key: &fields[..key_len],
            flags,
            len,
            cas,
        }))
    }

    /// A declared data length, if within the limit.
    fn check_len(&self, len: u64) -> Result<u64, ParseError> {
        if len > self.max_value_len {
            Err(ParseError::TooLarge)
        } else {
            Ok(len)
        }
    }
}

/// Whether `b` may be in a key: anything but NUL, `\n` and space (see the
/// module docs).
#[inline]
fn is_key_byte(b: u8) -> bool {
    !matches!(b, 0 | b'\n' | b' ')
}

const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);

/// The bytes of `word` (eight bytes read little-endian) that are not key
/// bytes, each flagged by its top bit. The lowest flagged byte is exact;
/// bytes above it may be flagged wrongly, which does not matter.
///
/// `word & !0x20..` turns exactly the NUL and space bytes into zero bytes,
/// `word ^ 0x0a..` exactly the `\n` bytes; the classic `(v - 0x01..) & !v &
/// 0x80..` then flags the zero bytes of each, exactly up to the lowest one
/// (past it, a borrow may flag more).
#[inline]
fn non_key_bytes(word: u64) -> u64 {
    let nul_or_space = word & !(ONES * 0x20);
    let newline = word ^ (ONES * u64::from(b'\n'));
    (nul_or_space.wrapping_sub(ONES) & !nul_or_space | newline.wrapping_sub(ONES) & !newline) & HIGH
}

/// How many key bytes `s` starts with, or any count over [`MAX_KEY_LEN`] if
/// more than that.
///
/// Eight bytes at a time while there are that many. The bytes that end a key
/// are all below 0x21, and most keys have no such byte but the space after
/// them, so one cheap test first asks whether a word has any byte below 0x21
/// (`(v - 0x21..) & !v & 0x80..` is zero exactly when none is); only then
/// does [`non_key_bytes`] say which byte ends the key, if one does.
#[inline]
fn key_prefix_len(s: &[u8]) -> usize {
    let mut i = 0;
    while let Some(word) = s.get(i..i + 8) {
        let mut bytes = [0; 8];
        bytes.copy_from_slice(word);
        let x = u64::from_le_bytes(bytes);
        if x.wrapping_sub(ONES * 0x21) & !x & HIGH != 0 {
            let stop = non_key_bytes(x);
            if stop != 0 {
                return i + (stop.trailing_zeros() / 8) as usize;
            }
        }
        i += 8;
        if i > MAX_KEY_LEN {
            return i;
        }
    }
    while i < s.len() && is_key_byte(s[i]) {
        i += 1;
    }
    i
}

/// The number made of the ASCII digits of `s` from `start` on, where they
/// end and the byte there; `None` unless there are 1 to 19 digits (at most
/// 19 cannot overflow a `u64`, so the loop needs no overflow check) and a
/// byte after them.
#[inline]
fn fast_number(s: &[u8], start: usize) -> Option<(u64, usize, u8)> {
    let mut num: u64 = 0;
    let mut at = start;
    while let Some(&b) = s.get(at) {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return if (1..=19).contains(&(at - start)) {
                Some((num, at, b))
            } else {
                None
            };
        }
        // Wraps only past 19 digits, which are declined above.
        num = num.wrapping_mul(10).wrapping_add(u64::from(digit));
        at += 1;
    }
    None
}

/// `num * 10 + digit(b)`, if `b` is an ASCII digit and the result is at most
/// `max`. Leading zeros are fine; signs, spaces and anything else are not.
fn push_digit(num: u64, b: u8, max: u64) -> Result<u64, ParseError> {
    if !b.is_ascii_digit() {
        return Err(ParseError::BadNumber);
    }
    num.checked_mul(10)
        .and_then(|n| n.checked_add(u64::from(b - b'0')))
        .filter(|&n| n <= max)
        .ok_or(ParseError::BadNumber)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{feed, feed_with, parse, Data, Norm, Rng};

    /// Responses recorded from memcached 1.6 on loopback (`-U 0`), after
    /// `set foo 0 0 3` "bar", `set bin 2 0 23` (NULs, "\r\nEND\r\n" and a
    /// "VALUE" line inside the data), `set empty 4294967295 0 0` and
    /// `set café 1 0 3` "€".
    const GET_MULTI: &[u8] = b"VALUE foo 0 3\r\nbar\r\nVALUE bin 2 23\r\n\x00\x01\r\nEND\r\nVALUE x 0 1\r\n\x00\r\nVALUE empty 4294967295 0\r\n\r\nVALUE caf\xc3\xa9 1 3\r\n\xe2\x82\xac\r\nEND\r\n";
    /// `gets foo bin empty` on the same server.
    const GETS_MULTI: &[u8] = b"VALUE foo 0 3 1\r\nbar\r\nVALUE bin 2 23 2\r\n\x00\x01\r\nEND\r\nVALUE x 0 1\r\n\x00\r\nVALUE empty 4294967295 0 3\r\n\r\nEND\r\n";
    /// `get k1 a\tb t\x0b \x0cf c\rr e\r \r \x7fdel \x80\xff \x01\x02\x1f k2`
    /// on memcached 1.6.18, each key set with its index as flags and
    /// "val<index>" as data: keys with a tab, 0x0b, 0x0c, a `\r` inside, at
    /// the end and alone, DEL, bytes from 0x80 up and other control bytes.
    const GET_ODD_KEYS: &[u8] = b"VALUE k1 0 4\r\nval0\r\nVALUE a\tb 1 4\r\nval1\r\nVALUE t\x0b 2 4\r\nval2\r\nVALUE \x0cf 3 4\r\nval3\r\nVALUE c\rr 4 4\r\nval4\r\nVALUE e\r 5 4\r\nval5\r\nVALUE \r 6 4\r\nval6\r\nVALUE \x7fdel 7 4\r\nval7\r\nVALUE \x80\xff 8 4\r\nval8\r\nVALUE \x01\x02\x1f 9 4\r\nval9\r\nVALUE k2 10 5\r\nval10\r\nEND\r\n";
    /// `get nothing`.
    const MISS: &[u8] = b"END\r\n";
    /// An unknown command.
    const UNKNOWN_COMMAND: &[u8] = b"ERROR\r\n";
    /// `get` with a 251-byte key.
    const KEY_TOO_LONG: &[u8] = b"CLIENT_ERROR bad command line format\r\n";
    /// A `set` of 2 MB on a server with `-I 1m`.
    const OBJECT_TOO_LARGE: &[u8] = b"SERVER_ERROR object too large for cache\r\n";

    // `Norm` and the `feed` driver (which checks every promise of `next`) are
    // in rust/testing.rs, shared with the parser_split fuzz target.

    fn value(key: &[u8], flags: u32, len: u64, cas: Option<u64>) -> Norm {
        Norm::Value(key.to_vec(), flags, len, cas)
    }

    fn data(d: &[u8]) -> Norm {
        Norm::Data(d.to_vec())
    }

    /// Parses `input` in one buffer, then split in two at every byte position,
    /// one byte at a time and in random chunk sizes, and asserts that the
    /// normalized events are the same every time. Returns them.
    fn parse_every_way(input: &[u8], max: u64) -> Vec<Norm> {
        let whole = parse(input, max);
        for at in 0..=input.len() {
            for data in [Data::Events, Data::Taken] {
                let mut sizes = [at, usize::MAX].into_iter();
                let split = feed_with(input, max, || sizes.next().unwrap_or(usize::MAX), data);
                assert_eq!(
                    split,
                    whole,
                    "split at {at} of {:?}, data {data:?}",
                    String::from_utf8_lossy(input)
                );
            }
        }
        assert_eq!(feed(input, max, || 1), whole, "one byte at a time");
        assert_eq!(
            feed_with(input, max, || 1, Data::Taken),
            whole,
            "one byte at a time, data taken"
        );
        random_chunks(input, max, &whole);
        whole
    }

    /// `parse_every_way` without the quadratic split-everywhere part, for
    /// big inputs.
    fn random_chunks(input: &[u8], max: u64, whole: &[Norm]) {
        for seed in 1..=8u64 {
            let rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            // Small chunks stress line resumption; some seeds use big ones.
            let top = if seed % 2 == 0 { 16 } else { 4096 };
            for data in [Data::Events, Data::Taken] {
                let mut rng = rng.clone();
                let got = feed_with(input, max, || 1 + rng.below(top), data);
                assert_eq!(got, whole, "random chunks, seed {seed}, data {data:?}");
            }
        }
    }

    /// The shortest prefix of `input` on which a fresh parser fails, and how.
    fn first_error(input: &[u8], max: u64) -> Option<(usize, ParseError)> {
        (0..=input.len()).find_map(|k| match parse(&input[..k], max).last() {
            Some(Norm::Err(e)) => Some((k, *e)),
            _ => None,
        })
    }

    /// Asserts that `input` fails with `err` every way it is split, and that
    /// the first `at` bytes are the fewest that show it.
    fn assert_error_at(input: &[u8], at: usize, err: ParseError) {
        assert_error_at_max(input, 0, at, err);
    }

    /// [`assert_error_at`] for each `(input, at)` of `cases`, all failing
    /// with `err`.
    fn assert_errors_at(err: ParseError, cases: &[(&[u8], usize)]) {
        for &(input, at) in cases {
            assert_error_at(input, at, err);
        }
    }

    fn assert_error_at_max(input: &[u8], max: u64, at: usize, err: ParseError) {
        let got = parse_every_way(input, max);
        assert_eq!(
            got.last(),
            Some(&Norm::Err(err)),
            "{:?}",
            String::from_utf8_lossy(input)
        );
        assert_eq!(
            first_error(input, max),
            Some((at, err)),
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }

    /// Asserts that `input` is a valid but unfinished response, and that no
    /// prefix of it is an error.
    fn assert_partial(input: &[u8]) {
        let got = parse_every_way(input, 0);
        assert!(matches!(got.last(), Some(Norm::Rest(..))), "{got:?}");
        assert_eq!(first_error(input, 0), None);
    }

    #[test]
    fn recorded_get_multi() {
        assert_eq!(
            parse_every_way(GET_MULTI, 0),
            vec![
                value(b"foo", 0, 3, None),
                data(b"bar"),
                Norm::ValueEnd,
                value(b"bin", 2, 23, None),
                data(b"\x00\x01\r\nEND\r\nVALUE x 0 1\r\n\x00"),
                Norm::ValueEnd,
                value(b"empty", 4_294_967_295, 0, None),
                Norm::ValueEnd,
                value("café".as_bytes(), 1, 3, None),
                data("€".as_bytes()),
                Norm::ValueEnd,
                Norm::End,
                Norm::Rest(vec![], true, 0),
            ]
        );
    }

    #[test]
    fn recorded_gets_with_cas() {
        assert_eq!(
            parse_every_way(GETS_MULTI, 0),
            vec![
                value(b"foo", 0, 3, Some(1)),
                data(b"bar"),
                Norm::ValueEnd,
                value(b"bin", 2, 23, Some(2)),
                data(b"\x00\x01\r\nEND\r\nVALUE x 0 1\r\n\x00"),
                Norm::ValueEnd,
                value(b"empty", 4_294_967_295, 0, Some(3)),
                Norm::ValueEnd,
                Norm::End,
                Norm::Rest(vec![], true, 0),
            ]
        );
    }

    #[test]
    fn recorded_miss_and_errors() {
        assert_eq!(
            parse_every_way(MISS, 0),
            vec![Norm::End, Norm::Rest(vec![], true, 0)]
        );
        assert_error_at(UNKNOWN_COMMAND, UNKNOWN_COMMAND.len(), ParseError::Error);
        assert_error_at(KEY_TOO_LONG, KEY_TOO_LONG.len(), ParseError::ClientError);
        assert_error_at(
            OBJECT_TOO_LARGE,
            OBJECT_TOO_LARGE.len(),
            ParseError::ServerError,
        );
    }

    #[test]
    fn events_one_call_at_a_time() {
        let mut p = ResponseParser::default();
        let buf = b"VALUE k 5 4 99\r\nab\r\n\r\nEND\r\n";
        let ev = p.next(buf).unwrap();
        let key = &buf[6..7];
        assert_eq!(
            ev,
            ParseStatus::Complete((
                16,
                Event::Value {
                    key,
                    flags: 5,
                    len: 4,
                    cas: Some(99)
                }
            ))
        );
        assert_eq!(p.data_remaining(), 4);
        // Only part of the data is buffered: a Data event for what is there.
        assert_eq!(
            p.next(&buf[16..18]),
            Ok(ParseStatus::Complete((2, Event::Data(b"ab"))))
        );
        assert_eq!(p.data_remaining(), 2);
        // Data is never scanned: "\r\n" inside it is data.
        assert_eq!(
            p.next(&buf[18..]),
            Ok(ParseStatus::Complete((2, Event::Data(b"\r\n"))))
        );
        assert_eq!(p.data_remaining(), 0);
        assert_eq!(p.next(&buf[20..21]), Ok(ParseStatus::Partial));
        assert_eq!(
            p.next(&buf[20..]),
            Ok(ParseStatus::Complete((2, Event::ValueEnd)))
        );
        assert!(!p.is_complete());
        assert_eq!(p.next(&buf[22..25]), Ok(ParseStatus::Partial));
        assert_eq!(
            p.next(&buf[22..]),
            Ok(ParseStatus::Complete((5, Event::End)))
        );
        assert!(p.is_complete());
        assert_eq!(p.next(b""), Ok(ParseStatus::Partial));
        assert!(p.is_complete());
    }

    #[test]
    fn empty_buffer_is_partial() {
        let mut p = ResponseParser::new(0);
        assert_eq!(p.next(b""), Ok(ParseStatus::Partial));
        assert_eq!(
            p.next(b"VALUE a 0 2\r\n").unwrap(),
            ParseStatus::Complete((
                13,
                Event::Value {
                    key: b"a",
                    flags: 0,
                    len: 2,
                    cas: None
                }
            ))
        );
        assert_eq!(p.next(b""), Ok(ParseStatus::Partial));
        assert_eq!(
            p.next(b"xy").unwrap(),
            ParseStatus::Complete((2, Event::Data(b"xy")))
        );
        assert_eq!(p.next(b""), Ok(ParseStatus::Partial));
    }

    #[test]
    fn big_binary_values_in_random_chunks() {
        let mut rng = Rng(42);
        let mut input = Vec::new();
        let mut expected = Vec::new();
        for (i, size) in [70_000usize, 1, 0, 4096, 65_537].into_iter().enumerate() {
            let mut v: Vec<u8> = (0..size).map(|_| rng.next_u64() as u8).collect();
            if size > 100 {
                // The lines a scanning parser would trip on, inside the data.
                v[10..17].copy_from_slice(b"\r\nEND\r\n");
                v[50..62].copy_from_slice(b"VALUE a 0 1\r");
                v[99] = b'\n';
            }
            let key = format!("key:{i}");
            input.extend_from_slice(format!("VALUE {key} {i} {size} {}\r\n", 1000 + i).as_bytes());
            input.extend_from_slice(&v);
            input.extend_from_slice(b"\r\n");
            expected.push(value(
                key.as_bytes(),
                i as u32,
                size as u64,
                Some(1000 + i as u64),
            ));
            if size > 0 {
                expected.push(Norm::Data(v));
            }
            expected.push(Norm::ValueEnd);
        }
        input.extend_from_slice(b"END\r\n");
        expected.push(Norm::End);
        expected.push(Norm::Rest(vec![], true, 0));
        let whole = parse(&input, 0);
        assert_eq!(whole, expected);
        random_chunks(&input, 0, &whole);
        // A response cut short mid-value: the data so far, and what is missing.
        let header = b"VALUE key:0 0 70000 1000\r\n".len() as u64;
        let cut = parse_every_way(&input[..200], 0);
        assert_eq!(
            cut.last(),
            Some(&Norm::Rest(vec![], false, 70_000 - (200 - header)))
        );
    }

    #[test]
    fn zero_byte_value_goes_to_its_terminator() {
        assert_eq!(
            parse_every_way(b"VALUE z 0 0\r\n\r\nEND\r\n", 0),
            vec![
                value(b"z", 0, 0, None),
                Norm::ValueEnd,
                Norm::End,
                Norm::Rest(vec![], true, 0)
            ]
        );
        // The data block is empty, so "END" right after the line is not the
        // terminator.
        assert_error_at(b"VALUE z 0 0\r\nEND\r\n", 14, ParseError::BadTerminator);
    }

    #[test]
    fn numbers_at_their_limits() {
        let got = parse_every_way(
            b"VALUE k 4294967295 0 18446744073709551615\r\n\r\nVALUE k 00000000000000000000007 0003 000\r\nabc\r\nEND\r\n",
            0,
        );
        assert_eq!(got[0], value(b"k", u32::MAX, 0, Some(u64::MAX)));
        assert_eq!(got[2], value(b"k", 7, 3, Some(0)));
        assert_eq!(got.last(), Some(&Norm::Rest(vec![], true, 0)));
        // The largest length u64 allows, when the limit allows it.
        assert_eq!(
            parse(b"VALUE k 0 18446744073709551615\r\nab", u64::MAX),
            vec![
                value(b"k", 0, u64::MAX, None),
                data(b"ab"),
                Norm::Rest(vec![], false, u64::MAX - 2)
            ]
        );
    }

    /// The bytes a key may hold: all but NUL, `\n` and space.
    fn allowed_key_bytes() -> Vec<u8> {
        (0..=0xffu8)
            .filter(|b| ![0, b'\n', b' '].contains(b))
            .collect()
    }

    /// A response holding one value of one byte per key, and its events.
    fn response_with_keys<'k>(keys: impl IntoIterator<Item = &'k [u8]>) -> (Vec<u8>, Vec<Norm>) {
        let (mut input, mut want) = (Vec::new(), Vec::new());
        for (i, key) in keys.into_iter().enumerate() {
            let flags = i as u32;
            input.extend_from_slice(b"VALUE ");
            input.extend_from_slice(key);
            input.extend_from_slice(format!(" {flags} 1\r\nx\r\n").as_bytes());
            want.extend([value(key, flags, 1, None), data(b"x"), Norm::ValueEnd]);
        }
        input.extend_from_slice(b"END\r\n");
        want.extend([Norm::End, Norm::Rest(vec![], true, 0)]);
        (input, want)
    }

    #[test]
    fn keys() {
        let long = [b'k'; MAX_KEY_LEN];
        let mut line = b"VALUE ".to_vec();
        line.extend_from_slice(&long);
        line.extend_from_slice(b" 0 1\r\nx\r\nEND\r\n");
        assert_eq!(parse_every_way(&line, 0)[0], value(&long, 0, 1, None));
        // Every byte but NUL, `\n` and space may be in a key: 253 of them, in
        // two keys, the first of the longest length.
        let all = allowed_key_bytes();
        assert_eq!(all.len(), 253);
        let (input, want) = response_with_keys(all.chunks(MAX_KEY_LEN));
        assert_eq!(parse_every_way(&input, 0), want);
        // Each of them as a whole key, first, last and inside one.
        for &b in &all {
            let keys = [vec![b], vec![b, b'k'], vec![b'k', b], vec![b'k', b, b'k']];
            let (input, want) = response_with_keys(keys.iter().map(Vec::as_slice));
            assert_eq!(parse_every_way(&input, 0), want, "byte {b:#04x}");
        }
        // All of them in one response, a key each: 253 values.
        let (input, want) = response_with_keys(all.chunks(1));
        assert_eq!(parse(&input, 0), want);
        random_chunks(&input, 0, &want);
        // The longest key ending in `\r` (memcached stores and returns it).
        let mut key = vec![0x01; MAX_KEY_LEN - 1];
        key.push(b'\r');
        let (input, want) = response_with_keys([key.as_slice(), b"\r", b"\r\r"]);
        assert_eq!(parse_every_way(&input, 0), want);
    }

    #[test]
    fn recorded_odd_keys() {
        let keys: [&[u8]; 11] = [
            b"k1",
            b"a\tb",
            b"t\x0b",
            b"\x0cf",
            b"c\rr",
            b"e\r",
            b"\r",
            b"\x7fdel",
            b"\x80\xff",
            b"\x01\x02\x1f",
            b"k2",
        ];
        let mut want = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            let d = format!("val{i}").into_bytes();
            want.extend([value(key, i as u32, d.len() as u64, None), data(&d)]);
            want.push(Norm::ValueEnd);
        }
        want.extend([Norm::End, Norm::Rest(vec![], true, 0)]);
        assert_eq!(parse_every_way(GET_ODD_KEYS, 0), want);
        // The fast path takes each of these lines (it may decline only lines
        // with numbers of 20 digits or more): 11 VALUE lines and END.
        assert!(assert_fast_path_agrees(GET_ODD_KEYS, 0) >= 12);
    }

    #[test]
    fn bad_keys() {
        use ParseError::{BadKey, BadLineEnd, BadNumber, BadValueLine};
        // 251 bytes: the 251st key byte proves it, no need to see the line end.
        let k250 = [b"VALUE ".as_slice(), &[b'k'; MAX_KEY_LEN]].concat();
        let line = [&k250, b"k 0 1\r\nx\r\nEND\r\n".as_slice()].concat();
        assert_error_at(&line, 6 + MAX_KEY_LEN + 1, BadKey);
        // Every byte inside a key: NUL fails at once; `\n` ends the line
        // there, without `\r`; a space ends the key ("b" is then the flags);
        // any other byte is a key byte.
        for b in 0..=0xffu8 {
            let line = [b"VALUE a".as_slice(), &[b], b"b 0 1\r\nx\r\nEND\r\n"].concat();
            match b {
                0 => assert_error_at(&line, 8, BadKey),
                b'\n' => assert_error_at(&line, 8, BadLineEnd),
                b' ' => assert_error_at(&line, 9, BadNumber),
                _ => assert_eq!(
                    parse_every_way(&line, 0)[..4],
                    [
                        value(&[b'a', b, b'b'], 0, 1, None),
                        data(b"x"),
                        Norm::ValueEnd,
                        Norm::End
                    ],
                    "byte {b:#04x}"
                ),
            }
        }
        // A `\r` might be the line end until the byte after it shows
        // otherwise: then it is a key byte, or the line ends with no fields.
        assert_eq!(
            parse_every_way(b"VALUE a\rb 0 1\r\n", 0)[0],
            value(b"a\rb", 0, 1, None)
        );
        assert_error_at(b"VALUE a\r\r\n", 10, BadValueLine);
        assert_error_at(b"VALUE a\r\x00 0 1\r\n", 9, BadKey);
        // A NUL anywhere in the key, first and before a `\n` included.
        assert_error_at(b"VALUE \x00a 0 1\r\n", 7, BadKey);
        assert_error_at(b"VALUE a\x00\n", 8, BadKey);
        assert_error_at(b"VALUE \n", 7, BadLineEnd);
        // At the 251st byte: a `\r` there is a 251st key byte only once the
        // next byte is not `\n`; a `\n` there ends a line of 250 good key
        // bytes; a NUL is bad either way.
        let at = 6 + MAX_KEY_LEN;
        let after_250 = |tail: &[u8]| [&k250, tail].concat();
        assert_error_at(&after_250(b"\r 0 1\r\n"), at + 2, BadKey);
        assert_error_at(&after_250(b"\r\r\n"), at + 2, BadKey);
        assert_error_at(&after_250(b"\r\n"), at + 2, BadValueLine);
        assert_error_at(&after_250(b"\n"), at + 1, BadLineEnd);
        assert_error_at(&after_250(b"\x00 0 1\r\n"), at + 1, BadKey);
        assert_error_at(&after_250(b"k\n"), at + 1, BadKey);
        // An empty key shows at its terminating space.
        assert_error_at(b"VALUE  0 1\r\nx\r\n", 7, BadKey);
    }

    /// [`key_prefix_len`] against a plain byte loop: one byte of every value
    /// at every position of keys up to 300 bytes long, with random bytes
    /// around it (key bytes before it, any after it, where a SWAR scan's
    /// borrows could flag wrong bytes).
    #[test]
    fn key_prefix_len_is_exact() {
        let mut rng = Rng(5);
        let mut key_byte = || loop {
            let b = (rng.next_u64() >> 56) as u8;
            if is_key_byte(b) {
                return b;
            }
        };
        let mut rng2 = Rng(6);
        for len in (0..=40).chain([247, 248, 249, 250, 251, 252, 255, 256, 257, 300]) {
            for at in 0..len {
                for b in 0..=0xffu8 {
                    let mut s: Vec<u8> = (0..len).map(|_| key_byte()).collect();
                    s[at] = b;
                    for x in &mut s[at + 1..] {
                        *x = (rng2.next_u64() >> 56) as u8;
                    }
                    let want = s.iter().position(|&b| !is_key_byte(b)).unwrap_or(len);
                    let got = key_prefix_len(&s);
                    if want > MAX_KEY_LEN {
                        assert!(got > MAX_KEY_LEN, "{s:?}: {got}");
                    } else {
                        assert_eq!(got, want, "{s:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn bad_numbers() {
        use ParseError::BadNumber;
        // Flags over u32: the digit that overflows proves it.
        assert_errors_at(
            BadNumber,
            &[
                (b"VALUE k 4294967296 1\r\nx\r\n", 18),
                (b"VALUE k 99999999999 1\r\nx\r\n", 18),
            ],
        );
        // Lengths and cas over u64, whatever the limit.
        assert_error_at_max(
            b"VALUE k 0 18446744073709551616\r\n",
            u64::MAX,
            30,
            BadNumber,
        );
        assert_errors_at(
            BadNumber,
            &[
                (b"VALUE k 0 18446744073709551616\r\n", 30),
                (b"VALUE k 0 1 18446744073709551616\r\n", 32),
                // Signs, spaces, hex, letters: the first odd byte.
                (b"VALUE k -1 1\r\n", 9),
                (b"VALUE k +1 1\r\n", 9),
                (b"VALUE k 0x10 1\r\n", 10),
                (b"VALUE k 0 1a\r\n", 12),
                (b"VALUE k 0 1 7f\r\n", 14),
                (b"VALUE k 0\t1\r\n", 10),
                (b"VALUE k 0 1\rx\r\n", 13),
                (b"VALUE k 0 1 \x002\r\n", 13),
            ],
        );
    }

    #[test]
    fn too_large() {
        use ParseError::TooLarge;
        // The default limit is 1 GiB, inclusive; 0 means the default.
        for max in [0, DEFAULT_MAX_VALUE_LEN] {
            let got = parse(b"VALUE k 0 1073741824\r\n", max);
            assert_eq!(got[0], value(b"k", 0, 1 << 30, None));
            // Known once the field ends: at the line end, or the space before cas.
            assert_error_at_max(b"VALUE k 0 1073741825\r\n", max, 22, TooLarge);
            assert_error_at_max(b"VALUE k 0 1073741825 1\r\n", max, 21, TooLarge);
            assert_error_at_max(
                b"VALUE k 0 99999999999999999999\r\n",
                max,
                30,
                ParseError::BadNumber,
            );
        }
        assert_error_at_max(b"VALUE k 0 11\r\nxxxxxxxxxxx\r\n", 10, 14, TooLarge);
        assert_eq!(parse(b"VALUE k 0 10\r\n", 10)[0], value(b"k", 0, 10, None));
        assert_eq!(parse(b"VALUE k 0 1\r\nx\r\n", 1)[2], Norm::ValueEnd);
        assert_error_at_max(b"VALUE k 0 2\r\n", 1, 13, TooLarge);
    }

    #[test]
    fn bad_value_lines() {
        use ParseError::BadValueLine;
        assert_errors_at(
            BadValueLine,
            &[
                (b"VALUE\r\n", 7),
                (b"VALUE \r\n", 8),
                (b"VALUE k\r\n", 9),
                (b"VALUE k 0\r\n", 11),
                (b"VALUE k 0 \r\n", 12),
                (b"VALUE k 0 1 \r\n", 14),
                // Double spaces: an empty field shows at the second space.
                (b"VALUE k  0 1\r\n", 9),
                (b"VALUE k 0  1\r\n", 11),
                (b"VALUE k 0 1  2\r\n", 13),
                // A fifth field shows at the space before it.
                (b"VALUE k 0 1 2 3\r\n", 14),
            ],
        );
    }

    #[test]
    fn bad_terminators() {
        use ParseError::BadTerminator;
        assert_errors_at(
            BadTerminator,
            &[
                (b"VALUE k 0 3\r\nabcXY", 17),
                (b"VALUE k 0 3\r\nabc\rX", 18),
                (b"VALUE k 0 3\r\nabc\n\r", 17),
                // Too much data: the first extra byte.
                (b"VALUE k 0 3\r\nabcd\r\nEND\r\n", 17),
                // Too little data: the "\r" of the terminator is taken as data, and
                // its "\n" is then a bad terminator.
                (b"VALUE k 0 3\r\nab\r\nEND\r\n", 17),
                // A second value after a good one.
                (b"VALUE a 0 1\r\nx\r\nVALUE b 0 1\r\nyz", 31),
            ],
        );
        // Just "\r" so far is fine.
        assert_partial(b"VALUE k 0 3\r\nabc\r");
    }

    #[test]
    fn server_error_lines() {
        // Error lines are reported once complete, never before, and at once.
        assert_error_at(
            b"SERVER_ERROR out of memory\r\n",
            28,
            ParseError::ServerError,
        );
        assert_error_at(b"SERVER_ERROR\r\n", 14, ParseError::ServerError);
        assert_error_at(
            b"CLIENT_ERROR bad data chunk\r\n",
            29,
            ParseError::ClientError,
        );
        assert_error_at(b"ERROR\r\n", 7, ParseError::Error);
        assert_error_at(b"ERROR too many tokens\r\n", 23, ParseError::Error);
        // After values already handed out.
        let got = parse_every_way(
            b"VALUE a 0 1\r\nx\r\nSERVER_ERROR out of memory\r\nEND\r\n",
            0,
        );
        assert_eq!(
            got,
            vec![
                value(b"a", 0, 1, None),
                data(b"x"),
                Norm::ValueEnd,
                Norm::Err(ParseError::ServerError)
            ]
        );
        // Prefixes of error lines are partial (assert_partial checks every
        // prefix of what it is given).
        assert_partial(b"SERVER_ERROR out of");
        assert_partial(b"CLIENT_");
        assert_partial(b"ERROR\r");
    }

    #[test]
    fn unknown_lines_fail_fast() {
        use ParseError::UnknownLine;
        assert_errors_at(
            UnknownLine,
            &[
                (b"XYZ", 1),
                (b"XYZ\r\n", 1),
                (b"\r\n", 2),
                (b"\rX", 2),
                (b"ENDX\r\n", 4),
                (b"END \r\n", 4),
                (b"END\rX", 5),
                (b"EN\r\n", 4),
                (b"VALUEX", 6),
                (b"VALUES a 0 1\r\n", 6),
                (b"value a 0 1\r\n", 1),
                (b"ERRORS\r\n", 6),
                (b"SERVER_ERRORS\r\n", 13),
                (b"STORED\r\n", 2),
                (b" END\r\n", 1),
            ],
        );
        // These are unfinished lines, and so is every prefix of them.
        assert_partial(b"VALUE ");
        assert_partial(b"END\r");
        assert_partial(b"\r");
    }

    #[test]
    fn bare_newlines() {
        use ParseError::BadLineEnd;
        assert_errors_at(
            BadLineEnd,
            &[
                (b"\n", 1),
                (b"END\n", 4),
                (b"VALUE k 0 1\nx\r\n", 12),
                (b"SERVER_ERROR oops\n", 18),
            ],
        );
        // What precedes the `\n` is judged first, as a byte-at-a-time reader
        // would have.
        assert_error_at(b"XYZ\n", 1, ParseError::UnknownLine);
        assert_error_at(b"VALUE k 0 x\n", 11, ParseError::BadNumber);
    }

    #[test]
    fn after_end() {
        assert_eq!(
            parse_every_way(b"END\r\nX", 0),
            vec![Norm::End, Norm::Err(ParseError::AfterEnd)]
        );
        assert_eq!(
            first_error(b"END\r\nEND\r\n", 0),
            Some((6, ParseError::AfterEnd))
        );
        let mut p = ResponseParser::new(0);
        assert_eq!(
            p.next(b"END\r\n"),
            Ok(ParseStatus::Complete((5, Event::End)))
        );
        assert_eq!(p.next(b""), Ok(ParseStatus::Partial));
        assert_eq!(p.next(b"\r\n"), Err(ParseError::AfterEnd));
        assert!(!p.is_complete());
        assert_eq!(p.next(b""), Err(ParseError::AfterEnd));
    }

    #[test]
    fn line_length_bound() {
        // The longest line allowed, counting its "\r\n".
        let line = |len: usize| {
            let mut l = b"VALUE k 0 ".to_vec();
            l.resize(len - 3, b'0');
            l.extend_from_slice(b"1\r\n");
            l
        };
        let ok = [line(MAX_LINE_LEN), b"x\r\nEND\r\n".to_vec()].concat();
        assert_eq!(parse_every_way(&ok, 0)[0], value(b"k", 0, 1, None));
        // One byte more: too long once MAX_LINE_LEN bytes are buffered.
        let long = [line(MAX_LINE_LEN + 1), b"x\r\nEND\r\n".to_vec()].concat();
        assert_error_at(&long, MAX_LINE_LEN, ParseError::LineTooLong);
        // Long error messages and garbage without a line end.
        let mut msg = b"SERVER_ERROR ".to_vec();
        msg.resize(3000, b'x');
        assert_error_at(&msg, MAX_LINE_LEN, ParseError::LineTooLong);
        let mut zeros = b"VALUE k 0 ".to_vec();
        zeros.resize(MAX_LINE_LEN + 10, b'0');
        assert_error_at(&zeros, MAX_LINE_LEN, ParseError::LineTooLong);
        // A final "\r" at the bound does not help: its "\n" would be over.
        let mut cr = msg[..MAX_LINE_LEN - 1].to_vec();
        cr.extend_from_slice(b"\r\n");
        assert_error_at(&cr, MAX_LINE_LEN, ParseError::LineTooLong);
        // A long key fails as a bad key long before the line bound.
        let mut key = b"VALUE ".to_vec();
        key.resize(MAX_LINE_LEN, b'a');
        assert_error_at(&key, 6 + MAX_KEY_LEN + 1, ParseError::BadKey);
        // A bare "\n" at the bound is still a bad line end.
        let mut nl = msg[..MAX_LINE_LEN - 1].to_vec();
        nl.push(b'\n');
        assert_error_at(&nl, MAX_LINE_LEN, ParseError::BadLineEnd);
    }

    #[test]
    fn errors_are_sticky_until_reset() {
        let mut p = ResponseParser::new(0);
        assert_eq!(p.next(b"VALUE k 0 1\r\n").map(|_| ()), Ok(()));
        assert_eq!(p.next(b"x").map(|_| ()), Ok(()));
        assert_eq!(p.next(b"xx"), Err(ParseError::BadTerminator));
        assert_eq!(p.data_remaining(), 0);
        for buf in [&b""[..], b"\r\n", b"END\r\n", b"VALUE k 0 1\r\n"] {
            assert_eq!(p.next(buf), Err(ParseError::BadTerminator));
        }
        p.reset();
        assert_eq!(
            p.next(b"END\r\n"),
            Ok(ParseStatus::Complete((5, Event::End)))
        );
        assert!(p.is_complete());
        // Reset after a complete response: ready for the next one.
        p.reset();
        assert!(!p.is_complete());
        assert_eq!(
            p.next(b"END\r\n"),
            Ok(ParseStatus::Complete((5, Event::End)))
        );
        // Reset keeps the limit.
        let mut small = ResponseParser::new(2);
        small.reset();
        assert_eq!(small.next(b"VALUE k 0 3\r\n"), Err(ParseError::TooLarge));
    }

    #[test]
    fn error_codes_match_cmrx_h() {
        use ParseError::*;
        let all = [
            (ServerError, 1),
            (ClientError, 2),
            (Error, 3),
            (UnknownLine, 4),
            (BadValueLine, 5),
            (BadKey, 6),
            (BadNumber, 7),
            (TooLarge, 8),
            (BadTerminator, 9),
            (LineTooLong, 10),
            (BadLineEnd, 11),
            (AfterEnd, 12),
        ];
        for (e, code) in all {
            assert_eq!(e.code(), code);
            assert!(!e.as_str().is_empty());
            assert_eq!(e.to_string(), e.as_str());
        }
        let header = include_str!("cmrx.h");
        for name in [
            "SERVER_ERROR",
            "CLIENT_ERROR",
            "ERROR",
            "UNKNOWN_LINE",
            "BAD_VALUE_LINE",
            "BAD_KEY",
            "BAD_NUMBER",
            "TOO_LARGE",
            "BAD_TERMINATOR",
            "LINE_TOO_LONG",
            "BAD_LINE_END",
            "AFTER_END",
        ]
        .iter()
        .zip(1..)
        .map(|(n, code)| (format!("#define CMRX_PE_{n} "), code))
        {
            let (define, code) = name;
            let at = header
                .find(&define)
                .unwrap_or_else(|| panic!("{define} not in cmrx.h"));
            let value: i32 = header[at + define.len()..]
                .split_whitespace()
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap();
            assert_eq!(value, code, "{define}");
        }
    }

    /// Random edits of valid responses, each with a value length limit.
    fn mutated_corpus() -> Vec<(Vec<u8>, u64)> {
        let seeds: [&[u8]; 5] = [
            GET_MULTI,
            GETS_MULTI,
            b"VALUE k 4294967295 0 18446744073709551615\r\n\r\nEND\r\n",
            b"SERVER_ERROR out of memory\r\n",
            b"VALUE a 0 2\r\n\r\n\r\nVALUE b 0 0\r\n\r\nEND\r\n",
        ];
        let alphabet = b"VALUEND RO\r\n 0129\x00\x01\t\x7f\xc3k";
        let mut rng = Rng(7);
        let mut corpus = Vec::new();
        for round in 0..400 {
            let mut input = seeds[round % seeds.len()].to_vec();
            for _ in 0..=rng.below(3) {
                let at = rng.below(input.len() + 1);
                let b = alphabet[rng.below(alphabet.len())];
                match rng.below(3) {
                    0 => input.insert(at, b),
                    1 if at < input.len() => {
                        input.remove(at);
                    }
                    _ if at < input.len() => input[at] = b,
                    _ => input.push(b),
                }
            }
            let max = [0, 2, 3, 23][rng.below(4)];
            corpus.push((input, max));
        }
        corpus
    }

    /// Random edits of valid responses: whatever the bytes, the outcome must
    /// not depend on how they are split, and the parser must uphold its
    /// promises (checked inside `feed`). Parsed in one buffer, complete lines
    /// mostly take the fast path; split, they mostly take the byte-by-byte
    /// one: so this also compares the two.
    #[test]
    fn mutated_responses_split_the_same_way() {
        for (input, max) in mutated_corpus() {
            parse_every_way(&input, max);
        }
    }

    /// Checks [`ResponseParser::fast_line`] against the byte-by-byte
    /// [`ResponseParser::next_line`] on every suffix of `input` (so at every
    /// line start, and everywhere else) and on every prefix of each suffix's
    /// first line: whenever the fast path takes a line, the slow one returns
    /// the same event and consumed count and sets the same state; when it
    /// declines, it leaves the parser alone, and the slow path either does not
    /// return an event or the line has a number of 20 digits or more (the one
    /// kind of valid line the fast path leaves to the slow one). Returns how
    /// many lines the fast path took.
    fn assert_fast_path_agrees(input: &[u8], max: u64) -> usize {
        let mut taken = 0;
        for start in 0..input.len() {
            let rest = &input[start..];
            let line_end = memchr(b'\n', rest).map_or(rest.len(), |nl| nl + 1);
            for end in (0..=line_end).chain([rest.len()]) {
                let buf = &rest[..end];
                let mut fast = ResponseParser::new(max);
                let mut slow = fast.clone();
                let want = slow.next_line(buf);
                let context = || format!("{:?} (max {max})", String::from_utf8_lossy(buf));
                if let Some(got) = fast.fast_line(buf) {
                    assert_eq!(want, Ok(ParseStatus::Complete(got)), "{}", context());
                    assert_eq!(fast.state, slow.state, "{}", context());
                    taken += 1;
                } else {
                    assert_eq!(fast.state, State::Line, "{}", context());
                    if let Ok(ParseStatus::Complete(_)) = want {
                        // A VALUE line (the fast path takes every END): the
                        // fields after "VALUE" and the key, without "\r\n".
                        let line = &buf[..memchr(b'\n', buf).unwrap() - 1];
                        let longest_number =
                            line.split(|&b| b == b' ').skip(2).map(<[u8]>::len).max();
                        assert!(longest_number >= Some(20), "declined {}", context());
                    }
                }
            }
        }
        taken
    }

    /// Found by fuzzing (fuzz/ parser_split): an early fast path expected
    /// one data byte too many, so this valid value (data "\rND") read in one
    /// buffer failed with BadTerminator while split reads parsed it.
    #[test]
    fn fuzz_regression_short_value_with_cr_in_data() {
        let events = parse_every_way(b"VALUE 5 0 3\r\n\rND\r\n", 0);
        assert_eq!(
            events[..3],
            [
                Norm::Value(b"5".to_vec(), 0, 3, None),
                Norm::Data(b"\rND".to_vec()),
                Norm::ValueEnd
            ]
        );
    }

    /// The fast path against the slow one on the random-edit corpus.
    #[test]
    fn fast_path_agrees_on_mutated_responses() {
        let taken: usize = mutated_corpus()
            .iter()
            .map(|(input, max)| assert_fast_path_agrees(input, *max))
            .sum();
        // Most of the corpus's lines are still good ones.
        assert!(taken > 1000, "fast path took only {taken} lines");
    }

    /// The fast path against the slow one on lines built from pieces near
    /// every limit and edge the fast path checks: key lengths and bytes,
    /// number lengths and values, separators and line ends.
    #[test]
    fn fast_path_agrees_on_edge_lines() {
        let long_key = |n: usize| vec![b'k'; n];
        let mut keys: Vec<Vec<u8>> = vec![Vec::new(), b"k".to_vec(), "café".as_bytes().to_vec()];
        for n in [7, 8, 9, 15, 16, 17, 249, 250, 251, 256, 257] {
            keys.push(long_key(n));
        }
        // One odd byte (a key byte or not) at the start, the end and the
        // edges of the scan's eight-byte steps, in keys that end in a whole
        // step or in the few bytes after the last one.
        for (len, at) in [
            (1, 0),
            (2, 1),
            (9, 8),
            (10, 9),
            (13, 12),
            (16, 0),
            (16, 7),
            (16, 8),
            (16, 15),
            (17, 16),
            (24, 23),
            (25, 24),
            (31, 20),
            (32, 31),
            (40, 33),
            (250, 249),
        ] {
            for b in [
                0x00, b'\n', b' ', b'\r', b'\t', 0x01, 0x0b, 0x1f, 0x21, 0x7f, 0x80, 0xff,
            ] {
                let mut key = long_key(len);
                key[at] = b;
                keys.push(key);
            }
        }
        let numbers: [&[u8]; 16] = [
            b"0",
            b"1",
            b"00",
            b"23",
            b"24",
            b"4294967295",
            b"4294967296",
            b"0000000000000000007",
            b"00000000000000000007",
            b"9999999999999999999",
            b"18446744073709551615",
            b"18446744073709551616",
            b"",
            b"-1",
            b"1a",
            b"1\x00",
        ];
        let ends: [&[u8]; 7] = [
            b"\r\n",
            b"\n",
            b"\r",
            b"",
            b" \r\n",
            b"\r\r\n",
            b"\r\nEND\r\n",
        ];
        // Every key with a few plain endings, alone in the buffer (so that
        // the key's last bytes are read one by one) and with more after it.
        let mut taken = 0;
        for key in &keys {
            for rest in [&b" 0 0\r\n"[..], b" 1 2 3\r\n", b" 0 1\r\nx\r\nEND\r\n"] {
                let line = [b"VALUE ", key.as_slice(), rest].concat();
                taken += assert_fast_path_agrees(&line, 0);
            }
        }
        let mut rng = Rng(99);
        for round in 0..6000 {
            let mut line = b"VALUE ".to_vec();
            line.extend_from_slice(&keys[rng.below(keys.len())]);
            let fields = 1 + rng.below(4);
            for _ in 0..fields {
                line.push([b' ', b' ', b' ', b' ', b'\t'][rng.below(5)]);
                line.extend_from_slice(numbers[rng.below(numbers.len())]);
            }
            line.extend_from_slice(ends[rng.below(ends.len())]);
            if round % 50 == 0 {
                line.insert(6, b' ');
            }
            let max = [0, 1, 23, 24, u64::MAX][rng.below(5)];
            taken += assert_fast_path_agrees(&line, max);
        }
        assert!(taken > 500, "fast path took only {taken} lines");
        // END and its near misses.
        for line in [
            b"END\r\n".as_slice(),
            b"END\r\nX",
            b"END\n",
            b"END \r\n",
            b"ENDX\r\n",
            b"EN\r\n",
        ] {
            assert_fast_path_agrees(line, 0);
        }
    }
}
