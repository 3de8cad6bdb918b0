//! A population simulator that runs the library's own [`Ladder`] for many clients.
//!
//! Every client loses its connection at `t = 0` and reconnects through its ladder, as the browser client
//! does. The server is down for `outage_ms` (every attempt fails), then admits through an [`Admission`]
//! policy; a rejected attempt fails and goes back on the ladder. With [`Hints`], a rejection is seed 001's
//! soft shedding (200, a jittered retry hint, end): the client's connection opened, so its ladder resets,
//! and the next delay is at least the hint, exactly as [`crate::machine::Machine`] handles it.
//!
//! Event-driven: a priority queue of next attempts, so the cost grows with attempts, not with time or
//! clients × ticks. Seeded, so a run is repeatable.
//!
//! ```
//! use managed_eventsource::storm::{Admission, Scenario, simulate};
//! use managed_eventsource::ladder::Strategy;
//!
//! let mut s = Scenario::new(1000, Strategy::None);
//! s.outage_ms = 10_000;
//! let out = simulate(&s);
//! // No jitter: every client arrives in the same second, every time.
//! assert_eq!(out.peak(), 1000);
//! assert_eq!(out.connected, 1000);
//! ```

use alloc::collections::BinaryHeap;
use alloc::vec;
use alloc::vec::Vec;
use core::cmp::Reverse;

use crate::ladder::{Ladder, LadderConfig, Random, SplitMix64, Strategy};

/// How the recovered server admits connections.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Admission {
    /// Everyone who arrives after the outage connects.
    Unlimited,
    /// At most `capacity` connections per `window_ms` (per second, or per tick as in seed 004).
    PerWindow {
        /// Connections admitted per window.
        capacity: u32,
        /// Window length in ms.
        window_ms: u64,
    },
    /// A token bucket (seed 001, step 4): `rate` tokens a second, at most `burst` saved up.
    TokenBucket {
        /// Tokens added per second.
        rate: f64,
        /// Bucket size; it starts full when the service returns.
        burst: f64,
    },
}

/// Soft shedding: a rejection is a 200 with a retry hint, then the end of the stream.
///
/// Seed 001's hints are random: `base_ms + uniform[0, spread_ms)`. A `paced` server instead gives each
/// rejected client a slot: its place in line divided by the admission rate, plus `base_ms` and a spread of
/// `uniform[0, spread_ms)`; the line is the slots handed out that are still ahead.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hints {
    /// Shortest hinted delay (paced: added to the slot).
    pub base_ms: u32,
    /// Random spread added to it.
    pub spread_ms: u32,
    /// Hints are slots in line, not random delays.
    pub paced: bool,
}

/// One simulated incident.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Clients dropped at `t = 0`.
    pub clients: u32,
    /// Each client's ladder.
    pub ladder: LadderConfig,
    /// How long every attempt fails.
    pub outage_ms: u64,
    /// How the recovered server admits.
    pub admission: Admission,
    /// Soft rejections with retry hints, or hard failures (`None`).
    pub hints: Option<Hints>,
    /// If not 0, attempts happen on tick boundaries of this length (seed 004's model).
    pub tick_ms: u64,
    /// Histogram resolution for arrivals.
    pub bucket_ms: u64,
    /// Stop simulating here.
    pub horizon_ms: u64,
    /// Seed of the one random stream all clients draw from.
    pub seed: u64,
    /// For this long after the outage the server flaps: it accepts every connection and drops it at once.
    pub flap_ms: u64,
    /// The clients' `minUptimeMs`: a connection that lasted less does not reset the ladder (0: every
    /// open resets it, the seeds' behaviour).
    pub min_uptime_ms: u64,
    /// With paced hints: a front (a load balancer, the edge) stays up while the service restarts and
    /// answers every attempt during the outage with a slot after it, so no client waits out a long rung of
    /// its ladder. Without it, a refused connection during the outage is all a client learns.
    pub paced_front: bool,
}

impl Scenario {
    /// `clients` clients with the default ladder (base 1 s, cap 60 s, factor 2) and `strategy`; no outage,
    /// unlimited admission, one-second buckets, a one-hour horizon.
    pub fn new(clients: u32, strategy: Strategy) -> Self {
        Scenario {
            clients,
            ladder: LadderConfig {
                strategy,
                ..LadderConfig::default()
            },
            outage_ms: 0,
            admission: Admission::Unlimited,
            hints: None,
            tick_ms: 0,
            bucket_ms: 1000,
            horizon_ms: 3_600_000,
            seed: 1,
            flap_ms: 0,
            min_uptime_ms: 0,
            paced_front: false,
        }
    }

