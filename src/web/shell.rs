//! The browser shell: turns browser events into machine inputs and machine commands into browser calls.
//!
//! Ownership: [`Core`] owns the current [`Connection`] (the `EventSource` and one [`Listener`] guard per
//! listener), the pending [`Timeout`] and the page listeners. Dropping a connection closes its source and
//! removes its listeners; dropping the timeout cancels it. Closures hold the shared state strongly, so a
//! running stream stays alive without a JavaScript reference, as a native `EventSource` does; `close()`
//! drops them all and so breaks the cycle.
//!
//! Reentrancy: commands go through a queue drained in order. No `RefCell` borrow is held while user code
//! runs, so `close()` and `reconnectNow()` work from inside any callback.

use alloc::collections::VecDeque;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;

use js_sys::Function;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Event, EventSource, EventSourceInit, EventTarget, MessageEvent};

use super::js::{self, Listener, Timeout};
use crate::ladder::{Random, SplitMix64};
use crate::machine::{Command, Input, Machine, Status};
use crate::{options, resume};

/// Where each attempt's URL comes from.
pub(crate) enum UrlSource {
    Fixed(String),
    /// Called for every attempt (fresh tokens).
    Function(Function),
}

/// The callbacks of `createManagedStream`, whose shapes differ from the `on*` properties.
#[derive(Default)]
pub(crate) struct StreamHandlers {
    pub on_open: Option<Function>,
    pub on_retry_scheduled: Option<Function>,
    pub on_give_up: Option<Function>,
    pub on_status: Option<Function>,
}

/// The user's callbacks.
#[derive(Default)]
pub(crate) struct Handlers {
    pub onopen: Option<Function>,
    pub onmessage: Option<Function>,
    pub onerror: Option<Function>,
    pub onstatus: Option<Function>,
    pub onretry: Option<Function>,
    pub ongiveup: Option<Function>,
    pub stream: StreamHandlers,
    /// `addEventListener` listeners, in the order added, without duplicates.
    pub listeners: Vec<(String, Function)>,
}

/// A live `EventSource` and the guards of our listeners on it.
struct Connection {
    source: EventSource,
    listeners: Vec<Listener>,
}

impl Connection {
    fn listens_to(&self, kind: &str) -> bool {
        self.listeners.iter().any(|l| l.kind() == kind)
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.source.close();
    }
}

pub(crate) struct Core {
    pub machine: Machine<SplitMix64>,
    pub url: UrlSource,
    /// The URL of the current or last attempt, as the browser resolved it.
    pub current_url: String,
    pub with_credentials: bool,
    pub param: Option<String>,
    /// The event whose data is a server's retry hint.
    pub hint_event: Option<String>,
    pub handlers: Handlers,
    connection: Option<Connection>,
    timer: Option<Timeout>,
    page: Vec<Listener>,
    queue: VecDeque<Command>,
    draining: bool,
    /// The browser event behind the input being handled, passed to `onopen` and `onerror`.
    event: Option<Event>,
    /// An exception from opening the first source, rethrown by the constructor.
    pub open_error: Option<JsValue>,
}

pub(crate) struct Shared {
    pub core: RefCell<Core>,
}

/// Event types we listen to on every source ourselves; the user's listeners for them are called by us.
const OWN_TYPES: [&str; 3] = ["open", "error", "message"];

/// One seed per client, from the platform's random source.
fn seed() -> u64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_ok() {
        u64::from_le_bytes(bytes)
    } else {
        (js_sys::Math::random() * 9_007_199_254_740_992.0) as u64
    }
}

