//! The reconnect state machine, sans-IO: inputs in, commands out.
//!
//! The browser shell turns `EventSource` events, timers, page events and probe answers into [`Input`]s and
//! carries out the [`Command`]s in the order given. Effects come before notifications in each batch, so a
//! user callback that calls `close()` from inside a notification finds the machine already consistent.
//! Time is passed in with [`Machine::set_now`] before an input, so tests run on a fake clock.
//!
//! Invariants (checked by property tests over random input sequences):
//! - at most one live source, and at most one armed timer (the reconnect timer or, while open, the
//!   stall watchdog's);
//! - nothing opens and no timer is armed after [`Input::Close`];
//! - the attempt counter resets on [`Input::Opened`], not on the first event (or, with `min_uptime_ms`,
//!   once a connection has stayed open that long);
//! - every delay lies in `[0, max_ms]` unless a server hint asks for more, and a hint adds at most
//!   `max_hint_ms`;
//! - after `max_attempts` reconnect attempts fail in a row, nothing is scheduled until
//!   [`Input::RetryNow`], [`Input::PageVisible`] or [`Input::Online`]; after a probe finds the stream
//!   gone or unauthorized, nothing until [`Input::RetryNow`].
//!
//! ```
//! use managed_eventsource::machine::{Command, Config, Input, Machine, Status};
//! use managed_eventsource::ladder::SplitMix64;
//!
//! let mut m = Machine::new(Config::default(), SplitMix64::new(1));
//! assert_eq!(m.handle(Input::Start), [Command::OpenSource { resume: false }, Command::Status(Status::Connecting)]);
//! let cmds = m.handle(Input::Failed { browser_gave_up: true });
//! assert_eq!(cmds[0], Command::CloseSource);
//! assert!(matches!(cmds[2], Command::ArmTimer { ms } if ms <= 1000));
//! ```

use alloc::string::String;
use alloc::vec::Vec;

use crate::ladder::{Bound, Ladder, LadderConfig, Random};
use crate::options::Reconnect;

/// What the UI shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The first connection is being made.
    Connecting,
    /// Connected: the response headers validated.
    Open,
    /// Waiting for, or making, a reconnect.
    Reconnecting,
    /// Gave up: `max_attempts` reached, the browser gave up, or reconnecting is off.
    Failed,
    /// Closed by the user; final.
    Closed,
}

impl Status {
    /// The status's name in the JavaScript API.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Connecting => "connecting",
            Status::Open => "open",
            Status::Reconnecting => "reconnecting",
            Status::Failed => "failed",
            Status::Closed => "closed",
        }
    }
}

/// An event id as the machine holds it. The machine never reads an id's characters: it keeps ids, hands them
/// back, and measures them for a reconnect URL. Natively (and in the tests) an id is a [`String`]; the
/// browser shell keeps each id the JavaScript string it arrived as, so that none is copied into wasm.
pub trait EventId: Clone + Default {
    /// The id's length once percent-encoded as `encodeURIComponent` encodes it
    /// ([`crate::resume::encoded_len`]); 0 only for the empty id.
    fn encoded_len(&self) -> usize;
}

impl EventId for String {
    fn encoded_len(&self) -> usize {
        crate::resume::encoded_len(self)
    }
}

