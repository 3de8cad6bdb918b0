//! Native tests of the population simulator against cases with known answers.
#![cfg(not(target_arch = "wasm32"))]

use managed_eventsource::ladder::{Ladder, LadderConfig, SplitMix64, Strategy};
use managed_eventsource::storm::{simulate, Admission, Hints, Scenario, Simulation};

fn scenario(clients: u32, strategy: Strategy) -> Scenario {
    Scenario::new(clients, strategy)
}

#[test]
fn one_client_makes_the_attempts_its_ladder_says() {
    for strategy in [
        Strategy::Fixed,
        Strategy::Linear,
        Strategy::None,
        Strategy::Full,
        Strategy::Decorrelated,
    ] {
        let mut s = scenario(1, strategy);
        s.outage_ms = 300_000;
        s.ladder.max_ms = 30_000.0;
        s.seed = 9;
        let out = simulate(&s);
        // The same ladder, stepped by hand with the same seed, gives the same attempt times.
        let mut ladder = Ladder::new(s.ladder);
        let mut rng = SplitMix64::new(9);
        let mut t = 0u64;
        let mut expected = 0;
        loop {
            t += ladder.next_delay(&mut rng).unwrap() as u64;
            if t >= 300_000 {
                break;
            }
            expected += 1;
        }
        assert_eq!(out.attempts_during_outage, expected, "{strategy:?}");
        assert_eq!(out.connected, 1);
        assert_eq!(out.attempts, expected + 1, "one more attempt connects");
    }
}

#[test]
fn fixed_one_second_retries_three_hundred_times_in_five_minutes() {
    let mut s = scenario(1, Strategy::Fixed);
    s.outage_ms = 300_001;
    assert_eq!(simulate(&s).attempts_during_outage, 300);
}

#[test]
fn capacity_above_n_connects_everyone_on_the_first_attempt_after_the_outage() {
    for strategy in [
        Strategy::None,
        Strategy::Full,
        Strategy::Equal,
        Strategy::Decorrelated,
    ] {
        let mut s = scenario(5000, strategy);
        s.outage_ms = 20_000;
        s.admission = Admission::PerWindow {
            capacity: 10_000,
            window_ms: 1000,
        };
        let out = simulate(&s);
        assert_eq!(out.connected, 5000);
        assert_eq!(out.rejected, 0, "{strategy:?}");
        assert_eq!(out.attempts - out.attempts_during_outage, 5000);
        assert!(out.all_connected_ms.unwrap() >= 20_000);
    }
}

#[test]
fn no_jitter_gives_one_spike_of_n_per_attempt() {
    let mut s = scenario(20_000, Strategy::None);
    s.outage_ms = 60_000;
    let out = simulate(&s);
    assert_eq!(out.peak(), 20_000);
    // Attempts at 1, 3, 7, 15, 31, 63 s: six buckets, each holding the whole population.
    let busy: Vec<usize> = (0..out.arrivals.len())
        .filter(|&i| out.arrivals[i] > 0)
        .collect();
    assert_eq!(busy, [1, 3, 7, 15, 31, 63]);
    assert!(busy.iter().all(|&i| out.arrivals[i] == 20_000));
    assert_eq!(out.peak_to_median(), f64::INFINITY);
}

#[test]
fn jitter_flattens_the_peak() {
    let run = |strategy| {
        let mut s = scenario(50_000, strategy);
        s.outage_ms = 30_000;
        simulate(&s)
    };
    let none = run(Strategy::None).peak_from(30_000);
    let equal = run(Strategy::Equal).peak_from(30_000);
    let full = run(Strategy::Full).peak_from(30_000);
    assert_eq!(none, 50_000);
    assert!(
        full < equal && equal < none / 5,
        "none {none}, equal {equal}, full {full}"
    );
}

#[test]
fn a_per_window_cap_is_never_exceeded() {
    let mut s = scenario(10_000, Strategy::Full);
    s.outage_ms = 5_000;
    s.admission = Admission::PerWindow {
        capacity: 300,
        window_ms: 1000,
    };
    let out = simulate(&s);
    assert!(out.admitted.iter().all(|&a| a <= 300));
    assert_eq!(out.connected, 10_000);
    // Physical limit: 10,000 / 300 per second is 34 s after the service returns.
    assert!(out.all_connected_ms.unwrap() >= 5_000 + 33_000);
}

#[test]
fn a_token_bucket_admits_its_burst_then_its_rate() {
    let mut s = scenario(5_000, Strategy::Full);
    s.outage_ms = 10_000;
    s.admission = Admission::TokenBucket {
        rate: 200.0,
        burst: 400.0,
    };
    let out = simulate(&s);
    let mut seen = 0u32;
    for (i, &a) in out.admitted.iter().enumerate() {
        seen += a;
        let elapsed = (i as f64 + 1.0) - 10.0;
        if elapsed > 0.0 {
            assert!(
                seen as f64 <= 400.0 + 200.0 * elapsed + 1.0,
                "second {i}: {seen} admitted"
            );
        }
    }
    assert_eq!(out.connected, 5_000);
}

#[test]
fn hinted_clients_never_come_back_before_the_hint() {
    let mut s = scenario(2_000, Strategy::Full);
    s.outage_ms = 0;
    s.admission = Admission::PerWindow {
        capacity: 100,
        window_ms: 1000,
    };
    s.hints = Some(Hints {
        paced: false,
        base_ms: 20_000,
        spread_ms: 10_000,
    });
    s.bucket_ms = 1000;
    let out = simulate(&s);
    // The first wave (within the first second's ladder draw) is the only traffic before 20 s.
    let early: u32 = out.arrivals[1..20].iter().sum();
    assert_eq!(early, 0, "{:?}", &out.arrivals[..25]);
    assert_eq!(out.connected, 2_000);
}

