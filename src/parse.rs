//! The event-stream parser for the fetch transport, sans-IO: bytes in, events out.
//!
//! It is the HTML specification's "interpreting an event stream" (WHATWG HTML, 9.2.6), step by step:
//!
//! - the bytes are decoded as UTF-8 as a stream: a sequence split across chunks is joined, an invalid one
//!   becomes U+FFFD (the maximal-subpart rule, as the specification's decoder and `from_utf8_lossy` have
//!   it), and one byte order mark at the very start is dropped;
//! - lines end at CRLF, LF or CR, a CRLF split across two chunks included (one line end, not two);
//! - a line starting with `:` is a comment; otherwise the field name runs to the first `:` and one space
//!   after it is dropped from the value; a line with no `:` is a field with an empty value;
//! - `data` appends the value and LF to the data buffer; `event` sets the type; `id` sets the last event
//!   id buffer unless the value holds U+0000 (an empty id resets it); `retry` is taken only when it is
//!   ASCII digits; other fields are ignored;
//! - an empty line dispatches: the last event id becomes the buffer's; with no data nothing is
//!   dispatched; else one trailing LF is dropped and the event has the type (or `message`), the data and
//!   the last event id;
//! - at the end of the stream a partial event (no empty line after it) is discarded.
//!
//! ```
//! use managed_eventsource::parse::{Item, Parser};
//!
//! let mut p = Parser::new();
//! let mut seen = Vec::new();
//! for chunk in [&b"data: one\r"[..], b"\ndata: two\n", b"id: 7\n\n: a comment\nretry: 250\n"] {
//!     p.feed(chunk, &mut |item| seen.push(format!("{item:?}")));
//! }
//! assert_eq!(seen, [
//!     r#"Event { kind: "message", data: "one\ntwo", id: "7" }"#,
//!     "Retry(250)",
//! ]);
//! ```

use alloc::string::String;
use alloc::vec::Vec;

/// What the stream says, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item<'a> {
    /// An event to dispatch: its type (`message` unless named), its data, and the last event id.
    Event {
        /// The event's type.
        kind: &'a str,
        /// The data lines, joined with LF.
        data: &'a str,
        /// The last event id after this event (the connection's, not only this event's own `id:`).
        id: &'a str,
    },
    /// A `retry:` field of digits: the reconnection time the server asks for, in ms (saturating).
    Retry(u64),
}

/// The parser's state between chunks. It allocates only what the events themselves hold.
#[derive(Debug, Default)]
pub struct Parser {
    /// The bytes of a UTF-8 sequence a chunk ended inside (at most 3).
    partial: Vec<u8>,
    /// Whether any text has been decoded (the BOM is dropped only first).
    started: bool,
    /// The last character seen was CR: an LF next is the same line end.
    after_cr: bool,
    /// The line read so far.
    line: String,
    data: String,
    kind: String,
    id_buffer: String,
    last_id: String,
    /// Whether the data buffer has had a `data` field (it may be empty text with one).
    has_data: bool,
}

