//! The browser shell (wasm32 only): `ManagedEventSource` and `createManagedStream` over a real
//! `EventSource`. Everything here turns JavaScript into machine inputs and back; the decisions are in
//! [`crate::machine`].

mod js;
mod shell;
#[cfg(feature = "demo")]
mod storm;
#[cfg(feature = "demo")]
pub use storm::StormSim;

use alloc::rc::Rc;
use alloc::string::String;

use js_sys::Function;
use wasm_bindgen::prelude::*;

use crate::machine::{Config, Input};
use crate::options::{
    parse_jitter, parse_reconnect, OptionError, Options, Reconnect, BAD_RECONNECT,
};
use shell::{Handlers, Shared, StreamHandlers, UrlSource};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = r#"
/** How a reconnect delay is drawn from the exponential cap. */
export type Jitter = 'full' | 'equal' | 'decorrelated' | 'none';
/** What the UI shows. */
export type Status = 'connecting' | 'open' | 'reconnecting' | 'failed' | 'closed';

export interface Options {
  /** Passed to EventSource. Default false. */
  withCredentials?: boolean;
  /** 'backoff' (default): close on error and reconnect through the ladder; 'browser': leave it to the
   * browser; false: never reconnect. */
  reconnect?: 'backoff' | 'browser' | false;
  /** Default 'full'. */
  jitter?: Jitter;
  /** First cap of the ladder in ms. Default 1000. */
  baseMs?: number;
  /** Largest delay in ms. Default 60000, at most 2147483647. */
  maxMs?: number;
  /** Growth per attempt, at least 1. Default 2. */
  factor?: number;
  /** Reconnect attempts in a row before status 'failed'. Default Infinity. */
  maxAttempts?: number;
  /** Query parameter that carries the last event id on each reconnect, e.g. 'lastEventId'. */
  lastEventIdParam?: string;
  /** Reconnect at once when the page becomes visible. Default true. */
  reconnectOnVisible?: boolean;
  /** Reconnect at once when the browser comes back online. Default true. */
  reconnectOnOnline?: boolean;
  /** An event whose data is a delay in ms: the next reconnect waits at least that long, plus the
   * ladder's own jitter (a server's load-shedding advice). Default none. */
  retryHintEvent?: string;
}

export interface RetryInfo { attempt: number; delayMs: number; }
export interface GiveUpInfo { attempts: number; }

export interface StreamHandlers {
  /** Called with the attempt that succeeded (0 for the first connection). */
  onOpen?: (info: { attempt: number }) => void;
  onMessage?: (ev: MessageEvent) => void;
  /** Named events: { update: (ev) => ... }. */
  events?: Record<string, (ev: MessageEvent) => void>;
  onRetryScheduled?: (info: { attempt: number; wait: number }) => void;
  onGiveUp?: (attempts: number) => void;
  onStatus?: (status: Status) => void;
}
"#;

const OPTION_KEYS: [&str; 11] = [
    "withCredentials",
    "reconnect",
    "jitter",
    "baseMs",
    "maxMs",
    "factor",
    "maxAttempts",
    "lastEventIdParam",
    "reconnectOnVisible",
    "reconnectOnOnline",
    "retryHintEvent",
];

/// Reads and validates a JavaScript options object.
fn read_options(obj: &JsValue) -> Result<(Options, Config), JsValue> {
    js::object_or_absent(obj, "managed-eventsource: options must be an object")?;
    js::check_keys(obj, "option", &OPTION_KEYS)?;
    let d = Options::default();
    let reconnect = match js::get(obj, "reconnect") {
        None => d.reconnect,
        Some(v) if v.as_bool() == Some(false) => Reconnect::Never,
        Some(v) if v.as_bool() == Some(true) => Reconnect::Backoff,
        Some(v) => match v.as_string() {
            Some(s) => parse_reconnect(&s).map_err(js::option_error)?,
            None => return Err(js::option_error(BAD_RECONNECT)),
        },
    };
    let jitter = match js::string(obj, "jitter")? {
        None => d.jitter,
        Some(s) => parse_jitter(&s).map_err(js::option_error)?,
    };
    let o = Options {
        with_credentials: js::boolean(obj, "withCredentials", d.with_credentials)?,
        reconnect,
        jitter,
        base_ms: js::number(obj, "baseMs", d.base_ms)?,
        max_ms: js::number(obj, "maxMs", d.max_ms)?,
        factor: js::number(obj, "factor", d.factor)?,
        max_attempts: js::number(obj, "maxAttempts", d.max_attempts)?,
        last_event_id_param: js::string(obj, "lastEventIdParam")?,
        reconnect_on_visible: js::boolean(obj, "reconnectOnVisible", d.reconnect_on_visible)?,
        reconnect_on_online: js::boolean(obj, "reconnectOnOnline", d.reconnect_on_online)?,
        retry_hint_event: js::string(obj, "retryHintEvent")?,
    };
    let ladder = o.validate().map_err(js::option_error)?;
    let config = Config {
        mode: o.reconnect,
        ladder,
        resume: o.last_event_id_param.is_some(),
        wake_on_visible: o.reconnect_on_visible,
        wake_on_online: o.reconnect_on_online,
    };
    Ok((o, config))
}