    /// Seed 004's model: `clients` clients on a ladder of `base_ms` (cap 30 s) and `strategy`; the server
    /// accepts `capacity` requests per tick of `tick_ms`, and requests go out on tick boundaries.
    pub fn ticked(
        clients: u32,
        strategy: Strategy,
        base_ms: f64,
        capacity: u32,
        tick_ms: u64,
    ) -> Self {
        let mut s = Scenario::new(clients, strategy);
        s.ladder.base_ms = base_ms;
        s.ladder.max_ms = 30_000.0f64.max(base_ms);
        s.tick_ms = tick_ms;
        s.admission = Admission::PerWindow {
            capacity,
            window_ms: tick_ms,
        };
        s
    }
}

/// What happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Connection attempts, all clients together.
    pub attempts: u64,
    /// Attempts made while the server was down.
    pub attempts_during_outage: u64,
    /// Attempts the recovered server turned away (wasted requests).
    pub rejected: u64,
    /// Connections a flapping server accepted and dropped at once.
    pub flapped: u64,
    /// Clients connected by the end.
    pub connected: u32,
    /// Clients whose ladder gave up (`max_attempts`).
    pub gave_up: u32,
    /// When the last client connected, if all did.
    pub all_connected_ms: Option<u64>,
    /// Attempts per bucket, from `t = 0`.
    pub arrivals: Vec<u32>,
    /// Connections admitted per bucket.
    pub admitted: Vec<u32>,
    /// The bucket length.
    pub bucket_ms: u64,
}

impl Outcome {
    /// The most attempts in one bucket.
    pub fn peak(&self) -> u32 {
        self.arrivals.iter().copied().max().unwrap_or(0)
    }

    /// The most attempts in one bucket at or after `from_ms`.
    pub fn peak_from(&self, from_ms: u64) -> u32 {
        let first = (from_ms / self.bucket_ms) as usize;
        self.arrivals.iter().skip(first).copied().max().unwrap_or(0)
    }

    /// Peak over median attempts per bucket across the active window (first to last bucket with an
    /// attempt, quiet buckets included); `f64::INFINITY` when the median is 0 (a pure spike train).
    pub fn peak_to_median(&self) -> f64 {
        let first = self.arrivals.iter().position(|&a| a > 0);
        let last = self.arrivals.iter().rposition(|&a| a > 0);
        let (Some(first), Some(last)) = (first, last) else {
            return 0.0;
        };
        let mut window: Vec<u32> = self.arrivals[first..=last].to_vec();
        window.sort_unstable();
        let median = window[window.len() / 2];
        if median == 0 {
            f64::INFINITY
        } else {
            self.peak() as f64 / median as f64
        }
    }
}

/// The recovered server's admission state.
struct Server {
    admission: Admission,
    window: u64,
    in_window: u32,
    tokens: f64,
    last_ms: u64,
    /// A paced server: the next free slot, ms.
    next_slot: f64,
}

impl Server {
    fn new(admission: Admission, start_ms: u64) -> Self {
        let tokens = match admission {
            Admission::TokenBucket { burst, .. } => burst,
            _ => 0.0,
        };
        Server {
            admission,
            window: u64::MAX,
            in_window: 0,
            tokens,
            last_ms: start_ms,
            next_slot: 0.0,
        }
    }

    /// Admissions a millisecond.
    fn rate_per_ms(&self) -> f64 {
        match self.admission {
            Admission::Unlimited => f64::INFINITY,
            Admission::PerWindow {
                capacity,
                window_ms,
            } => capacity as f64 / window_ms.max(1) as f64,
            Admission::TokenBucket { rate, .. } => rate / 1000.0,
        }
    }

    /// A paced server's hint for a client turned away at `t`: the wait until its slot in line, which is
    /// never before `open_ms` (when the service takes connections).
    fn slot(&mut self, t: u64, open_ms: u64) -> u32 {
        let slot = self.next_slot.max(t.max(open_ms) as f64);
        self.next_slot = slot + 1.0 / self.rate_per_ms();
        (slot - t as f64) as u32
    }

    /// Attempts come in time order.
    fn admit(&mut self, t: u64) -> bool {
        match self.admission {
            Admission::Unlimited => true,
            Admission::PerWindow {
                capacity,
                window_ms,
            } => {
                let w = t / window_ms.max(1);
                if w != self.window {
                    self.window = w;
                    self.in_window = 0;
                }
                if self.in_window < capacity {
                    self.in_window += 1;
                    true
                } else {
                    false
                }
            }
            Admission::TokenBucket { rate, burst } => {
                let elapsed = t.saturating_sub(self.last_ms) as f64 / 1000.0;
                self.tokens = (self.tokens + elapsed * rate).min(burst);
                self.last_ms = t;
                if self.tokens >= 1.0 {
                    self.tokens -= 1.0;
                    true
                } else {
                    false
                }
            }
        }
    }
}

