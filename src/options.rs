//! The options model, its defaults and its validation.
//!
//! Pure Rust: the browser shell reads a JavaScript object into [`Options`] (rejecting wrong types with a
//! `TypeError`), then calls [`Options::validate`], whose [`OptionError`] it throws as a `TypeError` or a
//! `RangeError` with [`OptionError::message`]. No message is built with `format!`.

use alloc::string::String;

use crate::ladder::{LadderConfig, Strategy, MAX_DELAY_MS};

/// Who reconnects after a dropped connection (seed 003's three modes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reconnect {
    /// Close the native source on every error and reconnect after the ladder's delay. The default.
    Backoff,
    /// Leave reconnecting to the browser (its `retry:` and `Last-Event-ID` apply); only report status.
    Browser,
    /// Never reconnect: the first error ends the stream (until `reconnectNow()`).
    Never,
}

/// The kind of JavaScript error an invalid option throws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The value has the wrong type or is not one of the allowed names.
    Type,
    /// The value is a number outside the allowed range.
    Range,
}

/// An invalid option: which one, and the rule it breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionError {
    /// `TypeError` or `RangeError`.
    pub kind: ErrorKind,
    /// The option's JavaScript name, e.g. `"baseMs"`.
    pub option: &'static str,
    /// The rule, phrased to follow the option's name, e.g. `"must be a finite number"`.
    pub rule: &'static str,
}

impl OptionError {
    /// A type error for `option`.
    pub const fn type_error(option: &'static str, rule: &'static str) -> Self {
        OptionError {
            kind: ErrorKind::Type,
            option,
            rule,
        }
    }

    /// A range error for `option`.
    pub const fn range_error(option: &'static str, rule: &'static str) -> Self {
        OptionError {
            kind: ErrorKind::Range,
            option,
            rule,
        }
    }

    /// The message a user sees: `"managed-eventsource: option baseMs must be a finite number"`.
    pub fn message(&self) -> String {
        let mut s = String::with_capacity(40 + self.option.len() + self.rule.len());
        s.push_str("managed-eventsource: option ");
        s.push_str(self.option);
        s.push(' ');
        s.push_str(self.rule);
        s
    }
}

impl core::fmt::Display for OptionError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.message())
    }
}

impl core::error::Error for OptionError {}

/// A string option's value as [`Options::validate`] checks it: the rules ask only whether it is empty and
/// whether it is one of a few names. Natively a `&str`; the browser shell checks the JavaScript strings as
/// they are, so that none is copied into wasm.
pub trait Text {
    /// Whether it is the empty string.
    fn is_empty(&self) -> bool;
    /// Whether it is `name`.
    fn is(&self, name: &str) -> bool;
}

impl Text for alloc::string::String {
    fn is_empty(&self) -> bool {
        str::is_empty(self)
    }

    fn is(&self, name: &str) -> bool {
        self == name
    }
}

impl Text for &str {
    fn is_empty(&self) -> bool {
        str::is_empty(self)
    }

    fn is(&self, name: &str) -> bool {
        *self == name
    }
}

