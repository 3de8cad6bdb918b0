//! The browser shell (wasm32 only): the Rust half of `ManagedEventSource` and `createManagedStream`.
//!
//! The public classes are a thin JavaScript layer (`src/web/api.js`, a wasm-bindgen snippet) over one
//! [`Shell`] per stream. JavaScript reads the user's objects and relays ordinary events; everything that
//! decides (options, when to open, close, wait or give up) is here and in [`crate::machine`]. Rust creates
//! and closes every `EventSource` and arms every timer.

mod js;
mod shell;
#[cfg(feature = "demo")]
mod storm;
#[cfg(feature = "demo")]
pub use storm::StormSim;

use wasm_bindgen::prelude::*;

use crate::ladder::Strategy;
use crate::machine::Config;
use crate::options::{ErrorKind, OptionError, Options, Reconnect, Text};
use shell::Shared;

fn throw(e: OptionError) -> JsValue {
    js::error(e.kind == ErrorKind::Range, e.option, e.rule)
}

/// The positions of the options in `shell`'s `values`: the order of `NUMBERS` in `api.js` (the numbers,
/// then the strings), then a probe URL.
mod at {
    /// `withCredentials`: the JavaScript half reads it and hands it to EventSource itself.
    #[allow(dead_code)]
    pub const WITH_CREDENTIALS: usize = 0;
    pub const RECONNECT: usize = 1;
    pub const JITTER: usize = 2;
    pub const BASE_MS: usize = 3;
    pub const MAX_MS: usize = 4;
    pub const FACTOR: usize = 5;
    pub const MAX_ATTEMPTS: usize = 6;
    pub const RECONNECT_ON_VISIBLE: usize = 7;
    pub const RECONNECT_ON_ONLINE: usize = 8;
    pub const MAX_HINT_MS: usize = 9;
    pub const PROBE: usize = 10;
    pub const STALL_TIMEOUT_MS: usize = 11;
    pub const MIN_UPTIME_MS: usize = 12;
    pub const CONNECT_TIMEOUT_MS: usize = 13;
    pub const LAST_EVENT_ID_PARAM: usize = 14;
    pub const RETRY_HINT_EVENT: usize = 15;
    pub const HEARTBEAT_EVENT: usize = 16;
    pub const PROBE_URL: usize = 17;
    /// Then which numbers were given (bit `i` for `values[i]`), the id to resume from, and whether to start.
    pub const GIVEN: usize = 18;
    pub const RESUME_FROM: usize = 19;
    pub const START: usize = 20;
}

/// The numbers the JavaScript half read (an array, read an element at a time, which costs the package less
/// than copying it into wasm memory), and which of them were given (bit `i` of `given` for `numbers[i]`).
struct Given<'a> {
    numbers: &'a JsValue,
    given: u32,
}

impl Given<'_> {
    fn number(&self, i: usize, default: f64) -> f64 {
        if self.given & (1 << i) != 0 {
            js::number(self.numbers, i as f64)
        } else {
            default
        }
    }

    /// A boolean, given as 0 or 1.
    fn flag(&self, i: usize, default: bool) -> bool {
        self.number(i, default as u8 as f64) == 1.0
    }

    /// `jitter`, given as the index of its name.
    fn jitter(&self, i: usize, default: Strategy) -> Strategy {
        match self.number(i, 0.0) as u8 {
            1 => Strategy::Equal,
            2 => Strategy::Decorrelated,
            3 => Strategy::None,
            _ => default,
        }
    }
}

/// Checks the options and gives the state machine's configuration for them.
fn config_of<S: Text>(o: &Options<S>) -> Result<Config, JsValue> {
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
    })
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

/// A string option: `values[i]`, or `None` when it was not given (`undefined`).
fn text(values: &JsValue, i: usize) -> Option<JsValue> {
    let v = js::item(values, i as f64);
    (!v.is_undefined()).then_some(v)
}

