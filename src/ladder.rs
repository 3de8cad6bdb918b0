//! The backoff ladder: how long to wait before reconnect attempt `n`.
//!
//! For attempt `n` (1 for the first retry) the exponential cap is
//! `cap(n) = min(max_ms, base_ms * factor^(n-1))`, and each [`Strategy`] draws the delay from it:
//!
//! | strategy | delay |
//! | --- | --- |
//! | [`Strategy::None`] | `cap(n)` |
//! | [`Strategy::Full`] | uniform in `[0, cap(n)]` |
//! | [`Strategy::Equal`] | `cap(n)/2` + uniform in `[0, cap(n)/2]` |
//! | [`Strategy::Decorrelated`] | `min(max_ms, uniform in [base_ms, previous * 3])` |
//! | [`Strategy::Fixed`] | `base_ms` |
//! | [`Strategy::Linear`] | `min(max_ms, base_ms * n)` |
//!
//! Randomness is passed in through [`Random`], so that tests are exact and the browser seeds once.
//! Nothing here formats a float or panics.
//!
//! ```
//! use managed_eventsource::ladder::{Ladder, LadderConfig, SplitMix64, Strategy};
//!
//! let config = LadderConfig { strategy: Strategy::None, max_attempts: Some(4), ..LadderConfig::default() };
//! let mut ladder = Ladder::new(config);
//! let mut rng = SplitMix64::new(7);
//! let delays: Vec<u32> = ladder.delays(&mut rng).collect();
//! assert_eq!(delays, [1000, 2000, 4000, 8000]);
//! ```

/// The longest delay a browser timer honours: `setTimeout` fires at once for anything above `2^31 - 1` ms.
pub const MAX_DELAY_MS: u32 = 2_147_483_647;

/// A source of uniformly distributed random bits.
pub trait Random {
    /// The next 64 random bits.
    fn next_u64(&mut self) -> u64;

    /// A uniform draw from `[0, 1)`, with 53 bits of precision.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// SplitMix64: a small, fast, seedable generator; good enough to decorrelate reconnect delays.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose whole sequence is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }
}

impl Random for SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// How a delay is drawn from the exponential cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// No jitter: always the cap. Clients dropped together stay in lock-step.
    None,
    /// Full jitter: uniform in `[0, cap]`. The flattest recovery; the default.
    Full,
    /// Equal jitter: half the cap fixed, half random. Keeps a floor under each retry.
    Equal,
    /// Decorrelated jitter: grows from the previous delay, `uniform[base, previous * 3]`, capped.
    Decorrelated,
    /// Always `base_ms` (a browser's own fixed retry), for comparisons.
    Fixed,
    /// `base_ms * n`, capped, for comparisons.
    Linear,
}

impl Strategy {
    /// Every strategy, in the order tables print them.
    pub const ALL: [Strategy; 6] = [
        Strategy::None,
        Strategy::Full,
        Strategy::Equal,
        Strategy::Decorrelated,
        Strategy::Fixed,
        Strategy::Linear,
    ];

    /// The strategy's name as the JavaScript options spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::None => "none",
            Strategy::Full => "full",
            Strategy::Equal => "equal",
            Strategy::Decorrelated => "decorrelated",
            Strategy::Fixed => "fixed",
            Strategy::Linear => "linear",
        }
    }

    /// The strategy with this name, if any.
    pub fn parse(name: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

/// The ladder's parameters. Validate user input with [`crate::options::Options::validate`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LadderConfig {
    /// How each delay is drawn. Default [`Strategy::Full`].
    pub strategy: Strategy,
    /// The first cap, in milliseconds. Default 1000.
    pub base_ms: f64,
    /// The largest delay the ladder itself produces, in milliseconds. Default 60000.
    pub max_ms: f64,
    /// Growth per attempt. Default 2.
    pub factor: f64,
    /// Reconnect attempts in a row before giving up; `None` never gives up. Default `None`.
    pub max_attempts: Option<u32>,
}

impl Default for LadderConfig {
    fn default() -> Self {
        LadderConfig {
            strategy: Strategy::Full,
            base_ms: 1000.0,
            max_ms: 60000.0,
            factor: 2.0,
            max_attempts: None,
        }
    }
}

