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
use crate::options::{OptionError, Reconnect};

/// The options: the JavaScript options' names in snake case, with the same defaults and the same checks.
pub type Options = crate::options::Options<&'static str>;

/// Why a client could not be made.
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

fn set(target: &JsValue, key: &str, value: &JsValue) {
    let _ = Reflect::set(target, &JsValue::from_str(key), value);
}

/// The JavaScript options object for checked `o`.
fn js_options(o: &Options) -> Result<Object, OptionError> {
    o.validate()?;
    let js = Object::new();
    let num = |k: &str, v: f64| set(&js, k, &JsValue::from_f64(v));
    let flag = |k: &str, v: bool| set(&js, k, &JsValue::from_bool(v));
    let text = |k: &str, v: Option<&str>| {
        if let Some(v) = v {
            set(&js, k, &JsValue::from_str(v));
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
    text("lastEventIdParam", o.last_event_id_param);
    flag("reconnectOnVisible", o.reconnect_on_visible);
    flag("reconnectOnOnline", o.reconnect_on_online);
    text("retryHintEvent", o.retry_hint_event);
    num("maxHintMs", o.max_hint_ms);
    match o.probe_url {
        Some(url) if o.probe => set(&js, "probe", &JsValue::from_str(url)),
        _ => flag("probe", o.probe),
    }
    num("stallTimeoutMs", o.stall_timeout_ms);
    text("heartbeatEvent", o.heartbeat_event);
    num("minUptimeMs", o.min_uptime_ms);
    num("connectTimeoutMs", o.connect_timeout_ms);
    num("pauseWhenHiddenMs", o.pause_when_hidden_ms);
    Ok(js)
}

/// The callbacks a client holds, so that they live as long as it does.
#[derive(Default)]
struct Callbacks {
    /// The client's own `onstatus`, which calls `user_status` and wakes the `events()` streams. Held,
    /// not read: the JavaScript half calls it.
    #[allow(dead_code)]
    status: Option<Closure<dyn FnMut(JsValue)>>,
    user_status: Option<Box<dyn FnMut(Status)>>,
    retry: Option<Closure<dyn FnMut(JsValue)>>,
    give_up: Option<Closure<dyn FnMut(JsValue)>>,
    /// What `events()` streams wait on, woken by each event and by `close()`.
    #[cfg(feature = "stream")]
    wakers: alloc::vec::Vec<core::task::Waker>,
    /// Held, not read: the JavaScript half calls it before each attempt.
    #[allow(dead_code)]
    url: Option<Closure<dyn FnMut() -> JsValue>>,
}

/// An `EventSource` that reconnects through a jittered exponential backoff ladder. Dropping it closes it.
pub struct ManagedEventSource {
    es: JsValue,
    callbacks: Rc<RefCell<Callbacks>>,
}

impl ManagedEventSource {
    /// Connects to `url` (resolved against the document, as `EventSource` resolves it).
    pub fn new(url: &str, options: Options) -> Result<Self, Error> {
        Self::make(JsValue::from_str(url), options, Callbacks::default())
    }

    /// Connects with the URL `url` returns, called before every attempt (a fresh token in the query).
    pub fn with_url_fn(
        url: impl FnMut() -> String + 'static,
        options: Options,
    ) -> Result<Self, Error> {
        let mut url = url;
        let f = Closure::<dyn FnMut() -> JsValue>::new(move || JsValue::from_str(&url()));
        let js = f.as_ref().clone();
        Self::make(
            js,
            options,
            Callbacks {
                url: Some(f),
                ..Callbacks::default()
            },
        )
    }

    fn make(url: JsValue, options: Options, callbacks: Callbacks) -> Result<Self, Error> {
        let options = js_options(&options)?;
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
        set(&es, "onstatus", on_status.as_ref());
        callbacks.borrow_mut().status = Some(on_status);
        Ok(ManagedEventSource { es, callbacks })
    }

    /// Calls `f` with every `message` event, until the guard is dropped.
    #[must_use = "the listener is removed when the guard is dropped"]
    pub fn on_message(&self, f: impl FnMut(MessageEvent) + 'static) -> Listener {
        self.on("message", f)
    }

    /// Calls `f` with every event of `type` the server names (or `message`), until the guard is dropped.
    #[must_use = "the listener is removed when the guard is dropped"]
    pub fn on(&self, kind: &str, mut f: impl FnMut(MessageEvent) + 'static) -> Listener {
        self.listen(kind, Box::new(move |e: Event| f(e.unchecked_into())))
    }

    /// Calls `f` with every `open` event, until the guard is dropped.
    #[must_use = "the listener is removed when the guard is dropped"]
    pub fn on_open(&self, f: impl FnMut(Event) + 'static) -> Listener {
        self.listen("open", Box::new(f))
    }

    /// Calls `f` with every `error` event of the connection, until the guard is dropped.
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
    pub fn on_status(&self, f: impl FnMut(Status) + 'static) {
        self.callbacks.borrow_mut().user_status = Some(Box::new(f));
    }

    /// Calls `f(attempt, delay_ms)` for each reconnect scheduled (replacing any earlier callback).
    pub fn on_retry(&self, mut f: impl FnMut(u32, u32) + 'static) {
        let c = Closure::<dyn FnMut(JsValue)>::new(move |info: JsValue| {
            let n = |k| get(&info, k).as_f64().unwrap_or(0.0) as u32;
            f(n("attempt"), n("delayMs"))
        });
        set(&self.es, "onretry", c.as_ref());
        self.callbacks.borrow_mut().retry = Some(c);
    }

    /// Calls `f(attempts)` when the client gives up (replacing any earlier callback).
    pub fn on_give_up(&self, mut f: impl FnMut(u32) + 'static) {
        let c = Closure::<dyn FnMut(JsValue)>::new(move |info: JsValue| {
            f(get(&info, "attempts").as_f64().unwrap_or(0.0) as u32)
        });
        set(&self.es, "ongiveup", c.as_ref());
        self.callbacks.borrow_mut().give_up = Some(c);
    }

    /// What the UI shows.
    pub fn status(&self) -> Status {
        status_of(&get(&self.es, "status")).unwrap_or(Status::Closed)
    }

    /// `EventSource.readyState`: 0 connecting (also while waiting), 1 open, 2 closed.
    pub fn ready_state(&self) -> u16 {
        get(&self.es, "readyState").as_f64().unwrap_or(2.0) as u16
    }

    /// Reconnect attempts in a row so far; 0 while open.
    pub fn attempt(&self) -> u32 {
        get(&self.es, "attempt").as_f64().unwrap_or(0.0) as u32
    }

    /// The last event id received, kept across reconnects.
    pub fn last_event_id(&self) -> String {
        get(&self.es, "lastEventId").as_string().unwrap_or_default()
    }

    /// The URL of the current or last attempt.
    pub fn url(&self) -> String {
        get(&self.es, "url").as_string().unwrap_or_default()
    }

    /// Resets the ladder and connects at once, also after [`Status::Failed`]. Does nothing after close.
    pub fn reconnect_now(&self) {
        self.call("reconnectNow");
    }

    /// Closes for good: the source and any pending retry; [`Status::Closed`]. Also what dropping does.
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
        for key in ["onstatus", "onretry", "ongiveup"] {
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
#[must_use = "the listener is removed when the guard is dropped"]
pub struct Listener {
    es: JsValue,
    kind: String,
    closure: Option<Closure<dyn FnMut(Event)>>,
}

impl Listener {
    /// Keeps the listener for as long as the client lives (its closure is leaked, as `forget` does).
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
