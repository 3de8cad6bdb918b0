//! Native tests of the backoff ladder.
#![cfg(not(target_arch = "wasm32"))]

use managed_eventsource::ladder::{
    Draw, Ladder, LadderConfig, Random, SplitMix64, Strategy, MAX_DELAY_MS,
};

fn config(strategy: Strategy) -> LadderConfig {
    LadderConfig {
        strategy,
        ..LadderConfig::default()
    }
}

fn ladder_of(config: LadderConfig, seed: u64, n: usize) -> Vec<u32> {
    let mut ladder = Ladder::new(config);
    let mut rng = SplitMix64::new(seed);
    ladder.delays(&mut rng).take(n).collect()
}

#[test]
fn none_doubles_up_to_the_cap() {
    assert_eq!(
        ladder_of(config(Strategy::None), 1, 9),
        [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000]
    );
}

#[test]
fn none_follows_seed_003_defaults() {
    let c = LadderConfig {
        strategy: Strategy::None,
        base_ms: 500.0,
        max_ms: 10000.0,
        ..LadderConfig::default()
    };
    assert_eq!(
        ladder_of(c, 1, 7),
        [500, 1000, 2000, 4000, 8000, 10000, 10000]
    );
}

#[test]
fn fixed_always_waits_base() {
    assert_eq!(ladder_of(config(Strategy::Fixed), 3, 5), [1000; 5]);
}

#[test]
fn linear_grows_by_base_and_caps() {
    let c = LadderConfig {
        strategy: Strategy::Linear,
        max_ms: 3500.0,
        ..LadderConfig::default()
    };
    assert_eq!(ladder_of(c, 3, 5), [1000, 2000, 3000, 3500, 3500]);
}

#[test]
fn factor_other_than_two() {
    let c = LadderConfig {
        strategy: Strategy::None,
        base_ms: 100.0,
        factor: 1.5,
        ..LadderConfig::default()
    };
    assert_eq!(ladder_of(c, 1, 4), [100, 150, 225, 337]);
}

#[test]
fn huge_attempt_numbers_land_on_the_cap_not_nan() {
    let c = LadderConfig {
        strategy: Strategy::None,
        factor: 10.0,
        ..LadderConfig::default()
    };
    assert_eq!(c.cap(5000), 60000.0);
    assert_eq!(c.cap(u32::MAX), 60000.0);
    let zero = LadderConfig { base_ms: 0.0, ..c };
    assert_eq!(zero.cap(u32::MAX), 0.0);
    assert_eq!(
        ladder_of(
            LadderConfig {
                strategy: Strategy::Full,
                ..zero
            },
            1,
            3
        ),
        [0, 0, 0]
    );
}

/// Draws attempt `attempt`'s delay `draws` times from fresh ladders.
fn draws_at(strategy: Strategy, attempt: usize, draws: usize, seed: u64) -> Vec<u32> {
    let mut rng = SplitMix64::new(seed);
    let mut ladder = Ladder::new(config(strategy));
    (0..draws)
        .map(|_| {
            ladder.reset();
            ladder.delays(&mut rng).nth(attempt - 1).unwrap()
        })
        .collect()
}

fn mean(xs: &[u32]) -> f64 {
    xs.iter().map(|&x| x as f64).sum::<f64>() / xs.len() as f64
}

#[test]
fn full_jitter_is_uniform_below_the_cap() {
    for attempt in 1..=8 {
        let cap = config(Strategy::Full).cap(attempt as u32);
        let xs = draws_at(Strategy::Full, attempt, 20_000, attempt as u64);
        assert!(xs.iter().all(|&x| (x as f64) <= cap), "attempt {attempt}");
        let m = mean(&xs) / cap;
        assert!((m - 0.5).abs() < 0.01, "attempt {attempt}: mean/cap {m}");
        // Spread: both the bottom and the top tenth of the range are used.
        assert!(xs.iter().any(|&x| (x as f64) < cap * 0.1));
        assert!(xs.iter().any(|&x| (x as f64) > cap * 0.9));
    }
}

#[test]
fn equal_jitter_never_below_half_the_cap() {
    for attempt in 1..=8 {
        let cap = config(Strategy::Equal).cap(attempt as u32);
        let xs = draws_at(Strategy::Equal, attempt, 20_000, 99 + attempt as u64);
        assert!(xs
            .iter()
            .all(|&x| x as f64 >= (cap / 2.0).floor() && x as f64 <= cap));
        let m = mean(&xs) / cap;
        assert!((m - 0.75).abs() < 0.01, "attempt {attempt}: mean/cap {m}");
    }
}

#[test]
fn decorrelated_never_below_base_nor_above_max() {
    let mut rng = SplitMix64::new(5);
    let mut ladder = Ladder::new(config(Strategy::Decorrelated));
    let xs: Vec<u32> = ladder.delays(&mut rng).take(10_000).collect();
    assert!(xs.iter().all(|&x| (1000..=60000).contains(&x)));
    // It grows from the previous delay: the first draw lies in [base, 3 * base].
    for seed in 0..1000 {
        let first = ladder_of(config(Strategy::Decorrelated), seed, 1)[0];
        assert!((1000..=3000).contains(&first), "{first}");
    }
    // And it does reach the cap eventually.
    assert!(xs.contains(&60000));
}

#[test]
fn two_seeds_never_give_the_same_ladder() {
    for strategy in [Strategy::Full, Strategy::Equal, Strategy::Decorrelated] {
        let mut seen = std::collections::HashSet::new();
        for seed in 0..2000 {
            assert!(
                seen.insert(ladder_of(config(strategy), seed, 6)),
                "{strategy:?} seed {seed} repeats a ladder"
            );
        }
    }
}