/// Pending attempts in time order: a ring of one-millisecond slots covering the next `span` ms, and a heap
/// for anything further out. Push and pop are O(1) on the ring, which is what makes a million clients
/// cheap; within one millisecond, attempts come out first in, first out.
struct Agenda {
    ring: Vec<Vec<u32>>,
    mask: u64,
    /// The time of the slot being drained; every ring entry lies in `[now, now + span)`.
    now: u64,
    /// How far into the current slot we are.
    pos: usize,
    in_ring: usize,
    far: BinaryHeap<Reverse<(u64, u32)>>,
}

impl Agenda {
    fn new(span_hint: u64) -> Self {
        let span = (span_hint + 1).next_power_of_two().clamp(1 << 10, 1 << 18);
        Agenda {
            ring: vec![Vec::new(); span as usize],
            mask: span - 1,
            now: 0,
            pos: 0,
            in_ring: 0,
            far: BinaryHeap::new(),
        }
    }

    fn len(&self) -> usize {
        self.in_ring + self.far.len()
    }

    fn push(&mut self, t: u64, client: u32) {
        let t = t.max(self.now);
        if t - self.now <= self.mask {
            self.ring[(t & self.mask) as usize].push(client);
            self.in_ring += 1;
        } else {
            self.far.push(Reverse((t, client)));
        }
    }

    /// The earliest pending attempt at or before `limit`.
    fn pop_until(&mut self, limit: u64) -> Option<(u64, u32)> {
        loop {
            if self.in_ring == 0 {
                // Nothing near: jump straight to the next far attempt.
                let &Reverse((t, _)) = self.far.peek()?;
                if t > limit {
                    return None;
                }
                self.ring[(self.now & self.mask) as usize].clear();
                self.now = t;
                self.pos = 0;
            }
            while let Some(&Reverse((t, client))) = self.far.peek() {
                if t - self.now > self.mask {
                    break;
                }
                self.far.pop();
                self.ring[(t & self.mask) as usize].push(client);
                self.in_ring += 1;
            }
            if self.now > limit {
                return None;
            }
            let slot = &mut self.ring[(self.now & self.mask) as usize];
            if let Some(&client) = slot.get(self.pos) {
                self.pos += 1;
                self.in_ring -= 1;
                return Some((self.now, client));
            }
            slot.clear();
            self.pos = 0;
            self.now += 1;
        }
    }
}

/// A simulation that can be advanced step by step (the demo draws it) or run to the end ([`simulate`]).
pub struct Simulation {
    scenario: Scenario,
    rng: SplitMix64,
    ladders: Vec<Ladder>,
    state: Vec<ClientState>,
    queue: Agenda,
    server: Server,
    now_ms: u64,
    outcome: Outcome,
    /// When recording: the attempts of the last `advance_to`, with whether each was admitted.
    recent: Option<Vec<(u32, bool)>>,
}

/// Where one client is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ClientState {
    /// Waiting out its ladder's delay.
    BackingOff = 0,
    /// Connected.
    Connected = 1,
    /// Gave up after `max_attempts`.
    GaveUp = 2,
}

impl Simulation {
    /// Drops every client at `t = 0` and schedules its first reconnect.
    pub fn new(scenario: Scenario) -> Self {
        let n = scenario.clients as usize;
        let mut sim = Simulation {
            rng: SplitMix64::new(scenario.seed),
            ladders: vec![Ladder::new(scenario.ladder); n],
            state: vec![ClientState::BackingOff; n],
            queue: Agenda::new(
                scenario.ladder.max_ms as u64
                    + scenario
                        .hints
                        .map_or(0, |h| (h.base_ms + h.spread_ms) as u64),
            ),
            server: Server::new(scenario.admission, scenario.outage_ms),
            now_ms: 0,
            recent: None,
            outcome: Outcome {
                attempts: 0,
                attempts_during_outage: 0,
                rejected: 0,
                flapped: 0,
                connected: 0,
                gave_up: 0,
                all_connected_ms: None,
                arrivals: Vec::new(),
                admitted: Vec::new(),
                bucket_ms: scenario.bucket_ms.max(1),
            },
            scenario,
        };
        for i in 0..n as u32 {
            sim.schedule(i, 0);
        }
        sim
    }