/// Builds the options from what the JavaScript half read (`values`, see [`at`]): a number counts only where
/// its bit of `given` is set; booleans are 0 or 1, and `reconnect` and `jitter` the index of their name; a
/// string option is `undefined` when not given. The JavaScript half has checked the JavaScript types; every
/// value is checked here. Gives the machine's configuration for them.
fn read_options(values: &JsValue, given: u32) -> Result<Config, JsValue> {
    let d = Options::default();
    let n = Given {
        numbers: values,
        given,
    };
    let o = Options {
        // The JavaScript half hands it to EventSource itself (see `js::NewSource`).
        with_credentials: d.with_credentials,
        reconnect: match n.number(at::RECONNECT, 0.0) as u8 {
            1 => Reconnect::Browser,
            2 => Reconnect::Never,
            _ => d.reconnect,
        },
        jitter: n.jitter(at::JITTER, d.jitter),
        base_ms: n.number(at::BASE_MS, d.base_ms),
        max_ms: n.number(at::MAX_MS, d.max_ms),
        factor: n.number(at::FACTOR, d.factor),
        max_attempts: n.number(at::MAX_ATTEMPTS, d.max_attempts),
        last_event_id_param: text(values, at::LAST_EVENT_ID_PARAM),
        reconnect_on_visible: n.flag(at::RECONNECT_ON_VISIBLE, d.reconnect_on_visible),
        reconnect_on_online: n.flag(at::RECONNECT_ON_ONLINE, d.reconnect_on_online),
        retry_hint_event: text(values, at::RETRY_HINT_EVENT),
        max_hint_ms: n.number(at::MAX_HINT_MS, d.max_hint_ms),
        probe: n.flag(at::PROBE, d.probe),
        probe_url: text(values, at::PROBE_URL),
        stall_timeout_ms: n.number(at::STALL_TIMEOUT_MS, d.stall_timeout_ms),
        heartbeat_event: text(values, at::HEARTBEAT_EVENT),
        min_uptime_ms: n.number(at::MIN_UPTIME_MS, d.min_uptime_ms),
        connect_timeout_ms: n.number(at::CONNECT_TIMEOUT_MS, d.connect_timeout_ms),
    };
    config_of(&o)
}

/// The Rust half of one stream. Not part of the public API: `ManagedEventSource` (in `api.js`) holds one,
/// by its address in wasm memory. The exports below take that address rather than a wasm-bindgen class,
/// whose wrapper, reference count and borrow flag cost the package more than they guard here: the
/// JavaScript half passes only addresses `shell` gave it, and calls `free` once, from its
/// FinalizationRegistry, once nothing can reach the instance (so never while a call is running).
pub struct Shell {
    shared: Shared,
}

impl Shell {
    /// The shell at `at`.
    fn at(at: u32) -> &'static Shell {
        // SAFETY: `at` is the address of a live shell (see `Shell`): `shell` made it with Box::into_raw,
        // and only `free` ends it.
        unsafe { &*(at as usize as *const Shell) }
    }

    /// A new shell's address.
    fn into_address(self) -> u32 {
        alloc::boxed::Box::into_raw(alloc::boxed::Box::new(self)) as usize as u32
    }
}

/// Validates the options (see `read_options`) and, if `values[START]` is 1, starts connecting (a tab that
/// shares a stream and does not hold the connection only validates, so that bad options still throw at
/// once). `link` is the JavaScript half; `values[RESUME_FROM]` the id to resume from (`undefined` for
/// none). Returns the shell's address. Throws a `TypeError` or `RangeError` naming a bad option, or what
/// opening the first source threw (an invalid URL, a throwing URL function).
#[wasm_bindgen]
pub fn shell(link: JsValue, values: &JsValue) -> Result<u32, JsValue> {
    let given = js::number(values, at::GIVEN as f64) as u32;
    let config = read_options(values, given)?;
    let shared = Shared::new(config, shell::Transport::Events, link);
    if let Some(id) = text(values, at::RESUME_FROM) {
        shared.get_mut().machine.resume_from(id);
    }
    if js::number(values, at::START as f64) == 1.0 {
        shared.start()?;
    }
    Ok(Shell { shared }.into_address())
}

