//! The fetch transport's Rust half: the parser of one connection's bytes, and the JavaScript it calls
//! (`src/web/fetch.js`, which makes the request, reads the body and relays the events).
//!
//! Per chunk there is one call into wasm (`chunk`) and one back (`events`): the chunk's events travel as
//! one string, each as three fields ended by CR, which no field can hold (a line ends at CR): the type
//! (empty for `message`), the data, and the last event id, or U+0000 where it is the previous event's (an
//! id holding U+0000 is ignored by the stream's rules, so none can be that). A connection's first events
//! carry the id it resumed from until the stream sets one, which the JavaScript half knows: the parser
//! starts from U+0000 for it, and no id crosses into wasm.

use alloc::string::String;

use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsValue;

use crate::parse::{Item, Parser};

/// The id that stands for "the one this connection resumed from" (see the module's text).
const RESUMED: &str = "\0";

/// One connection's parser, and the id last handed to the JavaScript half.
pub(crate) struct Stream {
    parser: Parser,
    sent: String,
}

impl Default for Stream {
    fn default() -> Self {
        Stream {
            parser: Parser::resuming(RESUMED),
            sent: RESUMED.into(),
        }
    }
}

impl Stream {
    /// Parses `bytes`, appending their events to `text` as the module's text says, and keeping the last
    /// `retry:` field's value (a `u32` of ms at most) in `retry`.
    pub(crate) fn feed(&mut self, bytes: &[u8], text: &mut String, retry: &mut Option<u32>) {
        let sent = &mut self.sent;
        self.parser.feed(bytes, &mut |item| match item {
            Item::Event { kind, data, id } => {
                if kind != "message" {
                    text.push_str(kind);
                }
                text.push('\r');
                text.push_str(data);
                text.push('\r');
                if id == sent.as_str() {
                    text.push('\0');
                } else {
                    text.push_str(id);
                    sent.clear();
                    sent.push_str(id);
                }
                text.push('\r');
            }
            Item::Retry(ms) => *retry = Some(ms.min(u32::MAX as u64) as u32),
        });
    }
}

#[wasm_bindgen(module = "/src/web/fetch.js")]
extern "C" {
    /// Starts an attempt: the URL (carrying `resume_from` in `lastEventIdParam` unless it is `undefined`),
    /// the headers with `Last-Event-ID: last_id` unless it is empty, the body, then `fetch`, the status and
    /// the reader, each awaited in JavaScript. Returns the connection's record. Throws what the URL
    /// function throws synchronously, or a `TypeError` for a URL that does not parse (the first attempt's
    /// constructor rethrows it).
    #[wasm_bindgen(catch)]
    pub(crate) fn open(
        link: &JsValue,
        resume_from: &JsValue,
        last_id: &JsValue,
    ) -> Result<JsValue, JsValue>;
    /// Aborts the fetch and cancels the reader; the record reads nothing more.
    pub(crate) fn stop(record: &JsValue);
    /// Dispatches a chunk's events (see the module's text). Never throws.
    pub(crate) fn events(record: &JsValue, text: &str);
}