impl Shared {
    pub(crate) fn new(
        config: crate::machine::Config,
        url: UrlSource,
        with_credentials: bool,
        param: Option<String>,
        hint_event: Option<String>,
        handlers: Handlers,
    ) -> Rc<Shared> {
        let mut rng = SplitMix64::new(seed());
        // Mix once so that nearby seeds do not start nearby.
        let _ = rng.next_u64();
        Rc::new(Shared {
            core: RefCell::new(Core {
                machine: Machine::new(config, rng),
                url,
                current_url: String::new(),
                with_credentials,
                param,
                hint_event,
                handlers,
                connection: None,
                timer: None,
                page: Vec::new(),
                queue: VecDeque::new(),
                draining: false,
                event: None,
                open_error: None,
            }),
        })
    }

    /// Listens to the page: visibility (where there is a `document`) and online/offline (where the global
    /// object is an event target: a window or a worker).
    pub(crate) fn watch_page(self: &Rc<Self>) {
        let config = *self.core.borrow().machine.config();
        let mut page = Vec::new();
        let global = js_sys::global();
        if config.wake_on_visible {
            if let Some(document) = web_sys::window().and_then(|w| w.document()) {
                let me = self.clone();
                let doc = document.clone();
                page.push(Listener::new(&document, "visibilitychange", move |_| {
                    if doc.visibility_state() == web_sys::VisibilityState::Visible {
                        me.feed(Input::PageVisible, None);
                    }
                }));
            }
        }
        if config.wake_on_online {
            if let Some(target) = global.dyn_ref::<EventTarget>() {
                let me = self.clone();
                page.push(Listener::new(target, "online", move |_| {
                    me.feed(Input::Online, None)
                }));
                let me = self.clone();
                page.push(Listener::new(target, "offline", move |_| {
                    me.feed(Input::Offline, None)
                }));
            }
        }
        self.core.borrow_mut().page = page;
    }

    /// Feeds one input and carries out what the machine says, in order.
    pub(crate) fn feed(self: &Rc<Self>, input: Input, event: Option<Event>) {
        {
            let mut core = self.core.borrow_mut();
            let mut out = Vec::new();
            core.machine.handle_into(input, &mut out);
            core.queue.extend(out);
            if event.is_some() {
                core.event = event;
            }
            if core.draining {
                return;
            }
            core.draining = true;
        }
        loop {
            let next = {
                let mut core = self.core.borrow_mut();
                let mut next = core.queue.pop_front();
                // A callback closed the client: news queued before that is stale; effects still run.
                while core.machine.closed() && next.as_ref().is_some_and(is_stale_news) {
                    next = core.queue.pop_front();
                }
                if next.is_none() {
                    core.draining = false;
                    core.event = None;
                }
                next
            };
            match next {
                Some(command) => self.exec(command),
                None => break,
            }
        }
    }

    fn exec(self: &Rc<Self>, command: Command) {
        match command {
            Command::OpenSource { resume_from } => self.open(resume_from),
            Command::CloseSource => {
                let old = self.core.borrow_mut().connection.take();
                drop(old);
            }
            Command::ArmTimer { ms } => {
                let me = self.clone();
                let timeout = Timeout::new(ms, move || {
                    // The timeout has fired: drop our handle to it, then reconnect.
                    let spent = me.core.borrow_mut().timer.take();
                    drop(spent);
                    me.feed(Input::TimerFired, None);
                });
                self.core.borrow_mut().timer = Some(timeout);
            }
            Command::DisarmTimer => {
                let old = self.core.borrow_mut().timer.take();
                drop(old);
            }
            Command::Status(status) => self.notify_status(status),
            Command::ReportError => {
                let event = self.core.borrow_mut().event.take();
                // A stall has no browser event behind it: make one, as the browser would.
                if let Some(event) = event.or_else(|| Event::new("error").ok()) {
                    self.emit("error", &event);
                }
            }
            Command::Connected { attempt } => {
                let (event, on_open) = {
                    let mut core = self.core.borrow_mut();
                    (core.event.take(), core.handlers.stream.on_open.clone())
                };
                if let Some(event) = event {
                    self.emit("open", &event);
                }
                if let Some(f) = on_open {
                    js::call(&f, &js::info(&[("attempt", attempt)]));
                }
            }
            Command::RetryScheduled { attempt, delay_ms } => {
                let (onretry, stream) = {
                    let core = self.core.borrow();
                    (
                        core.handlers.onretry.clone(),
                        core.handlers.stream.on_retry_scheduled.clone(),
                    )
                };
                if let Some(f) = onretry {
                    js::call(
                        &f,
                        &js::info(&[("attempt", attempt), ("delayMs", delay_ms)]),
                    );
                }
                if let Some(f) = stream {
                    js::call(&f, &js::info(&[("attempt", attempt), ("wait", delay_ms)]));
                }
            }
            Command::GaveUp { attempts } => {
                let (ongiveup, stream) = {
                    let core = self.core.borrow();
                    (
                        core.handlers.ongiveup.clone(),
                        core.handlers.stream.on_give_up.clone(),
                    )
                };
                if let Some(f) = ongiveup {
                    js::call(&f, &js::info(&[("attempts", attempts)]));
                }
                if let Some(f) = stream {
                    js::call(&f, &JsValue::from(attempts));
                }
            }
        }
    }

