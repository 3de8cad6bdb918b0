//! The fetch transport's Rust half: the JavaScript it calls (`src/web/fetch.js`, which makes the request,
//! reads the body, parses it (`src/web/parse.js`) and relays the events; a `retry:` field comes back as
//! [`crate::boundary::Code::RetryField`]).

use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsValue;

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
}
