//! The JavaScript half's entry points (the rooms of `src/web/`, see `api.js`) and the guards that own what
//! they create.
//!
//! Every import here either never throws (errors.js's `guard` wraps each that runs user code) or is
//! declared `catch`, so that no exception unwinds through wasm: an unwinding exception skips the wasm
//! stack's epilogue and, a thousand throws later, the module traps for the whole page.

use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsValue;

// Numbers cross to JavaScript as `f64`, which it takes as they are: a `u32` or a `bool` argument would make
// wasm-bindgen wrap the import in a converting function of the glue. `link` is the client's record
// (client.js).
// A transport's own room is reached through connection.js, which asks the client's transport (so that the
// glue imports none of them: each is in the entry that adds it).
#[wasm_bindgen(module = "/src/web/connection.js")]
extern "C" {
    /// Listens to a new `EventSource`: the relay for ordinary events, and the open, error and retry-hint
    /// events, which come back to the shell (the names of the hint and heartbeat events are the record's,
    /// as the shell checked them). Returns the connection record.
    pub(crate) fn attach(link: &JsValue, source: &JsValue) -> JsValue;
    /// Removes every listener `attach` added and closes the `EventSource`; for a connection `open` made,
    /// lets it go as its transport does (a socket closed, with the code the user closed it with; a fetch
    /// aborted, its reader cancelled).
    pub(crate) fn detach(connection: &JsValue);
    /// Starts an attempt the client's transport makes itself, at the URL carrying `resume_from` in
    /// `lastEventIdParam` unless it is `undefined`: a `WebSocket` (socket.js), or a fetch (fetch.js: the
    /// headers with `Last-Event-ID: last_id` unless it is empty, the body, then `fetch`, the status and the
    /// reader, each awaited in JavaScript). Returns the connection's record. Throws what the URL function
    /// throws synchronously, or a `SyntaxError` or `TypeError` for a URL the transport refuses (the first
    /// attempt's constructor rethrows it).
    #[wasm_bindgen(catch)]
    pub(crate) fn open(
        link: &JsValue,
        resume_from: &JsValue,
        last_id: &JsValue,
    ) -> Result<JsValue, JsValue>;
    /// The `lastEventId` of the connection's first (0) or last (1) event; `undefined` before any.
    #[wasm_bindgen(js_name = eventId)]
    pub(crate) fn event_id(connection: &JsValue, which: f64) -> JsValue;
    /// Whether an event arrived on the connection since the last call (the stall watchdog).
    pub(crate) fn active(connection: &JsValue) -> bool;
}

#[wasm_bindgen(module = "/src/web/client.js")]
extern "C" {
    /// Tells the client: its callbacks, its open and error events. Never throws.
    pub(crate) fn notify(link: &JsValue, what: f64, a: f64, b: f64, c: f64);
}

#[wasm_bindgen(module = "/src/web/errors.js")]
extern "C" {
    /// Reports an error as the browser reports one thrown by a listener. Never throws.
    pub(crate) fn report(e: &JsValue);
    /// A `RangeError` (`range`) or a `TypeError` saying that `option` breaks `rule` (see
    /// [`crate::options::OptionError::message`], whose words it uses).
    pub(crate) fn error(range: bool, option: &str, rule: &str) -> JsValue;
}

#[wasm_bindgen(module = "/src/web/effects.js")]
extern "C" {
    /// An id's length once encoded as `encodeURIComponent` encodes it (0 for `undefined`), as
    /// [`crate::resume::encoded_len`] counts it.
    #[wasm_bindgen(js_name = encodedLen)]
    pub(crate) fn encoded_len(id: &JsValue) -> u32;
    /// The URL of the next attempt, carrying `resume_from` in the `lastEventIdParam` parameter unless it is
    /// `undefined`; throws what a URL function throws.
    #[wasm_bindgen(catch, js_name = urlOf)]
    pub(crate) fn url_of(link: &JsValue, resume_from: &JsValue) -> Result<JsValue, JsValue>;
    /// `setTimeout(() => shell.input(what), ms)`.
    fn arm(link: &JsValue, ms: f64, what: f64) -> JsValue;
    fn disarm(id: &JsValue);
    /// Page listeners that feed the shell (`visible` and `online` 1 or 0); `unwatch` removes them.
    pub(crate) fn watch(link: &JsValue, visible: f64, online: f64) -> JsValue;
    fn unwatch(listeners: &JsValue);
    /// Fetches the probe URL (the option's, else the last attempt's) once, aborted when the headers arrive
    /// (or after 10 s), then gives the shell its answer (`input`'s `PROBED`, with `id`). Returns what
    /// `disarm` aborts it with.
    pub(crate) fn probe(link: &JsValue, id: f64) -> JsValue;
    /// Element `i` of the option values the JavaScript half read (`shell`), as a number and as it is.
    pub(crate) fn number(values: &JsValue, i: f64) -> f64;
    pub(crate) fn item(values: &JsValue, i: f64) -> JsValue;
    /// `performance.now()`: the machine's clock.
    pub(crate) fn now() -> f64;
    /// A random whole number below 2^53 (`Math.random()`), to seed a client's jitter.
    pub(crate) fn random() -> f64;
}