impl LadderConfig {
    /// The exponential cap for attempt `n` (1-based): `min(max_ms, base_ms * factor^(n-1))`.
    pub fn cap(&self, attempt: u32) -> f64 {
        if self.base_ms <= 0.0 {
            return 0.0;
        }
        let cap = self.base_ms * powi(self.factor, attempt.saturating_sub(1).min(2048));
        // An overflow to infinity (or NaN) lands on the cap.
        if cap < self.max_ms {
            cap
        } else {
            self.max_ms
        }
    }
}

/// `base^exp` by squaring (`f64::powi` is not in `core`).
fn powi(mut base: f64, mut exp: u32) -> f64 {
    let mut acc = 1.0;
    while exp > 0 {
        if exp & 1 == 1 {
            acc *= base;
        }
        base *= base;
        exp >>= 1;
    }
    acc
}

/// What set a delay's size (see [`Draw`]): the ladder itself, or the server's ask it rested on. Numbered in
/// the order of [`Bound::ALL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Bound {
    /// The ladder's draw under its exponential cap.
    Ladder,
    /// The ladder's draw, its cap held at `max_ms`.
    MaxMs,
    /// The server's `retry:` field (a [`Ladder::floor`]) plus the draw.
    Retry,
    /// A `Retry-After` header of a 429 or 503 plus the draw.
    RetryAfter,
    /// A retry hint event (a [`Ladder::hint`]) plus the draw.
    Hint,
    /// A server's ask cut to the longest a hint may impose (`maxHintMs`), plus the draw.
    MaxHintMs,
}

impl Bound {
    /// Every bound, in the order of their numbers.
    pub const ALL: [Bound; 6] = [
        Bound::Ladder,
        Bound::MaxMs,
        Bound::Retry,
        Bound::RetryAfter,
        Bound::Hint,
        Bound::MaxHintMs,
    ];

    /// The bound's name in the JavaScript trace.
    pub fn as_str(self) -> &'static str {
        match self {
            Bound::Ladder => "ladder",
            Bound::MaxMs => "maxMs",
            Bound::Retry => "retry",
            Bound::RetryAfter => "retryAfter",
            Bound::Hint => "hint",
            Bound::MaxHintMs => "maxHintMs",
        }
    }
}

/// One delay as [`Ladder::next_draw`] drew it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Draw {
    /// The delay, ms: `ladder_ms` plus the server's ask, if any.
    pub delay_ms: u32,
    /// The ladder's own draw, ms.
    pub ladder_ms: u32,
    /// What set the delay's size.
    pub bound: Bound,
}

/// The ladder's state: the attempt counter, the previous delay and any pending server hint.
#[derive(Clone, Debug)]
pub struct Ladder {
    config: LadderConfig,
    attempt: u32,
    previous_ms: f64,
    hint_ms: u32,
    /// Where the pending hint came from.
    hint_bound: Bound,
    /// The server's `retry:` field (see [`Ladder::floor`]): not spent, and not reset.
    floor_ms: u32,
    /// Where the floor came from.
    floor_bound: Bound,
}

impl Ladder {
    /// A fresh ladder at attempt 0.
    pub fn new(config: LadderConfig) -> Self {
        Ladder {
            config,
            attempt: 0,
            previous_ms: config.base_ms,
            hint_ms: 0,
            hint_bound: Bound::Hint,
            floor_ms: 0,
            floor_bound: Bound::Retry,
        }
    }

    /// The parameters this ladder was built with.
    pub fn config(&self) -> &LadderConfig {
        &self.config
    }

    /// Reconnect attempts drawn since the last reset: 0 while connected.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// Whether another attempt is allowed before giving up.
    pub fn exhausted(&self) -> bool {
        matches!(self.config.max_attempts, Some(max) if self.attempt >= max)
    }

    /// Back to attempt 0, forgetting the previous delay and any pending hint.
    pub fn reset(&mut self) {
        self.attempt = 0;
        self.previous_ms = self.config.base_ms;
        self.hint_ms = 0;
    }

    /// A server asked the next reconnect to wait at least `ms`. The next delay becomes `ms` plus the
    /// ladder's own draw (so a population told the same value still spreads), and the hint is then spent.
    pub fn hint(&mut self, ms: u32) {
        self.hint_from(ms, Bound::Hint);
    }

