//! The storm simulator for the demo page (cargo feature `demo`; not in the library's own package).

use alloc::string::String;
use alloc::vec::Vec;
use wasm_bindgen::prelude::*;

use crate::options::{parse_jitter, OptionError, Options};
use crate::storm::{ClientState, Scenario, Simulation};

/// Seed 004's model, stepped one server tick at a time.
#[wasm_bindgen]
pub struct StormSim {
    sim: Simulation,
    tick_ms: u64,
    tick: u64,
}

#[wasm_bindgen]
impl StormSim {
    /// `clients` clients dropped at tick 0, reconnecting through a ladder of `base_ms` (cap 30 s) and
    /// `strategy`; the server accepts `capacity` requests per tick of `tick_ms`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        clients: u32,
        base_ms: f64,
        capacity: u32,
        tick_ms: u32,
        #[wasm_bindgen(unchecked_param_type = "Jitter")] strategy: String,
        seed: u32,
    ) -> Result<StormSim, JsValue> {
        if clients == 0 || clients > 1_000_000 {
            return Err(super::throw(OptionError::range_error(
                "clients",
                "must be 1 to 1000000",
            )));
        }
        if capacity == 0 || tick_ms == 0 {
            return Err(super::throw(OptionError::range_error(
                "capacity",
                "and tickMs must be at least 1",
            )));
        }
        // The same rules as the client's options, so bad slider values get the same errors.
        let options = Options::<&str> {
            jitter: parse_jitter(&strategy).map_err(super::throw)?,
            base_ms,
            ..Options::default()
        };
        options.validate().map_err(super::throw)?;
        let mut scenario =
            Scenario::ticked(clients, options.jitter, base_ms, capacity, tick_ms as u64);
        scenario.bucket_ms = 1000;
        scenario.seed = seed as u64;
        let mut sim = Simulation::new(scenario);
        sim.record(true);
        Ok(StormSim {
            sim,
            tick_ms: tick_ms as u64,
            tick: 0,
        })
    }

    /// Advances one tick; returns the requests the server saw in it.
    pub fn step(&mut self) -> u32 {
        self.tick += 1;
        self.sim.advance_to(self.tick * self.tick_ms)
    }

    /// Runs until everyone is connected; returns the ticks it took.
    #[wasm_bindgen(js_name = runToEnd)]
    pub fn run_to_end(&mut self) -> u32 {
        while !self.sim.finished() {
            self.step();
        }
        self.tick as u32
    }

    /// One byte per client: 0 backing off, 1 connected, 2 gave up.
    pub fn states(&self) -> Vec<u8> {
        self.sim.states().iter().map(|&s| s as u8).collect()
    }

    /// The last tick's requests, flat: client, admitted (1) or rejected (0), client, ...
    pub fn recent(&self) -> Vec<u32> {
        self.sim
            .recent()
            .iter()
            .flat_map(|&(c, ok)| [c, ok as u32])
            .collect()
    }

    /// Requests per second since tick 0.
    pub fn arrivals(&self) -> Vec<u32> {
        self.sim.outcome().arrivals.clone()
    }

    /// Ticks so far.
    #[wasm_bindgen(getter)]
    pub fn tick(&self) -> u32 {
        self.tick as u32
    }

    /// Clients connected.
    #[wasm_bindgen(getter)]
    pub fn connected(&self) -> u32 {
        self.sim.outcome().connected
    }

    /// Requests the server turned away.
    #[wasm_bindgen(getter)]
    pub fn wasted(&self) -> u32 {
        self.sim.outcome().rejected as u32
    }

    /// Whether nothing is pending.
    #[wasm_bindgen(getter)]
    pub fn finished(&self) -> bool {
        self.sim.finished()
    }

    /// The mean ladder attempt of the clients still backing off (0 when none are).
    #[wasm_bindgen(getter, js_name = meanAttempt)]
    pub fn mean_attempt(&self) -> f64 {
        let (mut n, mut sum) = (0u32, 0u64);
        for (i, s) in self.sim.states().iter().enumerate() {
            if *s == ClientState::BackingOff {
                n += 1;
                sum += self.sim.attempt_of(i as u32) as u64;
            }
        }
        if n == 0 {
            0.0
        } else {
            sum as f64 / n as f64
        }
    }
}
