//! The browser shell (wasm32 only): the Rust half of `ManagedEventSource`, `createManagedStream` and
//! `ManagedWebSocket` (whose socket, its close codes and its queue are socket.js's: the shell runs its
//! ladder and machine).
//!
//! The public classes are a thin JavaScript layer (`src/web/api.js` and `src/web/socket.js`,
//! wasm-bindgen snippets) over one shell per stream. JavaScript reads the user's objects and relays ordinary
//! events; everything that decides (options, when to open, close, wait or give up) is here and in
//! [`crate::machine`]. Rust creates and closes every source and arms every timer.
//!
//! The JavaScript half reaches a shell through the exports loader.js names (`shell`, `start`, `input`,
//! `lastEventId`, `free`), and holds it by a
//! `Handle`: a number that names a slot of a table, so that a stale or made-up handle finds nothing. The
//! numbers both halves use are [`crate::boundary`]'s.

mod handles;
mod js;
mod shell;
#[cfg(feature = "demo")]
mod storm;
#[cfg(feature = "demo")]
pub use storm::StormSim;

use wasm_bindgen::prelude::*;

use crate::boundary::Values as _;
use crate::boundary::{self, Code, Slot};
use crate::machine::{Config, Input};
use crate::options::{ErrorKind, OptionError, Text};
use handles::Handle;
use shell::{Shared, Transport};

fn throw(e: OptionError) -> JsValue {
    js::error(e.kind == ErrorKind::Range, e.option, e.rule)
}

/// The values the JavaScript half read from the user's options (see [`crate::boundary`]): an array read an
/// element at a time, which costs the package less than copying it into wasm memory.
struct Values<'a> {
    values: &'a JsValue,
    given: u32,
}

impl boundary::Values for Values<'_> {
    type Text = JsValue;

    fn at(&self, at: usize) -> f64 {
        js::number(self.values, at as f64)
    }

    /// `undefined` is none.
    fn text_at(&self, at: usize) -> Option<JsValue> {
        let v = js::item(self.values, at as f64);
        (!v.is_undefined()).then_some(v)
    }

    fn given(&self) -> u32 {
        self.given
    }
}

/// A string option as the JavaScript half gave it, checked where it is: no string is copied into wasm.
impl Text for JsValue {
    fn is_empty(&self) -> bool {
        self.is("")
    }

    fn is(&self, name: &str) -> bool {
        *self == name
    }
}

/// Builds the options from what the JavaScript half read, checks every value, and gives the state machine's
/// configuration for them. The JavaScript half has checked the JavaScript types and reads only the options
/// of the class it builds (see [`boundary::class`]); the others keep their defaults.
fn read_options(v: &Values, socket: bool) -> Result<Config, JsValue> {
    let o = boundary::options(v, socket);
    Ok(Config {
        mode: o.reconnect,
        ladder: o.validate().map_err(throw)?,
        resume: o.last_event_id_param.is_some(),
        wake_on_visible: o.reconnect_on_visible,
        wake_on_online: o.reconnect_on_online,
        max_hint_ms: o.max_hint_ms as u32,
        probe: o.probe,
        stall_timeout_ms: o.stall_timeout_ms as u32,
        min_uptime_ms: o.min_uptime_ms as u32,
        connect_timeout_ms: o.connect_timeout_ms as u32,
        pause_when_hidden_ms: o.pause_when_hidden_ms as u32,
        trace: false,
    })
}

/// Checks the options (see [`crate::boundary`] for `values`) and builds a shell for `link`, the
/// JavaScript half's record of the client, without starting it (see [`start`]); `values[ResumeFrom]` is
/// the id to resume from. Returns the shell's handle. Throws a `TypeError` or `RangeError` naming a bad
/// option.
#[cfg_attr(feature = "small", wasm_bindgen)]
pub fn shell(link: JsValue, values: &JsValue) -> Result<f64, JsValue> {
    let v = Values {
        values,
        given: js::number(values, Slot::Given.at() as f64) as u32,
    };
    let transport = v.at(Slot::Transport.at());
    let mut config = read_options(&v, transport == 1.0)?;
    config.trace = v.at(Slot::Trace.at()) == 1.0;
    let transport = if transport == 0.0 {
        Transport::Events
    } else {
        // A socket has no `probe` option; each fetch response brings its status: nothing to probe.
        config.probe = false;
        Transport::Own
    };
    let shared = Shared::new(config, transport, link);
    if let Some(id) = v.text_at(Slot::ResumeFrom.at()) {
        shared.get_mut().machine.resume_from(id);
    }
    Ok(handles::insert(shared).into())
}

/// Starts the shell of `handle`: its first connection, then its page listeners. The JavaScript half calls
/// it once the handle is its record's, so that a callback that runs during the start finds the shell.
/// Throws what opening the first source threw (an invalid URL, a throwing URL function); the shell is then
/// closed, having told nothing. A handle that names no live shell finds nothing.
#[cfg_attr(feature = "small", wasm_bindgen)]
pub fn start(handle: f64) -> Result<(), JsValue> {
    match handles::get(Handle::from(handle)) {
        Some(shared) => shared.start(),
        None => Ok(()),
    }
}

