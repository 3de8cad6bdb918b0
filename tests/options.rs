//! Native tests of option validation: every rule, and the error it gives.
#![cfg(not(target_arch = "wasm32"))]

use managed_eventsource::ladder::{Ladder, SplitMix64, Strategy};
use managed_eventsource::options::{
    parse_jitter, parse_reconnect, ErrorKind, OptionError, Reconnect,
};

/// The options with borrowed strings, as most tests build them.
type Options = managed_eventsource::options::Options<&'static str>;

fn err(o: Options) -> OptionError {
    o.validate().expect_err("should be rejected")
}

#[test]
fn defaults_are_the_documented_ones() {
    let o = Options::default();
    let l = o.validate().unwrap();
    assert_eq!(l.strategy, Strategy::Full);
    assert_eq!((l.base_ms, l.max_ms, l.factor), (1000.0, 60000.0, 2.0));
    assert_eq!(l.max_attempts, None);
    assert_eq!(o.reconnect, Reconnect::Backoff);
    assert!(!o.with_credentials && o.reconnect_on_visible && o.reconnect_on_online);
    assert_eq!(o.last_event_id_param, None);
}

#[test]
fn delays_must_be_finite_and_not_negative() {
    for (field, bad) in [
        ("baseMs", f64::NAN),
        ("baseMs", f64::INFINITY),
        ("baseMs", -1.0),
        ("maxMs", f64::NAN),
        ("maxMs", -5.0),
        ("maxMs", f64::NEG_INFINITY),
    ] {
        let mut o = Options::default();
        if field == "baseMs" {
            o.base_ms = bad;
        } else {
            o.max_ms = bad;
        }
        let e = err(o);
        assert_eq!((e.option, e.kind), (field, ErrorKind::Range), "{bad}");
    }
}

#[test]
fn delays_above_the_browser_timer_limit_are_refused() {
    let o = Options {
        max_ms: 2_147_483_648.0,
        ..Options::default()
    };
    let e = err(o);
    assert_eq!(e.option, "maxMs");
    assert!(e.message().contains("2147483647"));
    let ok = Options {
        max_ms: 2_147_483_647.0,
        ..Options::default()
    };
    assert!(ok.validate().is_ok());
}

#[test]
fn max_below_base_is_refused() {
    let e = err(Options {
        base_ms: 5000.0,
        max_ms: 4000.0,
        ..Options::default()
    });
    assert_eq!((e.option, e.kind), ("maxMs", ErrorKind::Range));
    assert_eq!(
        e.message(),
        "managed-eventsource: option maxMs must not be less than baseMs"
    );
    assert!(Options {
        base_ms: 4000.0,
        max_ms: 4000.0,
        ..Options::default()
    }
    .validate()
    .is_ok());
    assert!(Options {
        base_ms: 0.0,
        max_ms: 0.0,
        ..Options::default()
    }
    .validate()
    .is_ok());
}

#[test]
fn factor_must_be_at_least_one() {
    for bad in [0.99, 0.0, -2.0, f64::NAN, f64::INFINITY] {
        let e = err(Options {
            factor: bad,
            ..Options::default()
        });
        assert_eq!((e.option, e.kind), ("factor", ErrorKind::Range), "{bad}");
    }
    assert!(Options {
        factor: 1.0,
        ..Options::default()
    }
    .validate()
    .is_ok());
}

#[test]
fn max_attempts_must_be_whole_and_not_negative() {
    for bad in [-1.0, 0.5, 2.25, f64::NAN, f64::NEG_INFINITY] {
        let e = err(Options {
            max_attempts: bad,
            ..Options::default()
        });
        assert_eq!(
            (e.option, e.kind),
            ("maxAttempts", ErrorKind::Range),
            "{bad}"
        );
    }
    let l = Options {
        max_attempts: 0.0,
        ..Options::default()
    }
    .validate()
    .unwrap();
    assert_eq!(l.max_attempts, Some(0));
    let l = Options {
        max_attempts: 12.0,
        ..Options::default()
    }
    .validate()
    .unwrap();
    assert_eq!(l.max_attempts, Some(12));
    let l = Options {
        max_attempts: 1e300,
        ..Options::default()
    }
    .validate()
    .unwrap();
    assert_eq!(l.max_attempts, None);
}

#[test]
fn an_empty_parameter_name_is_refused() {
    let e = err(Options {
        last_event_id_param: Some(""),
        ..Options::default()
    });
    assert_eq!((e.option, e.kind), ("lastEventIdParam", ErrorKind::Type));
    assert!(Options {
        last_event_id_param: Some("id"),
        ..Options::default()
    }
    .validate()
    .is_ok());
}