#[test]
fn the_same_seed_repeats_exactly() {
    assert_eq!(
        ladder_of(config(Strategy::Full), 42, 10),
        ladder_of(config(Strategy::Full), 42, 10)
    );
}

#[test]
fn full_jitter_ladder_grows_on_average() {
    // Seed 000's log: "growing, and never identical between runs". Averaged over many clients,
    // each rung of the full-jitter ladder is about twice the one before until the cap.
    let means: Vec<f64> = (1..=6)
        .map(|a| mean(&draws_at(Strategy::Full, a, 20_000, 7)))
        .collect();
    for w in means.windows(2) {
        let ratio = w[1] / w[0];
        assert!((ratio - 2.0).abs() < 0.1, "{means:?}");
    }
}

#[test]
fn max_attempts_gives_exactly_that_many_delays() {
    for max in [0u32, 1, 2, 12] {
        let c = LadderConfig {
            max_attempts: Some(max),
            ..LadderConfig::default()
        };
        let mut ladder = Ladder::new(c);
        let mut rng = SplitMix64::new(1);
        assert_eq!(ladder.delays(&mut rng).count(), max as usize);
        assert!(ladder.exhausted());
        assert_eq!(ladder.attempt(), max);
        ladder.reset();
        assert_eq!(ladder.attempt(), 0);
        assert_eq!(ladder.delays(&mut rng).count(), max as usize);
    }
}

#[test]
fn a_server_hint_raises_the_next_delay_once() {
    let mut ladder = Ladder::new(config(Strategy::Full));
    let mut rng = SplitMix64::new(11);
    ladder.hint(41_000);
    let first = ladder.next_delay(&mut rng).unwrap();
    assert!((41_000..=42_000).contains(&first), "{first}");
    let second = ladder.next_delay(&mut rng).unwrap();
    assert!(second <= 2000, "the hint is spent: {second}");
    // Two hints before one delay: the larger counts.
    ladder.hint(5000);
    ladder.hint(3000);
    assert!(ladder.next_delay(&mut rng).unwrap() >= 5000);
    // A reset forgets a pending hint.
    ladder.hint(9000);
    ladder.reset();
    assert!(ladder.next_delay(&mut rng).unwrap() <= 1000);
    // A hint never overflows a browser timer.
    ladder.hint(u32::MAX);
    assert_eq!(ladder.next_delay(&mut rng).unwrap(), MAX_DELAY_MS);
}

#[test]
fn a_hint_keeps_a_population_spread() {
    // Every client told the same 30 s still arrives over the ladder's own window.
    let mut rng = SplitMix64::new(3);
    let xs: Vec<u32> = (0..1000)
        .map(|_| {
            let mut l = Ladder::new(config(Strategy::Full));
            l.hint(30_000);
            l.next_delay(&mut rng).unwrap()
        })
        .collect();
    let distinct: std::collections::HashSet<_> = xs.iter().collect();
    assert!(distinct.len() > 500);
    assert!(xs.iter().all(|&x| (30_000..=31_000).contains(&x)));
}

#[test]
fn unit_draws_lie_in_zero_one() {
    let mut rng = SplitMix64::new(0);
    for _ in 0..100_000 {
        let u = rng.unit();
        assert!((0.0..1.0).contains(&u));
    }
}

#[test]
fn strategy_names_round_trip() {
    for s in Strategy::ALL {
        assert_eq!(Strategy::parse(s.as_str()), Some(s));
    }
    assert_eq!(Strategy::parse("Full"), None);
}

#[test]
fn each_draw_says_what_set_its_size() {
    use managed_eventsource::ladder::Bound;
    let mut rng = SplitMix64::new(3);
    let config = LadderConfig {
        strategy: Strategy::None,
        base_ms: 1000.0,
        max_ms: 4000.0,
        ..LadderConfig::default()
    };
    let mut ladder = Ladder::new(config);
    let own = |delay_ms, bound| Draw {
        delay_ms,
        ladder_ms: delay_ms,
        bound,
    };
    assert_eq!(ladder.next_draw(&mut rng), Some(own(1000, Bound::Ladder)));
    assert_eq!(ladder.next_draw(&mut rng), Some(own(2000, Bound::Ladder)));
    // The cap reaches max_ms at the third attempt.
    assert_eq!(ladder.next_draw(&mut rng), Some(own(4000, Bound::MaxMs)));
    // A Retry-After rests the next delay on it, once; the larger of two asks wins with its source.
    ladder.hint_from(5000, Bound::RetryAfter);
    ladder.hint_from(3000, Bound::Hint);
    let d = ladder.next_draw(&mut rng).unwrap();
    assert_eq!(
        (d.delay_ms, d.ladder_ms, d.bound),
        (9000, 4000, Bound::RetryAfter)
    );
    // A retry: field is a floor under every later delay, until a larger hint outweighs it.
    ladder.floor(1500);
    assert_eq!(ladder.next_draw(&mut rng).unwrap().bound, Bound::Retry);
    ladder.hint(2000);
    assert_eq!(ladder.next_draw(&mut rng).unwrap().bound, Bound::Hint);
    assert_eq!(ladder.next_draw(&mut rng).unwrap().bound, Bound::Retry);
    // next_delay is the draw's delay.
    ladder.floor(0);
    ladder.reset();
    let mut twin = ladder.clone();
    let mut rng2 = rng.clone();
    assert_eq!(
        ladder.next_delay(&mut rng),
        twin.next_draw(&mut rng2).map(|d| d.delay_ms)
    );
}