impl Parser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// A parser for a stream that resumes after `last_id`: events carry it until the stream sets another.
    pub fn resuming(last_id: &str) -> Self {
        Self {
            last_id: last_id.into(),
            id_buffer: last_id.into(),
            ..Self::default()
        }
    }

    /// The last event id: what a reconnect sends as `Last-Event-ID`.
    pub fn last_event_id(&self) -> &str {
        &self.last_id
    }

    /// Parses one chunk of the stream's bytes, calling `out` for each item, in order.
    pub fn feed(&mut self, mut chunk: &[u8], out: &mut dyn FnMut(Item)) {
        // A sequence split across chunks: complete it a byte at a time from the start of this chunk
        // (decoding the joined bytes is decoding the stream: a sequence's validity is decided by its
        // prefix), then decode the rest of the chunk where it stands.
        while !self.partial.is_empty() {
            let Some((&b, rest)) = chunk.split_first() else {
                return;
            };
            chunk = rest;
            let mut joined = core::mem::take(&mut self.partial);
            joined.push(b);
            self.decode(&joined, out);
        }
        self.decode(chunk, out);
    }

    /// The end of the stream: a partial event is discarded. The parser is ready for a new connection,
    /// keeping the last event id (as a reconnect does).
    pub fn finish(&mut self) {
        let last = core::mem::take(&mut self.last_id);
        *self = Self::resuming(&last);
    }

    /// Decodes `bytes` as UTF-8, keeping an unfinished sequence at the end for the next chunk.
    fn decode(&mut self, mut bytes: &[u8], out: &mut dyn FnMut(Item)) {
        loop {
            match core::str::from_utf8(bytes) {
                Ok(text) => {
                    self.text(text, out);
                    return;
                }
                Err(e) => {
                    // No indexing that could panic: in wasm a panic's message alone would cost the
                    // package kilobytes of formatting code (and the splits cannot fail).
                    let (good, rest) = bytes
                        .split_at_checked(e.valid_up_to())
                        .unwrap_or((bytes, &[]));
                    if let Ok(text) = core::str::from_utf8(good) {
                        self.text(text, out);
                    }
                    match e.error_len() {
                        Some(n) => {
                            self.text("\u{FFFD}", out);
                            bytes = rest.get(n..).unwrap_or(&[]);
                        }
                        None => {
                            self.partial.extend_from_slice(rest);
                            return;
                        }
                    }
                }
            }
        }
    }

    /// Splits decoded text into lines.
    fn text(&mut self, mut text: &str, out: &mut dyn FnMut(Item)) {
        if text.is_empty() {
            return;
        }
        if !self.started {
            self.started = true;
            text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
        }
        while !text.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if let Some(rest) = text.strip_prefix('\n') {
                    text = rest;
                    continue;
                }
            }
            match text.bytes().position(|b| b == b'\r' || b == b'\n') {
                None => {
                    self.line.push_str(text);
                    return;
                }
                Some(at) => {
                    // `at` is an ASCII byte's, so both sides are text (see `decode` on indexing).
                    let (line, rest) = (
                        text.get(..at).unwrap_or(""),
                        text.get(at + 1..).unwrap_or(""),
                    );
                    self.after_cr = text.as_bytes().get(at) == Some(&b'\r');
                    if self.line.is_empty() {
                        self.process(line, out);
                    } else {
                        self.line.push_str(line);
                        let line = core::mem::take(&mut self.line);
                        self.process(&line, out);
                        // Keep the buffer's allocation for the next long line.
                        self.line = line;
                        self.line.clear();
                    }
                    text = rest;
                }
            }
        }
    }

    /// One line of the stream.
    fn process(&mut self, line: &str, out: &mut dyn FnMut(Item)) {
        if line.is_empty() {
            return self.dispatch(out);
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "event" => {
                self.kind.clear();
                self.kind.push_str(value);
            }
            "id" if !value.contains('\0') => {
                self.id_buffer.clear();
                self.id_buffer.push_str(value);
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                let ms = value.bytes().fold(0u64, |n, b| {
                    n.saturating_mul(10).saturating_add(u64::from(b - b'0'))
                });
                out(Item::Retry(ms));
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut dyn FnMut(Item)) {
        if self.last_id != self.id_buffer {
            self.last_id.clear();
            self.last_id.push_str(&self.id_buffer);
        }
        if !self.has_data {
            self.kind.clear();
            return;
        }
        if self.data.ends_with('\n') {
            self.data.pop();
        }
        let kind = if self.kind.is_empty() {
            "message"
        } else {
            &self.kind
        };
        out(Item::Event {
            kind,
            data: &self.data,
            id: &self.last_id,
        });
        self.data.clear();
        self.kind.clear();
        self.has_data = false;
    }
}