/// Something that happened. `I` is the type of an event id (see [`EventId`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input<I = String> {
    /// Connect for the first time.
    Start,
    /// The current source's `open` event: response headers validated.
    Opened,
    /// The current source's `error` event. `browser_gave_up` is true when its `readyState` is `CLOSED`.
    Failed {
        /// The browser will not retry by itself (a non-200 status, a wrong type, or a closed source).
        browser_gave_up: bool,
    },
    /// Events arrived on the live source: the `lastEventId` of its first and of its last event. The shell
    /// reads them only when it needs the id (before any other input, and for the `lastEventId` getter), not
    /// per event. `lastEventId` is the browser's own record, so an empty `id:` field reads as empty: that
    /// resets the id, as in `EventSource`. A source opened by a reconnect starts with no id of its own, so
    /// while none of its events has carried one, the id it resumed from stands.
    Seen {
        /// The first event's `lastEventId`.
        first: I,
        /// The last event's `lastEventId`.
        last: I,
    },
    /// The armed reconnect timer fired.
    TimerFired,
    /// The stall watchdog's timer fired; `active` says whether an event arrived since its last tick.
    WatchdogFired {
        /// An event arrived since the last tick.
        active: bool,
    },
    /// The answer to [`Command::Probe`] number `id`: the HTTP status, or `None` when the probe itself
    /// failed, and a `Retry-After` header read as a delay.
    Probed {
        /// The probe this answers (see [`Command::Probe`]).
        id: u32,
        /// The response's status.
        status: Option<u16>,
        /// `Retry-After`, in ms from now.
        retry_after_ms: Option<u32>,
    },
    /// The page became visible, or resumed from being frozen.
    PageVisible,
    /// The page was hidden (see [`Config::pause_when_hidden_ms`]).
    PageHidden,
    /// The page came back from the back-forward cache, whose entry cut any connection it had (WebKit does
    /// so silently, then fires `error` on restore and waits a full retry delay): a live source is taken
    /// as dead and replaced at once; otherwise as [`Input::PageVisible`].
    Restored,
    /// The pause timer ([`Command::ArmPause`]) fired.
    PauseFired,
    /// The browser came back online.
    Online,
    /// The browser went offline.
    Offline,
    /// The server asked the next reconnect to wait at least this long.
    RetryHint {
        /// The delay asked for, in ms.
        ms: u32,
    },
    /// The server's `retry:` field asked for this reconnection time, in ms: a floor under every later
    /// delay (see [`crate::ladder::Ladder::floor`]), capped by `max_hint_ms`. Only the fetch transport sees
    /// the field; `EventSource` keeps it to itself.
    RetryField {
        /// The reconnection time asked for, in ms.
        ms: u32,
    },
    /// The current attempt was answered with a status other than a stream (the fetch transport reads it
    /// off the response, where `EventSource` would need a probe): decided as [`Input::Probed`] decides,
    /// with the source closed and the error reported first. `None` for a 200 that is not an event stream.
    Refused {
        /// The response's status.
        status: Option<u16>,
        /// `Retry-After`, in ms from now.
        retry_after_ms: Option<u32>,
    },
    /// The current attempt's URL can never be fetched: a scheme no request goes out for (`mailto:`,
    /// `about:`, `javascript:`, `ftp:`...), or a `data:` or `blob:` URL that did not open (it answers the
    /// same every time). The stream fails at once, as a native `EventSource` does, and no reconnect is
    /// scheduled until [`Input::RetryNow`] (a URL function may give a usable URL then).
    Unusable,
    /// The stream has been silent for too long: treat it as dropped.
    Stalled,
    /// The user asked to reconnect now with a fresh ladder.
    RetryNow,
    /// The server announced itself on the open stream (its heartbeat event): it writes something at least every `heartbeat_ms` (`None`:
    /// not said; 0: it sends no heartbeats), and, with `resume`, it reads the last event id from the
    /// query parameter the JavaScript half now puts it in. Where the user set no `stallTimeoutMs`, the
    /// watchdog then takes the stream for dead after [`HEARTBEAT_STALL_FACTOR`] intervals of silence; and
    /// reconnects carry the id from then on. Only in [`Reconnect::Backoff`] mode: in the others the
    /// browser (or nobody) reconnects.
    Announced {
        /// The server's heartbeat interval, ms, for the stall watchdog (none where the user set its own).
        heartbeat_ms: Option<u32>,
        /// The same interval, for the connect timeout (none where the user set one): the server writes its
        /// first line at once, so a connection not open within two intervals is dead (a reconnect sent into
        /// a pooled socket that a proxy froze).
        connect_ms: Option<u32>,
        /// The reconnect URL can now carry the last event id.
        resume: bool,
    },
    /// The server ended the stream on purpose (a WebSocket closed cleanly with a code that is not to be
    /// retried): no reconnect until [`Input::RetryNow`].
    Ended,
    /// The user closed the stream; final.
    Close,
}

/// Something for the shell to do, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Create a new `EventSource`. With `resume`, the URL carries [`Machine::resumed_from`] in the
    /// `lastEventIdParam` query parameter.
    OpenSource {
        /// Whether the URL carries the id this connection resumes from.
        resume: bool,
    },
    /// Close the current `EventSource` and drop its listeners.
    CloseSource,
    /// Arm the reconnect timer.
    ArmTimer {
        /// Delay in ms.
        ms: u32,
    },
    /// Cancel the armed timer (the reconnect timer or the watchdog's).
    DisarmTimer,
    /// Arm the stall watchdog's timer: [`Input::WatchdogFired`] after `ms`. It uses the timer's one slot:
    /// while a source is open no reconnect is pending.
    ArmWatchdog {
        /// Delay in ms.
        ms: u32,
    },
    /// Arm the pause timer, a slot of its own beside the reconnect timer: [`Input::PauseFired`] after `ms`.
    ArmPause {
        /// Delay in ms.
        ms: u32,
    },
    /// Cancel the pause timer.
    DisarmPause,
    /// Fetch the failed attempt's URL once, aborted once the headers arrive, to learn its status; answer
    /// with [`Input::Probed`] carrying the same `id`.
    Probe {
        /// Which probe, so that a late answer to an earlier one is ignored.
        id: u32,
    },
    /// Abort the probe that is out: its answer no longer matters (the stream closed or starts afresh).
    CancelProbe,
    /// A probe found the stream needs fresh credentials (401 or 403): `onunauthorized`.
    Unauthorized {
        /// The status the probe saw.
        status: u16,
    },
    /// The status changed.
    Status(Status),
    /// Tell the user about an error of the current source (`onerror`).
    ReportError,
    /// A connection opened after `attempt` reconnect attempts (0 for the first try).
    Connected {
        /// The attempt that succeeded.
        attempt: u32,
    },
    /// A reconnect has been scheduled.
    RetryScheduled {
        /// Reconnect attempt number, from 1.
        attempt: u32,
        /// Its delay in ms.
        delay_ms: u32,
    },
    /// Gave up after `attempts` reconnect attempts in a row.
    GaveUp {
        /// Reconnect attempts made.
        attempts: u32,
    },
    /// The stall watchdog has ended `stalls` connections in a row that had delivered events: a stream that
    /// is alive but whose keep-alive the watchdog cannot see (comment lines, to an `EventSource`). Told
    /// once per machine; the shell warns the user.
    StallsRecur {
        /// Stalls in a row of connections that had delivered events.
        stalls: u32,
    },
    /// The last event id is too long to travel in a URL ([`MAX_RESUME_ID`] bytes once encoded): this
    /// reconnect goes without it. The shell tells the user.
    ResumeIdDropped {
        /// The id's length once percent-encoded, in bytes.
        encoded_len: u32,
    },
    /// One step of the trace ([`Config::trace`]): pushed where the machine changes phase, and for every
    /// attempt, right after the effects that carry it out.
    Trace(Step),
}

