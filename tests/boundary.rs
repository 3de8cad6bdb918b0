//! The numbers the browser shell's two halves share: `src/web/boundary.js` is what `boundary::javascript`
//! writes from the Rust tables, and the tables agree with the types they stand for.
//!
//! `npm run boundary` (`UPDATE_BOUNDARY=1 cargo test --test boundary`) rewrites the file.
#![cfg(not(target_arch = "wasm32"))]

use managed_eventsource::boundary::{
    self, class, jitter_at, reconnect_at, Code, Kind, Note, Opt, Slot, Value, OPTIONS, STATUSES,
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

/// Values laid out as the JavaScript half lays them out: `given` pairs an option with its value.
struct Laid {
    numbers: Vec<f64>,
    texts: Vec<Option<&'static str>>,
    given: u32,
}

impl Laid {
    fn new() -> Self {
        Laid {
            numbers: vec![f64::NAN; boundary::COUNT],
            texts: vec![None; boundary::COUNT],
            given: 0,
        }
    }

    fn number(mut self, o: Opt, v: f64) -> Self {
        self.numbers[o as usize] = v;
        self.given |= 1 << o as u32;
        self
    }

    fn text(mut self, at: usize, v: &'static str) -> Self {
        self.texts[at] = Some(v);
        if at < OPTIONS.len() {
            self.given |= 1 << at;
        }
        self
    }
}

impl boundary::Values for Laid {
    type Text = &'static str;
    fn at(&self, at: usize) -> f64 {
        self.numbers[at]
    }
    fn text_at(&self, at: usize) -> Option<&'static str> {
        self.texts[at]
    }
    fn given(&self) -> u32 {
        self.given
    }
}

#[test]
fn options_read_from_the_values_keep_every_default_not_given() {
    // Nothing given: the defaults, whatever the values hold (the NaNs are never read).
    assert_eq!(
        boundary::options(&Laid::new(), false),
        Options::<&str>::default()
    );
    let socket = boundary::options(&Laid::new(), true);
    assert_eq!(
        socket.connect_timeout_ms,
        managed_eventsource::options::SOCKET_CONNECT_TIMEOUT_MS
    );
    let o = boundary::options(
        &Laid::new()
            .number(Opt::BaseMs, 250.0)
            .number(Opt::Jitter, 2.0)
            .number(Opt::Reconnect, 1.0)
            .number(Opt::ReconnectOnVisible, 0.0)
            .number(Opt::Probe, 1.0)
            .text(Opt::LastEventIdParam as usize, "id")
            .text(Slot::ProbeUrl.at(), "/probe"),
        false,
    );
    assert_eq!(o.base_ms, 250.0);
    assert_eq!(o.max_ms, Options::<&str>::default().max_ms);
    assert_eq!(o.jitter, Strategy::Decorrelated);
    assert_eq!(o.reconnect, Reconnect::Browser);
    assert!(!o.reconnect_on_visible && o.reconnect_on_online && o.probe);
    assert_eq!(o.last_event_id_param, Some("id"));
    assert_eq!(o.probe_url, Some("/probe"));
    // A default that breaks a rule with a value given: maxMs (60000 unless given) below baseMs.
    let high = Laid::new().number(Opt::BaseMs, 70_000.0);
    assert!(boundary::options(&high, false).validate().is_err());
    let both = Laid::new()
        .number(Opt::BaseMs, 70_000.0)
        .number(Opt::MaxMs, 80_000.0);
    assert!(boundary::options(&both, false).validate().is_ok());
}
