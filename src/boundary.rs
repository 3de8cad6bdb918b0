//! The numbers the two halves of the browser shell share: the codes of the shell's one entry point, the
//! notifications it sends back, the statuses' order, and the table of options the JavaScript half reads.
//!
//! This module is the one source of these numbers. `src/web/boundary.js`, which the JavaScript half imports,
//! is generated from it (`javascript()`, natively), and `tests/boundary.rs` fails when that file is out of
//! date (`npm run boundary` rewrites it). The bundler inlines the constants, so they cost the package nothing.
//! Everything here is pure; nothing reads a string of it in wasm.
//!
//! ```
//! use managed_eventsource::boundary::{Code, Opt, OPTIONS};
//! assert_eq!(Code::from_u32(Code::Close as u32), Some(Code::Close));
//! assert_eq!(Code::from_u32(1000), None);
//! assert_eq!(OPTIONS[Opt::BaseMs as usize].name, "baseMs");
//! ```

/// Declares a `#[repr(u8)]` enum whose discriminants are the positions of its variants, with `from_u32`
/// and, for the generator, each variant's JavaScript constant.
macro_rules! codes {
    ($(#[$m:meta])* pub enum $name:ident, $prefix:literal { $($(#[$vm:meta])* $v:ident = $js:literal,)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        pub enum $name {
            $($(#[$vm])* $v,)*
        }

        impl $name {
            /// Every variant, in order.
            pub const ALL: &'static [$name] = &[$($name::$v),*];
            /// The JavaScript constant of each variant, in the same order (for the generator).
            pub const JS: &'static [&'static str] = &[$(concat!($prefix, $js)),*];

            /// The variant numbered `n`, if any: a number from JavaScript that is not a code is `None`.
            pub fn from_u32(n: u32) -> Option<Self> {
                Self::ALL.get(n as usize).copied()
            }
        }
    };
}

codes! {
    /// What the JavaScript half hands the shell's one entry point (`input(handle, code, a, b, c)`): inputs,
    /// then questions, whose answer is the entry point's result.
    pub enum Code, "I_" {
        /// The source opened (`a`: for a fetch, the response's status).
        Opened = "OPENED",
        /// The source failed; `a` is 1 when the browser will not retry by itself (`readyState` 2).
        Failed = "FAILED",
        /// The reconnect timer fired.
        Timer = "TIMER",
        /// The page became visible or resumed.
        Wake = "WAKE",
        /// The page was hidden.
        Hidden = "HIDDEN",
        /// The page came back from the back-forward cache (`pageshow` with `persisted`).
        Restored = "RESTORED",
        /// The pause timer fired.
        Pause = "PAUSE",
        /// The browser came back online.
        Online = "ONLINE",
        /// The browser went offline.
        Offline = "OFFLINE",
        /// A retry hint: `a` is its delay in ms (negative: not a delay).
        Hint = "HINT",
        /// `reconnectNow()`.
        RetryNow = "RETRY_NOW",
        /// `close()`.
        Close = "CLOSE",
        /// The watchdog's timer fired.
        Watchdog = "WATCHDOG",
        /// A probe's answer: `a` the probe's number, `b` its status (0: it failed), `c` its `Retry-After` in
        /// ms (negative: none).
        Probed = "PROBED",
        /// The fetch transport's attempt was answered with something other than a stream: `a` its status
        /// (0: a 200 that is not an event stream), `b` its `Retry-After` in ms (negative: none).
        Refused = "REFUSED",
        /// The Promise a URL function returned has given the URL of the attempt waiting for it.
        Url = "URL",
        /// The fetch transport's stream had a `retry:` field: `a` its value in ms.
        RetryField = "RETRY_FIELD",
        /// The attempt's URL can never be fetched (see [`crate::machine::Input::Unusable`]).
        Unusable = "UNUSABLE",
        /// The server ended the stream on purpose (a socket closed cleanly with a code its
        /// `reconnectOnCleanClose` does not list; socket.js decides): no reconnect until `reconnectNow()`.
        Ended = "ENDED",
        /// The server's heartbeat event announced its interval, `a` ms (negative: not said), and with `b`
        /// 1 the query parameter it reads the last event id from, which the JavaScript half now uses
        /// (see [`crate::machine::Input::Announced`]).
        Announced = "ANNOUNCED",
        /// Question: the status's index in [`STATUSES`].
        Status = "STATUS",
        /// Question: `readyState` as `EventSource` has it (0, 1 or 2).
        ReadyState = "READY_STATE",
        /// Question: reconnect attempts in a row.
        Attempt = "ATTEMPT",
        /// Question: live connections, timers and page listeners (0 once closed; for tests).
        Live = "LIVE",
        /// Question: whether the user closed the client (1), as against the server ending it.
        Closed = "CLOSED",
    }
}

impl Code {
    /// The first question: codes from here on are answered, not fed to the machine.
    pub const FIRST_QUESTION: Code = Code::Status;
}

codes! {
    /// What the shell tells the JavaScript half (`notify(link, note, a, b)`).
    pub enum Note, "N_" {
        /// The status changed to the one at index `a` of [`STATUSES`].
        Status = "STATUS",
        /// The source opened after `a` reconnect attempts.
        Open = "OPEN",
        /// The source failed (or stalled).
        Error = "ERROR",
        /// Reconnect attempt `a` is scheduled in `b` ms.
        Retry = "RETRY",
        /// Gave up after `a` attempts.
        GiveUp = "GIVE_UP",
        /// The last event id is `a` bytes once encoded, over the `b` a reconnect URL carries.
        IdDropped = "ID_DROPPED",
        /// The server answered `a` (401 or 403).
        Unauthorized = "UNAUTHORIZED",
        /// The stall watchdog ended `a` connections in a row that had delivered events (told once).
        StallsRecur = "STALLS_RECUR",
        /// One step of the trace, as [`trace_note`] lays it out in `a`, `b` and `c`.
        Trace = "TRACE",
    }
}

codes! {
    /// The kinds of trace step ([`crate::machine::Step`]), in the first number of a [`Note::Trace`].
    pub enum TraceKind, "T_" {
        /// [`Step::Attempt`]: detail the trigger, count the attempt; `b` 1 when the URL carries the id.
        Attempt = "ATTEMPT",
        /// [`Step::Open`]: count the attempt.
        Open = "OPEN",
        /// [`Step::Ended`]: detail the cause; count the status (a `Status` cause) or 1 when the browser
        /// gave up (an `Error`); `b` the `Retry-After`, the silence or the timeout, in ms (-1: none).
        Ended = "ENDED",
        /// [`Step::Probe`].
        Probe = "PROBE",
        /// [`Step::Probed`]: count the status (0: the probe failed).
        Probed = "PROBED",
        /// [`Step::Wait`]: detail the bound, count the attempt; `b` the delay and `c` the ladder's part, ms.
        Wait = "WAIT",
        /// [`Step::Offline`].
        Offline = "OFFLINE",
        /// [`Step::Asleep`].
        Asleep = "ASLEEP",
        /// [`Step::GaveUp`]: count the attempts.
        GaveUp = "GAVE_UP",
        /// [`Step::Closed`]: detail 1 when the user closed it.
        Closed = "CLOSED",
    }
}

/// The names of the trace's record types, by [`TraceKind`].
pub const TRACE_TYPES: [&str; 10] = [
    "attempt", "open", "ended", "probe", "probed", "wait", "offline", "asleep", "giveup", "closed",
];

/// A trace step as the three numbers of a [`Note::Trace`]: `a` is its [`TraceKind`] + 16 × a detail (a
/// trigger's, a cause's or a bound's number) + 256 × a count (an attempt, a status), each kind's as
/// [`TraceKind`] says; `b` and `c` are what else it carries. Every number is an integer below 2^53.
///
/// [`Step`]: crate::machine::Step
pub fn trace_note(step: crate::machine::Step) -> [f64; 3] {
    use crate::machine::{Cause, Step};
    use TraceKind as K;
    let (kind, detail, count, b, c) = match step {
        Step::Attempt {
            attempt,
            trigger,
            resume,
        } => (K::Attempt, trigger as u32, attempt, resume as u32, 0),
        Step::Open { attempt } => (K::Open, 0, attempt, 0, 0),
        Step::Ended { cause } => {
            let (count, ms) = match cause {
                Cause::Error { browser_gave_up } => (browser_gave_up as u32, None),
                Cause::Status {
                    status,
                    retry_after_ms,
                } => (status as u32, retry_after_ms),
                Cause::Stalled { silent_ms } => (0, Some(silent_ms)),
                Cause::Timeout { ms } => (0, Some(ms)),
                Cause::NotAStream | Cause::Unusable | Cause::ServerEnded => (0, None),
            };
            // -1 for none: one more than u32::MAX as a u32 is not a delay anyone asks for.
            let b = ms.map_or(-1.0, |ms| ms as f64);
            return [pack(K::Ended, cause.index(), count), b, 0.0];
        }
        Step::Probe => (K::Probe, 0, 0, 0, 0),
        Step::Probed { status } => (K::Probed, 0, status.unwrap_or(0) as u32, 0, 0),
        Step::Wait { attempt, draw } => (
            K::Wait,
            draw.bound as u32,
            attempt,
            draw.delay_ms,
            draw.ladder_ms,
        ),
        Step::Offline => (K::Offline, 0, 0, 0, 0),
        Step::Asleep => (K::Asleep, 0, 0, 0, 0),
        Step::GaveUp { attempts } => (K::GaveUp, 0, attempts, 0, 0),
        Step::Closed { by_user } => (K::Closed, by_user as u32, 0, 0, 0),
    };
    [pack(kind, detail, count), b as f64, c as f64]
}

/// The first number of a [`Note::Trace`] (see [`trace_note`]).
fn pack(kind: TraceKind, detail: u32, count: u32) -> f64 {
    kind as u8 as f64 + 16.0 * detail as f64 + 256.0 * count as f64
}

/// The statuses in the order of their indices ([`Code::Status`], [`Note::Status`]).
pub const STATUSES: [crate::machine::Status; 5] = {
    use crate::machine::Status::*;
    [Connecting, Open, Reconnecting, Failed, Closed]
};

/// The index of `status` in [`STATUSES`].
pub fn status_index(status: crate::machine::Status) -> u32 {
    status as u32
}

/// What kind of JavaScript value an option takes, as the JavaScript half checks it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A boolean, handed over as 0 or 1.
    Bool,
    /// A number, handed over as it is.
    Number,
    /// A string, handed over as the JavaScript string it is.
    Text,
    /// One of these values (strings or booleans), handed over as its index; index 0 is the default.
    Choice(&'static [Value]),
    /// `probe`: a boolean, or a URL that goes to [`Slot::ProbeUrl`].
    Probe,
}

/// A value an option of [`Kind::Choice`] may take.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A string.
    Name(&'static str),
    /// A boolean.
    Flag(bool),
}

/// Which classes have an option.
pub mod class {
    /// `ManagedEventSource`.
    pub const STREAM: u8 = 1;
    /// `ManagedWebSocket`.
    pub const SOCKET: u8 = 2;
    /// Both.
    pub const BOTH: u8 = STREAM | SOCKET;
}

/// One option: its JavaScript name, kind, documented default, and the classes that have it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spec {
    /// The option's name in JavaScript.
    pub name: &'static str,
    /// What it takes.
    pub kind: Kind,
    /// The default, as the documentation writes it (`tests/boundary.rs` holds it to [`crate::options`]).
    pub default: &'static str,
    /// The classes that read it ([`class`]).
    pub classes: u8,
}