/// One record of the trace (see [`Config::trace`]): every attempt, and every change of what the machine is
/// doing. An attempt's record also ends the connection before it, if one was live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A source was made (or, in [`Reconnect::Browser`] mode, the browser retries by itself).
    Attempt {
        /// Reconnect attempts in a row it makes (0: the first connection, or a fresh ladder).
        attempt: u32,
        /// What started it.
        trigger: Trigger,
        /// Whether its URL carries the last event id.
        resume: bool,
    },
    /// The attempt opened.
    Open {
        /// The attempt that opened.
        attempt: u32,
    },
    /// The attempt or the open connection ended, reported as an error.
    Ended {
        /// Why.
        cause: Cause,
    },
    /// A probe went out for the failed attempt's status.
    Probe,
    /// The probe answered.
    Probed {
        /// The status it saw; `None` when the probe itself failed.
        status: Option<u16>,
    },
    /// The next attempt waits.
    Wait {
        /// The attempt it waits for.
        attempt: u32,
        /// The delay, ms, its ladder part, and what set its size.
        draw: crate::ladder::Draw,
    },
    /// Offline: the wait stopped until the network comes back.
    Offline,
    /// The page was hidden for `pause_when_hidden_ms`: the stream sleeps until it is visible.
    Asleep,
    /// No more attempts until [`Input::RetryNow`] (or, after `max_attempts`, a wake).
    GaveUp {
        /// Reconnect attempts made in a row.
        attempts: u32,
    },
    /// Closed for good: by the user, or by the server (a 204, a clean end).
    Closed {
        /// `close()` (or an abort), as against the server.
        by_user: bool,
    },
}

/// What started an attempt ([`Step::Attempt`]). Numbered in the order of [`Trigger::ALL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Trigger {
    /// The first connection.
    Start,
    /// The reconnect timer.
    Timer,
    /// `reconnectNow()`.
    RetryNow,
    /// The page became visible.
    Visible,
    /// The network came back.
    Online,
    /// The page came back from the back-forward cache.
    Restored,
    /// The browser's own retry ([`Reconnect::Browser`]).
    Browser,
}

impl Trigger {
    /// Every trigger, in the order of their numbers.
    pub const ALL: [Trigger; 7] = [
        Trigger::Start,
        Trigger::Timer,
        Trigger::RetryNow,
        Trigger::Visible,
        Trigger::Online,
        Trigger::Restored,
        Trigger::Browser,
    ];

    /// The trigger's name in the JavaScript trace.
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Start => "start",
            Trigger::Timer => "timer",
            Trigger::RetryNow => "reconnectNow",
            Trigger::Visible => "visible",
            Trigger::Online => "online",
            Trigger::Restored => "restored",
            Trigger::Browser => "browser",
        }
    }
}

/// Why an attempt or a connection ended ([`Step::Ended`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// The source's `error` event; `browser_gave_up` when its `readyState` was `CLOSED`.
    Error {
        /// The browser would not retry by itself.
        browser_gave_up: bool,
    },
    /// Answered with a status other than a stream's.
    Status {
        /// The status.
        status: u16,
        /// Its `Retry-After`, ms.
        retry_after_ms: Option<u32>,
    },
    /// Answered 200 with something other than an event stream.
    NotAStream,
    /// The stall watchdog found the open stream silent this long, ms.
    Stalled {
        /// How long it was silent, ms (the stall timeout; 0 when the shell said so itself).
        silent_ms: u32,
    },
    /// Not open within `connect_timeout_ms`.
    Timeout {
        /// The timeout, ms.
        ms: u32,
    },
    /// The URL can never be fetched.
    Unusable,
    /// The server ended the stream on purpose.
    ServerEnded,
}

impl Cause {
    /// The names of the causes in the JavaScript trace, in the order of their numbers.
    pub const NAMES: [&'static str; 7] = [
        "error",
        "status",
        "notAStream",
        "stalled",
        "timeout",
        "unusable",
        "serverEnded",
    ];

    /// This cause's number (its index in [`Cause::NAMES`]).
    pub fn index(self) -> u32 {
        match self {
            Cause::Error { .. } => 0,
            Cause::Status { .. } => 1,
            Cause::NotAStream => 2,
            Cause::Stalled { .. } => 3,
            Cause::Timeout { .. } => 4,
            Cause::Unusable => 5,
            Cause::ServerEnded => 6,
        }
    }
}

/// The longest last event id, percent-encoded, that a reconnect URL carries. Servers commonly refuse a
/// request line over 8 KB (nginx, Apache) and browsers a URL of about 2 MB; past this limit the client
/// reconnects without the id rather than failing for ever.
pub const MAX_RESUME_ID: usize = 4096;