/// Ends the shell at `shell` (see [`Shell`]).
#[wasm_bindgen]
pub fn free(shell: u32) {
    // SAFETY: as in `Shell::at`; the JavaScript half calls this once, when nothing can reach the shell.
    drop(unsafe { alloc::boxed::Box::from_raw(shell as usize as *mut Shell) });
}

/// The JavaScript half's one way into the shell at `shell` (one export costs the package less than
/// several), with the codes of `shell::input`:
/// - an input: `a` is 1 for a failure after which the browser gave up (`readyState` 2), and for a retry
///   hint its delay in ms (negative: not a delay);
/// - a probe's answer: `a` the probe's number, `b` its status (0 when the probe failed), `c` the wait its
///   `Retry-After` header asks for in ms (`api.js` reads the header), or a negative number for none;
/// - a question (`STATUS` and after), answered by the result.
#[wasm_bindgen]
pub fn input(shell: u32, code: u32, a: f64, b: f64, c: f64) -> u32 {
    use shell::input;
    let shared = &Shell::at(shell).shared;
    match code {
        input::STATUS..=input::ATTEMPT => {
            let core = shared.get();
            let m = &core.machine;
            match code {
                input::STATUS => shell::status_index(m.status()),
                input::READY_STATE => m.ready_state() as u32,
                _ => m.attempt(),
            }
        }
        input::LIVE => shared.live(),
        input::PROBED => {
            let status = b as u32;
            shared.feed(crate::machine::Input::Probed {
                id: a as u32,
                status: (status > 0 && status < 1000).then_some(status as u16),
                retry_after_ms: (c >= 0.0).then(|| shell::delay_ms(c)),
            });
            0
        }
        _ => {
            shared.input(code, a);
            0
        }
    }
}

/// The last event id of the shell at `shell`: the JavaScript string it arrived as (`undefined` before
/// any, which `api.js` reads as the empty string).
#[wasm_bindgen(js_name = lastEventId)]
pub fn last_event_id(shell: u32) -> JsValue {
    let shared = &Shell::at(shell).shared;
    shared.sync_ids();
    let id = shared.get().machine.last_event_id().clone();
    id
}

#[cfg(feature = "websocket")]
mod socket_options {
    //! The positions of a socket's numeric options (the order of `NUMBERS` in `socket.js`).
    pub const JITTER: usize = 0;
    pub const BASE_MS: usize = 1;
    pub const MAX_MS: usize = 2;
    pub const FACTOR: usize = 3;
    pub const MAX_ATTEMPTS: usize = 4;
    pub const MIN_UPTIME_MS: usize = 5;
    pub const RECONNECT_ON_VISIBLE: usize = 6;
    pub const RECONNECT_ON_ONLINE: usize = 7;
    pub const CONNECT_TIMEOUT_MS: usize = 8;
    /// 0 `'none'`, 1 `'all'`, 2 `{ max }`.
    pub const QUEUE: usize = 9;
    pub const QUEUE_MAX: usize = 10;
    /// A socket waits this long for its handshake by default.
    pub const DEFAULT_CONNECT_TIMEOUT_MS: f64 = 10_000.0;
}

#[cfg(feature = "websocket")]
mod socket_exports {
    use super::*;