/// Ends the shell of `handle`. A handle already freed, or one no shell ever had, is ignored.
#[cfg_attr(feature = "small", wasm_bindgen)]
pub fn free(handle: f64) {
    drop(handles::remove(Handle::from(handle)));
}

/// The JavaScript half's one way into the shell of `handle` (one export costs the package less than
/// several), with a [`Code`] and up to three numbers (see [`Code`] for what each carries). Returns the
/// answer to a question, and 0 otherwise. A handle that names no live shell (freed, or made up) finds
/// nothing: inputs do nothing and questions answer 0.
#[cfg_attr(feature = "small", wasm_bindgen)]
pub fn input(handle: f64, code: u32, a: f64, b: f64, c: f64) -> u32 {
    let (Some(shared), Some(code)) = (handles::get(Handle::from(handle)), Code::from_u32(code))
    else {
        return 0;
    };
    match code {
        Code::Status => boundary::status_index(shared.get().machine.status()),
        Code::ReadyState => shared.get().machine.ready_state() as u32,
        Code::Attempt => shared.get().machine.attempt(),
        Code::Live => shared.live(),
        Code::Closed => shared.get().machine.closed() as u32,
        Code::Probed => {
            let status = b as u32;
            shared.probed(Input::Probed {
                id: a as u32,
                status: (status > 0 && status < 1000).then_some(status as u16),
                retry_after_ms: (c >= 0.0).then(|| shell::delay_ms(c)),
            });
            0
        }
        #[cfg(feature = "fetch")]
        Code::Refused => {
            shared.feed(Input::Refused {
                status: (a > 0.0 && a < 1000.0).then_some(a as u16),
                retry_after_ms: (b >= 0.0).then(|| shell::delay_ms(b)),
            });
            0
        }
        Code::Announced => {
            // b: 1 the reconnect URL can carry the id, 2 the stall watchdog follows, 4 the connect timeout.
            let flags = b as u32;
            let interval = (a >= 0.0).then(|| shell::delay_ms(a));
            shared.feed(Input::Announced {
                heartbeat_ms: interval.filter(|_| flags & 2 != 0),
                connect_ms: interval.filter(|_| flags & 4 != 0),
                resume: flags & 1 != 0,
            });
            0
        }
        _ => {
            shared.input(code, a);
            0
        }
    }
}

/// The last event id of the shell of `handle`: the JavaScript string it arrived as (`undefined` before
/// any, which client.js's `lastEventIdOf` reads as the empty string, and for a handle that names no shell).
#[cfg_attr(feature = "small", wasm_bindgen(js_name = lastEventId))]
pub fn last_event_id(handle: f64) -> JsValue {
    let Some(shared) = handles::get(Handle::from(handle)) else {
        return JsValue::UNDEFINED;
    };
    shared.sync_ids();
    let id = shared.get().machine.last_event_id().clone();
    id
}

/// For the browser tests, which have no package entry: installs this module's exports into the JavaScript
/// half (the test build's provider of `loader.js`) and returns `{ ManagedEventSource, createManagedStream,
/// handle }` (`handle(client)`: its shell's handle, for the handle tests).
#[cfg(not(feature = "small"))]
#[doc(hidden)]
pub fn js_api() -> JsValue {
    #[wasm_bindgen(module = "/src/web/loader.js")]
    extern "C" {
        fn provide(exports: &JsValue);
    }
    #[wasm_bindgen(module = "/src/web/api.js")]
    extern "C" {
        fn api() -> JsValue;
    }
    let exports = js_sys::Object::new();
    let set = |name: &str, f: JsValue| {
        let _ = js_sys::Reflect::set(&exports, &name.into(), &f);
    };
    type Make = dyn Fn(JsValue, JsValue) -> Result<f64, JsValue>;
    set(
        "shell",
        Closure::<Make>::new(|link, values: JsValue| shell(link, &values)).into_js_value(),
    );
    type Start = dyn Fn(f64) -> Result<(), JsValue>;
    set("start", Closure::<Start>::new(start).into_js_value());
    type Input = dyn Fn(f64, u32, f64, f64, f64) -> u32;
    set("input", Closure::<Input>::new(input).into_js_value());
    set(
        "lastEventId",
        Closure::<dyn Fn(f64) -> JsValue>::new(last_event_id).into_js_value(),
    );
    set("free", Closure::<dyn Fn(f64)>::new(free).into_js_value());
    // The fetch transport, as the package's fetch entry adds it (scripts/build.mjs).
    #[cfg(feature = "fetch")]
    {
        #[wasm_bindgen(module = "/src/web/fetch.js")]
        extern "C" {
            #[wasm_bindgen(thread_local_v2, js_name = fetchTransport)]
            static FETCH: JsValue;
            #[wasm_bindgen(thread_local_v2, js_name = awaitingEventSource)]
            static EVENT_SOURCE: JsValue;
        }
        #[wasm_bindgen(module = "/src/web/api.js")]
        extern "C" {
            #[wasm_bindgen(js_name = addTransport)]
            fn add_transport(name: &str, transport: &JsValue);
        }
        FETCH.with(|t| add_transport("fetch", t));
        EVENT_SOURCE.with(|t| add_transport("eventsource", t));
    }
    provide(&exports);
    api()
}