    /// [`Ladder::hint`], saying where the hint came from ([`Bound::RetryAfter`], [`Bound::MaxHintMs`]...)
    /// for the [`Draw`] it sets. The larger of two pending hints wins, and its source with it.
    pub fn hint_from(&mut self, ms: u32, source: Bound) {
        if ms > self.hint_ms {
            self.hint_ms = ms;
            self.hint_bound = source;
        }
    }

    /// The server's reconnection time (an event stream's `retry:` field) is `ms`: every later delay rests
    /// on it, `ms` plus the ladder's own draw, until another field changes it (0 removes it). Unlike a
    /// [`Ladder::hint`] it is not spent by one delay, and [`Ladder::reset`] keeps it, as an `EventSource`
    /// keeps its reconnection time for as long as it lives. A pending hint larger than it wins.
    pub fn floor(&mut self, ms: u32) {
        self.floor_from(ms, Bound::Retry);
    }

    /// [`Ladder::floor`], saying where the floor came from ([`Bound::Retry`], or [`Bound::MaxHintMs`] for
    /// one cut to the longest allowed) for the [`Draw`]s it sets.
    pub fn floor_from(&mut self, ms: u32, source: Bound) {
        self.floor_ms = ms;
        self.floor_bound = source;
    }

    /// The delay before the next reconnect attempt, in milliseconds, or `None` once `max_attempts` reconnect
    /// attempts have been drawn in a row. Advances the attempt counter.
    pub fn next_delay<R: Random + ?Sized>(&mut self, rng: &mut R) -> Option<u32> {
        self.next_draw(rng).map(|d| d.delay_ms)
    }

    /// [`Ladder::next_delay`], with the ladder's own part of the delay and what set its size.
    pub fn next_draw<R: Random + ?Sized>(&mut self, rng: &mut R) -> Option<Draw> {
        if self.exhausted() {
            return None;
        }
        self.attempt = self.attempt.saturating_add(1);
        let c = &self.config;
        let cap = c.cap(self.attempt);
        let (drawn, capped) = match c.strategy {
            Strategy::None => (cap, cap >= c.max_ms),
            Strategy::Full => (rng.unit() * cap, cap >= c.max_ms),
            Strategy::Equal => {
                let half = cap / 2.0;
                (half + rng.unit() * half, cap >= c.max_ms)
            }
            Strategy::Decorrelated => {
                let upper = self.previous_ms * 3.0;
                let d = c.base_ms + rng.unit() * (upper - c.base_ms);
                if d < c.max_ms {
                    (d, false)
                } else {
                    (c.max_ms, true)
                }
            }
            Strategy::Fixed => (c.base_ms, false),
            Strategy::Linear => {
                let d = c.base_ms * self.attempt as f64;
                if d < c.max_ms {
                    (d, false)
                } else {
                    (c.max_ms, true)
                }
            }
        };
        self.previous_ms = drawn;
        // `as` saturates and maps NaN to 0; validated configs never produce NaN.
        let ladder_ms = (drawn as u32).min(MAX_DELAY_MS);
        let hint_ms = core::mem::take(&mut self.hint_ms);
        let own = if capped { Bound::MaxMs } else { Bound::Ladder };
        Some(if hint_ms == 0 && self.floor_ms == 0 {
            Draw {
                delay_ms: ladder_ms,
                ladder_ms,
                bound: own,
            }
        } else {
            // A pending hint larger than the floor wins.
            let (ask, bound) = if hint_ms > self.floor_ms {
                (hint_ms, self.hint_bound)
            } else {
                (self.floor_ms, self.floor_bound)
            };
            Draw {
                delay_ms: ask.saturating_add(ladder_ms).min(MAX_DELAY_MS),
                ladder_ms,
                bound,
            }
        })
    }

    /// The remaining delays as an iterator, in the style of `backon`: `None` means give up.
    pub fn delays<'a, R: Random + ?Sized>(&'a mut self, rng: &'a mut R) -> Delays<'a, R> {
        Delays { ladder: self, rng }
    }
}

/// Iterator over a ladder's delays; see [`Ladder::delays`].
pub struct Delays<'a, R: ?Sized> {
    ladder: &'a mut Ladder,
    rng: &'a mut R,
}

impl<R: Random + ?Sized> Iterator for Delays<'_, R> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        self.ladder.next_delay(self.rng)
    }
}
