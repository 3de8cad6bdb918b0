//! One simulator run, for `npm run population` (scripts/population.mjs), which puts its prediction beside
//! what real clients did. Parameters as `key=value` arguments, the result as JSON on stdout:
//!
//! ```text
//! cargo run --example simulate -- clients=2000 outage_ms=10000 strategy=full base_ms=1000 max_ms=30000 \
//!     admission=bucket:100:200 hints=random:5000:20000 front=false seed=1 bucket_ms=1000
//! ```
//!
//! `admission`: `unlimited`, `bucket:RATE:BURST` or `cap:CAPACITY` (a second); `hints`: `none`,
//! `random:BASE_MS:SPREAD_MS` or `paced:SPREAD_MS`.

use managed_eventsource::ladder::Strategy;
use managed_eventsource::storm::{simulate, Admission, Hints, Scenario};

fn main() {
    let mut s = Scenario::new(1000, Strategy::Full);
    for arg in std::env::args().skip(1) {
        let (key, value) = arg.split_once('=').expect("key=value");
        let num = |v: &str| v.parse::<f64>().expect("a number");
        let parts: Vec<&str> = value.split(':').collect();
        match key {
            "clients" => s.clients = num(value) as u32,
            "outage_ms" => s.outage_ms = num(value) as u64,
            "strategy" => s.ladder.strategy = Strategy::parse(value).expect("a strategy"),
            "base_ms" => s.ladder.base_ms = num(value),
            "max_ms" => s.ladder.max_ms = num(value),
            "factor" => s.ladder.factor = num(value),
            "seed" => s.seed = num(value) as u64,
            "bucket_ms" => s.bucket_ms = num(value) as u64,
            "front" => s.paced_front = value == "true",
            "admission" => {
                s.admission = match parts[0] {
                    "unlimited" => Admission::Unlimited,
                    "bucket" => Admission::TokenBucket {
                        rate: num(parts[1]),
                        burst: num(parts[2]),
                    },
                    "cap" => Admission::PerWindow {
                        capacity: num(parts[1]) as u32,
                        window_ms: 1000,
                    },
                    other => panic!("unknown admission {other}"),
                }
            }
            "hints" => {
                s.hints = match parts[0] {
                    "none" => None,
                    "random" => Some(Hints {
                        base_ms: num(parts[1]) as u32,
                        spread_ms: num(parts[2]) as u32,
                        paced: false,
                    }),
                    "paced" => Some(Hints {
                        base_ms: 0,
                        spread_ms: num(parts[1]) as u32,
                        paced: true,
                    }),
                    other => panic!("unknown hints {other}"),
                }
            }
            other => panic!("unknown parameter {other}"),
        }
    }
    let out = simulate(&s);
    let list = |v: &[u32]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    println!(
        "{{\"attempts\":{},\"attempts_during_outage\":{},\"rejected\":{},\"connected\":{},\"all_connected_ms\":{},\"bucket_ms\":{},\"arrivals\":[{}],\"admitted\":[{}]}}",
        out.attempts,
        out.attempts_during_outage,
        out.rejected,
        out.connected,
        out.all_connected_ms.map_or("null".into(), |t| t.to_string()),
        out.bucket_ms,
        list(&out.arrivals),
        list(&out.admitted)
    );
}