macro_rules! options {
    ($($(#[$vm:meta])* $v:ident = ($name:literal, $kind:expr, $default:literal, $classes:expr),)*) => {
        /// The options' positions in the values the JavaScript half hands the shell.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        pub enum Opt {
            $($(#[$vm])* $v,)*
        }

        /// Every option the JavaScript half reads into numbers for the shell, at its [`Opt`] position.
        pub const OPTIONS: &[Spec] = &[$(Spec { name: $name, kind: $kind, default: $default, classes: $classes }),*];
    };
}

const RECONNECT: &[Value] = &[
    Value::Name("backoff"),
    Value::Name("browser"),
    Value::Flag(false),
    Value::Flag(true),
];
const JITTER: &[Value] = &[
    Value::Name("full"),
    Value::Name("equal"),
    Value::Name("decorrelated"),
    Value::Name("none"),
];

options! {
    /// `withCredentials`.
    WithCredentials = ("withCredentials", Kind::Bool, "false", class::STREAM),
    /// `reconnect`.
    Reconnect = ("reconnect", Kind::Choice(RECONNECT), "'backoff'", class::STREAM),
    /// `jitter`.
    Jitter = ("jitter", Kind::Choice(JITTER), "'full'", class::BOTH),
    /// `baseMs`.
    BaseMs = ("baseMs", Kind::Number, "1000", class::BOTH),
    /// `maxMs`.
    MaxMs = ("maxMs", Kind::Number, "60000", class::BOTH),
    /// `factor`.
    Factor = ("factor", Kind::Number, "2", class::BOTH),
    /// `maxAttempts`.
    MaxAttempts = ("maxAttempts", Kind::Number, "Infinity", class::BOTH),
    /// `reconnectOnVisible`.
    ReconnectOnVisible = ("reconnectOnVisible", Kind::Bool, "true", class::BOTH),
    /// `reconnectOnOnline`.
    ReconnectOnOnline = ("reconnectOnOnline", Kind::Bool, "true", class::BOTH),
    /// `maxHintMs`.
    MaxHintMs = ("maxHintMs", Kind::Number, "600000", class::STREAM),
    /// `probe`.
    Probe = ("probe", Kind::Probe, "false", class::STREAM),
    /// `stallTimeoutMs`.
    StallTimeoutMs = ("stallTimeoutMs", Kind::Number, "0", class::BOTH),
    /// `minUptimeMs`.
    MinUptimeMs = ("minUptimeMs", Kind::Number, "0", class::BOTH),
    /// `connectTimeoutMs` (a socket's default is 10000).
    ConnectTimeoutMs = ("connectTimeoutMs", Kind::Number, "0", class::BOTH),
    /// `pauseWhenHiddenMs`.
    PauseWhenHiddenMs = ("pauseWhenHiddenMs", Kind::Number, "0", class::BOTH),
    /// `lastEventIdParam`.
    LastEventIdParam = ("lastEventIdParam", Kind::Text, "none", class::STREAM),
    /// `retryHintEvent`.
    RetryHintEvent = ("retryHintEvent", Kind::Text, "none", class::STREAM),
    /// `heartbeatEvent`.
    HeartbeatEvent = ("heartbeatEvent", Kind::Text, "none", class::STREAM),
}

codes! {
    /// What follows the options in the values the JavaScript half hands the shell, from
    /// [`Slot::FIRST`] on.
    pub enum Slot, "V_" {
        /// `probe: 'url'`: the URL.
        ProbeUrl = "PROBE_URL",
        /// Bit `i` set for each option at position `i` that was given.
        Given = "GIVEN",
        /// The id to resume from (sharing across tabs), or `undefined`.
        ResumeFrom = "RESUME_FROM",
        /// What connects: 0 an `EventSource` the shell makes; 1 a `WebSocket` and 2 a fetch, which the
        /// JavaScript transport makes itself (connection.js's `open`).
        Transport = "TRANSPORT",
        /// 1 when the `trace` option was given: the machine traces ([`crate::machine::Config::trace`]).
        Trace = "TRACE",
    }
}

impl Slot {
    /// The position of the first slot: right after the options.
    pub const FIRST: usize = OPTIONS.len();

    /// This slot's position in the values.
    pub const fn at(self) -> usize {
        Slot::FIRST + self as usize
    }
}

/// The contents of `src/web/boundary.js`, written from the tables above.
#[cfg(not(target_arch = "wasm32"))]
pub fn javascript() -> alloc::string::String {
    use alloc::format;
    use alloc::string::String;
    use alloc::vec::Vec;

    let consts = |names: &[&str], offset: usize| {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| format!("export const {n} = {};\n", i + offset))
            .collect::<String>()
    };
    let value = |v: &Value| match v {
        Value::Name(n) => format!("'{n}'"),
        Value::Flag(b) => format!("{b}"),
    };
    let mut s = String::from(
        "// Generated from src/boundary.rs by `npm run boundary`; tests/boundary.rs fails when it is out of date.\n\
         // Do not edit: the Rust enums are the one source of these numbers, and the bundler inlines them.\n\n",
    );
    s += "// The codes of the shell's entry point, input(handle, code, a, b, c): inputs, then questions.\n";
    s += &consts(Code::JS, 0);
    s += &format!(
        "export const I_FIRST_QUESTION = {};\n",
        Code::FIRST_QUESTION as u8
    );
    s += "\n// What the shell tells notify(link, note, a, b, c).\n";
    s += &consts(Note::JS, 0);
    s += "\n// The trace: its steps' kinds (in a N_TRACE's first number), and the names of their types, of what\n";
    s += "// starts an attempt, of why one ends and of what sets a delay's size, by number.\n";
    s += &consts(TraceKind::JS, 0);
    let list = |names: &[&str]| {
        names
            .iter()
            .map(|n| format!("'{n}'"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    s += &format!("export const TRACE_TYPES = [{}];\n", list(&TRACE_TYPES));
    let triggers: Vec<&str> = crate::machine::Trigger::ALL
        .iter()
        .map(|t| t.as_str())
        .collect();
    s += &format!("export const TRIGGERS = [{}];\n", list(&triggers));
    s += &format!(
        "export const CAUSES = [{}];\n",
        list(&crate::machine::Cause::NAMES)
    );
    let bounds: Vec<&str> = crate::ladder::Bound::ALL
        .iter()
        .map(|b| b.as_str())
        .collect();
    s += &format!("export const BOUNDS = [{}];\n", list(&bounds));
    s += "\n// The statuses, by index.\n";
    let names: Vec<String> = STATUSES
        .iter()
        .map(|s| format!("'{}'", s.as_str()))
        .collect();
    s += &format!("export const STATUSES = [{}];\n", names.join(", "));
    for (i, st) in STATUSES.iter().enumerate() {
        s += &format!("export const S_{} = {i};\n", st.as_str().to_uppercase());
    }
    s += "\n// The options the shell reads, at their positions: name, what the JavaScript half checks (a type,\n";
    s += "// the values it may take, or 'probe'), and the classes that have it (1 stream, 2 socket).\n";
    s += "export const OPTIONS = [\n";
    for o in OPTIONS {
        let kind = match o.kind {
            Kind::Bool => String::from("'boolean'"),
            Kind::Number => String::from("'number'"),
            Kind::Text => String::from("'string'"),
            Kind::Choice(values) => format!(
                "[{}]",
                values.iter().map(value).collect::<Vec<_>>().join(", ")
            ),
            Kind::Probe => String::from("'probe'"),
        };
        s += &format!("  ['{}', {kind}, {}],\n", o.name, o.classes);
    }
    s += "];\n";
    for (i, o) in OPTIONS.iter().enumerate() {
        let mut name = String::from("O_");
        for ch in o.name.chars() {
            if ch.is_ascii_uppercase() {
                name.push('_');
            }
            name.push(ch.to_ascii_uppercase());
        }
        s += &format!("export const {name} = {i};\n");
    }
    s += "\n// What follows the options in the values.\n";
    s += &consts(Slot::JS, Slot::FIRST);
    s += &format!("export const V_COUNT = {COUNT};\n");
    s += "\n// The code units of a string the option check's module keeps (src/check.rs).\n";
    s += &format!("export const CHECK_UNITS = {CHECK_UNITS};\n");
    s
}

/// The `reconnect` value at index `i` of its choices (`tests/boundary.rs` holds the two in step).
pub fn reconnect_at(i: u32) -> crate::options::Reconnect {
    use crate::options::Reconnect;
    match i {
        1 => Reconnect::Browser,
        2 => Reconnect::Never,
        _ => Reconnect::Backoff,
    }
}

/// The `jitter` value at index `i` of its choices (`tests/boundary.rs` holds the two in step).
pub fn jitter_at(i: u32) -> crate::ladder::Strategy {
    use crate::ladder::Strategy;
    match i {
        1 => Strategy::Equal,
        2 => Strategy::Decorrelated,
        3 => Strategy::None,
        _ => Strategy::Full,
    }
}

/// The number of values the JavaScript half lays out: the options, then the slots.
pub const COUNT: usize = Slot::FIRST + Slot::ALL.len();

/// The code units of each string that the option check's module (`check`) keeps: more than the longest
/// name a rule compares a string with, so that a longer string is none of them.
pub const CHECK_UNITS: usize = 16;

/// The values the JavaScript half laid out from the user's options (see [`Opt`] and [`Slot`]), as the
/// browser shell reads them: the JavaScript array itself in the shell, a copy in the option check's own
/// memory (`check`, the small module the first constructor runs instead of the shell).
pub trait Values {
    /// A string value, checked where it is (see [`crate::options::Text`]).
    type Text: crate::options::Text;
    /// The number at position `at`.
    fn at(&self, at: usize) -> f64;
    /// The string at position `at`; `None` where there is none.
    fn text_at(&self, at: usize) -> Option<Self::Text>;

    /// Bit `i` set for each option at position `i` that was given (the number at [`Slot::Given`]).
    fn given(&self) -> u32;

    /// An option's number, or `default` where it was not given.
    fn number(&self, o: Opt, default: f64) -> f64 {
        if self.given() & (1 << o as u32) != 0 {
            self.at(o as usize)
        } else {
            default
        }
    }

    /// A boolean, given as 0 or 1.
    fn flag(&self, o: Opt, default: bool) -> bool {
        self.number(o, default as u8 as f64) == 1.0
    }

    /// The index of a choice's value (0, the default, when not given).
    fn index(&self, o: Opt) -> u32 {
        self.number(o, 0.0) as u32
    }
}

/// The options `v` describes, every one not given at its default (a socket's `connectTimeoutMs` is
/// [`crate::options::SOCKET_CONNECT_TIMEOUT_MS`]). Unchecked: [`Options::validate`] checks them. The shell
/// and the first constructor's option check both read the user's options with this, so that they agree.
///
/// [`Options::validate`]: crate::options::Options::validate
pub fn options<V: Values>(v: &V, socket: bool) -> crate::options::Options<V::Text> {
    let d = crate::options::Options::<&str>::default();
    crate::options::Options {
        // The JavaScript half hands it to EventSource itself.
        with_credentials: d.with_credentials,
        reconnect: reconnect_at(v.index(Opt::Reconnect)),
        jitter: jitter_at(v.index(Opt::Jitter)),
        base_ms: v.number(Opt::BaseMs, d.base_ms),
        max_ms: v.number(Opt::MaxMs, d.max_ms),
        factor: v.number(Opt::Factor, d.factor),
        max_attempts: v.number(Opt::MaxAttempts, d.max_attempts),
        last_event_id_param: v.text_at(Opt::LastEventIdParam as usize),
        reconnect_on_visible: v.flag(Opt::ReconnectOnVisible, d.reconnect_on_visible),
        reconnect_on_online: v.flag(Opt::ReconnectOnOnline, d.reconnect_on_online),
        retry_hint_event: v.text_at(Opt::RetryHintEvent as usize),
        max_hint_ms: v.number(Opt::MaxHintMs, d.max_hint_ms),
        probe: v.flag(Opt::Probe, d.probe),
        probe_url: v.text_at(Slot::ProbeUrl.at()),
        stall_timeout_ms: v.number(Opt::StallTimeoutMs, d.stall_timeout_ms),
        heartbeat_event: v.text_at(Opt::HeartbeatEvent as usize),
        min_uptime_ms: v.number(Opt::MinUptimeMs, d.min_uptime_ms),
        pause_when_hidden_ms: v.number(Opt::PauseWhenHiddenMs, d.pause_when_hidden_ms),
        connect_timeout_ms: v.number(
            Opt::ConnectTimeoutMs,
            if socket {
                crate::options::SOCKET_CONNECT_TIMEOUT_MS
            } else {
                d.connect_timeout_ms
            },
        ),
    }
}