/// Every option of the JavaScript API, with JavaScript's types (numbers are `f64`; the strings are `S`, see
/// [`Text`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Options<S = &'static str> {
    /// Passed to `EventSource`. Default `false`.
    pub with_credentials: bool,
    /// Who reconnects. Default [`Reconnect::Backoff`].
    pub reconnect: Reconnect,
    /// Jitter strategy. Default [`Strategy::Full`].
    pub jitter: Strategy,
    /// First cap of the ladder, ms. Default 1000.
    pub base_ms: f64,
    /// Largest delay of the ladder, ms. Default 60000; at most 2147483647.
    pub max_ms: f64,
    /// Growth per attempt. Default 2.
    pub factor: f64,
    /// Reconnect attempts in a row before status `failed`. Default infinity.
    pub max_attempts: f64,
    /// Query parameter that carries the last event id on each reconnect. Default none.
    pub last_event_id_param: Option<S>,
    /// Reconnect at once when the page becomes visible. Default `true`.
    pub reconnect_on_visible: bool,
    /// Reconnect at once when the browser comes back online. Default `true`.
    pub reconnect_on_online: bool,
    /// An event whose data is a delay in ms that the next reconnect waits at least (a server's retry
    /// hint, which a client that has taken over reconnecting cannot read from `retry:`). Default none.
    pub retry_hint_event: Option<S>,
    /// The longest wait a server may impose through a retry hint or `Retry-After`, ms. Default 600000 (ten
    /// minutes).
    pub max_hint_ms: f64,
    /// Probe a source the browser gave up on for its HTTP status. Default `false`.
    pub probe: bool,
    /// The URL to probe instead of the stream's own (`probe: 'url'`). Default none.
    pub probe_url: Option<S>,
    /// An open stream silent this long is treated as dropped, ms; 0 (the default) turns this off.
    pub stall_timeout_ms: f64,
    /// An event the server sends to show the stream is alive (comments are invisible). Default none.
    pub heartbeat_event: Option<S>,
    /// The ladder resets only after a connection has stayed open this long, ms; 0 (the default) resets it
    /// on open.
    pub min_uptime_ms: f64,
    /// A connection not open after this long counts as a failed attempt, ms; 0 (the default for
    /// `EventSource`; sockets default to 10000) waits as long as the browser does.
    pub connect_timeout_ms: f64,
    /// A page hidden this long closes its stream until it is visible again (then it reconnects at once,
    /// resuming), ms; 0 (the default) never does.
    pub pause_when_hidden_ms: f64,
}

/// How long a socket waits for its handshake by default (`connectTimeoutMs`): a server that accepts the
/// connection and never answers the upgrade is otherwise waited on for as long as the browser waits.
pub const SOCKET_CONNECT_TIMEOUT_MS: f64 = 10_000.0;

impl<S> Default for Options<S> {
    fn default() -> Self {
        let ladder = LadderConfig::default();
        Options {
            with_credentials: false,
            reconnect: Reconnect::Backoff,
            jitter: ladder.strategy,
            base_ms: ladder.base_ms,
            max_ms: ladder.max_ms,
            factor: ladder.factor,
            max_attempts: f64::INFINITY,
            last_event_id_param: None,
            reconnect_on_visible: true,
            reconnect_on_online: true,
            retry_hint_event: None,
            max_hint_ms: DEFAULT_MAX_HINT_MS as f64,
            probe: false,
            probe_url: None,
            stall_timeout_ms: 0.0,
            heartbeat_event: None,
            min_uptime_ms: 0.0,
            connect_timeout_ms: 0.0,
            pause_when_hidden_ms: 0.0,
        }
    }
}

/// The default of `maxHintMs`: a server may ask a client to wait at most ten minutes.
pub const DEFAULT_MAX_HINT_MS: u32 = 600_000;

/// Parses the `jitter` option. Only the four public names are accepted.
pub fn parse_jitter(name: &str) -> Result<Strategy, OptionError> {
    match Strategy::parse(name) {
        Some(s @ (Strategy::Full | Strategy::Equal | Strategy::Decorrelated | Strategy::None)) => {
            Ok(s)
        }
        _ => Err(OptionError::type_error(
            "jitter",
            "must be 'full', 'equal', 'decorrelated' or 'none'",
        )),
    }
}

/// The error for a `reconnect` value that is neither `'backoff'`, `'browser'` nor `false`.
pub const BAD_RECONNECT: OptionError =
    OptionError::type_error("reconnect", "must be 'backoff', 'browser' or false");

/// Parses a string value of the `reconnect` option (`false` is read by the shell as [`Reconnect::Never`]).
pub fn parse_reconnect(name: &str) -> Result<Reconnect, OptionError> {
    match name {
        "backoff" => Ok(Reconnect::Backoff),
        "browser" => Ok(Reconnect::Browser),
        _ => Err(BAD_RECONNECT),
    }
}

