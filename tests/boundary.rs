//! The numbers the browser shell's two halves share: `src/web/boundary.js` is what `boundary::javascript`
//! writes from the Rust tables, and the tables agree with the types they stand for.
//!
//! `npm run boundary` (`UPDATE_BOUNDARY=1 cargo test --test boundary`) rewrites the file.
#![cfg(not(target_arch = "wasm32"))]

use managed_eventsource::boundary::{
    self, class, jitter_at, reconnect_at, Code, Enqueue, Kind, Note, Opt, Slot, Value, OPTIONS,
    STATUSES,
};
use managed_eventsource::ladder::Strategy;
use managed_eventsource::machine::Status;
use managed_eventsource::options::{parse_jitter, parse_reconnect, Options, Reconnect};

const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/web/boundary.js");

#[test]
fn the_javascript_constants_are_generated_from_the_rust_tables() {
    let want = boundary::javascript();
    if std::env::var_os("UPDATE_BOUNDARY").is_some() {
        std::fs::write(FILE, &want).unwrap();
    }
    let have = std::fs::read_to_string(FILE).unwrap_or_default();
    assert!(
        have == want,
        "src/web/boundary.js is out of date with src/boundary.rs: run `npm run boundary`"
    );
}

#[test]
fn codes_are_their_positions_and_questions_come_last() {
    for (i, c) in Code::ALL.iter().enumerate() {
        assert_eq!(*c as usize, i);
        assert_eq!(Code::from_u32(i as u32), Some(*c));
    }
    assert_eq!(Code::from_u32(Code::ALL.len() as u32), None);
    assert_eq!(Code::from_u32(u32::MAX), None);
    let first = Code::FIRST_QUESTION as usize;
    for c in &Code::ALL[first..] {
        assert!(
            matches!(
                c,
                Code::Status | Code::ReadyState | Code::Attempt | Code::Live | Code::Closed
            ),
            "{c:?} sits among the questions"
        );
    }
    for (i, n) in Note::ALL.iter().enumerate() {
        assert_eq!(*n as usize, i);
    }
    for (i, e) in Enqueue::ALL.iter().enumerate() {
        assert_eq!(*e as usize, i);
    }
    assert_eq!(Code::JS.len(), Code::ALL.len());
    assert_eq!(Note::JS.len(), Note::ALL.len());
}

#[test]
fn statuses_are_indexed_in_their_declared_order() {
    for (i, s) in STATUSES.iter().enumerate() {
        assert_eq!(boundary::status_index(*s), i as u32, "{s:?}");
    }
    let names: Vec<&str> = STATUSES.iter().map(|s| s.as_str()).collect();
    assert_eq!(
        names,
        ["connecting", "open", "reconnecting", "failed", "closed"]
    );
    assert_eq!(boundary::status_index(Status::Closed), 4);
}

#[test]
fn each_choice_index_stands_for_the_value_of_that_name() {
    let values = |o: Opt| match OPTIONS[o as usize].kind {
        Kind::Choice(v) => v,
        k => panic!("{o:?} is {k:?}"),
    };
    for (i, v) in values(Opt::Reconnect).iter().enumerate() {
        let want = match v {
            Value::Name(n) => parse_reconnect(n).unwrap(),
            Value::Flag(false) => Reconnect::Never,
            Value::Flag(true) => Reconnect::Backoff,
        };
        assert_eq!(reconnect_at(i as u32), want, "{v:?}");
    }
    for (i, v) in values(Opt::Jitter).iter().enumerate() {
        let Value::Name(n) = v else { panic!("{v:?}") };
        assert_eq!(jitter_at(i as u32), parse_jitter(n).unwrap(), "{n}");
    }
    // Index 0 is what an option not given reads as: the default.
    let d = Options::<&str>::default();
    assert_eq!(reconnect_at(0), d.reconnect);
    assert_eq!(jitter_at(0), d.jitter);
    assert_eq!(jitter_at(0), Strategy::Full);
}

#[test]
fn the_table_names_each_option_at_its_position_with_its_default() {
    let d = Options::<&str>::default();
    let number = |o: Opt| -> f64 {
        let s = OPTIONS[o as usize].default;
        if s == "Infinity" {
            f64::INFINITY
        } else {
            s.parse().unwrap()
        }
    };
    assert_eq!(number(Opt::BaseMs), d.base_ms);
    assert_eq!(number(Opt::MaxMs), d.max_ms);
    assert_eq!(number(Opt::Factor), d.factor);
    assert_eq!(number(Opt::MaxAttempts), d.max_attempts);
    assert_eq!(number(Opt::MaxHintMs), d.max_hint_ms);
    assert_eq!(number(Opt::StallTimeoutMs), d.stall_timeout_ms);
    assert_eq!(number(Opt::MinUptimeMs), d.min_uptime_ms);
    assert_eq!(number(Opt::ConnectTimeoutMs), d.connect_timeout_ms);
    let flag = |o: Opt| OPTIONS[o as usize].default == "true";
    assert_eq!(flag(Opt::WithCredentials), d.with_credentials);
    assert_eq!(flag(Opt::ReconnectOnVisible), d.reconnect_on_visible);
    assert_eq!(flag(Opt::ReconnectOnOnline), d.reconnect_on_online);
    assert_eq!(flag(Opt::Probe), d.probe);
    for (i, o) in OPTIONS.iter().enumerate() {
        assert!(
            o.classes & class::BOTH != 0,
            "{} belongs to no class",
            o.name
        );
        assert!(
            OPTIONS[..i].iter().all(|p| p.name != o.name),
            "{} twice",
            o.name
        );
        // Every option's bit fits in `given`, a u32.
        assert!(i < 32);
    }
    assert_eq!(OPTIONS[Opt::HeartbeatEvent as usize].name, "heartbeatEvent");
    assert_eq!(Slot::Given.at(), OPTIONS.len() + Slot::Given as usize);
}
