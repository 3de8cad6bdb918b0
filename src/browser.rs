//! The client for Rust web frontends (Leptos, Dioxus, Yew): the browser's `ManagedEventSource` with a Rust
//! API, so that a Rust app gets the ladder, the machine and the shell with no JavaScript to write.
//!
//! It drives the same shell as the npm package's class (the JavaScript half in `src/web/api.js` and the Rust
//! half in `src/web/`), built into the app's own wasm: options are checked in Rust first (an
//! [`OptionError`] names the option, as the JavaScript API's `TypeError` and `RangeError` do), listeners
//! are guards that remove themselves when dropped (as gloo's `EventListener`), and dropping the client
//! closes it. wasm32 only, with the crate's default features (the npm package's `small` build has none of
//! this, so it does not grow).
//!
//! ```no_run
//! use managed_eventsource::browser::{ManagedEventSource, Options};
//! use managed_eventsource::machine::Status;
//!
//! let options = Options { max_attempts: 12.0, last_event_id_param: Some("lastEventId"), ..Options::default() };
//! let feed = ManagedEventSource::new("/api/feed", options).expect("valid options");
//! let _messages = feed.on_message(|ev| web_sys::console::log_1(&ev.data()));
//! feed.on_status(|status| {
//!     if status == Status::Failed {
//!         web_sys::console::warn_1(&"the feed gave up".into());
//!     }
//! });
//! // `feed` closes when dropped: keep it where the component keeps its state.
//! ```

use alloc::boxed::Box;
use alloc::rc::Rc;
use alloc::string::String;
use core::cell::RefCell;

use js_sys::{Function, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Event, MessageEvent};

use crate::ladder::Strategy;
use crate::machine::Status;
use crate::options::{OptionError, Reconnect, Text};

/// The options: the JavaScript options' names in snake case, with the same defaults and the same checks.
///
/// Its strings are `&'static str`, as most apps write them. A string made at run time (a probe URL from the
/// app's configuration) goes in [`crate::options::Options`]`<String>`, which every constructor also takes:
///
/// ```no_run
/// use managed_eventsource::browser::{ManagedEventSource, Options};
///
/// let quick = Options { base_ms: 250.0, max_ms: 10_000.0, ..Options::default() };
/// let feed = ManagedEventSource::new("/api/feed", quick).unwrap();
///
/// let probe = format!("{}/health", "/api");
/// let owned = managed_eventsource::options::Options::<String> {
///     probe: true,
///     probe_url: Some(probe),
///     ..Default::default()
/// };
/// let checked = ManagedEventSource::new("/api/feed", owned).unwrap();
/// # drop((feed, checked));
/// ```
pub type Options = crate::options::Options<&'static str>;

/// What the constructors take as options' strings: `&'static str` ([`Options`]) or `String` (see
/// [`Options`]'s example); implemented for every [`Text`] that is also `AsRef<str>`.
pub trait Strings: Text + AsRef<str> {}
impl<S: Text + AsRef<str>> Strings for S {}

/// Why a client could not be made.
///
/// ```no_run
/// use managed_eventsource::browser::{Error, ManagedEventSource, Options};
///
/// match ManagedEventSource::new("http://[bad", Options::default()) {
///     Err(Error::Url(e)) => web_sys::console::error_1(&e), // the browser's SyntaxError
///     Err(Error::Option(e)) => web_sys::console::error_1(&e.message().into()),
///     Ok(_) => unreachable!(),
/// }
/// ```
#[derive(Debug)]
pub enum Error {
    /// An option breaks its rule.
    Option(OptionError),
    /// The browser refused the URL (the `SyntaxError` `new EventSource` throws), or the URL function
    /// threw on the first attempt.
    Url(JsValue),
}

impl From<OptionError> for Error {
    fn from(e: OptionError) -> Self {
        Error::Option(e)
    }
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Error::Option(e) => write!(f, "option {} {}", e.option, e.rule),
            Error::Url(e) => write!(f, "the url was refused: {e:?}"),
        }
    }
}

thread_local! {
    /// The JavaScript half's classes, installed once into this module's shell.
    static API: JsValue = crate::web::js_api();
}

