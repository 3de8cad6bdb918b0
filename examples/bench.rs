//! `npm run bench`: nanoseconds per ladder step and per machine input, on this machine, in release mode.
//! Each figure is the median of 15 runs; a loop that only draws random numbers is measured in the same
//! run as the baseline.

use std::hint::black_box;
use std::time::Instant;

use managed_eventsource::ladder::{Ladder, LadderConfig, Random, SplitMix64, Strategy};
use managed_eventsource::machine::{Config, Input, Machine};

const N: u32 = 2_000_000;

fn median_ns(mut f: impl FnMut() -> u64) -> f64 {
    let mut runs: Vec<f64> = (0..15)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed().as_nanos() as f64 / N as f64
        })
        .collect();
    runs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    runs[runs.len() / 2]
}

fn main() {
    println!("{:<44} {:>10}", "operation", "ns/op");
    let baseline = median_ns(|| {
        let mut rng = SplitMix64::new(1);
        (0..N).fold(0u64, |a, _| a ^ rng.next_u64())
    });
    println!("{:<44} {:>10.2}", "baseline: one random draw", baseline);
    let mut worst: f64 = 0.0;
    for strategy in [
        Strategy::None,
        Strategy::Full,
        Strategy::Equal,
        Strategy::Decorrelated,
    ] {
        let ns = median_ns(|| {
            let mut rng = SplitMix64::new(1);
            let mut ladder = Ladder::new(LadderConfig {
                strategy,
                ..LadderConfig::default()
            });
            let mut sum = 0u64;
            for i in 0..N {
                if i % 16 == 0 {
                    ladder.reset();
                }
                sum += ladder.next_delay(&mut rng).unwrap_or(0) as u64;
            }
            sum
        });
        worst = worst.max(ns);
        println!(
            "{:<44} {:>10.2}   ({:.1}x the baseline)",
            format!("ladder step, {} jitter", strategy.as_str()),
            ns,
            ns / baseline
        );
    }
    // A reconnect cycle as the browser drives it: failed, timer fired, opened, an event.
    let cycle = [
        Input::Failed {
            browser_gave_up: true,
        },
        Input::TimerFired,
        Input::Opened,
        Input::Seen {
            first: String::new(),
            last: String::new(),
        },
    ];
    let ns = median_ns(|| {
        let mut m = Machine::new(
            Config {
                resume: true,
                ..Config::default()
            },
            SplitMix64::new(1),
        );
        let mut out = Vec::with_capacity(8);
        m.handle_into(Input::Start, &mut out);
        let mut n = 0u64;
        for i in 0..N {
            out.clear();
            m.handle_into(cycle[(i % 4) as usize].clone(), &mut out);
            n += out.len() as u64;
        }
        n
    });
    worst = worst.max(ns);
    println!(
        "{:<44} {:>10.2}   ({:.1}x the baseline)",
        "machine input (fail/timer/open/event cycle)",
        ns,
        ns / baseline
    );
    println!(
        "slowest operation: {worst:.1} ns, {:.0}x below a microsecond",
        1000.0 / worst
    );
}