#[test]
fn unknown_names_are_type_errors() {
    for ok in ["full", "equal", "decorrelated", "none"] {
        assert_eq!(parse_jitter(ok).unwrap().as_str(), ok);
    }
    for bad in ["fixed", "linear", "FULL", "", "random"] {
        let e = parse_jitter(bad).unwrap_err();
        assert_eq!((e.option, e.kind), ("jitter", ErrorKind::Type));
    }
    assert_eq!(parse_reconnect("backoff"), Ok(Reconnect::Backoff));
    assert_eq!(parse_reconnect("browser"), Ok(Reconnect::Browser));
    let e = parse_reconnect("always").unwrap_err();
    assert_eq!((e.option, e.kind), ("reconnect", ErrorKind::Type));
    assert_eq!(
        e.to_string(),
        "managed-eventsource: option reconnect must be 'backoff', 'browser' or false"
    );
}

#[test]
fn an_empty_retry_hint_event_is_refused() {
    let e = err(Options {
        retry_hint_event: Some(""),
        ..Options::default()
    });
    assert_eq!((e.option, e.kind), ("retryHintEvent", ErrorKind::Type));
    assert!(Options {
        retry_hint_event: Some("retry-hint"),
        ..Options::default()
    }
    .validate()
    .is_ok());
}

/// Any f64 a user can pass, the awkward ones over-represented.
fn any_number() -> impl proptest::strategy::Strategy<Value = f64> {
    use proptest::prelude::*;
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(-0.0),
        Just(2_147_483_647.0),
        Just(2_147_483_648.0),
        Just(4_503_599_627_370_496.5),
        -1e6f64..1e10,
        any::<f64>(),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 5000, ..Default::default() })]

    /// Validation never panics; whatever it accepts builds a ladder whose every delay is in [0, maxMs].
    #[test]
    fn validation_accepts_only_what_the_ladder_can_run(
        base in any_number(),
        max in any_number(),
        factor in any_number(),
        attempts in any_number(),
        hint in any_number(),
        seed in proptest::prelude::any::<u64>(),
    ) {
        let o = Options { base_ms: base, max_ms: max, factor, max_attempts: attempts, max_hint_ms: hint, ..Options::default() };
        match o.validate() {
            Ok(ladder) => {
                proptest::prop_assert!(base.is_finite() && base >= 0.0 && max >= base && max <= 2_147_483_647.0);
                proptest::prop_assert!(factor.is_finite() && factor >= 1.0);
                proptest::prop_assert!(hint.is_finite() && (0.0..=2_147_483_647.0).contains(&hint));
                let mut l = Ladder::new(ladder);
                let mut rng = SplitMix64::new(seed);
                for d in l.delays(&mut rng).take(64) {
                    proptest::prop_assert!(d as f64 <= max + 1.0, "delay {} above maxMs {}", d, max);
                }
            }
            Err(e) => {
                proptest::prop_assert!(!e.message().is_empty());
                proptest::prop_assert!(e.message().contains(e.option));
            }
        }
    }
}

#[test]
fn the_new_durations_are_checked_like_the_others() {
    for (field, set) in [
        (
            "stallTimeoutMs",
            (|o: &mut Options, v| o.stall_timeout_ms = v) as fn(&mut Options, f64),
        ),
        ("minUptimeMs", |o: &mut Options, v| o.min_uptime_ms = v),
    ] {
        for v in [-1.0, f64::NAN, f64::INFINITY, 3e9] {
            let mut o = Options::default();
            set(&mut o, v);
            let e = err(o);
            assert_eq!((e.kind, e.option), (ErrorKind::Range, field));
        }
    }
    let o = Options {
        heartbeat_event: Some("error"),
        ..Options::default()
    };
    assert_eq!(err(o).option, "heartbeatEvent");
    let o = Options {
        probe_url: Some(""),
        ..Options::default()
    };
    assert_eq!(err(o).option, "probe");
}

#[test]
fn options_with_owned_strings_follow_the_same_rules() {
    type Owned = managed_eventsource::options::Options<String>;
    let fine = Owned {
        last_event_id_param: Some("lastEventId".into()),
        heartbeat_event: Some("ping".into()),
        ..Owned::default()
    };
    assert!(fine.validate().is_ok());
    let empty = Owned {
        last_event_id_param: Some(String::new()),
        ..Owned::default()
    };
    assert_eq!(empty.validate().unwrap_err().option, "lastEventIdParam");
    let own = Owned {
        retry_hint_event: Some("error".into()),
        ..Owned::default()
    };
    assert_eq!(own.validate().unwrap_err().option, "retryHintEvent");
    // The defaults are the borrowed options' defaults.
    let (a, b) = (Owned::default(), Options::default());
    assert_eq!(
        (a.base_ms, a.max_ms, a.factor, a.jitter),
        (b.base_ms, b.max_ms, b.factor, b.jitter)
    );
}