fn read_url(url: JsValue) -> Result<UrlSource, JsValue> {
    if let Some(s) = url.as_string() {
        Ok(UrlSource::Fixed(s))
    } else if let Ok(f) = url.dyn_into::<Function>() {
        Ok(UrlSource::Function(f))
    } else {
        Err(js::type_error(
            "managed-eventsource: url must be a string or a function that returns one",
        ))
    }
}

/// Builds, starts and returns the shared client; throws what the first connection threw.
fn start(url: JsValue, options: &JsValue, handlers: Handlers) -> Result<Rc<Shared>, JsValue> {
    let url = read_url(url)?;
    let (o, config) = read_options(options)?;
    let shared = Shared::new(
        config,
        url,
        o.with_credentials,
        o.last_event_id_param,
        o.retry_hint_event,
        handlers,
    );
    shared.feed(Input::Start, None);
    let open_error = shared.core.borrow_mut().open_error.take();
    if let Some(e) = open_error {
        shared.close();
        return Err(e);
    }
    shared.watch_page();
    Ok(shared)
}

/// An `EventSource` that reconnects through a jittered exponential backoff ladder.
#[wasm_bindgen]
pub struct ManagedEventSource {
    shared: Rc<Shared>,
}

/// Which `on*` property.
#[derive(Clone, Copy)]
enum Slot {
    Open,
    Message,
    Error,
    Status,
    Retry,
    GiveUp,
}

impl ManagedEventSource {
    fn slot(handlers: &mut Handlers, slot: Slot) -> &mut Option<Function> {
        match slot {
            Slot::Open => &mut handlers.onopen,
            Slot::Message => &mut handlers.onmessage,
            Slot::Error => &mut handlers.onerror,
            Slot::Status => &mut handlers.onstatus,
            Slot::Retry => &mut handlers.onretry,
            Slot::GiveUp => &mut handlers.ongiveup,
        }
    }

    fn handler(&self, slot: Slot) -> JsValue {
        let mut core = self.shared.core.borrow_mut();
        Self::slot(&mut core.handlers, slot)
            .clone()
            .map_or(JsValue::NULL, Into::into)
    }

    /// Sets an `on*` property: a function, or null/undefined to clear; anything else is a `TypeError`.
    fn set_handler(&self, slot: Slot, name: &'static str, f: JsValue) -> Result<(), JsValue> {
        let f = if f.is_null() || f.is_undefined() {
            None
        } else {
            Some(f.dyn_into::<Function>().map_err(|_| {
                js::option_error(OptionError::type_error(name, "must be a function or null"))
            })?)
        };
        *Self::slot(&mut self.shared.core.borrow_mut().handlers, slot) = f;
        Ok(())
    }
}