#[wasm_bindgen(module = "/src/web/eventsource.js")]
extern "C" {
    /// The `EventSource` of an attempt at `url`, a JavaScript string (web-sys's constructors take a `&str`,
    /// which would copy the URL into wasm memory and back): `new EventSource(url, link)`. The record is the
    /// `EventSourceInit`: its `withCredentials` is the option's. Throws a `SyntaxError` for an invalid URL.
    #[wasm_bindgen(catch)]
    pub(crate) fn source(link: &JsValue, url: &JsValue) -> Result<JsValue, JsValue>;
}

/// What a connection is made of.
pub(crate) enum Source {
    /// A connection the record holds: an `EventSource` the shell made, or what the client's transport
    /// opened itself (a socket; a fetch, its reader and its parser). Its transport's `detach` lets it go.
    Live,
    /// An attempt waiting for the Promise its URL function returned (the fetch entry only); the value is
    /// the function `fetch.js`'s `waitForUrl` returns, which `disarm` calls.
    #[cfg(feature = "fetch")]
    Waiting,
}

/// A live source and our listeners on it: dropping it removes them and closes the source.
pub(crate) struct Connection {
    pub source: Source,
    pub record: JsValue,
}

impl Drop for Connection {
    fn drop(&mut self) {
        match &self.source {
            #[cfg(feature = "fetch")]
            Source::Waiting => disarm(&self.record),
            // Closes the source too; a socket with the code the user closed it with, if any (socket.js's
            // `detachSocket`); a fetch is aborted and its reader cancelled: nothing of it acts later.
            Source::Live => detach(&self.record),
        }
    }
}

/// A pending timer (or probe) with one owner, cancelled when dropped (the shape of gloo's `Timeout`; see
/// docs/design.md for why not gloo-timers itself).
#[must_use = "a Timer is cancelled when dropped"]
pub(crate) struct Timer(JsValue);

impl Timer {
    /// Owns what `disarm` cancels: a timer's id, or a function that stops a probe (effects.js's `probe`).
    pub(crate) fn of(handle: JsValue) -> Self {
        Timer(handle)
    }

    /// After `ms` (at most 2147483647, which the ladder guarantees), the shell gets input `what`.
    pub(crate) fn new(link: &JsValue, ms: u32, what: crate::boundary::Code) -> Self {
        Timer(arm(link, ms.min(i32::MAX as u32) as f64, what as u8 as f64))
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        disarm(&self.0);
    }
}

/// The page listeners of one client, removed when dropped.
pub(crate) struct Page(pub JsValue);

impl Drop for Page {
    fn drop(&mut self) {
        unwatch(&self.0);
    }
}

/// An event id is kept as the JavaScript string it arrived as (`undefined` for none yet, which counts as
/// empty); only its encoded length is read, in JavaScript.
impl crate::machine::EventId for JsValue {
    fn encoded_len(&self) -> usize {
        encoded_len(self) as usize
    }
}

// The rooms of the JavaScript half that Rust calls nothing in but that the others import (see api.js), named
// here so that wasm-bindgen copies them beside the snippets that import them. None of these is read, so the
// wasm imports none of them.
#[wasm_bindgen(module = "/src/web/boundary.js")]
extern "C" {
    #[wasm_bindgen(thread_local_v2, js_name = V_COUNT)]
    static BOUNDARY: f64;
}

#[wasm_bindgen(module = "/src/web/api.js")]
extern "C" {
    #[wasm_bindgen(thread_local_v2, js_name = ManagedEventSource)]
    static API: JsValue;
}

#[wasm_bindgen(module = "/src/web/loader.js")]
extern "C" {
    #[wasm_bindgen(thread_local_v2, js_name = prepare)]
    static LOADER: JsValue;
}

#[wasm_bindgen(module = "/src/web/events.js")]
extern "C" {
    #[wasm_bindgen(thread_local_v2, js_name = deliver)]
    static EVENTS: JsValue;
}

#[wasm_bindgen(module = "/src/web/options.js")]
extern "C" {
    #[wasm_bindgen(thread_local_v2, js_name = readOptions)]
    static OPTIONS: JsValue;
}

#[wasm_bindgen(module = "/src/web/share.js")]
extern "C" {
    #[wasm_bindgen(thread_local_v2, js_name = sharing)]
    static SHARE: JsValue;
}

#[cfg(feature = "fetch")]
#[wasm_bindgen(module = "/src/web/fetch.js")]
extern "C" {
    #[wasm_bindgen(thread_local_v2, js_name = fetchTransport)]
    static FETCH: JsValue;
}

#[cfg(feature = "fetch")]
#[wasm_bindgen(module = "/src/web/parse.js")]
extern "C" {
    #[wasm_bindgen(thread_local_v2, js_name = EventStreamParser)]
    static PARSER: JsValue;
}

#[wasm_bindgen(module = "/src/web/socket.js")]
extern "C" {
    #[wasm_bindgen(thread_local_v2, js_name = ManagedWebSocket)]
    static SOCKET: JsValue;
}

#[wasm_bindgen(module = "/src/web/iterate.js")]
extern "C" {
    #[wasm_bindgen(thread_local_v2, js_name = iterate)]
    static ITERATE: JsValue;
}

#[wasm_bindgen(module = "/src/web/testing.js")]
extern "C" {
    #[wasm_bindgen(thread_local_v2, js_name = createVirtualClock)]
    static TESTING: JsValue;
}

#[wasm_bindgen(module = "/src/web/trace.js")]
extern "C" {
    #[wasm_bindgen(thread_local_v2, js_name = traceRecord)]
    static TRACE: JsValue;
}