#[test]
fn seed_004_ticks_quantise_attempts() {
    let mut s = Scenario::ticked(150, Strategy::Full, 300.0, 12, 100);
    s.bucket_ms = 100;
    let out = simulate(&s);
    assert_eq!(out.connected, 150);
    assert!(out.admitted.iter().all(|&a| a <= 12));
    assert!(out.all_connected_ms.unwrap() % 100 == 0);
}

#[test]
fn max_attempts_makes_clients_give_up() {
    let mut s = scenario(100, Strategy::Full);
    s.outage_ms = 1_000_000;
    s.ladder = LadderConfig {
        max_attempts: Some(5),
        ..s.ladder
    };
    let out = simulate(&s);
    assert_eq!(out.gave_up, 100);
    assert_eq!(out.attempts, 500);
}

#[test]
fn a_run_is_repeatable_and_the_seed_matters() {
    let mut s = scenario(3_000, Strategy::Decorrelated);
    s.outage_ms = 15_000;
    s.admission = Admission::PerWindow {
        capacity: 100,
        window_ms: 1000,
    };
    assert_eq!(simulate(&s), simulate(&s));
    let mut t = s.clone();
    t.seed = 2;
    assert_ne!(simulate(&s).arrivals, simulate(&t).arrivals);
}

#[test]
fn stepping_agrees_with_running() {
    let mut s = scenario(1_000, Strategy::Equal);
    s.outage_ms = 8_000;
    s.admission = Admission::PerWindow {
        capacity: 50,
        window_ms: 1000,
    };
    let whole = simulate(&s);
    let mut sim = Simulation::new(s);
    let mut t = 0;
    while !sim.finished() {
        t += 250;
        sim.advance_to(t);
    }
    assert_eq!(sim.outcome(), &whole);
    assert!(sim.states().iter().all(|&c| c as u8 == 1));
}

#[test]
fn delays_far_beyond_the_near_ring_keep_their_order() {
    // Caps of hours, so most attempts are parked in the far heap rather than the millisecond ring.
    for strategy in [Strategy::None, Strategy::Full, Strategy::Decorrelated] {
        let mut s = scenario(1, strategy);
        s.ladder = LadderConfig {
            strategy,
            base_ms: 1000.0,
            factor: 10.0,
            max_ms: 2.0e9,
            ..LadderConfig::default()
        };
        s.outage_ms = 1_000_000_000;
        s.horizon_ms = u64::MAX;
        s.seed = 4;
        let out = simulate(&s);
        let mut ladder = Ladder::new(s.ladder);
        let mut rng = SplitMix64::new(4);
        let (mut t, mut expected) = (0u64, 0u64);
        loop {
            t += ladder.next_delay(&mut rng).unwrap() as u64;
            if t >= s.outage_ms {
                break;
            }
            expected += 1;
        }
        assert_eq!(out.attempts_during_outage, expected, "{strategy:?}");
        assert_eq!(
            out.all_connected_ms,
            Some(t),
            "{strategy:?}: connects on the first attempt after"
        );
    }
    // A population split between near and far attempts: stepping second by second, which drains and
    // refills the ring at every boundary, gives exactly what one run gives.
    let mut s = scenario(5_000, Strategy::Full);
    s.ladder.max_ms = 600_000.0;
    s.outage_ms = 900_000;
    let whole = simulate(&s);
    let mut sim = Simulation::new(s);
    let mut t = 0;
    while !sim.finished() {
        t += 1000;
        sim.advance_to(t);
    }
    assert_eq!(sim.outcome(), &whole);
    assert_eq!(whole.connected, 5_000);
}

#[test]
fn paced_hints_from_a_front_fill_near_the_physical_limit_with_few_wasted_requests() {
    // Issue 17's target: 20,000 clients at 500 a second within 1.15 x N / C, wasted requests under 10 % of
    // N, with the ladder as shipped (full jitter, base 1 s, cap 60 s).
    let mut s = Scenario::new(20_000, Strategy::Full);
    s.outage_ms = 10_000;
    s.admission = Admission::TokenBucket {
        rate: 500.0,
        burst: 1000.0,
    };
    s.hints = Some(Hints {
        paced: true,
        base_ms: 0,
        spread_ms: 500,
    });
    s.paced_front = true;
    let out = simulate(&s);
    let fill = (out.all_connected_ms.unwrap() - 10_000) as f64;
    assert!(fill <= 1.15 * 40_000.0, "filled in {fill} ms");
    assert!(out.rejected < 2_000, "{} wasted", out.rejected);
    assert_eq!(
        out.attempts_during_outage, 20_000,
        "one attempt each during the restart"
    );
    // Without the front, the clients' own ladders set the floor: the last one comes back 58 s later even
    // to a server that admits everyone.
    s.paced_front = false;
    s.admission = Admission::Unlimited;
    let floor = simulate(&s).all_connected_ms.unwrap() - 10_000;
    assert!(floor > 46_000, "the ladder's tail: {floor} ms");
}

#[test]
fn min_uptime_spreads_out_a_flapping_population() {
    let mut s = Scenario::new(2_000, Strategy::Full);
    s.outage_ms = 10_000;
    s.flap_ms = 60_000;
    let without = simulate(&s);
    s.min_uptime_ms = 10_000;
    let with = simulate(&s);
    assert!(
        without.flapped > 20 * with.flapped,
        "{} against {}",
        without.flapped,
        with.flapped
    );
    assert_eq!(with.connected, 2_000);
}