    /// The Rust half of a `ManagedWebSocket`: the options as for [`shell`] (in the order of `socket.js`),
    /// the subprotocols as given, and the clean-close codes that still reconnect (`None`: the default).
    /// Returns the shell's address.
    #[wasm_bindgen]
    pub fn socket(
        link: JsValue,
        numbers: &JsValue,
        given: u32,
        protocols: JsValue,
        codes: Option<alloc::vec::Vec<f64>>,
    ) -> Result<u32, JsValue> {
        use crate::socket::{valid_close_code, Outbox, Queue, RECONNECT_CODES};
        use socket_options as at;
        let d = Options::default();
        let n = Given { numbers, given };
        // Only the options a socket has; the rest keep their defaults (no probe, watchdog or hints).
        let o = Options {
            jitter: n.jitter(at::JITTER, d.jitter),
            base_ms: n.number(at::BASE_MS, d.base_ms),
            max_ms: n.number(at::MAX_MS, d.max_ms),
            factor: n.number(at::FACTOR, d.factor),
            max_attempts: n.number(at::MAX_ATTEMPTS, d.max_attempts),
            min_uptime_ms: n.number(at::MIN_UPTIME_MS, d.min_uptime_ms),
            reconnect_on_visible: n.flag(at::RECONNECT_ON_VISIBLE, d.reconnect_on_visible),
            reconnect_on_online: n.flag(at::RECONNECT_ON_ONLINE, d.reconnect_on_online),
            connect_timeout_ms: n.number(at::CONNECT_TIMEOUT_MS, at::DEFAULT_CONNECT_TIMEOUT_MS),
            ..d
        };
        let config = config_of(&o)?;
        let queue = match n.number(at::QUEUE, 0.0) as u8 {
            1 => Queue::All,
            2 => {
                let max = n.number(at::QUEUE_MAX, 0.0);
                if !(max >= 0.0 && max <= u32::MAX as f64 && max == (max as u32) as f64) {
                    return Err(throw(OptionError::range_error(
                        "queue",
                        "max must be a whole number, 0 or more",
                    )));
                }
                Queue::Max(max as u32)
            }
            _ => Queue::None,
        };
        let codes = match codes {
            None => RECONNECT_CODES.to_vec(),
            Some(list) => {
                if !list.iter().all(|c| valid_close_code(*c)) {
                    return Err(throw(OptionError::range_error(
                        "reconnectOnCleanClose",
                        "must hold close codes from 1000 to 4999 (not 1004, 1005, 1006 or 1015)",
                    )));
                }
                list.iter().map(|c| *c as u16).collect()
            }
        };
        let transport = shell::Transport::Socket {
            protocols,
            codes,
            outbox: Outbox::new(queue),
        };
        let shared = Shared::new(config, transport, link);
        shared.start()?;
        Ok(Shell { shared }.into_address())
    }

    /// The socket of the shell at `shell` closed: `code`, and whether with a handshake.
    #[wasm_bindgen]
    pub fn closed(shell: u32, code: u16, clean: bool) {
        Shell::at(shell).shared.socket_closed(code, clean);
    }

    /// Room in the queue for one message sent while disconnected: 0 yes, 1 not queuing, 2 full.
    #[wasm_bindgen]
    pub fn enqueue(shell: u32) -> u32 {
        Shell::at(shell).shared.enqueue()
    }

    /// `close(code, reason)`: `code` 0 for none. The JavaScript half has checked both.
    #[wasm_bindgen(js_name = closeWith)]
    pub fn close_with(shell: u32, code: u16, reason: alloc::string::String) {
        let shared = &Shell::at(shell).shared;
        if code != 0 {
            shared.get_mut().closing = Some((code, reason));
        }
        shared.feed(crate::machine::Input::Close);
    }
}

/// For the browser tests, which have no package entry: installs the Rust side into the JavaScript half
/// and returns `{ ManagedEventSource, createManagedStream }`.
#[cfg(not(feature = "small"))]
#[doc(hidden)]
pub fn js_api() -> JsValue {
    #[wasm_bindgen(module = "/src/web/api.js")]
    extern "C" {
        fn define(hooks: &JsValue);
        fn api() -> JsValue;
    }
    let hooks = js_sys::Object::new();
    let set = |name: &str, f: JsValue| {
        let _ = js_sys::Reflect::set(&hooks, &name.into(), &f);
    };
    type Make = dyn Fn(JsValue, JsValue) -> Result<u32, JsValue>;
    set(
        "shell",
        Closure::<Make>::new(|link, values: JsValue| shell(link, &values)).into_js_value(),
    );
    type Input = dyn Fn(u32, u32, f64, f64, f64) -> u32;
    set("input", Closure::<Input>::new(input).into_js_value());
    set(
        "lastEventId",
        Closure::<dyn Fn(u32) -> JsValue>::new(last_event_id).into_js_value(),
    );
    set("free", Closure::<dyn Fn(u32)>::new(free).into_js_value());
    define(&hooks);
    api()
}