    fn schedule(&mut self, client: u32, from_ms: u64) {
        let ladder = &mut self.ladders[client as usize];
        match ladder.next_delay(&mut self.rng) {
            Some(d) => {
                let mut t = from_ms + d as u64;
                let q = self.scenario.tick_ms;
                if q > 0 {
                    // The request goes out on a tick boundary, never in the tick that just failed.
                    t = t.div_ceil(q).max(from_ms / q + 1) * q;
                }
                self.queue.push(t, client);
            }
            None => {
                self.state[client as usize] = ClientState::GaveUp;
                self.outcome.gave_up += 1;
            }
        }
    }

    fn count(v: &mut Vec<u32>, bucket: usize) {
        if v.len() <= bucket {
            v.resize(bucket + 1, 0);
        }
        v[bucket] += 1;
    }

    /// Keeps the attempts of each `advance_to` for [`Simulation::recent`] (for drawing requests in flight).
    pub fn record(&mut self, on: bool) {
        self.recent = on.then(Vec::new);
    }

    /// The attempts of the last `advance_to`, when recording: `(client, admitted)`.
    pub fn recent(&self) -> &[(u32, bool)] {
        self.recent.as_deref().unwrap_or(&[])
    }

    /// Processes every attempt up to and including `t_ms`; returns how many there were.
    pub fn advance_to(&mut self, t_ms: u64) -> u32 {
        let mut n = 0;
        if let Some(r) = self.recent.as_mut() {
            r.clear();
        }
        let horizon = self.scenario.horizon_ms;
        while let Some((t, client)) = self.queue.pop_until(t_ms.min(horizon)) {
            n += 1;
            let bucket = (t / self.outcome.bucket_ms) as usize;
            Self::count(&mut self.outcome.arrivals, bucket);
            self.outcome.attempts += 1;
            let down = t < self.scenario.outage_ms;
            if !down && t < self.scenario.outage_ms + self.scenario.flap_ms {
                // Accepted and dropped at once: the connection opened, for no time at all.
                self.outcome.flapped += 1;
                let ladder = &mut self.ladders[client as usize];
                if self.scenario.min_uptime_ms == 0 {
                    ladder.reset();
                }
                self.schedule(client, t);
                continue;
            }
            let admitted = !down && self.server.admit(t);
            if let Some(r) = self.recent.as_mut() {
                r.push((client, admitted));
            }
            if admitted {
                Self::count(&mut self.outcome.admitted, bucket);
                self.state[client as usize] = ClientState::Connected;
                self.outcome.connected += 1;
                if self.outcome.connected == self.scenario.clients {
                    self.outcome.all_connected_ms = Some(t);
                }
                continue;
            }
            if down {
                self.outcome.attempts_during_outage += 1;
                if let Some(h) = self
                    .scenario
                    .hints
                    .filter(|h| h.paced && self.scenario.paced_front)
                {
                    // The front answers: a 200 with the client's slot after the restart.
                    let slot = self.server.slot(t, self.scenario.outage_ms);
                    let ladder = &mut self.ladders[client as usize];
                    if self.scenario.min_uptime_ms == 0 {
                        ladder.reset();
                    }
                    let spread = (self.rng.unit() * h.spread_ms as f64) as u32;
                    ladder.hint(slot + h.base_ms + spread);
                }
            } else {
                self.outcome.rejected += 1;
                if let Some(h) = self.scenario.hints {
                    let slot = if h.paced { self.server.slot(t, 0) } else { 0 };
                    let ladder = &mut self.ladders[client as usize];
                    // The soft rejection opened (a 200): the ladder resets (with min_uptime, it does not:
                    // the connection lasted no time), then the hint applies.
                    if self.scenario.min_uptime_ms == 0 {
                        ladder.reset();
                    }
                    let spread = (self.rng.unit() * h.spread_ms as f64) as u32;
                    ladder.hint(slot + h.base_ms + spread);
                }
            }
            self.schedule(client, t);
        }
        self.now_ms = self.now_ms.max(t_ms.min(horizon));
        n
    }

    /// Runs until every client has connected or given up, or the horizon.
    pub fn run(mut self) -> Outcome {
        self.advance_to(u64::MAX);
        self.outcome
    }

    /// The simulated time reached.
    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    /// Each client's state, one byte each (see [`ClientState`]).
    pub fn states(&self) -> &[ClientState] {
        &self.state
    }

    /// The ladder attempt each client is on.
    pub fn attempt_of(&self, client: u32) -> u32 {
        self.ladders[client as usize].attempt()
    }

    /// The results so far.
    pub fn outcome(&self) -> &Outcome {
        &self.outcome
    }

    /// Whether no attempt is pending.
    pub fn finished(&self) -> bool {
        self.queue.len() == 0
    }
}

/// Runs `scenario` to the end.
pub fn simulate(scenario: &Scenario) -> Outcome {
    Simulation::new(scenario.clone()).run()
}