#[wasm_bindgen]
impl ManagedEventSource {
    /// Connects to `url` (or to what `url()` returns, called for every attempt). Bad options throw a
    /// `TypeError` or `RangeError` naming the option; an invalid URL throws as `new EventSource` does.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "string | (() => string)")] url: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Options")] options: Option<JsValue>,
    ) -> Result<ManagedEventSource, JsValue> {
        let shared = start(
            url,
            &options.unwrap_or(JsValue::UNDEFINED),
            Handlers::default(),
        )?;
        Ok(ManagedEventSource { shared })
    }

    /// The URL of the current or last attempt.
    #[wasm_bindgen(getter)]
    pub fn url(&self) -> String {
        self.shared.core.borrow().current_url.clone()
    }

    /// Whether credentials are sent.
    #[wasm_bindgen(getter = withCredentials)]
    pub fn with_credentials(&self) -> bool {
        self.shared.core.borrow().with_credentials
    }

    /// 0 CONNECTING (also while waiting to reconnect), 1 OPEN, 2 CLOSED (failed or closed).
    #[wasm_bindgen(getter = readyState, unchecked_return_type = "0 | 1 | 2")]
    pub fn ready_state(&self) -> u16 {
        self.shared.core.borrow().machine.ready_state()
    }

    /// 'connecting', 'open', 'reconnecting', 'failed' or 'closed'.
    #[wasm_bindgen(getter, unchecked_return_type = "Status")]
    pub fn status(&self) -> String {
        self.shared.core.borrow().machine.status().as_str().into()
    }

    /// Reconnect attempts in a row so far; 0 while open.
    #[wasm_bindgen(getter)]
    pub fn attempt(&self) -> u32 {
        self.shared.core.borrow().machine.attempt()
    }

    /// The last event id received (kept across reconnects).
    #[wasm_bindgen(getter = lastEventId)]
    pub fn last_event_id(&self) -> String {
        self.shared.core.borrow().machine.last_event_id().into()
    }

    /// `open`: a connection opened.
    #[wasm_bindgen(getter = onopen, unchecked_return_type = "((ev: Event) => void) | null")]
    pub fn onopen(&self) -> JsValue {
        self.handler(Slot::Open)
    }

    /// Sets `onopen`.
    #[wasm_bindgen(setter = onopen)]
    pub fn set_onopen(
        &self,
        #[wasm_bindgen(unchecked_param_type = "((ev: Event) => void) | null")] f: JsValue,
    ) -> Result<(), JsValue> {
        self.set_handler(Slot::Open, "onopen", f)
    }

    /// An unnamed event arrived.
    #[wasm_bindgen(getter = onmessage, unchecked_return_type = "((ev: MessageEvent) => void) | null")]
    pub fn onmessage(&self) -> JsValue {
        self.handler(Slot::Message)
    }

    /// Sets `onmessage`.
    #[wasm_bindgen(setter = onmessage)]
    pub fn set_onmessage(
        &self,
        #[wasm_bindgen(unchecked_param_type = "((ev: MessageEvent) => void) | null")] f: JsValue,
    ) -> Result<(), JsValue> {
        self.set_handler(Slot::Message, "onmessage", f)
    }

    /// A connection failed or dropped.
    #[wasm_bindgen(getter = onerror, unchecked_return_type = "((ev: Event) => void) | null")]
    pub fn onerror(&self) -> JsValue {
        self.handler(Slot::Error)
    }

    /// Sets `onerror`.
    #[wasm_bindgen(setter = onerror)]
    pub fn set_onerror(
        &self,
        #[wasm_bindgen(unchecked_param_type = "((ev: Event) => void) | null")] f: JsValue,
    ) -> Result<(), JsValue> {
        self.set_handler(Slot::Error, "onerror", f)
    }

    /// The status changed.
    #[wasm_bindgen(getter = onstatus, unchecked_return_type = "((status: Status) => void) | null")]
    pub fn onstatus(&self) -> JsValue {
        self.handler(Slot::Status)
    }

    /// Sets `onstatus`.
    #[wasm_bindgen(setter = onstatus)]
    pub fn set_onstatus(
        &self,
        #[wasm_bindgen(unchecked_param_type = "((status: Status) => void) | null")] f: JsValue,
    ) -> Result<(), JsValue> {
        self.set_handler(Slot::Status, "onstatus", f)
    }

    /// A reconnect was scheduled: `{ attempt, delayMs }`.
    #[wasm_bindgen(getter = onretry, unchecked_return_type = "((info: RetryInfo) => void) | null")]
    pub fn onretry(&self) -> JsValue {
        self.handler(Slot::Retry)
    }

    /// Sets `onretry`.
    #[wasm_bindgen(setter = onretry)]
    pub fn set_onretry(
        &self,
        #[wasm_bindgen(unchecked_param_type = "((info: RetryInfo) => void) | null")] f: JsValue,
    ) -> Result<(), JsValue> {
        self.set_handler(Slot::Retry, "onretry", f)
    }

    /// Gave up after `maxAttempts`: `{ attempts }`.
    #[wasm_bindgen(getter = ongiveup, unchecked_return_type = "((info: GiveUpInfo) => void) | null")]
    pub fn ongiveup(&self) -> JsValue {
        self.handler(Slot::GiveUp)
    }

    /// Sets `ongiveup`.
    #[wasm_bindgen(setter = ongiveup)]
    pub fn set_ongiveup(
        &self,
        #[wasm_bindgen(unchecked_param_type = "((info: GiveUpInfo) => void) | null")] f: JsValue,
    ) -> Result<(), JsValue> {
        self.set_handler(Slot::GiveUp, "ongiveup", f)
    }

    /// Adds a listener for events of `type` ('message', a named event, 'open' or 'error'). It survives
    /// reconnects. Adding the same listener twice has no effect, as with `EventTarget`.
    #[wasm_bindgen(js_name = addEventListener)]
    pub fn add_event_listener(
        &self,
        #[wasm_bindgen(js_name = "type")] kind: String,
        #[wasm_bindgen(unchecked_param_type = "(ev: MessageEvent) => void")] listener: JsValue,
    ) -> Result<(), JsValue> {
        let f = listener.dyn_into::<Function>().map_err(|_| {
            js::type_error("managed-eventsource: addEventListener needs a function")
        })?;
        self.shared.add_listener(kind, f);
        Ok(())
    }

    /// Removes a listener added with `addEventListener`.
    #[wasm_bindgen(js_name = removeEventListener)]
    pub fn remove_event_listener(
        &self,
        #[wasm_bindgen(js_name = "type")] kind: String,
        #[wasm_bindgen(unchecked_param_type = "(ev: MessageEvent) => void")] listener: JsValue,
    ) {
        if let Ok(f) = listener.dyn_into::<Function>() {
            self.shared.remove_listener(&kind, &f);
        }
    }

    /// Resets the ladder and connects at once, also after status 'failed'. Does nothing after `close()`.
    #[wasm_bindgen(js_name = reconnectNow)]
    pub fn reconnect_now(&self) {
        self.shared.feed(Input::RetryNow, None);
    }

    /// Closes the stream for good: no source, no pending retry, status 'closed'.
    pub fn close(&self) {
        self.shared.close();
    }
}