    fn notify_status(&self, status: Status) {
        let (a, b) = {
            let core = self.core.borrow();
            (
                core.handlers.onstatus.clone(),
                core.handlers.stream.on_status.clone(),
            )
        };
        let s = JsValue::from_str(status.as_str());
        for f in [a, b].into_iter().flatten() {
            js::call(&f, &s);
        }
    }

    /// Calls the `on<type>` property (for open, error and message) and then the listeners of `kind`.
    fn emit(&self, kind: &str, event: &Event) {
        let targets: Vec<Function> = {
            let core = self.core.borrow();
            let h = &core.handlers;
            let property = match kind {
                "open" => h.onopen.clone(),
                "error" => h.onerror.clone(),
                "message" => h.onmessage.clone(),
                _ => None,
            };
            property
                .into_iter()
                .chain(
                    h.listeners
                        .iter()
                        .filter(|(k, _)| k == kind)
                        .map(|(_, f)| f.clone()),
                )
                .collect()
        };
        for f in targets {
            js::call(&f, event);
        }
    }

    /// The base URL of the next attempt: the fixed URL, or what the URL function returns now.
    fn base_url(&self) -> Result<String, JsValue> {
        let f = match &self.core.borrow().url {
            UrlSource::Fixed(u) => return Ok(u.clone()),
            UrlSource::Function(f) => f.clone(),
        };
        let v = f.call0(&JsValue::UNDEFINED)?;
        v.as_string().ok_or_else(|| {
            js::type_error("managed-eventsource: the url function must return a string")
        })
    }

    fn open(self: &Rc<Self>, resume_from: Option<String>) {
        let source = self.base_url().and_then(|base| {
            let (url, with_credentials) = {
                let core = self.core.borrow();
                let url = match (&core.param, resume_from) {
                    (Some(param), Some(id)) => resume::with_param(&base, param, &id),
                    _ => base,
                };
                (url, core.with_credentials)
            };
            let init = EventSourceInit::new();
            init.set_with_credentials(with_credentials);
            EventSource::new_with_event_source_init_dict(&url, &init)
        });
        let source = match source {
            Ok(s) => s,
            Err(e) => {
                // A URL function that throws or an invalid URL: the first time, the constructor throws it;
                // later, it is reported and counts as a failed attempt.
                let first = {
                    let mut core = self.core.borrow_mut();
                    let first = core.current_url.is_empty();
                    if first {
                        core.open_error = Some(e.clone());
                    }
                    first
                };
                if !first {
                    js::report(&e);
                }
                self.feed(
                    Input::Failed {
                        browser_gave_up: true,
                    },
                    None,
                );
                return;
            }
        };
        let (kinds, hint_event) = {
            let core = self.core.borrow();
            let kinds: Vec<String> = core
                .handlers
                .listeners
                .iter()
                .map(|(k, _)| k.clone())
                .collect();
            (kinds, core.hint_event.clone())
        };
        let mut connection = Connection {
            source: source.clone(),
            listeners: Vec::with_capacity(3 + kinds.len()),
        };
        let target: &EventTarget = source.as_ref();
        let me = self.clone();
        connection
            .listeners
            .push(Listener::new(target, "open", move |ev| {
                me.feed(Input::Opened, Some(ev))
            }));
        let me = self.clone();
        let es = source.clone();
        connection
            .listeners
            .push(Listener::new(target, "error", move |ev| {
                let browser_gave_up = es.ready_state() == EventSource::CLOSED;
                me.feed(Input::Failed { browser_gave_up }, Some(ev))
            }));
        for kind in kinds.iter().chain(&hint_event).map(String::as_str) {
            self.track(&mut connection, kind, hint_event.as_deref());
        }
        self.track(&mut connection, "message", hint_event.as_deref());
        let mut core = self.core.borrow_mut();
        core.current_url = source.url();
        core.connection = Some(connection);
    }