/// An event name to watch for: not empty, and not `open` or `error`, which are the connection's own events.
fn check_event_name(option: &'static str, value: &Option<impl Text>) -> Result<(), OptionError> {
    match value {
        Some(name) if name.is_empty() => Err(OptionError::type_error(
            option,
            "must be a non-empty string",
        )),
        Some(name) if name.is("open") || name.is("error") => Err(OptionError::type_error(
            option,
            "must not be 'open' or 'error', which are the connection's own events",
        )),
        _ => Ok(()),
    }
}

fn check_delay(option: &'static str, value: f64) -> Result<(), OptionError> {
    if !value.is_finite() {
        Err(OptionError::range_error(option, "must be a finite number"))
    } else if value < 0.0 {
        Err(OptionError::range_error(option, "must not be negative"))
    } else if value > MAX_DELAY_MS as f64 {
        Err(OptionError::range_error(
            option,
            "must be at most 2147483647 (the longest delay a browser timer honours)",
        ))
    } else {
        Ok(())
    }
}

impl<S: Text> Options<S> {
    /// Checks every rule and returns the ladder the options describe.
    ///
    /// Rules: `baseMs`, `maxMs`, `maxHintMs`, `stallTimeoutMs`, `minUptimeMs`, `connectTimeoutMs` and
    /// `pauseWhenHiddenMs` finite,
    /// not negative, at most 2147483647, and `maxMs` not below `baseMs`;
    /// `factor` finite and at least 1; `maxAttempts` a whole number, not negative, or `Infinity`;
    /// `lastEventIdParam`, `retryHintEvent`, `heartbeatEvent` and a probe URL not empty, and the two event
    /// names not `open` or `error`.
    pub fn validate(&self) -> Result<LadderConfig, OptionError> {
        check_delay("baseMs", self.base_ms)?;
        check_delay("maxMs", self.max_ms)?;
        check_delay("maxHintMs", self.max_hint_ms)?;
        check_delay("stallTimeoutMs", self.stall_timeout_ms)?;
        check_delay("minUptimeMs", self.min_uptime_ms)?;
        check_delay("connectTimeoutMs", self.connect_timeout_ms)?;
        check_delay("pauseWhenHiddenMs", self.pause_when_hidden_ms)?;
        if self.max_ms < self.base_ms {
            return Err(OptionError::range_error(
                "maxMs",
                "must not be less than baseMs",
            ));
        }
        if !self.factor.is_finite() {
            return Err(OptionError::range_error(
                "factor",
                "must be a finite number",
            ));
        }
        if self.factor < 1.0 {
            return Err(OptionError::range_error("factor", "must be at least 1"));
        }
        let m = self.max_attempts;
        // Every f64 from 2^52 up is whole; below, a cast round-trips only whole numbers (no `fract` in core).
        let fractional = m.is_finite() && m < 4_503_599_627_370_496.0 && m != (m as u64) as f64;
        if m.is_nan() || m < 0.0 || fractional {
            return Err(OptionError::range_error(
                "maxAttempts",
                "must be a whole number, 0 or more, or Infinity",
            ));
        }
        if matches!(&self.last_event_id_param, Some(p) if p.is_empty()) {
            return Err(OptionError::type_error(
                "lastEventIdParam",
                "must be a non-empty string",
            ));
        }
        check_event_name("retryHintEvent", &self.retry_hint_event)?;
        check_event_name("heartbeatEvent", &self.heartbeat_event)?;
        if matches!(&self.probe_url, Some(p) if p.is_empty()) {
            return Err(OptionError::type_error(
                "probe",
                "must be true, false or a non-empty URL",
            ));
        }
        Ok(LadderConfig {
            strategy: self.jitter,
            base_ms: self.base_ms,
            max_ms: self.max_ms,
            factor: self.factor,
            max_attempts: if m >= u32::MAX as f64 {
                None
            } else {
                Some(m as u32)
            },
        })
    }
}