fn get(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// Member `key` of a JavaScript object as a number (0 if it is missing).
fn number(target: &JsValue, key: &str) -> f64 {
    get(target, key).as_f64().unwrap_or(0.0)
}

fn set(target: &JsValue, key: &str, value: &JsValue) {
    let _ = Reflect::set(target, &JsValue::from_str(key), value);
}

/// The JavaScript options object for checked `o`.
fn js_options<S: Strings>(o: &crate::options::Options<S>) -> Result<Object, OptionError> {
    o.validate()?;
    let js = Object::new();
    let num = |k: &str, v: f64| set(&js, k, &JsValue::from_f64(v));
    let flag = |k: &str, v: bool| set(&js, k, &JsValue::from_bool(v));
    let text = |k: &str, v: &Option<S>| {
        if let Some(v) = v {
            set(&js, k, &JsValue::from_str(v.as_ref()));
        }
    };
    flag("withCredentials", o.with_credentials);
    let reconnect = match o.reconnect {
        Reconnect::Backoff => JsValue::from_str("backoff"),
        Reconnect::Browser => JsValue::from_str("browser"),
        Reconnect::Never => JsValue::FALSE,
    };
    set(&js, "reconnect", &reconnect);
    let jitter = match o.jitter {
        Strategy::Full => "full",
        Strategy::Equal => "equal",
        Strategy::Decorrelated => "decorrelated",
        Strategy::None => "none",
        _ => {
            return Err(OptionError::type_error(
                "jitter",
                "must be 'full', 'equal', 'decorrelated' or 'none'",
            ))
        }
    };
    set(&js, "jitter", &JsValue::from_str(jitter));
    num("baseMs", o.base_ms);
    num("maxMs", o.max_ms);
    num("factor", o.factor);
    num("maxAttempts", o.max_attempts);
    text("lastEventIdParam", &o.last_event_id_param);
    flag("reconnectOnVisible", o.reconnect_on_visible);
    flag("reconnectOnOnline", o.reconnect_on_online);
    text("retryHintEvent", &o.retry_hint_event);
    num("maxHintMs", o.max_hint_ms);
    match &o.probe_url {
        Some(url) if o.probe => set(&js, "probe", &JsValue::from_str(url.as_ref())),
        _ => flag("probe", o.probe),
    }
    num("stallTimeoutMs", o.stall_timeout_ms);
    text("heartbeatEvent", &o.heartbeat_event);
    num("minUptimeMs", o.min_uptime_ms);
    num("connectTimeoutMs", o.connect_timeout_ms);
    num("pauseWhenHiddenMs", o.pause_when_hidden_ms);
    Ok(js)
}

/// A callback property's closure, which the JavaScript half calls with one argument.
type Callback = Closure<dyn FnMut(JsValue)>;

/// The callbacks a client holds, so that they live as long as it does.
#[derive(Default)]
struct Callbacks {
    /// The callback properties set on the JavaScript instance (`onstatus`, `onretry`, ...), each with the
    /// closure behind it: the JavaScript half calls them, and the client clears them when dropped.
    /// `onstatus` is the client's own, which calls `user_status` and wakes the `events()` streams.
    props: alloc::vec::Vec<(&'static str, Callback)>,
    user_status: Option<Box<dyn FnMut(Status)>>,
    /// What `events()` streams wait on, woken by each event and by `close()`.
    #[cfg(feature = "stream")]
    wakers: alloc::vec::Vec<core::task::Waker>,
    /// Held, not read: the JavaScript half calls them before each attempt (the URL function, and the fetch
    /// transport's headers and body functions).
    #[allow(dead_code)]
    per_attempt: alloc::vec::Vec<Closure<dyn FnMut() -> JsValue>>,
}

impl Callbacks {
    fn with(url: Closure<dyn FnMut() -> JsValue>) -> Self {
        Callbacks {
            per_attempt: alloc::vec![url],
            ..Callbacks::default()
        }
    }
}

/// A URL function as the JavaScript half calls it, and the closure to hold.
fn url_fn(mut url: impl FnMut() -> String + 'static) -> (JsValue, Closure<dyn FnMut() -> JsValue>) {
    let f = Closure::<dyn FnMut() -> JsValue>::new(move || JsValue::from_str(&url()));
    (f.as_ref().clone(), f)
}

/// An `EventSource` that reconnects through a jittered exponential backoff ladder. Dropping it closes it.
///
/// ```no_run
/// use managed_eventsource::browser::{ManagedEventSource, Options};
///
/// struct Dashboard {
///     // Dropped with the dashboard: the stream closes and the listener goes.
///     _feed: ManagedEventSource,
///     _prices: managed_eventsource::browser::Listener,
/// }
/// let feed = ManagedEventSource::new("/api/prices", Options::default()).unwrap();
/// let prices = feed.on("price", |ev| web_sys::console::log_1(&ev.data()));
/// let board = Dashboard { _feed: feed, _prices: prices };
/// # drop(board);
/// ```
pub struct ManagedEventSource {
    es: JsValue,
    callbacks: Rc<RefCell<Callbacks>>,
}

impl ManagedEventSource {
    /// Connects to `url` (resolved against the document, as `EventSource` resolves it) through the
    /// browser's `EventSource`.
    ///
    /// ```no_run
    /// use managed_eventsource::browser::{Error, ManagedEventSource, Options};
    ///
    /// match ManagedEventSource::new("/api/feed", Options { base_ms: -1.0, ..Options::default() }) {
    ///     Err(Error::Option(e)) => assert_eq!(e.option, "baseMs"),
    ///     _ => unreachable!("a negative delay is refused"),
    /// }
    /// ```
    pub fn new<S: Strings>(url: &str, options: crate::options::Options<S>) -> Result<Self, Error> {
        Self::make(JsValue::from_str(url), options, None, Callbacks::default())
    }

    /// Connects with the URL `url` returns, called before every attempt (a fresh token in the query).
    ///
    /// ```no_run
    /// use managed_eventsource::browser::{ManagedEventSource, Options};
    ///
    /// fn token() -> String {
    ///     "t0k3n".into() // the app's current token, read again for every attempt
    /// }
    /// let feed = ManagedEventSource::with_url_fn(|| format!("/api/feed?token={}", token()), Options::default());
    /// # drop(feed);
    /// ```
    pub fn with_url_fn<S: Strings>(
        url: impl FnMut() -> String + 'static,
        options: crate::options::Options<S>,
    ) -> Result<Self, Error> {
        let (js, f) = url_fn(url);
        Self::make(js, options, None, Callbacks::with(f))
    }

    /// Connects to `url` through `fetch` (feature `fetch`), with the request's method, headers and body:
    /// token auth in a header, a POST stream. Statuses come from each response (a 204 closes, 401/403 call
    /// [`on_unauthorized`](Self::on_unauthorized) and wait, 404/410 fail, 429/503 wait `Retry-After`), and
    /// `retry:` is a floor under the ladder, as in the package's `managed-eventsource/fetch`. `probe` is
    /// not needed there and is ignored.
    ///
    /// ```no_run
    /// use managed_eventsource::browser::{ManagedEventSource, Options, Request};
    ///
    /// let ask = Request::new()
    ///     .method("POST")
    ///     .header("Content-Type", "application/json")
    ///     .headers_with(|| vec![("Authorization".into(), format!("Bearer {}", "t0k3n"))])
    ///     .body(r#"{"prompt":"hello"}"#);
    /// let answer = ManagedEventSource::fetch("/api/chat", Options::default(), ask).unwrap();
    /// # drop(answer);
    /// ```
    #[cfg(feature = "fetch")]
    pub fn fetch<S: Strings>(
        url: &str,
        options: crate::options::Options<S>,
        request: Request,
    ) -> Result<Self, Error> {
        Self::make(
            JsValue::from_str(url),
            options,
            Some(request),
            Callbacks::default(),
        )
    }

    /// [`fetch`](Self::fetch) with the URL `url` returns, called before every attempt.
    ///
    /// ```no_run
    /// use managed_eventsource::browser::{ManagedEventSource, Options, Request};
    ///
    /// let mut room = 0;
    /// let feed = ManagedEventSource::fetch_with_url_fn(
    ///     move || { room += 1; format!("/api/rooms/{room}") },
    ///     Options::default(),
    ///     Request::new(),
    /// );
    /// # drop(feed);
    /// ```
    #[cfg(feature = "fetch")]
    pub fn fetch_with_url_fn<S: Strings>(
        url: impl FnMut() -> String + 'static,
        options: crate::options::Options<S>,
        request: Request,
    ) -> Result<Self, Error> {
        let (js, f) = url_fn(url);
        Self::make(js, options, Some(request), Callbacks::with(f))
    }

    #[cfg_attr(not(feature = "fetch"), allow(unused_mut))]
    fn make<S: Strings>(
        url: JsValue,
        options: crate::options::Options<S>,
        request: Option<Request>,
        mut callbacks: Callbacks,
    ) -> Result<Self, Error> {
        let options = js_options(&options)?;
        #[cfg(feature = "fetch")]
        if let Some(request) = request {
            request.into_options(&options, &mut callbacks.per_attempt)?;
        }
        #[cfg(not(feature = "fetch"))]
        let _ = request;
        let class: Function = API
            .with(|api| get(api, "ManagedEventSource"))
            .unchecked_into();
        let args = js_sys::Array::of2(&url, &options);
        let es = Reflect::construct(&class, &args).map_err(Error::Url)?;
        let callbacks = Rc::new(RefCell::new(callbacks));
        // The one `onstatus` of the JavaScript instance: the user's callback (taken out while it runs, so
        // that it may replace itself), then the streams waiting for the end.
        let weak = Rc::downgrade(&callbacks);
        let on_status = Closure::<dyn FnMut(JsValue)>::new(move |s: JsValue| {
            let (Some(status), Some(callbacks)) = (status_of(&s), weak.upgrade()) else {
                return;
            };
            let user = callbacks.borrow_mut().user_status.take();
            if let Some(mut f) = user {
                f(status);
                callbacks.borrow_mut().user_status.get_or_insert(f);
            }
            #[cfg(feature = "stream")]
            if status == Status::Closed {
                wake(&callbacks);
            }
        });
        let client = ManagedEventSource { es, callbacks };
        client.hold("onstatus", on_status);
        Ok(client)
    }

    /// Sets the instance's callback property `key` to `f`, replacing (and freeing) any earlier one.
    fn hold(&self, key: &'static str, f: Callback) {
        set(&self.es, key, f.as_ref());
        let mut callbacks = self.callbacks.borrow_mut();
        callbacks.props.retain(|(k, _)| *k != key);
        callbacks.props.push((key, f));
    }

    /// Calls `f` with every `message` event, until the guard is dropped.
    ///
    /// ```no_run
    /// # use managed_eventsource::browser::{ManagedEventSource, Options};
    /// # let feed = ManagedEventSource::new("/api/feed", Options::default()).unwrap();
    /// let _messages = feed.on_message(|ev| web_sys::console::log_1(&ev.data()));
    /// // Keep `_messages` as long as the listener should hear; dropping it removes the listener.
    /// ```
    #[must_use = "the listener is removed when the guard is dropped"]
    pub fn on_message(&self, f: impl FnMut(MessageEvent) + 'static) -> Listener {
        self.on("message", f)
    }

    /// Calls `f` with every event of `type` the server names (or `message`), until the guard is dropped.
    ///
    /// ```no_run
    /// # use managed_eventsource::browser::{ManagedEventSource, Options};
    /// # let feed = ManagedEventSource::new("/api/feed", Options::default()).unwrap();
    /// let _prices = feed.on("price", |ev| {
    ///     let tick: String = ev.data().as_string().unwrap_or_default();
    ///     web_sys::console::log_1(&tick.into());
    /// });
    /// ```
    #[must_use = "the listener is removed when the guard is dropped"]
    pub fn on(&self, kind: &str, mut f: impl FnMut(MessageEvent) + 'static) -> Listener {
        self.listen(kind, Box::new(move |e: Event| f(e.unchecked_into())))
    }

    /// Calls `f` with every `open` event, until the guard is dropped.
    ///
    /// ```no_run
    /// # use managed_eventsource::browser::{ManagedEventSource, Options};
    /// # let feed = ManagedEventSource::new("/api/feed", Options::default()).unwrap();
    /// let _opened = feed.on_open(|_| web_sys::console::log_1(&"connected".into()));
    /// ```
    #[must_use = "the listener is removed when the guard is dropped"]
    pub fn on_open(&self, f: impl FnMut(Event) + 'static) -> Listener {
        self.listen("open", Box::new(f))
    }

    /// Calls `f` with every `error` event of the connection, until the guard is dropped.
    ///
    /// ```no_run
    /// # use managed_eventsource::browser::{ManagedEventSource, Options};
    /// # let feed = ManagedEventSource::new("/api/feed", Options::default()).unwrap();
    /// // Each dropped connection; the ladder reconnects on its own.
    /// let _errors = feed.on_error(|_| web_sys::console::warn_1(&"connection lost".into()));
    /// ```
    #[must_use = "the listener is removed when the guard is dropped"]
    pub fn on_error(&self, f: impl FnMut(Event) + 'static) -> Listener {
        self.listen("error", Box::new(f))
    }

    fn listen(&self, kind: &str, f: Box<dyn FnMut(Event)>) -> Listener {
        let closure = Closure::<dyn FnMut(Event)>::wrap(f);
        let add: Function = get(&self.es, "addEventListener").unchecked_into();
        let _ = add.call2(&self.es, &JsValue::from_str(kind), closure.as_ref());
        Listener {
            es: self.es.clone(),
            kind: kind.into(),
            closure: Some(closure),
        }
    }

    /// Calls `f` with each new status (replacing any earlier callback).
    ///
    /// ```no_run
    /// # use managed_eventsource::browser::{ManagedEventSource, Options};
    /// # let feed = ManagedEventSource::new("/api/feed", Options::default()).unwrap();
    /// use managed_eventsource::machine::Status;
    /// feed.on_status(|status| {
    ///     // `as_str()` is the JavaScript status: "connecting", "open", "waiting", "failed", "closed".
    ///     web_sys::console::log_1(&status.as_str().into());
    ///     if status == Status::Failed {
    ///         web_sys::console::warn_1(&"gave up: show a retry button".into());
    ///     }
    /// });
    /// ```
    pub fn on_status(&self, f: impl FnMut(Status) + 'static) {
        self.callbacks.borrow_mut().user_status = Some(Box::new(f));
    }

    /// Calls `f(attempt, delay_ms)` for each reconnect scheduled (replacing any earlier callback).
    ///
    /// ```no_run
    /// # use managed_eventsource::browser::{ManagedEventSource, Options};
    /// # let feed = ManagedEventSource::new("/api/feed", Options::default()).unwrap();
    /// feed.on_retry(|attempt, delay_ms| {
    ///     web_sys::console::log_1(&format!("attempt {attempt} in {delay_ms} ms").into());
    /// });
    /// ```
    pub fn on_retry(&self, mut f: impl FnMut(u32, u32) + 'static) {
        let c = Closure::<dyn FnMut(JsValue)>::new(move |info: JsValue| {
            f(
                number(&info, "attempt") as u32,
                number(&info, "delayMs") as u32,
            )
        });
        self.hold("onretry", c);
    }

    /// Calls `f(attempts)` when the client gives up (replacing any earlier callback).
    ///
    /// ```no_run
    /// # use managed_eventsource::browser::{ManagedEventSource, Options};
    /// # let feed = ManagedEventSource::new("/api/feed", Options::default()).unwrap();
    /// feed.on_give_up(|attempts| web_sys::console::warn_1(&format!("gave up after {attempts}").into()));
    /// ```
    pub fn on_give_up(&self, mut f: impl FnMut(u32) + 'static) {
        let c = Closure::<dyn FnMut(JsValue)>::new(move |info: JsValue| {
            f(number(&info, "attempts") as u32)
        });
        self.hold("ongiveup", c);
    }

    /// Calls `f(status)` when the server answers 401 or 403 (read off the response with the fetch
    /// transport, by the probe with `probe`); the status is then [`Status::Failed`] and nothing is retried
    /// until [`reconnect_now`](Self::reconnect_now), which the app calls once it has a fresh credential
    /// (replacing any earlier callback).
    ///
    /// ```no_run
    /// use std::rc::Rc;
    /// use managed_eventsource::browser::{ManagedEventSource, Options};
    ///
    /// let feed = Rc::new(ManagedEventSource::new("/api/feed", Options { probe: true, ..Options::default() }).unwrap());
    /// let again = Rc::downgrade(&feed);
    /// feed.on_unauthorized(move |status| {
    ///     web_sys::console::warn_1(&format!("signed out ({status})").into());
    ///     // ...sign in again, then:
    ///     if let Some(feed) = again.upgrade() {
    ///         feed.reconnect_now();
    ///     }
    /// });
    /// ```
    pub fn on_unauthorized(&self, mut f: impl FnMut(u16) + 'static) {
        let c = Closure::<dyn FnMut(JsValue)>::new(move |info: JsValue| {
            f(number(&info, "status") as u16)
        });
        self.hold("onunauthorized", c);
    }

    /// What the UI shows.
    ///
    /// ```no_run
    /// # use managed_eventsource::browser::{ManagedEventSource, Options};
    /// # let feed = ManagedEventSource::new("/api/feed", Options::default()).unwrap();
    /// let label = feed.status().as_str(); // "connecting" at first
    /// ```
    pub fn status(&self) -> Status {
        status_of(&get(&self.es, "status")).unwrap_or(Status::Closed)
    }

    /// `EventSource.readyState`: 0 connecting (also while waiting), 1 open, 2 closed.
    ///
    /// ```no_run
    /// # use managed_eventsource::browser::{ManagedEventSource, Options};
    /// # let feed = ManagedEventSource::new("/api/feed", Options::default()).unwrap();
    /// let open = feed.ready_state() == 1;
    /// ```
    pub fn ready_state(&self) -> u16 {
        get(&self.es, "readyState").as_f64().unwrap_or(2.0) as u16
    }

    /// Reconnect attempts in a row so far; 0 while open.
    ///
    /// ```no_run
    /// # use managed_eventsource::browser::{ManagedEventSource, Options};
    /// # let feed = ManagedEventSource::new("/api/feed", Options::default()).unwrap();
    /// let tries = feed.attempt();
    /// ```
    pub fn attempt(&self) -> u32 {
        number(&self.es, "attempt") as u32
    }

    /// The last event id received, kept across reconnects.
    ///
    /// ```no_run
    /// # use managed_eventsource::browser::{ManagedEventSource, Options};
    /// # let feed = ManagedEventSource::new("/api/feed", Options::default()).unwrap();
    /// let resume_from = feed.last_event_id(); // "" before the first id
    /// ```
    pub fn last_event_id(&self) -> String {
        get(&self.es, "lastEventId").as_string().unwrap_or_default()
    }

    /// The URL of the current or last attempt.
    ///
    /// ```no_run
    /// # use managed_eventsource::browser::{ManagedEventSource, Options};
    /// # let feed = ManagedEventSource::new("/api/feed", Options::default()).unwrap();
    /// let url = feed.url(); // absolute, as EventSource's `url`
    /// ```
    pub fn url(&self) -> String {
        get(&self.es, "url").as_string().unwrap_or_default()
    }

    /// Resets the ladder and connects at once, also after [`Status::Failed`]. Does nothing after close.
    ///
    /// ```no_run
    /// # use managed_eventsource::browser::{ManagedEventSource, Options};
    /// # let feed = ManagedEventSource::new("/api/feed", Options::default()).unwrap();
    /// // A "retry now" button after the client gave up.
    /// feed.reconnect_now();
    /// ```
    pub fn reconnect_now(&self) {
        self.call("reconnectNow");
    }

    /// Closes for good: the source and any pending retry; [`Status::Closed`]. Also what dropping does.
    ///
    /// ```no_run
    /// # use managed_eventsource::browser::{ManagedEventSource, Options};
    /// # let feed = ManagedEventSource::new("/api/feed", Options::default()).unwrap();
    /// feed.close();
    /// assert_eq!(feed.ready_state(), 2);
    /// ```
    pub fn close(&self) {
        self.call("close");
        #[cfg(feature = "stream")]
        wake(&self.callbacks);
    }

    /// The `message` events as a [`futures_core::Stream`], in order, ending once the client is closed
    /// (by [`close`](Self::close), by dropping it, or by the server's 204). Events that arrive before the
    /// stream is polled wait in it. Feature `stream`.
    ///
    /// ```no_run
    /// # async fn run() {
    /// use core::pin::Pin;
    /// use futures_core::Stream;
    /// use managed_eventsource::browser::{ManagedEventSource, Options};
    ///
    /// let feed = ManagedEventSource::new("/api/feed", Options::default()).unwrap();
    /// let mut events = feed.events();
    /// // Any executor's `next()` does this (futures' StreamExt, for one).
    /// while let Some(ev) = core::future::poll_fn(|cx| Pin::new(&mut events).poll_next(cx)).await {
    ///     web_sys::console::log_1(&ev.data());
    /// }
    /// # }
    /// ```
    #[cfg(feature = "stream")]
    pub fn events(&self) -> Events {
        let queue = Rc::new(RefCell::new(alloc::collections::VecDeque::new()));
        let callbacks = self.callbacks.clone();
        // Each message wakes the streams; the end is told by the client's status (see `make`).
        let messages = {
            let (queue, callbacks) = (queue.clone(), callbacks.clone());
            self.on_message(move |ev| {
                queue.borrow_mut().push_back(ev);
                wake(&callbacks);
            })
        };
        Events {
            es: self.es.clone(),
            queue,
            callbacks,
            _listener: messages,
        }
    }

    fn call(&self, method: &str) {
        let f: Function = get(&self.es, method).unchecked_into();
        let _ = f.call0(&self.es);
    }
}

impl Drop for ManagedEventSource {
    fn drop(&mut self) {
        self.close();
        // The callbacks go with the client: the JavaScript half lets go of them on close.
        for (key, _) in &self.callbacks.borrow().props {
            set(&self.es, key, &JsValue::NULL);
        }
    }
}

/// Wakes the `events()` streams waiting on `callbacks` (the borrow ends before any waker runs).
#[cfg(feature = "stream")]
fn wake(callbacks: &RefCell<Callbacks>) {
    let wakers = core::mem::take(&mut callbacks.borrow_mut().wakers);
    wakers.into_iter().for_each(core::task::Waker::wake);
}

/// The `message` events of a client, as a [`futures_core::Stream`] (see [`ManagedEventSource::events`]).
///
/// ```no_run
/// # use managed_eventsource::browser::{ManagedEventSource, Options};
/// # let feed = ManagedEventSource::new("/api/feed", Options::default()).unwrap();
/// let events: managed_eventsource::browser::Events = feed.events();
/// // Poll it as any `Stream` (see `events()`); it ends once `feed` closes.
/// # drop(events);
/// ```
#[cfg(feature = "stream")]
pub struct Events {
    es: JsValue,
    queue: Rc<RefCell<alloc::collections::VecDeque<MessageEvent>>>,
    callbacks: Rc<RefCell<Callbacks>>,
    _listener: Listener,
}

#[cfg(feature = "stream")]
impl futures_core::Stream for Events {
    type Item = MessageEvent;

    fn poll_next(
        self: core::pin::Pin<&mut Self>,
        cx: &mut core::task::Context<'_>,
    ) -> core::task::Poll<Option<MessageEvent>> {
        if let Some(ev) = self.queue.borrow_mut().pop_front() {
            return core::task::Poll::Ready(Some(ev));
        }
        if status_of(&get(&self.es, "status")) == Some(Status::Closed) {
            return core::task::Poll::Ready(None);
        }
        let mut callbacks = self.callbacks.borrow_mut();
        if !callbacks.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            callbacks.wakers.push(cx.waker().clone());
        }
        core::task::Poll::Pending
    }
}

fn status_of(s: &JsValue) -> Option<Status> {
    let s = s.as_string()?;
    crate::boundary::STATUSES
        .iter()
        .copied()
        .find(|st| st.as_str() == s)
}

/// A listener on a client, removed when dropped.
///
/// ```no_run
/// # use managed_eventsource::browser::{ManagedEventSource, Options};
/// # let feed = ManagedEventSource::new("/api/feed", Options::default()).unwrap();
/// let listener = feed.on_message(|_| {});
/// drop(listener); // heard nothing after this
/// ```
#[must_use = "the listener is removed when the guard is dropped"]
pub struct Listener {
    es: JsValue,
    kind: String,
    closure: Option<Closure<dyn FnMut(Event)>>,
}

impl Listener {
    /// Keeps the listener for as long as the client lives (its closure is leaked, as `forget` does).
    ///
    /// ```no_run
    /// # use managed_eventsource::browser::{ManagedEventSource, Options};
    /// # let feed = ManagedEventSource::new("/api/feed", Options::default()).unwrap();
    /// // For a client that lives as long as the page.
    /// feed.on_message(|ev| web_sys::console::log_1(&ev.data())).forget();
    /// ```
    pub fn forget(mut self) {
        if let Some(c) = self.closure.take() {
            c.forget();
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(c) = self.closure.take() {
            let remove: Function = get(&self.es, "removeEventListener").unchecked_into();
            let _ = remove.call2(&self.es, &JsValue::from_str(&self.kind), c.as_ref());
        }
    }
}

/// No request without the fetch transport.
#[cfg(not(feature = "fetch"))]
enum Request {}

/// Header names and values, in order.
///
/// ```no_run
/// let pairs: managed_eventsource::browser::Pairs = vec![("Authorization".into(), "Bearer t".into())];
/// ```
#[cfg(feature = "fetch")]
pub type Pairs = alloc::vec::Vec<(String, String)>;

/// How a fetch-transport client asks for its stream (feature `fetch`): the method, the headers and the body
/// of every attempt, given once or made again before each attempt. Every attempt also sends
/// `Accept: text/event-stream` and, when resuming, `Last-Event-ID`.
///
/// ```no_run
/// use managed_eventsource::browser::Request;
///
/// let get = Request::new().header("X-Client", "dashboard");
/// let post = Request::new().method("POST").body_with(|| format!(r#"{{"since":{}}}"#, 42));
/// # drop((get, post));
/// ```
#[cfg(feature = "fetch")]
#[derive(Default)]
pub struct Request {
    method: Option<String>,
    headers: Pairs,
    headers_with: Option<Box<dyn FnMut() -> Pairs>>,
    body: Option<String>,
    body_with: Option<Box<dyn FnMut() -> String>>,
}

#[cfg(feature = "fetch")]
impl Request {
    /// A `GET` with no headers of its own.
    ///
    /// ```no_run
    /// use managed_eventsource::browser::Request;
    ///
    /// let plain = Request::new(); // GET, Accept: text/event-stream
    /// ```
    pub fn new() -> Self {
        Request::default()
    }

    /// The HTTP method (`GET` by default). `CONNECT`, `TRACE` and `TRACK`, which `fetch` refuses, and a
    /// name that is not an HTTP token are an [`OptionError`] for `method` when the client is made.
    ///
    /// ```no_run
    /// use managed_eventsource::browser::Request;
    ///
    /// let report = Request::new().method("POST").body("{}");
    /// ```
    pub fn method(mut self, method: &str) -> Self {
        self.method = Some(method.into());
        self
    }

    /// A header sent with every attempt. A name that is not an HTTP token, or a value with a line break or
    /// NUL, is an [`OptionError`] for `headers` when the client is made.
    ///
    /// ```no_run
    /// use managed_eventsource::browser::Request;
    ///
    /// let tagged = Request::new().header("X-Client", "dashboard").header("X-Region", "eu");
    /// ```
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Headers made again before every attempt (a token that is refreshed), sent after those of
    /// [`header`](Self::header) (a name in both takes this value). `fetch` refuses a bad one when the
    /// attempt starts: the error is reported and the attempt takes the ladder, as in JavaScript.
    ///
    /// ```no_run
    /// use managed_eventsource::browser::Request;
    ///
    /// fn token() -> String {
    ///     "t0k3n".into() // the app's current access token
    /// }
    /// let authed = Request::new().headers_with(|| vec![("Authorization".into(), format!("Bearer {}", token()))]);
    /// ```
    pub fn headers_with(mut self, f: impl FnMut() -> Pairs + 'static) -> Self {
        self.headers_with = Some(Box::new(f));
        self
    }

    /// The body of every attempt (not with `GET` or `HEAD`, which `fetch` refuses: an [`OptionError`] for
    /// `body`).
    ///
    /// ```no_run
    /// use managed_eventsource::browser::Request;
    ///
    /// let ask = Request::new().method("POST").body(r#"{"prompt":"hello"}"#);
    /// ```
    pub fn body(mut self, body: impl Into<String>) -> Self {
        self.body = Some(body.into());
        self.body_with = None;
        self
    }

    /// A body made again before every attempt (a conversation's messages so far).
    ///
    /// ```no_run
    /// use managed_eventsource::browser::Request;
    ///
    /// let mut turns = 0;
    /// let chat = Request::new().method("POST").body_with(move || {
    ///     turns += 1;
    ///     format!(r#"{{"turn":{turns}}}"#)
    /// });
    /// ```
    pub fn body_with(mut self, f: impl FnMut() -> String + 'static) -> Self {
        self.body_with = Some(Box::new(f));
        self.body = None;
        self
    }

    /// Checks the request and writes it into the JavaScript options `o`, keeping its functions in `held`.
    fn into_options(
        self,
        o: &Object,
        held: &mut alloc::vec::Vec<Closure<dyn FnMut() -> JsValue>>,
    ) -> Result<(), OptionError> {
        let token = |s: &str| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
        };
        let method = self.method.unwrap_or_else(|| "GET".into());
        let refused = ["CONNECT", "TRACE", "TRACK"]
            .iter()
            .any(|m| m.eq_ignore_ascii_case(&method));
        if !token(&method) || refused {
            return Err(OptionError::type_error(
                "method",
                "must be an HTTP method fetch sends (not CONNECT, TRACE or TRACK)",
            ));
        }
        let bodiless = method.eq_ignore_ascii_case("GET") || method.eq_ignore_ascii_case("HEAD");
        if bodiless && (self.body.is_some() || self.body_with.is_some()) {
            return Err(OptionError::type_error(
                "body",
                "cannot go with method GET or HEAD (fetch refuses a body there)",
            ));
        }
        let bad_value = |v: &str| v.bytes().any(|b| matches!(b, b'\r' | b'\n' | 0));
        if self.headers.iter().any(|(n, v)| !token(n) || bad_value(v)) {
            return Err(OptionError::type_error(
                "headers",
                "must be HTTP header names with values that have no line break or NUL",
            ));
        }
        set(o, "transport", &JsValue::from_str("fetch"));
        set(o, "method", &JsValue::from_str(&method));
        let fixed = self.headers;
        let object = |pairs: &[(String, String)], into: &Object| {
            for (n, v) in pairs {
                set(into, n, &JsValue::from_str(v));
            }
        };
        match self.headers_with {
            Some(mut f) => {
                let c = Closure::<dyn FnMut() -> JsValue>::new(move || {
                    let h = Object::new();
                    object(&fixed, &h);
                    object(&f(), &h);
                    h.into()
                });
                set(o, "headers", c.as_ref());
                held.push(c);
            }
            None if !fixed.is_empty() => {
                let h = Object::new();
                object(&fixed, &h);
                set(o, "headers", &h);
            }
            None => {}
        }
        if let Some(body) = self.body {
            set(o, "body", &JsValue::from_str(&body));
        } else if let Some(mut f) = self.body_with {
            let c = Closure::<dyn FnMut() -> JsValue>::new(move || JsValue::from_str(&f()));
            set(o, "body", c.as_ref());
            held.push(c);
        }
        Ok(())
    }
}