    /// Listens to `kind` on the connection's source: records the event id, reads a retry hint when `kind`
    /// is the hint event, then calls the user. Borrows nothing, so callers may hold the core.
    fn track(self: &Rc<Self>, connection: &mut Connection, kind: &str, hint_event: Option<&str>) {
        if (OWN_TYPES.contains(&kind) && kind != "message") || connection.listens_to(kind) {
            return;
        }
        let me = self.clone();
        let name = String::from(kind);
        let is_hint = hint_event == Some(kind);
        let target: &EventTarget = connection.source.as_ref();
        connection
            .listeners
            .push(Listener::new(target, kind, move |ev| {
                let message = ev.dyn_ref::<MessageEvent>();
                let id = message.map(|m| m.last_event_id()).unwrap_or_default();
                me.feed(Input::Event { id }, None);
                if is_hint {
                    let data = message.and_then(|m| m.data().as_string());
                    if let Some(ms) = data.as_deref().and_then(options::parse_hint) {
                        me.feed(Input::RetryHint { ms }, None);
                    }
                }
                me.emit(&name, &ev);
            }));
    }

    pub(crate) fn add_listener(self: &Rc<Self>, kind: String, f: Function) {
        let mut core = self.core.borrow_mut();
        let core = &mut *core;
        if core
            .handlers
            .listeners
            .iter()
            .any(|(k, g)| *k == kind && g == &f)
        {
            return;
        }
        // Attach to the live source too, so the listener hears this connection's events.
        if let Some(connection) = core.connection.as_mut() {
            self.track(connection, &kind, core.hint_event.as_deref());
        }
        core.handlers.listeners.push((kind, f));
    }

    pub(crate) fn remove_listener(&self, kind: &str, f: &Function) {
        self.core
            .borrow_mut()
            .handlers
            .listeners
            .retain(|(k, g)| !(k == kind && g == f));
    }

    /// Closes for good: the source, the timer and the page listeners go.
    pub(crate) fn close(self: &Rc<Self>) {
        self.feed(Input::Close, None);
        let page = core::mem::take(&mut self.core.borrow_mut().page);
        drop(page);
    }

    /// How many listeners of ours are attached to the live source and the page (for tests).
    pub(crate) fn live_listeners(&self) -> usize {
        let core = self.core.borrow();
        core.connection.as_ref().map_or(0, |c| c.listeners.len()) + core.page.len()
    }
}

/// Notifications that mean nothing once the client is closed.
fn is_stale_news(command: &Command) -> bool {
    match command {
        Command::Status(status) => *status != Status::Closed,
        Command::ReportError | Command::Connected { .. } => true,
        Command::RetryScheduled { .. } | Command::GaveUp { .. } => true,
        _ => false,
    }
}