/// The machine's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Who reconnects.
    pub mode: Reconnect,
    /// The backoff ladder.
    pub ladder: LadderConfig,
    /// Whether reconnects carry the last event id (`lastEventIdParam` is set).
    pub resume: bool,
    /// Whether [`Input::PageVisible`] wakes a waiting or failed stream.
    pub wake_on_visible: bool,
    /// Whether [`Input::Online`] wakes a waiting or failed stream (and [`Input::Offline`] pauses waiting).
    pub wake_on_online: bool,
    /// The longest wait a server hint may impose, ms (`maxHintMs`).
    pub max_hint_ms: u32,
    /// Whether a source the browser gave up on is probed for its status (`probe`).
    pub probe: bool,
    /// An open stream silent this long is treated as dropped, ms; 0 turns the watchdog off
    /// (`stallTimeoutMs`).
    pub stall_timeout_ms: u32,
    /// The attempt counter resets only once a connection has stayed open this long, ms; 0 resets it on
    /// open (`minUptimeMs`).
    pub min_uptime_ms: u32,
    /// A source not open after this long is given up on as a failed attempt, ms; 0 waits as long as the
    /// browser does (`connectTimeoutMs`).
    pub connect_timeout_ms: u32,
    /// A page hidden this long closes its stream until it is visible again, ms; 0 (the default) never
    /// does (`pauseWhenHiddenMs`).
    pub pause_when_hidden_ms: u32,
    /// Whether to push a [`Command::Trace`] for every attempt and every change of phase (`trace`).
    pub trace: bool,
}

/// A reconnect timer that fires more than this much later than it should, and more than its own delay
/// late, was held up by a sleeping machine or a frozen page: it counts as waking up.
pub const LATE_MS: f64 = 10_000.0;

/// After this many stalls in a row of connections that had delivered events, [`Command::StallsRecur`].
pub const RECURRING_STALLS: u32 = 2;

/// A server that announced a heartbeat interval (see [`Input::Announced`]) is taken for dead after this many
/// intervals with nothing on the stream: one heartbeat may be late or lost in a proxy's buffer, two are not.
pub const HEARTBEAT_STALL_FACTOR: u32 = 2;

/// The watchdog looks this many times per `stall_timeout_ms`, so a stall is noticed between the timeout
/// and a quarter more.
const WATCHDOG_TICKS: u32 = 4;