impl ManagedEventSource {
    /// Listeners of this client attached to the live source and the page. Not part of the JavaScript
    /// API: the browser tests use it to show that reconnects leave nothing behind.
    #[doc(hidden)]
    pub fn live_listeners(&self) -> usize {
        self.shared.live_listeners()
    }
}

const STREAM_KEYS: [&str; 6] = [
    "onOpen",
    "onMessage",
    "events",
    "onRetryScheduled",
    "onGiveUp",
    "onStatus",
];

/// Seed 000's `createManagedStream`: connects and returns a function that stops the stream.
#[wasm_bindgen(js_name = createManagedStream, unchecked_return_type = "() => void")]
pub fn create_managed_stream(
    #[wasm_bindgen(unchecked_param_type = "string | (() => string)")] url: JsValue,
    #[wasm_bindgen(unchecked_param_type = "StreamHandlers")] handlers: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Options")] options: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let options = options.unwrap_or(JsValue::UNDEFINED);
    js::object_or_absent(&handlers, "managed-eventsource: handlers must be an object")?;
    js::check_keys(&handlers, "handler", &STREAM_KEYS)?;
    let mut h = Handlers {
        onmessage: js::callback(&handlers, "onMessage")?,
        stream: StreamHandlers {
            on_open: js::callback(&handlers, "onOpen")?,
            on_retry_scheduled: js::callback(&handlers, "onRetryScheduled")?,
            on_give_up: js::callback(&handlers, "onGiveUp")?,
            on_status: js::callback(&handlers, "onStatus")?,
        },
        ..Handlers::default()
    };
    if let Some(events) = js::get(&handlers, "events") {
        js::object_or_absent(
            &events,
            "managed-eventsource: handler events must be an object",
        )?;
        let events: js_sys::Object = events.unchecked_into();
        for entry in js_sys::Object::entries(&events).iter() {
            let pair: js_sys::Array = entry.unchecked_into();
            let f = pair.get(1).dyn_into::<Function>().map_err(|_| {
                js::type_error("managed-eventsource: every handler in events must be a function")
            })?;
            h.listeners
                .push((pair.get(0).as_string().unwrap_or_default(), f));
        }
    }
    let shared = start(url, &options, h)?;
    let stop = Closure::<dyn FnMut()>::new(move || shared.close());
    Ok(stop.into_js_value())
}