impl Default for Config {
    fn default() -> Self {
        Config {
            mode: Reconnect::Backoff,
            ladder: LadderConfig::default(),
            resume: false,
            wake_on_visible: true,
            wake_on_online: true,
            max_hint_ms: crate::options::DEFAULT_MAX_HINT_MS,
            probe: false,
            stall_timeout_ms: 0,
            min_uptime_ms: 0,
            connect_timeout_ms: 0,
            pause_when_hidden_ms: 0,
            trace: false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    /// A source is live and not yet open.
    Connecting,
    /// A source is live and open.
    Open,
    /// No source; the timer is armed.
    Waiting,
    /// No source, no timer: offline, waiting for `Online`.
    Paused,
    /// No source, no timer: a probe is out.
    Probing,
    /// No source, no timer: the page has been hidden for `pause_when_hidden_ms`; visible again, it
    /// reconnects at once.
    Asleep,
    /// No source, no timer: gave up; a visible page or the network coming back retries.
    Failed,
    /// No source, no timer: a probe found the stream gone or unauthorized, or the server ended it; only
    /// `RetryNow` retries.
    Stopped,
    Closed,
}

/// The reconnect state machine. `R` supplies the jitter; `I` is the type of an event id (see [`EventId`]).
#[derive(Clone, Debug)]
pub struct Machine<R, I = String> {
    config: Config,
    ladder: Ladder,
    rng: R,
    phase: Phase,
    status: Option<Status>,
    last_event_id: I,
    /// The id the live source started from: what its events' ids are read against.
    resumed_from: I,
    /// The clock, ms (see [`Machine::set_now`]).
    now: f64,
    /// When the open source opened.
    opened_at: f64,
    /// When the reconnect timer was armed, and for how long.
    armed_at: f64,
    armed_ms: u32,
    /// Whether the watchdog's timer is armed, and its silent ticks in a row.
    watchdog: bool,
    idle_ticks: u32,
    /// The number of the last probe sent.
    probe_id: u32,
    /// Whether the live connection has delivered an event (a watchdog tick saw one), the stalls in a row
    /// of connections that had, and whether [`Command::StallsRecur`] has been told.
    delivered: bool,
    stalls_in_a_row: u32,
    stalls_told: bool,
    /// Whether the page is hidden, and whether the pause timer is armed.
    hidden: bool,
    pause_armed: bool,
    /// Whether a server's announced heartbeat sets the stall timeout: the user set none (0), and this
    /// machine reconnects by itself.
    stall_from_server: bool,
    /// The connect timeout is the server's announced interval's (the user set none), as `stall_from_server`.
    connect_from_server: bool,
}

impl<R: Random> Machine<R> {
    /// A machine that has not started, whose event ids are [`String`]s.
    pub fn new(config: Config, rng: R) -> Self {
        Machine::with_ids(config, rng)
    }
}

impl<R: Random, I: EventId> Machine<R, I> {
    /// A machine that has not started, whose event ids are `I`s.
    pub fn with_ids(config: Config, rng: R) -> Self {
        Machine {
            config,
            ladder: Ladder::new(config.ladder),
            rng,
            phase: Phase::Idle,
            status: None,
            last_event_id: I::default(),
            resumed_from: I::default(),
            now: 0.0,
            opened_at: 0.0,
            armed_at: 0.0,
            armed_ms: 0,
            watchdog: false,
            idle_ticks: 0,
            probe_id: 0,
            delivered: false,
            stalls_in_a_row: 0,
            stalls_told: false,
            hidden: false,
            pause_armed: false,
            stall_from_server: config.stall_timeout_ms == 0 && config.mode == Reconnect::Backoff,
            connect_from_server: config.connect_timeout_ms == 0
                && config.mode == Reconnect::Backoff,
        }
    }

    /// Starts from `id`, as if the events up to it had been received: the first connection resumes after
    /// it. For a client taking over a stream another one held (sharing across tabs). Before
    /// [`Input::Start`] only.
    pub fn resume_from(&mut self, id: I) {
        if self.phase == Phase::Idle {
            self.last_event_id = id;
        }
    }

    /// Sets the clock, in ms from any fixed origin (the shell passes `performance.now()`), before an input.
    pub fn set_now(&mut self, now_ms: f64) {
        self.now = now_ms;
    }

    /// The current status (`Connecting` before [`Input::Start`]).
    pub fn status(&self) -> Status {
        self.status.unwrap_or(Status::Connecting)
    }

    /// `EventSource.readyState`: 0 while connecting or waiting, 1 when open, 2 when failed or closed.
    pub fn ready_state(&self) -> u16 {
        match self.phase {
            Phase::Open => 1,
            Phase::Failed | Phase::Stopped | Phase::Closed => 2,
            _ => 0,
        }
    }

    /// Reconnect attempts in a row so far; 0 while open.
    pub fn attempt(&self) -> u32 {
        if self.phase == Phase::Open {
            0
        } else {
            self.ladder.attempt()
        }
    }

    /// The last event id: the browser's record for the live source (see [`Input::Seen`]), kept across
    /// reconnects.
    pub fn last_event_id(&self) -> &I {
        &self.last_event_id
    }

    /// The id the live (or last) source resumed from: what [`Command::OpenSource`] with `resume` puts in
    /// its URL.
    pub fn resumed_from(&self) -> &I {
        &self.resumed_from
    }

    /// Whether a source is live (created and not closed).
    pub fn source_live(&self) -> bool {
        matches!(self.phase, Phase::Connecting | Phase::Open)
    }

    /// Whether the timer is armed: the reconnect timer, or the watchdog's (stall or connect timeout).
    pub fn timer_armed(&self) -> bool {
        self.phase == Phase::Waiting || self.watchdog
    }

    /// Whether a probe is out.
    pub fn probing(&self) -> bool {
        self.phase == Phase::Probing
    }

    /// Whether the pause timer is armed.
    pub fn pause_armed(&self) -> bool {
        self.pause_armed
    }

    /// Whether the stream is paused because the page is hidden (see [`Config::pause_when_hidden_ms`]).
    pub fn asleep(&self) -> bool {
        self.phase == Phase::Asleep
    }

    /// Whether the machine has been closed.
    pub fn closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Feeds one input and returns what to do.
    pub fn handle(&mut self, input: Input<I>) -> Vec<Command> {
        let mut out = Vec::new();
        self.handle_into(input, &mut out);
        out
    }

    /// Feeds one input and appends what to do to `out` (no allocation once `out` has capacity).
    pub fn handle_into(&mut self, input: Input<I>, out: &mut Vec<Command>) {
        if self.phase == Phase::Closed {
            return;
        }
        match input {
            Input::Start => {
                if self.phase == Phase::Idle {
                    self.open(Trigger::Start, out);
                }
            }
            Input::Opened => {
                if self.phase == Phase::Connecting {
                    // The connect timeout has done its work.
                    if self.watchdog {
                        self.watchdog = false;
                        out.push(Command::DisarmTimer);
                    }
                    let attempt = self.ladder.attempt();
                    if self.config.min_uptime_ms == 0 {
                        self.ladder.reset();
                    }
                    self.opened_at = self.now;
                    self.phase = Phase::Open;
                    self.idle_ticks = 0;
                    self.delivered = false;
                    self.arm_watchdog(out);
                    self.trace(Step::Open { attempt }, out);
                    self.set_status(Status::Open, out);
                    out.push(Command::Connected { attempt });
                }
            }
            Input::Failed { browser_gave_up } => {
                if self.source_live() {
                    self.failed(Cause::Error { browser_gave_up }, out);
                }
            }
            Input::Seen { first, last } => {
                if self.source_live() {
                    self.last_event_id = if first.encoded_len() != 0 || last.encoded_len() != 0 {
                        last
                    } else {
                        self.resumed_from.clone()
                    };
                }
            }
            Input::TimerFired => {
                if self.phase == Phase::Waiting {
                    // Far later than armed for: the machine slept or the page was frozen. As on waking,
                    // the failures before the sleep say nothing about the server now.
                    let late = self.now - self.armed_at - self.armed_ms as f64;
                    if late > LATE_MS && late > self.armed_ms as f64 {
                        self.ladder.reset();
                    }
                    self.open(Trigger::Timer, out);
                }
            }
            Input::WatchdogFired { active } => {
                if self.phase == Phase::Connecting && self.watchdog {
                    // Not open within the connect timeout: a failed attempt.
                    self.watchdog = false;
                    let ms = self.config.connect_timeout_ms;
                    self.failed(Cause::Timeout { ms }, out);
                } else if self.phase == Phase::Open && self.watchdog {
                    self.watchdog = false;
                    self.delivered |= active;
                    self.idle_ticks = if active { 0 } else { self.idle_ticks + 1 };
                    if self.idle_ticks >= WATCHDOG_TICKS {
                        let silent_ms = self.config.stall_timeout_ms;
                        self.stalled(silent_ms, out);
                    } else {
                        self.arm_watchdog(out);
                    }
                }
            }
            Input::Probed {
                id,
                status,
                retry_after_ms,
            } => {
                if self.phase == Phase::Probing && id == self.probe_id {
                    self.trace(Step::Probed { status }, out);
                    self.probed(status, retry_after_ms, out);
                }
            }
            Input::PageVisible => self.visible(Trigger::Visible, out),
            Input::PageHidden => {
                self.hidden = true;
                self.arm_pause(out);
            }
            Input::Restored => {
                if self.source_live() && self.config.mode != Reconnect::Never {
                    // Whatever the engine does with the source it cut, it is replaced now, resuming.
                    self.close_source(out);
                    self.uptime_counts();
                    self.ladder.reset();
                    self.open(Trigger::Restored, out);
                }
                self.visible(Trigger::Restored, out);
            }
            Input::PauseFired => {
                if self.pause_armed {
                    self.pause_armed = false;
                    if self.hidden {
                        self.sleep(out);
                    }
                }
            }
            Input::Online => {
                if self.config.wake_on_online {
                    self.wake(Trigger::Online, out);
                }
            }
            Input::Offline => {
                // Waiting while offline only burns attempts; `Online` will reconnect at once.
                if self.config.wake_on_online && self.phase == Phase::Waiting {
                    out.push(Command::DisarmTimer);
                    self.phase = Phase::Paused;
                    self.trace(Step::Offline, out);
                }
            }
            Input::RetryHint { ms } => {
                if self.phase != Phase::Idle {
                    let (ms, source) = self.hint_cut(ms, Bound::Hint);
                    self.ladder.hint_from(ms, source);
                }
            }
            Input::RetryField { ms } => {
                let (ms, source) = self.hint_cut(ms, Bound::Retry);
                self.ladder.floor_from(ms, source);
            }
            Input::Refused {
                status,
                retry_after_ms,
            } => {
                if self.source_live() {
                    self.close_source(out);
                    let cause = match status {
                        Some(status) => Cause::Status {
                            status,
                            retry_after_ms,
                        },
                        None => Cause::NotAStream,
                    };
                    self.report(cause, out);
                    self.probed(status, retry_after_ms, out);
                }
            }
            Input::Unusable => {
                if self.source_live() {
                    self.close_source(out);
                    self.report(Cause::Unusable, out);
                    self.give_up(Phase::Stopped, out);
                }
            }
            Input::Stalled => {
                if self.source_live() {
                    self.stalled(0, out);
                }
            }
            Input::RetryNow => {
                if self.phase != Phase::Idle {
                    self.stop_activity(out);
                    self.ladder.reset();
                    self.open(Trigger::RetryNow, out);
                }
            }
            Input::Announced {
                heartbeat_ms,
                connect_ms,
                resume,
            } => {
                let backoff = self.config.mode == Reconnect::Backoff;
                self.config.resume |= resume && backoff;
                if let (Some(ms), true) = (connect_ms, self.connect_from_server) {
                    // From the next attempt on (0: none, as the server sends no heartbeat); an attempt under
                    // way keeps its timeout, unless there is none any more.
                    self.config.connect_timeout_ms = ms.saturating_mul(HEARTBEAT_STALL_FACTOR);
                    if ms == 0 && self.phase == Phase::Connecting && self.watchdog {
                        self.watchdog = false;
                        out.push(Command::DisarmTimer);
                    }
                }
                if let (Some(ms), true) = (heartbeat_ms, self.stall_from_server) {
                    self.config.stall_timeout_ms = ms.saturating_mul(HEARTBEAT_STALL_FACTOR);
                    // The open stream is watched from now on (an armed watchdog takes the new timeout
                    // at its next tick), or no more when the server sends no heartbeats.
                    if self.phase == Phase::Open && !self.watchdog {
                        self.arm_watchdog(out);
                    } else if self.phase == Phase::Open && ms == 0 {
                        self.watchdog = false;
                        out.push(Command::DisarmTimer);
                    }
                }
            }
            Input::Ended => {
                if self.source_live() {
                    self.close_source(out);
                    self.report(Cause::ServerEnded, out);
                    self.phase = Phase::Stopped;
                    self.trace(Step::Closed { by_user: false }, out);
                    self.set_status(Status::Closed, out);
                }
            }
            Input::Close => {
                self.stop_activity(out);
                self.disarm_pause(out);
                self.phase = Phase::Closed;
                self.trace(Step::Closed { by_user: true }, out);
                self.set_status(Status::Closed, out);
            }
        }
    }

    /// Pushes a trace step, when tracing. One call, not a push at every step: the package's size.
    #[inline(never)]
    fn trace(&self, step: Step, out: &mut Vec<Command>) {
        if self.config.trace {
            out.push(Command::Trace(step));
        }
    }

    /// Reports an error of the attempt or connection that just ended, traced with its cause.
    fn report(&self, cause: Cause, out: &mut Vec<Command>) {
        self.trace(Step::Ended { cause }, out);
        out.push(Command::ReportError);
    }

    /// A server's ask cut to `max_hint_ms`, and where it came from (`source`, or [`Bound::MaxHintMs`] when
    /// cut).
    fn hint_cut(&self, ms: u32, source: Bound) -> (u32, Bound) {
        if ms > self.config.max_hint_ms {
            (self.config.max_hint_ms, Bound::MaxHintMs)
        } else {
            (ms, source)
        }
    }

    fn set_status(&mut self, status: Status, out: &mut Vec<Command>) {
        if self.status != Some(status) {
            self.status = Some(status);
            out.push(Command::Status(status));
        }
    }

    /// Closes the live source, disarms the timer or cancels the probe, whichever there is.
    fn stop_activity(&mut self, out: &mut Vec<Command>) {
        match self.phase {
            Phase::Connecting | Phase::Open => self.close_source(out),
            Phase::Waiting => out.push(Command::DisarmTimer),
            Phase::Probing => out.push(Command::CancelProbe),
            _ => {}
        }
    }

    /// Closes the live source, and the watchdog with it.
    fn close_source(&mut self, out: &mut Vec<Command>) {
        out.push(Command::CloseSource);
        if self.watchdog {
            self.watchdog = false;
            out.push(Command::DisarmTimer);
        }
    }

    fn arm_watchdog(&mut self, out: &mut Vec<Command>) {
        if self.config.stall_timeout_ms > 0 {
            self.watchdog = true;
            let tick = (self.config.stall_timeout_ms / WATCHDOG_TICKS).max(1);
            out.push(Command::ArmWatchdog { ms: tick });
        }
    }

    /// The open stream went silent (for `silent_ms`): as if it dropped.
    fn stalled(&mut self, silent_ms: u32, out: &mut Vec<Command>) {
        self.close_source(out);
        self.report(Cause::Stalled { silent_ms }, out);
        if self.phase == Phase::Open && self.delivered {
            self.stalls_in_a_row += 1;
            if self.stalls_in_a_row >= RECURRING_STALLS && !self.stalls_told {
                self.stalls_told = true;
                out.push(Command::StallsRecur {
                    stalls: self.stalls_in_a_row,
                });
            }
        } else {
            self.stalls_in_a_row = 0;
        }
        self.uptime_counts();
        self.phase = Phase::Failed;
        if self.config.mode == Reconnect::Never {
            self.give_up(Phase::Failed, out);
        } else {
            self.schedule(out);
        }
    }

    /// With `min_uptime_ms`, a connection that stayed open long enough resets the ladder when it ends.
    fn uptime_counts(&mut self) {
        if self.phase == Phase::Open
            && self.config.min_uptime_ms > 0
            && self.now - self.opened_at >= self.config.min_uptime_ms as f64
        {
            self.ladder.reset();
        }
    }

    /// What a probe's answer decides.
    fn probed(&mut self, status: Option<u16>, retry_after_ms: Option<u32>, out: &mut Vec<Command>) {
        match status {
            // No Content: the server says the stream is over, as the specification means it.
            Some(204) => {
                self.disarm_pause(out);
                self.phase = Phase::Closed;
                self.trace(Step::Closed { by_user: false }, out);
                self.set_status(Status::Closed, out);
            }
            Some(status @ (401 | 403)) => {
                self.stop_attempts(Phase::Stopped, out);
                out.push(Command::Unauthorized { status });
            }
            Some(404 | 410) => self.give_up(Phase::Stopped, out),
            _ => {
                if let (Some(429 | 503), Some(ms)) = (status, retry_after_ms) {
                    let (ms, source) = self.hint_cut(ms, Bound::RetryAfter);
                    self.ladder.hint_from(ms, source);
                }
                self.phase = Phase::Failed;
                if self.config.mode == Reconnect::Backoff {
                    self.schedule(out);
                } else {
                    self.give_up(Phase::Failed, out);
                }
            }
        }
    }

    /// Sends a probe (the source is closed and reported).
    fn probe(&mut self, out: &mut Vec<Command>) {
        self.phase = Phase::Probing;
        self.probe_id = self.probe_id.wrapping_add(1);
        out.push(Command::Probe { id: self.probe_id });
        self.trace(Step::Probe, out);
        self.set_status(Status::Reconnecting, out);
    }

    fn open(&mut self, trigger: Trigger, out: &mut Vec<Command>) {
        let first = self.phase == Phase::Idle;
        let mut resume = false;
        // A first connection has no id to carry, unless it takes over from another (see `resume_from`).
        let encoded_len = if self.config.resume {
            self.last_event_id.encoded_len()
        } else {
            0
        };
        if encoded_len != 0 {
            if encoded_len <= MAX_RESUME_ID {
                resume = true;
            } else {
                out.push(Command::ResumeIdDropped {
                    encoded_len: encoded_len.min(u32::MAX as usize) as u32,
                });
            }
        }
        self.resumed_from = self.last_event_id.clone();
        self.phase = Phase::Connecting;
        out.push(Command::OpenSource { resume });
        if self.config.connect_timeout_ms > 0 {
            self.watchdog = true;
            out.push(Command::ArmWatchdog {
                ms: self.config.connect_timeout_ms,
            });
        }
        self.trace(
            Step::Attempt {
                attempt: self.ladder.attempt(),
                trigger,
                resume,
            },
            out,
        );
        self.set_status(
            if first {
                Status::Connecting
            } else {
                Status::Reconnecting
            },
            out,
        );
        self.arm_pause(out);
    }

    /// The page is visible: a stream asleep reconnects at once (whatever `reconnectOnVisible` says, as the
    /// sleep was the client's own doing), a waiting or failed one with `reconnectOnVisible`.
    fn visible(&mut self, trigger: Trigger, out: &mut Vec<Command>) {
        self.hidden = false;
        self.disarm_pause(out);
        if self.phase == Phase::Asleep {
            self.ladder.reset();
            self.open(trigger, out);
        } else if self.config.wake_on_visible {
            self.wake(trigger, out);
        }
    }

    /// While the page is hidden, with `pause_when_hidden_ms`, arms the pause timer if it is not armed and
    /// there is something to pause.
    fn arm_pause(&mut self, out: &mut Vec<Command>) {
        if self.hidden
            && self.pausable()
            && self.config.pause_when_hidden_ms > 0
            && !self.pause_armed
        {
            self.pause_armed = true;
            out.push(Command::ArmPause {
                ms: self.config.pause_when_hidden_ms,
            });
        }
    }

    /// Whether there is something for a hidden page to pause: a source, or a wait or probe before the next.
    fn pausable(&self) -> bool {
        matches!(
            self.phase,
            Phase::Connecting | Phase::Open | Phase::Waiting | Phase::Paused | Phase::Probing
        )
    }

    fn disarm_pause(&mut self, out: &mut Vec<Command>) {
        if self.pause_armed {
            self.pause_armed = false;
            out.push(Command::DisarmPause);
        }
    }

    /// The page has been hidden long enough: close the stream, or stop waiting for the next attempt,
    /// until it is visible again. The status says `reconnecting` (nobody sees a hidden page), and no error
    /// is reported: the server did nothing wrong.
    fn sleep(&mut self, out: &mut Vec<Command>) {
        if !self.pausable() {
            return;
        }
        self.uptime_counts();
        self.stop_activity(out);
        self.phase = Phase::Asleep;
        self.trace(Step::Asleep, out);
        self.set_status(Status::Reconnecting, out);
    }

    fn wake(&mut self, trigger: Trigger, out: &mut Vec<Command>) {
        if self.config.mode == Reconnect::Never {
            return;
        }
        if matches!(self.phase, Phase::Waiting | Phase::Paused | Phase::Failed) {
            self.stop_activity(out);
            self.ladder.reset();
            self.open(trigger, out);
        }
    }

    /// The live attempt or connection failed (`cause`: an error, or the connect timeout).
    fn failed(&mut self, cause: Cause, out: &mut Vec<Command>) {
        if self.phase == Phase::Open {
            // An open stream that ended otherwise: the stalls before it were not in a row.
            self.stalls_in_a_row = 0;
        }
        self.uptime_counts();
        // A connect timeout is an attempt the shell ends: the browser will not retry it.
        let browser_gave_up = !matches!(
            cause,
            Cause::Error {
                browser_gave_up: false
            }
        );
        let probe = self.config.probe && browser_gave_up;
        match self.config.mode {
            Reconnect::Backoff => {
                self.close_source(out);
                self.report(cause, out);
                if probe {
                    return self.probe(out);
                }
                self.phase = Phase::Failed;
                self.schedule(out);
            }
            Reconnect::Browser => {
                if browser_gave_up {
                    self.close_source(out);
                    self.report(cause, out);
                    if probe {
                        return self.probe(out);
                    }
                    self.give_up(Phase::Failed, out);
                } else if self.ladder.next_delay(&mut self.rng).is_some() {
                    // The browser retries by itself; the draw only counts the attempt.
                    if self.watchdog {
                        self.watchdog = false;
                        out.push(Command::DisarmTimer);
                    }
                    self.report(cause, out);
                    self.phase = Phase::Connecting;
                    self.trace(
                        Step::Attempt {
                            attempt: self.ladder.attempt(),
                            trigger: Trigger::Browser,
                            resume: false,
                        },
                        out,
                    );
                    self.set_status(Status::Reconnecting, out);
                } else {
                    self.close_source(out);
                    self.report(cause, out);
                    self.give_up(Phase::Failed, out);
                }
            }
            Reconnect::Never => {
                self.close_source(out);
                self.report(cause, out);
                self.give_up(Phase::Failed, out);
            }
        }
    }

    /// With no source live, arms the timer for the next attempt, or gives up.
    fn schedule(&mut self, out: &mut Vec<Command>) {
        match self.ladder.next_draw(&mut self.rng) {
            Some(draw) => {
                let ms = draw.delay_ms;
                self.phase = Phase::Waiting;
                self.armed_at = self.now;
                self.armed_ms = ms;
                out.push(Command::ArmTimer { ms });
                self.trace(
                    Step::Wait {
                        attempt: self.ladder.attempt(),
                        draw,
                    },
                    out,
                );
                self.set_status(Status::Reconnecting, out);
                out.push(Command::RetryScheduled {
                    attempt: self.ladder.attempt(),
                    delay_ms: ms,
                });
            }
            None => self.give_up(Phase::Failed, out),
        }
    }

    /// No more attempts, in `phase`: [`Phase::Failed`] (a wake retries) or [`Phase::Stopped`] (only
    /// `RetryNow` does). Traced and told as status `failed`; the caller then says why.
    fn stop_attempts(&mut self, phase: Phase, out: &mut Vec<Command>) {
        self.phase = phase;
        self.trace(
            Step::GaveUp {
                attempts: self.ladder.attempt(),
            },
            out,
        );
        self.set_status(Status::Failed, out);
    }

    /// [`Machine::stop_attempts`], told as [`Command::GaveUp`].
    fn give_up(&mut self, phase: Phase, out: &mut Vec<Command>) {
        self.stop_attempts(phase, out);
        out.push(Command::GaveUp {
            attempts: self.ladder.attempt(),
        });
    }
}
