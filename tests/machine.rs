//! Native tests of the reconnect state machine: scenarios from the seeds, then property tests of every
//! invariant in DESIGN.md over random input sequences.
#![cfg(not(target_arch = "wasm32"))]

use managed_eventsource::ladder::{
    Bound, LadderConfig, SplitMix64, Strategy as Jitter, MAX_DELAY_MS,
};
use managed_eventsource::machine::{
    Command, Config, Input, Machine, Status, Step, Trigger, MAX_RESUME_ID,
};
use managed_eventsource::options::Reconnect;
use proptest::prelude::*;

fn machine(config: Config) -> Machine<SplitMix64> {
    Machine::new(config, SplitMix64::new(1))
}

fn backoff(max_attempts: Option<u32>) -> Config {
    Config {
        ladder: LadderConfig {
            max_attempts,
            ..LadderConfig::default()
        },
        ..Config::default()
    }
}

/// A machine that resumes after the last event id.
fn resuming() -> Machine<SplitMix64> {
    machine(Config {
        resume: true,
        ..Config::default()
    })
}

/// `m`, started and open.
fn opened(mut m: Machine<SplitMix64>) -> Machine<SplitMix64> {
    m.handle(Input::Start);
    m.handle(Input::Opened);
    m
}

const FAIL: Input = Input::Failed {
    browser_gave_up: true,
};

/// The ids of the first and the last event of the live source.
fn seen(first: &str, last: &str) -> Input {
    Input::Seen {
        first: first.into(),
        last: last.into(),
    }
}

fn delay_of(cmds: &[Command]) -> Option<u32> {
    cmds.iter().find_map(|c| match c {
        Command::ArmTimer { ms } => Some(*ms),
        _ => None,
    })
}

#[test]
fn an_error_closes_reports_then_schedules() {
    let mut m = machine(Config::default());
    m.handle(Input::Start);
    let cmds = m.handle(FAIL);
    assert_eq!(cmds[0], Command::CloseSource);
    assert_eq!(cmds[1], Command::ReportError);
    let ms = delay_of(&cmds).unwrap();
    assert!(ms <= 1000);
    assert_eq!(
        &cmds[2..],
        [
            Command::ArmTimer { ms },
            Command::Status(Status::Reconnecting),
            Command::RetryScheduled {
                attempt: 1,
                delay_ms: ms
            }
        ]
    );
    assert_eq!(m.ready_state(), 0, "waiting still reads as CONNECTING");
    assert_eq!(
        m.handle(Input::TimerFired),
        [Command::OpenSource { resume: false }]
    );
}

#[test]
fn the_browser_retry_never_runs_even_while_connecting() {
    // An error while the browser would retry by itself (readyState CONNECTING) is closed all the same.
    let mut m = machine(Config::default());
    m.handle(Input::Start);
    let cmds = m.handle(Input::Failed {
        browser_gave_up: false,
    });
    assert_eq!(cmds[0], Command::CloseSource);
    assert!(delay_of(&cmds).is_some());
}

#[test]
fn attempt_resets_on_open_not_on_first_event() {
    let mut m = machine(Config::default());
    m.handle(Input::Start);
    for _ in 0..3 {
        m.handle(FAIL);
        m.handle(Input::TimerFired);
    }
    assert_eq!(m.attempt(), 3);
    // Events do not reset the ladder (only a validated open does).
    m.handle(seen("1", "1"));
    assert_eq!(m.attempt(), 3);
    let cmds = m.handle(Input::Opened);
    assert_eq!(
        cmds,
        [
            Command::Status(Status::Open),
            Command::Connected { attempt: 3 }
        ]
    );
    assert_eq!(m.attempt(), 0);
    let cmds = m.handle(FAIL);
    assert!(cmds.contains(&Command::RetryScheduled {
        attempt: 1,
        delay_ms: delay_of(&cmds).unwrap()
    }));
}

#[test]
fn gives_up_after_max_attempts_with_exactly_that_many() {
    let mut m = machine(backoff(Some(3)));
    m.handle(Input::Start);
    let mut opens = 1;
    let mut gave_up = None;
    for _ in 0..10 {
        let cmds = m.handle(FAIL);
        if let Some(Command::GaveUp { attempts }) = cmds.last() {
            gave_up = Some(*attempts);
            assert!(cmds.contains(&Command::Status(Status::Failed)));
            assert!(delay_of(&cmds).is_none());
            break;
        }
        let cmds = m.handle(Input::TimerFired);
        opens += cmds
            .iter()
            .filter(|c| matches!(c, Command::OpenSource { .. }))
            .count();
    }
    assert_eq!(gave_up, Some(3));
    assert_eq!(opens, 4, "the first connection and three reconnects");
    assert_eq!(m.status(), Status::Failed);
    assert_eq!(m.ready_state(), 2);
    // Nothing wakes it by itself...
    assert!(m.handle(Input::TimerFired).is_empty());
    assert!(m.handle(FAIL).is_empty());
    // ...but reconnectNow does, with a fresh ladder (unlike reconnecting-websocket issue 125).
    let cmds = m.handle(Input::RetryNow);
    assert_eq!(
        cmds,
        [
            Command::OpenSource { resume: false },
            Command::Status(Status::Reconnecting)
        ]
    );
    let cmds = m.handle(FAIL);
    assert!(cmds
        .iter()
        .any(|c| matches!(c, Command::RetryScheduled { attempt: 1, .. })));
}

#[test]
fn max_attempts_zero_fails_on_the_first_error() {
    let mut m = machine(backoff(Some(0)));
    m.handle(Input::Start);
    let cmds = m.handle(FAIL);
    assert_eq!(
        cmds,
        [
            Command::CloseSource,
            Command::ReportError,
            Command::Status(Status::Failed),
            Command::GaveUp { attempts: 0 }
        ]
    );
}

#[test]
fn visible_and_online_reconnect_at_once_when_waiting_or_failed() {
    for wake in [Input::PageVisible, Input::Online] {
        let mut m = machine(backoff(Some(1)));
        m.handle(Input::Start);
        m.handle(FAIL);
        assert!(m.timer_armed());
        let cmds = m.handle(wake.clone());
        assert_eq!(cmds[0], Command::DisarmTimer);
        assert!(matches!(cmds[1], Command::OpenSource { .. }));
        assert_eq!(m.attempt(), 0, "fresh ladder");
        // From failed too.
        m.handle(FAIL);
        m.handle(Input::TimerFired);
        m.handle(FAIL);
        assert_eq!(m.status(), Status::Failed);
        let cmds = m.handle(wake.clone());
        assert!(matches!(cmds[0], Command::OpenSource { .. }));
        // And they leave a healthy stream alone.
        m.handle(Input::Opened);
        assert!(m.handle(wake.clone()).is_empty());
        // And a connection in progress.
        m.handle(FAIL);
        m.handle(Input::TimerFired);
        assert!(m.handle(wake).is_empty());
    }
}

#[test]
fn wake_events_can_be_turned_off() {
    let mut m = machine(Config {
        wake_on_visible: false,
        wake_on_online: false,
        ..Config::default()
    });
    m.handle(Input::Start);
    m.handle(FAIL);
    assert!(m.handle(Input::PageVisible).is_empty());
    assert!(m.handle(Input::Online).is_empty());
    assert!(m.handle(Input::Offline).is_empty());
    assert!(m.timer_armed());
}

#[test]
fn offline_pauses_the_timer_until_online() {
    let mut m = machine(Config::default());
    m.handle(Input::Start);
    m.handle(FAIL);
    assert_eq!(m.handle(Input::Offline), [Command::DisarmTimer]);
    assert!(m.handle(Input::TimerFired).is_empty());
    assert_eq!(m.status(), Status::Reconnecting);
    let cmds = m.handle(Input::Online);
    assert_eq!(cmds, [Command::OpenSource { resume: false }]);
}

#[test]
fn close_is_final() {
    let mut m = machine(Config::default());
    m.handle(Input::Start);
    m.handle(FAIL);
    assert_eq!(
        m.handle(Input::Close),
        [Command::DisarmTimer, Command::Status(Status::Closed)]
    );
    for input in [
        Input::TimerFired,
        Input::Opened,
        FAIL,
        Input::RetryNow,
        Input::PageVisible,
        Input::Online,
        Input::Start,
        Input::Close,
    ] {
        assert!(m.handle(input).is_empty());
    }
    assert_eq!(m.ready_state(), 2);
    // Closing an open stream closes its source.
    let mut m = opened(machine(Config::default()));
    assert_eq!(
        m.handle(Input::Close),
        [Command::CloseSource, Command::Status(Status::Closed)]
    );
}

#[test]
fn a_late_open_from_an_old_source_does_nothing() {
    let mut m = machine(Config::default());
    m.handle(Input::Start);
    m.handle(FAIL);
    // The old source is gone; its open (or error) must not touch the waiting machine.
    assert!(m.handle(Input::Opened).is_empty());
    assert!(m.handle(FAIL).is_empty());
    assert!(m.timer_armed());
}

#[test]
fn reconnects_carry_the_last_event_id_and_the_first_connection_none() {
    let mut m = resuming();
    assert_eq!(
        m.handle(Input::Start)[0],
        Command::OpenSource { resume: false }
    );
    m.handle(Input::Opened);
    // No id yet: nothing to carry.
    m.handle(seen("", ""));
    m.handle(FAIL);
    assert_eq!(
        m.handle(Input::TimerFired)[0],
        Command::OpenSource { resume: false }
    );
    m.handle(Input::Opened);
    m.handle(seen("41", "42"));
    assert_eq!(m.last_event_id(), "42");
    m.handle(FAIL);
    assert_eq!(
        m.handle(Input::TimerFired)[0],
        Command::OpenSource { resume: true }
    );
    assert_eq!(m.resumed_from(), "42");
    // A reconnect's source starts with no id of its own: events without one keep the position.
    m.handle(Input::Opened);
    m.handle(seen("", ""));
    assert_eq!(m.last_event_id(), "42");
    m.handle(seen("", "43"));
    assert_eq!(m.last_event_id(), "43");
    // Without the option, ids are tracked but not carried.
    let mut m = machine(Config::default());
    m.handle(Input::Start);
    m.handle(seen("7", "7"));
    m.handle(FAIL);
    assert_eq!(
        m.handle(Input::TimerFired)[0],
        Command::OpenSource { resume: false }
    );
    assert_eq!(m.last_event_id(), "7");
}

#[test]
fn browser_mode_only_reports_status() {
    let mut m = opened(machine(Config {
        mode: Reconnect::Browser,
        ..Config::default()
    }));
    let cmds = m.handle(Input::Failed {
        browser_gave_up: false,
    });
    assert_eq!(
        cmds,
        [Command::ReportError, Command::Status(Status::Reconnecting)]
    );
    assert_eq!(
        m.handle(Input::Opened),
        [
            Command::Status(Status::Open),
            Command::Connected { attempt: 1 }
        ]
    );
    // The browser gives up (a 503, a wrong type): failed.
    let cmds = m.handle(FAIL);
    assert_eq!(
        cmds,
        [
            Command::CloseSource,
            Command::ReportError,
            Command::Status(Status::Failed),
            Command::GaveUp { attempts: 0 }
        ]
    );
    assert!(m
        .handle(Input::RetryNow)
        .iter()
        .any(|c| matches!(c, Command::OpenSource { .. })));
}

#[test]
fn browser_mode_caps_the_browsers_own_retries() {
    let mut m = machine(Config {
        mode: Reconnect::Browser,
        ladder: LadderConfig {
            max_attempts: Some(2),
            ..LadderConfig::default()
        },
        ..Config::default()
    });
    m.handle(Input::Start);
    let soft = Input::Failed {
        browser_gave_up: false,
    };
    assert!(!m.handle(soft.clone()).contains(&Command::CloseSource));
    assert!(!m.handle(soft.clone()).contains(&Command::CloseSource));
    let cmds = m.handle(soft);
    assert_eq!(cmds[0], Command::CloseSource);
    assert_eq!(cmds.last(), Some(&Command::GaveUp { attempts: 2 }));
}

#[test]
fn never_mode_ends_on_the_first_error() {
    let mut m = opened(machine(Config {
        mode: Reconnect::Never,
        ..Config::default()
    }));
    let cmds = m.handle(Input::Failed {
        browser_gave_up: false,
    });
    assert_eq!(cmds[0], Command::CloseSource);
    assert_eq!(m.status(), Status::Failed);
    assert!(m.handle(Input::PageVisible).is_empty());
    assert!(m.handle(Input::Online).is_empty());
    assert!(m
        .handle(Input::RetryNow)
        .iter()
        .any(|c| matches!(c, Command::OpenSource { .. })));
}

#[test]
fn a_stalled_stream_is_treated_as_dropped() {
    let mut m = opened(machine(Config::default()));
    let cmds = m.handle(Input::Stalled);
    assert_eq!(cmds[0], Command::CloseSource);
    assert!(delay_of(&cmds).is_some());
    assert!(
        m.handle(Input::Stalled).is_empty(),
        "no source, nothing stalls"
    );
}

#[test]
fn a_url_that_can_never_work_fails_at_once_without_the_ladder() {
    for mode in [Reconnect::Backoff, Reconnect::Browser, Reconnect::Never] {
        let mut m = machine(Config {
            mode,
            connect_timeout_ms: 5_000,
            ..Config::default()
        });
        m.handle(Input::Start);
        let cmds = m.handle(Input::Unusable);
        assert_eq!(
            cmds,
            [
                Command::CloseSource,
                Command::DisarmTimer, // the connect timeout's
                Command::ReportError,
                Command::Status(Status::Failed),
                Command::GaveUp { attempts: 0 },
            ],
            "{mode:?}"
        );
        assert_eq!((m.ready_state(), m.attempt()), (2, 0));
        assert!(!m.timer_armed() && !m.source_live());
        // Nothing wakes it but the user: not a visible page, not the network.
        assert!(m.handle(Input::PageVisible).is_empty());
        assert!(m.handle(Input::Online).is_empty());
        assert!(m.handle(Input::TimerFired).is_empty());
        assert!(
            m.handle(Input::Unusable).is_empty(),
            "no source, nothing to fail"
        );
        // reconnectNow() tries again (a URL function may give a usable URL now).
        assert_eq!(
            m.handle(Input::RetryNow)[0],
            Command::OpenSource { resume: false }
        );
    }
    // A reconnect whose URL turns out unusable ends the same way, the ladder's count as it was.
    let mut m = opened(machine(Config::default()));
    m.handle(FAIL);
    m.handle(Input::TimerFired);
    let cmds = m.handle(Input::Unusable);
    assert_eq!(cmds.last(), Some(&Command::GaveUp { attempts: 1 }));
    assert_eq!(m.status(), Status::Failed);
}

#[test]
fn recurring_stalls_of_a_stream_that_delivers_events_are_told_once() {
    let mut m = opened(machine(Config {
        stall_timeout_ms: 4_000,
        ..Config::default()
    }));
    let stall = |m: &mut Machine<SplitMix64>, delivered: bool| {
        let mut told = Vec::new();
        let mut ticks = vec![delivered];
        ticks.extend([false; 4]);
        for active in ticks {
            for c in m.handle(Input::WatchdogFired { active }) {
                if let Command::StallsRecur { stalls } = c {
                    told.push(stalls);
                }
            }
        }
        assert_eq!(m.status(), Status::Reconnecting, "stalled");
        m.handle(Input::TimerFired);
        m.handle(Input::Opened);
        told
    };
    // A stream that never delivered an event stalls as a dead one does: nothing to say.
    assert_eq!(stall(&mut m, false), [] as [u32; 0]);
    assert_eq!(stall(&mut m, false), [] as [u32; 0]);
    // Events, then silence, twice in a row: told, once.
    assert_eq!(stall(&mut m, true), [] as [u32; 0]);
    assert_eq!(stall(&mut m, true), [2]);
    assert_eq!(stall(&mut m, true), [] as [u32; 0]);
    assert_eq!(stall(&mut m, true), [] as [u32; 0]);
    // An open stream that fails otherwise breaks the run.
    let mut m = opened(machine(Config {
        stall_timeout_ms: 4_000,
        ..Config::default()
    }));
    assert_eq!(stall(&mut m, true), [] as [u32; 0]);
    m.handle(Input::Failed {
        browser_gave_up: false,
    });
    m.handle(Input::TimerFired);
    m.handle(Input::Opened);
    assert_eq!(stall(&mut m, true), [] as [u32; 0]);
    assert_eq!(stall(&mut m, true), [2]);
}

#[test]
fn a_retry_hint_raises_the_next_delay() {
    let mut m = opened(machine(Config::default()));
    m.handle(Input::RetryHint { ms: 20_000 });
    let ms = delay_of(&m.handle(FAIL)).unwrap();
    assert!((20_000..=21_000).contains(&ms), "{ms}");
}

#[test]
fn retry_now_reconnects_an_open_stream() {
    let mut m = opened(machine(Config::default()));
    assert_eq!(
        m.handle(Input::RetryNow),
        [
            Command::CloseSource,
            Command::OpenSource { resume: false },
            Command::Status(Status::Reconnecting)
        ]
    );
}

#[test]
fn status_is_reported_once_per_change() {
    let mut m = machine(Config::default());
    let mut statuses = Vec::new();
    for input in [
        Input::Start,
        FAIL,
        Input::TimerFired,
        FAIL,
        Input::TimerFired,
        Input::Opened,
        Input::Close,
    ] {
        for c in m.handle(input) {
            if let Command::Status(s) = c {
                statuses.push(s);
            }
        }
    }
    assert_eq!(
        statuses,
        [
            Status::Connecting,
            Status::Reconnecting,
            Status::Open,
            Status::Closed
        ]
    );
}

#[test]
fn an_empty_id_field_resets_the_last_event_id() {
    // `id:` with no value resets the browser's record, so later events read ''; as with EventSource, the
    // next reconnect carries no id.
    let mut m = opened(resuming());
    m.handle(seen("5", "6"));
    m.handle(seen("5", ""));
    assert_eq!(m.last_event_id(), "");
    m.handle(FAIL);
    assert_eq!(
        m.handle(Input::TimerFired)[0],
        Command::OpenSource { resume: false }
    );
}

#[test]
fn an_oversized_id_reconnects_without_it_and_says_so() {
    let mut m = opened(resuming());
    let long = "x".repeat(MAX_RESUME_ID + 1);
    m.handle(seen(&long, &long));
    m.handle(FAIL);
    assert_eq!(
        m.handle(Input::TimerFired),
        [
            Command::ResumeIdDropped {
                encoded_len: MAX_RESUME_ID as u32 + 1
            },
            Command::OpenSource { resume: false }
        ]
    );
    // The limit is on the encoded length: 1,366 non-ASCII bytes encode to more than 4,096.
    m.handle(Input::Opened);
    let wide = "é".repeat(683);
    m.handle(seen(&wide, &wide));
    m.handle(FAIL);
    let cmds = m.handle(Input::TimerFired);
    assert_eq!(cmds[0], Command::ResumeIdDropped { encoded_len: 4098 });
    // At the limit it still travels.
    m.handle(Input::Opened);
    let fits = "x".repeat(MAX_RESUME_ID);
    m.handle(seen(&fits, &fits));
    m.handle(FAIL);
    assert_eq!(
        m.handle(Input::TimerFired)[0],
        Command::OpenSource { resume: true }
    );
    assert_eq!(m.resumed_from(), &fits);
}

// ---- the status probe, the stall watchdog, minimum uptime, sleep (issue 12) ------------------------------

fn probing() -> Machine<SplitMix64> {
    let mut m = machine(Config {
        probe: true,
        ladder: LadderConfig {
            strategy: Jitter::None,
            ..LadderConfig::default()
        },
        ..Config::default()
    });
    m.handle(Input::Start);
    let cmds = m.handle(FAIL);
    assert_eq!(
        cmds,
        [
            Command::CloseSource,
            Command::ReportError,
            Command::Probe { id: 1 },
            Command::Status(Status::Reconnecting)
        ],
        "a source the browser gave up on is probed, not retried"
    );
    m
}

fn probed(status: u16, retry_after_ms: Option<u32>) -> Input {
    Input::Probed {
        id: 1,
        status: Some(status),
        retry_after_ms,
    }
}

#[test]
fn a_probe_that_finds_204_ends_the_stream() {
    let mut m = probing();
    assert_eq!(
        m.handle(probed(204, None)),
        [Command::Status(Status::Closed)]
    );
    assert!(m.closed());
    assert!(m.handle(Input::RetryNow).is_empty(), "closed is final");
}

#[test]
fn a_probe_that_finds_401_or_403_waits_for_reconnect_now() {
    for status in [401, 403] {
        let mut m = probing();
        assert_eq!(
            m.handle(probed(status, None)),
            [
                Command::Status(Status::Failed),
                Command::Unauthorized { status }
            ]
        );
        assert_eq!(m.ready_state(), 2);
        assert!(m.handle(Input::PageVisible).is_empty());
        assert!(m.handle(Input::Online).is_empty());
        assert!(!m.timer_armed());
        assert_eq!(
            m.handle(Input::RetryNow)[0],
            Command::OpenSource { resume: false }
        );
    }
}

#[test]
fn a_probe_that_finds_404_or_410_gives_up_at_once() {
    for status in [404, 410] {
        let mut m = probing();
        assert_eq!(
            m.handle(probed(status, None)),
            [
                Command::Status(Status::Failed),
                Command::GaveUp { attempts: 0 }
            ]
        );
        assert!(m.handle(Input::PageVisible).is_empty());
    }
}

#[test]
fn retry_after_on_429_or_503_is_a_floor_for_the_next_attempt() {
    for status in [429, 503] {
        let mut m = probing();
        let cmds = m.handle(probed(status, Some(2000)));
        assert_eq!(
            delay_of(&cmds),
            Some(2000 + 1000),
            "Retry-After plus the ladder's own delay"
        );
    }
    // Capped by maxHintMs.
    let mut m = machine(Config {
        probe: true,
        max_hint_ms: 500,
        ladder: LadderConfig {
            strategy: Jitter::None,
            ..LadderConfig::default()
        },
        ..Config::default()
    });
    m.handle(Input::Start);
    m.handle(FAIL);
    assert_eq!(
        delay_of(&m.handle(probed(503, Some(3_600_000)))),
        Some(1500)
    );
}

#[test]
fn any_other_answer_or_a_failed_probe_takes_the_ladder() {
    for status in [Some(500), Some(502), Some(200), Some(503), None] {
        let mut m = probing();
        let cmds = m.handle(Input::Probed {
            id: 1,
            status,
            retry_after_ms: None,
        });
        assert_eq!(delay_of(&cmds), Some(1000), "{status:?}");
    }
}

#[test]
fn a_late_answer_to_an_earlier_probe_is_ignored() {
    let mut m = probing();
    m.handle(Input::RetryNow);
    m.handle(FAIL); // probe 2 goes out
    assert!(m.handle(probed(404, None)).is_empty(), "probe 1's answer");
    let cmds = m.handle(Input::Probed {
        id: 2,
        status: Some(404),
        retry_after_ms: None,
    });
    assert!(cmds.contains(&Command::GaveUp { attempts: 0 }));
}

#[test]
fn without_the_option_nothing_is_probed() {
    let mut m = machine(Config::default());
    m.handle(Input::Start);
    assert!(!m
        .handle(FAIL)
        .iter()
        .any(|c| matches!(c, Command::Probe { .. })));
    // Nor when the browser would retry by itself (a network error, not a status).
    let mut m = machine(Config {
        probe: true,
        ..Config::default()
    });
    m.handle(Input::Start);
    let cmds = m.handle(Input::Failed {
        browser_gave_up: false,
    });
    assert!(!cmds.iter().any(|c| matches!(c, Command::Probe { .. })));
}

#[test]
fn the_watchdog_notices_four_silent_ticks_and_not_fewer() {
    let mut m = machine(Config {
        stall_timeout_ms: 1000,
        ..Config::default()
    });
    m.handle(Input::Start);
    let cmds = m.handle(Input::Opened);
    assert_eq!(cmds[0], Command::ArmWatchdog { ms: 250 });
    for _ in 0..3 {
        assert_eq!(
            m.handle(Input::WatchdogFired { active: false }),
            [Command::ArmWatchdog { ms: 250 }]
        );
    }
    // An event resets the count.
    m.handle(Input::WatchdogFired { active: true });
    for _ in 0..3 {
        m.handle(Input::WatchdogFired { active: false });
    }
    let cmds = m.handle(Input::WatchdogFired { active: false });
    assert_eq!(&cmds[..2], [Command::CloseSource, Command::ReportError]);
    assert!(
        delay_of(&cmds).is_some(),
        "a stalled stream takes the ladder"
    );
    assert_eq!(m.status(), Status::Reconnecting);
}

#[test]
fn closing_an_open_stream_disarms_its_watchdog() {
    let mut m = opened(machine(Config {
        stall_timeout_ms: 1000,
        ..Config::default()
    }));
    assert_eq!(
        m.handle(Input::Close),
        [
            Command::CloseSource,
            Command::DisarmTimer,
            Command::Status(Status::Closed)
        ]
    );
    let mut m = opened(machine(Config {
        stall_timeout_ms: 1000,
        ..Config::default()
    }));
    assert_eq!(
        &m.handle(FAIL)[..2],
        [Command::CloseSource, Command::DisarmTimer]
    );
}

#[test]
fn with_min_uptime_a_flapping_server_sees_delays_grow() {
    let config = Config {
        min_uptime_ms: 5000,
        ladder: LadderConfig {
            strategy: Jitter::None,
            ..LadderConfig::default()
        },
        ..Config::default()
    };
    let mut m = machine(config);
    let mut now = 0.0;
    m.handle(Input::Start);
    let mut delays = Vec::new();
    for _ in 0..5 {
        // Accepted, then dropped 50 ms later.
        m.set_now(now);
        m.handle(Input::Opened);
        assert_eq!(m.attempt(), 0, "attempt reads 0 while open");
        now += 50.0;
        m.set_now(now);
        let d = delay_of(&m.handle(FAIL)).unwrap();
        delays.push(d);
        now += d as f64;
        m.set_now(now);
        m.handle(Input::TimerFired);
    }
    assert_eq!(delays, [1000, 2000, 4000, 8000, 16000]);
    // A connection that stays up long enough resets the ladder.
    m.set_now(now);
    m.handle(Input::Opened);
    m.set_now(now + 5000.0);
    assert_eq!(delay_of(&m.handle(FAIL)), Some(1000));
    // Without the option, the same flapping server is retried at the first delay every time.
    let mut m = machine(Config {
        min_uptime_ms: 0,
        ..config
    });
    m.handle(Input::Start);
    for _ in 0..5 {
        m.handle(Input::Opened);
        assert_eq!(delay_of(&m.handle(FAIL)), Some(1000));
        m.handle(Input::TimerFired);
    }
}

#[test]
fn a_timer_that_fires_far_too_late_counts_as_waking_up() {
    let mut m = machine(Config {
        ladder: LadderConfig {
            strategy: Jitter::None,
            ..LadderConfig::default()
        },
        ..Config::default()
    });
    m.handle(Input::Start);
    for _ in 0..3 {
        m.handle(FAIL);
        m.handle(Input::TimerFired);
    }
    m.set_now(0.0);
    assert_eq!(delay_of(&m.handle(FAIL)), Some(8000));
    // The laptop slept for an hour: the timer fires at t = 3,600 s.
    m.set_now(3_600_000.0);
    m.handle(Input::TimerFired);
    assert_eq!(
        delay_of(&m.handle(FAIL)),
        Some(1000),
        "a fresh ladder after waking"
    );
    // On time, or a few seconds late (a busy page), the ladder carries on.
    m.set_now(3_601_000.0);
    m.handle(Input::TimerFired);
    assert_eq!(delay_of(&m.handle(FAIL)), Some(2000));
    m.set_now(3_601_000.0 + 2000.0 + 3000.0);
    m.handle(Input::TimerFired);
    assert_eq!(delay_of(&m.handle(FAIL)), Some(4000));
}

#[test]
fn a_connect_timeout_fails_an_attempt_that_never_opens() {
    let mut m = machine(Config {
        connect_timeout_ms: 500,
        ladder: LadderConfig {
            strategy: Jitter::None,
            ..LadderConfig::default()
        },
        ..Config::default()
    });
    let cmds = m.handle(Input::Start);
    assert_eq!(
        cmds,
        [
            Command::OpenSource { resume: false },
            Command::ArmWatchdog { ms: 500 },
            Command::Status(Status::Connecting)
        ]
    );
    let cmds = m.handle(Input::WatchdogFired { active: false });
    assert_eq!(&cmds[..2], [Command::CloseSource, Command::ReportError]);
    assert_eq!(delay_of(&cmds), Some(1000));
    // An attempt that opens in time disarms it.
    m.handle(Input::TimerFired);
    let cmds = m.handle(Input::Opened);
    assert_eq!(cmds[0], Command::DisarmTimer);
    assert!(!m.timer_armed());
}

#[test]
fn a_stream_the_server_ended_waits_for_reconnect_now() {
    let mut m = opened(machine(Config::default()));
    assert_eq!(
        m.handle(Input::Ended),
        [
            Command::CloseSource,
            Command::ReportError,
            Command::Status(Status::Closed)
        ]
    );
    assert_eq!(m.ready_state(), 2);
    assert!(m.handle(Input::PageVisible).is_empty());
    assert!(m.handle(Input::Online).is_empty());
    assert_eq!(
        m.handle(Input::RetryNow)[0],
        Command::OpenSource { resume: false }
    );
}

// ---- the fetch transport: a status read off the response, and the server's retry: field ----------------

fn refused(status: Option<u16>, retry_after_ms: Option<u32>) -> Input {
    Input::Refused {
        status,
        retry_after_ms,
    }
}

#[test]
fn a_refused_attempt_closes_reports_and_decides_by_its_status_with_no_probe() {
    // 204: over, as the specification means it.
    let mut m = machine(Config::default());
    m.handle(Input::Start);
    let cmds = m.handle(refused(Some(204), None));
    assert_eq!(
        cmds,
        [
            Command::CloseSource,
            Command::ReportError,
            Command::Status(Status::Closed)
        ]
    );
    assert!(m.closed());
    // 401 and 403: wait for RetryNow.
    for status in [401, 403] {
        let mut m = machine(Config::default());
        m.handle(Input::Start);
        let cmds = m.handle(refused(Some(status), None));
        assert!(cmds.contains(&Command::Unauthorized { status }));
        assert!(delay_of(&cmds).is_none());
        assert!(
            m.handle(Input::PageVisible).is_empty(),
            "only RetryNow retries"
        );
        assert!(m
            .handle(Input::RetryNow)
            .contains(&Command::OpenSource { resume: false }));
    }
    // 404 and 410: give up at once, whatever maxAttempts says.
    for status in [404, 410] {
        let mut m = machine(Config::default());
        m.handle(Input::Start);
        let cmds = m.handle(refused(Some(status), None));
        assert!(cmds.contains(&Command::GaveUp { attempts: 0 }));
        assert_eq!(m.status(), Status::Failed);
    }
    // Anything else, and a 200 that is not a stream: the ladder.
    for status in [None, Some(500), Some(502), Some(200)] {
        let mut m = machine(Config::default());
        m.handle(Input::Start);
        let ms = delay_of(&m.handle(refused(status, Some(50_000)))).unwrap();
        assert!(
            ms <= 1000,
            "Retry-After is heeded only on 429 and 503, not {status:?}"
        );
    }
    // A refusal that comes when no attempt is live changes nothing.
    let mut m = machine(Config::default());
    m.handle(Input::Start);
    m.handle(FAIL);
    assert!(m.handle(refused(Some(404), None)).is_empty());
}

#[test]
fn retry_after_on_a_refused_429_or_503_is_capped_by_max_hint_ms() {
    for status in [429, 503] {
        let mut m = machine(Config {
            max_hint_ms: 20_000,
            ..Config::default()
        });
        m.handle(Input::Start);
        let ms = delay_of(&m.handle(refused(Some(status), Some(5_000)))).unwrap();
        assert!((5_000..=6_000).contains(&ms), "{ms}");
        m.handle(Input::TimerFired);
        let ms = delay_of(&m.handle(refused(Some(status), Some(900_000)))).unwrap();
        assert!((20_000..=22_000).contains(&ms), "capped at maxHintMs: {ms}");
    }
}

#[test]
fn the_retry_field_is_a_floor_under_every_later_delay_until_changed() {
    let mut m = machine(Config {
        max_hint_ms: 10_000,
        ..Config::default()
    });
    m.handle(Input::Start);
    m.handle(Input::Opened);
    assert!(m.handle(Input::RetryField { ms: 3_000 }).is_empty());
    // It outlives an open (which resets the ladder) and more than one delay, unlike a hint.
    for _ in 0..3 {
        let ms = delay_of(&m.handle(FAIL)).unwrap();
        assert!((3_000..=4_000).contains(&ms), "{ms}");
        m.handle(Input::TimerFired);
        m.handle(Input::Opened);
    }
    // Still spread above the floor: the jitter draw rides on it.
    let delays: std::collections::BTreeSet<u32> = (0..20)
        .map(|_| {
            let ms = delay_of(&m.handle(FAIL)).unwrap();
            m.handle(Input::TimerFired);
            m.handle(Input::Opened);
            ms
        })
        .collect();
    assert!(delays.len() > 10, "{delays:?}");
    // Capped by maxHintMs, and 0 removes it.
    m.handle(Input::RetryField { ms: 10_000_000 });
    let ms = delay_of(&m.handle(FAIL)).unwrap();
    assert!((10_000..=11_000).contains(&ms), "{ms}");
    m.handle(Input::TimerFired);
    m.handle(Input::Opened);
    m.handle(Input::RetryField { ms: 0 });
    assert!(delay_of(&m.handle(FAIL)).unwrap() <= 1_000);
}

// ---- property tests -------------------------------------------------------------------------------------

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        1 => Just(Input::Start),
        4 => Just(Input::Opened),
        4 => any::<bool>().prop_map(|browser_gave_up| Input::Failed { browser_gave_up }),
        2 => (prop_oneof![Just(String::new()), "[0-9]{1,3}"], prop_oneof![Just(String::new()), "[0-9]{1,3}"])
            .prop_map(|(first, last)| Input::Seen { first, last }),
        4 => Just(Input::TimerFired),
        1 => Just(Input::PageVisible),
        1 => Just(Input::Online),
        1 => Just(Input::Offline),
        1 => (0u32..100_000).prop_map(|ms| Input::RetryHint { ms }),
        1 => Just(Input::Stalled),
        1 => (prop::option::of(prop_oneof![Just(0u32), 1u32..100_000]), any::<bool>(), any::<bool>())
            .prop_map(|(heartbeat_ms, connect, resume)| Input::Announced { heartbeat_ms, connect_ms: heartbeat_ms.filter(|_| connect), resume }),
        1 => Just(Input::Unusable),
        2 => any::<bool>().prop_map(|active| Input::WatchdogFired { active }),
        2 => (0u32..4, prop_oneof![Just(None), Just(Some(200u16)), Just(Some(204)), Just(Some(401)), Just(Some(403)), Just(Some(404)), Just(Some(410)), Just(Some(429)), Just(Some(503)), Just(Some(500))], prop::option::of(0u32..1_000_000))
            .prop_map(|(id, status, retry_after_ms)| Input::Probed { id, status, retry_after_ms }),
        2 => (prop_oneof![Just(None), Just(Some(204u16)), Just(Some(401)), Just(Some(404)), Just(Some(410)), Just(Some(429)), Just(Some(503)), Just(Some(500))], prop::option::of(0u32..1_000_000))
            .prop_map(|(status, retry_after_ms)| Input::Refused { status, retry_after_ms }),
        1 => prop_oneof![Just(0u32), 0u32..100_000].prop_map(|ms| Input::RetryField { ms }),
        1 => Just(Input::RetryNow),
        1 => Just(Input::Ended),
        1 => Just(Input::Close),
        1 => Just(Input::PageHidden),
        1 => Just(Input::Restored),
        2 => Just(Input::PauseFired),
    ]
}

fn config() -> impl Strategy<Value = Config> {
    (
        prop_oneof![
            Just(Reconnect::Backoff),
            Just(Reconnect::Browser),
            Just(Reconnect::Never)
        ],
        prop_oneof![
            Just(Jitter::None),
            Just(Jitter::Full),
            Just(Jitter::Equal),
            Just(Jitter::Decorrelated),
            Just(Jitter::Fixed),
            Just(Jitter::Linear)
        ],
        0.0f64..5000.0,
        0.0f64..100_000.0,
        1.0f64..4.0,
        prop::option::of(0u32..6),
        any::<(bool, bool, bool)>(),
        0u32..200_000,
        (
            any::<bool>(),
            prop_oneof![Just(0u32), 1u32..10_000],
            prop_oneof![Just(0u32), 1u32..10_000],
            prop_oneof![Just(0u32), 1u32..10_000],
            prop_oneof![Just(0u32), 1u32..10_000],
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                mode,
                strategy,
                base,
                extra,
                factor,
                max_attempts,
                (resume, vis, online),
                max_hint_ms,
                (
                    probe,
                    stall_timeout_ms,
                    min_uptime_ms,
                    connect_timeout_ms,
                    pause_when_hidden_ms,
                    trace,
                ),
            )| Config {
                mode,
                ladder: LadderConfig {
                    strategy,
                    base_ms: base,
                    max_ms: base + extra,
                    factor,
                    max_attempts,
                },
                resume,
                wake_on_visible: vis,
                wake_on_online: online,
                max_hint_ms,
                probe,
                stall_timeout_ms,
                min_uptime_ms,
                connect_timeout_ms,
                pause_when_hidden_ms,
                trace,
            },
        )
}

/// Whether the input ended a source that had not opened (so `attempt` was the ladder's own count).
fn was_live_before_open(input: &Input, was_live: bool) -> bool {
    !was_live
        || !matches!(
            input,
            Input::Failed { .. }
                | Input::Refused { .. }
                | Input::Stalled
                | Input::WatchdogFired { .. }
        )
}

/// What a correct shell would hold after carrying out each command.
#[derive(Default)]
struct Shell {
    sources: u32,
    timers: u32,
    /// Probes out, and the number of the last one sent.
    probes: u32,
    probe_id: u32,
    /// Pause timers armed.
    pauses: u32,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_for_any_input_sequence(
        config in config(),
        seed in any::<u64>(),
        inputs in prop::collection::vec(input(), 0..80),
    ) {
        let mut m = Machine::new(config, SplitMix64::new(seed));
        let mut shell = Shell::default();
        let mut closed = false;
        let mut gave_up = false;
        // A probe found the stream gone or unauthorized: only RetryNow may open again.
        let mut stopped = false;
        // The server ended the stream: only RetryNow may open again.
        let mut ended = false;
        let mut max_hint = 0u32;
        let mut last_id = String::new();
        let mut resumed_from = String::new();
        let mut failures_in_a_row = 0u32;
        let mut stalls_told = false;
        let mut now = 0.0f64;
        for input in inputs {
            now += 137.0;
            m.set_now(now);
            let before_attempt = m.attempt();
            let was_live = m.source_live();
            // A timer that fires is spent before the machine acts on it.
            let spent = match input {
                Input::TimerFired => m.timer_armed() && !m.source_live(),
                Input::WatchdogFired { .. } => m.timer_armed() && m.source_live(),
                _ => false,
            };
            if spent {
                shell.timers -= 1;
            }
            if matches!(input, Input::PauseFired) && m.pause_armed() {
                shell.pauses -= 1;
            }
            // Asleep, only a visible page (or restored, or RetryNow) may open again.
            let asleep = m.asleep();
            // A probe's answer spends it, if it is the one out.
            if matches!(input, Input::Probed { id, .. } if m.probing() && id == shell.probe_id) {
                shell.probes -= 1;
            }
            match &input {
                Input::RetryHint { ms } => max_hint = max_hint.max((*ms).min(config.max_hint_ms)),
                Input::Probed { status: Some(429 | 503), retry_after_ms: Some(ms), .. }
                | Input::Refused { status: Some(429 | 503), retry_after_ms: Some(ms) }
                | Input::RetryField { ms } => {
                    max_hint = max_hint.max((*ms).min(config.max_hint_ms));
                }
                Input::Seen { first, last } if was_live => {
                    last_id = if first.is_empty() && last.is_empty() { resumed_from.clone() } else { last.clone() };
                }
                _ => {}
            }
            let cmds = m.handle(input.clone());
            if matches!(input, Input::Unusable) && was_live {
                prop_assert!(!cmds.iter().any(|c| matches!(c, Command::ArmTimer { .. } | Command::ArmWatchdog { .. } | Command::OpenSource { .. } | Command::Probe { .. })), "an unusable URL touched the ladder");
                prop_assert_eq!(m.status(), Status::Failed);
                prop_assert_eq!(m.ready_state(), 2);
            }
            if matches!(input, Input::Failed { .. }) && was_live {
                failures_in_a_row += 1;
            }
            for c in &cmds {
                match c {
                    Command::OpenSource { resume } => {
                        prop_assert!(!closed, "opened after Close");
                        prop_assert!(!gave_up || matches!(input, Input::RetryNow | Input::PageVisible | Input::Restored | Input::Online),
                            "woke from failed on {:?}", input);
                        prop_assert!(!stopped || matches!(input, Input::RetryNow), "woke from a probe's verdict on {:?}", input);
                        prop_assert!(!ended || matches!(input, Input::RetryNow), "woke from a server's end on {:?}", input);
                        prop_assert!(!asleep || matches!(input, Input::RetryNow | Input::PageVisible | Input::Restored), "woke from sleep on {:?}", input);
                        shell.sources += 1;
                        resumed_from = last_id.clone();
                        if *resume {
                            // The option, or a server's announcement of where it reads the id.
                            prop_assert!(m.config().resume);
                            prop_assert_eq!(m.resumed_from(), &last_id);
                        }
                    }
                    Command::CloseSource => { prop_assert_eq!(shell.sources, 1); shell.sources -= 1; }
                    Command::ArmTimer { ms } => {
                        prop_assert!(!closed, "timer armed after Close");
                        prop_assert_eq!(config.mode == Reconnect::Never, false);
                        shell.timers += 1;
                        prop_assert!(*ms as f64 <= config.ladder.max_ms.max(config.ladder.base_ms) + max_hint as f64 + 1.0,
                            "delay {} above max {} and hint {}", ms, config.ladder.max_ms, max_hint);
                    }
                    Command::DisarmTimer => { prop_assert_eq!(shell.timers, 1); shell.timers -= 1; }
                    Command::ArmWatchdog { ms } => {
                        prop_assert!(!closed, "watchdog armed after Close");
                        prop_assert!(
                            // The stall timeout is the user's, or the one a server's heartbeat announced; the
                            // connect timeout likewise.
                            (m.config().stall_timeout_ms > 0 && *ms <= m.config().stall_timeout_ms.max(1)) || *ms == m.config().connect_timeout_ms,
                            "a watchdog of {} ms", ms
                        );
                        prop_assert!(m.source_live(), "a watchdog with no source");
                        shell.timers += 1;
                    }
                    Command::Probe { id } => {
                        prop_assert!(config.probe, "a probe the options did not ask for");
                        prop_assert!(!closed, "a probe after Close");
                        shell.probes += 1;
                        shell.probe_id = *id;
                    }
                    Command::CancelProbe => { prop_assert_eq!(shell.probes, 1); shell.probes -= 1; }
                    Command::ArmPause { ms } => {
                        prop_assert!(!closed, "a pause armed after Close");
                        prop_assert_eq!(*ms, config.pause_when_hidden_ms);
                        shell.pauses += 1;
                    }
                    Command::DisarmPause => { prop_assert_eq!(shell.pauses, 1); shell.pauses -= 1; }
                    Command::GaveUp { attempts } => {
                        gave_up = true;
                        if matches!(input, Input::Probed { status: Some(404 | 410), .. } | Input::Refused { status: Some(404 | 410), .. } | Input::Unusable) {
                            stopped = true;
                        } else if config.mode == Reconnect::Backoff && !matches!(input, Input::Probed { .. } | Input::Refused { .. }) {
                            prop_assert_eq!(Some(*attempts), config.ladder.max_attempts);
                        }
                    }
                    Command::Unauthorized { status } => {
                        prop_assert!(matches!(status, 401 | 403));
                        stopped = true;
                    }
                    Command::RetryScheduled { attempt, .. } => {
                        // With minUptimeMs a connection too short to count leaves the ladder where it was.
                        if config.min_uptime_ms == 0 || was_live_before_open(&input, was_live) {
                            prop_assert_eq!(*attempt, before_attempt + 1);
                        } else {
                            prop_assert!(*attempt > before_attempt);
                        }
                        if let Some(max) = config.ladder.max_attempts { prop_assert!(*attempt <= max); }
                    }
                    Command::Connected { attempt } => prop_assert_eq!(*attempt, before_attempt),
                    Command::StallsRecur { .. } => {
                        prop_assert!(!stalls_told, "stalls told twice");
                        prop_assert!(matches!(input, Input::Stalled | Input::WatchdogFired { .. }), "stalls told on {:?}", input);
                        stalls_told = true;
                    }
                    _ => {}
                }
                prop_assert!(shell.sources <= 1, "two live sources");
                prop_assert!(shell.timers <= 1, "two armed timers");
                prop_assert!(shell.probes <= 1, "two probes out");
                prop_assert!(shell.pauses <= 1, "two pause timers");
            }
            match input {
                Input::Close => closed = true,
                Input::Ended if cmds.contains(&Command::Status(Status::Closed)) => ended = true,
                Input::RetryNow | Input::PageVisible | Input::Restored | Input::Online if cmds.iter().any(|c| matches!(c, Command::OpenSource { .. })) => {
                    gave_up = false;
                    stopped = false;
                    ended = false;
                    failures_in_a_row = 0;
                    prop_assert_eq!(m.attempt(), 0, "wake gives a fresh ladder");
                }
                Input::Opened if cmds.contains(&Command::Status(Status::Open)) => {
                    failures_in_a_row = 0;
                    prop_assert_eq!(m.attempt(), 0, "attempt resets on open");
                }
                Input::Seen { .. } => prop_assert_eq!(m.attempt(), before_attempt, "events never reset the ladder"),
                _ => {}
            }
            // The shell's picture and the machine's agree.
            prop_assert_eq!(shell.sources == 1, m.source_live());
            prop_assert_eq!(shell.timers == 1, m.timer_armed());
            // A timer beside a live source is the watchdog's, and only with stallTimeoutMs.
            prop_assert!(!(m.source_live() && m.timer_armed()) || m.config().stall_timeout_ms > 0 || m.config().connect_timeout_ms > 0 || config.connect_timeout_ms > 0);
            prop_assert!(!(m.probing() && m.timer_armed()), "a timer while probing");
            prop_assert_eq!(shell.probes == 1, m.probing(), "a probe out exactly while probing");
            prop_assert_eq!(shell.pauses == 1, m.pause_armed());
            if m.asleep() { prop_assert!(!m.source_live() && !m.timer_armed() && !m.probing(), "asleep with something running"); }
            if closed { prop_assert_eq!(shell.pauses, 0, "a pause timer after Close"); }
            prop_assert_eq!(m.status() == Status::Open, m.ready_state() == 1);
            if m.status() == Status::Open { prop_assert!(m.source_live()); }
            if closed { prop_assert_eq!(m.status(), Status::Closed); prop_assert!(!m.source_live() && !m.timer_armed()); }
            if let (Reconnect::Backoff, Some(max)) = (config.mode, config.ladder.max_attempts) {
                prop_assert!(m.attempt() <= max);
                let _ = failures_in_a_row;
            }
        }
    }
}

#[test]
fn a_client_taking_over_resumes_on_its_first_connection() {
    let mut m = resuming();
    m.resume_from("41".into());
    assert_eq!(
        m.handle(Input::Start)[0],
        Command::OpenSource { resume: true }
    );
    assert_eq!(m.resumed_from(), "41");
    assert_eq!(m.last_event_id(), "41");
}

fn pausing(ms: u32) -> Machine<SplitMix64> {
    machine(Config {
        resume: true,
        pause_when_hidden_ms: ms,
        ..Config::default()
    })
}

#[test]
fn a_page_hidden_long_enough_closes_its_stream_and_reconnects_at_once_when_visible() {
    let mut m = opened(pausing(30_000));
    m.handle(seen("1", "7"));
    assert_eq!(
        m.handle(Input::PageHidden),
        [Command::ArmPause { ms: 30_000 }]
    );
    // Hidden twice arms one timer.
    assert_eq!(m.handle(Input::PageHidden), []);
    // The timer fires: the stream closes, no error is reported, and nothing is scheduled.
    assert_eq!(
        m.handle(Input::PauseFired),
        [Command::CloseSource, Command::Status(Status::Reconnecting)]
    );
    assert!(m.asleep() && !m.source_live() && !m.timer_armed());
    assert_eq!(m.ready_state(), 0);
    // Neither the network nor a stray timer wakes it while the page is hidden.
    assert_eq!(m.handle(Input::Online), []);
    assert_eq!(m.handle(Input::TimerFired), []);
    // Visible: at once, resuming after the last id.
    let cmds = m.handle(Input::PageVisible);
    assert_eq!(cmds, [Command::OpenSource { resume: true }]);
    assert_eq!(m.resumed_from(), "7");
    assert!(m
        .handle(Input::Opened)
        .contains(&Command::Status(Status::Open)));
}

#[test]
fn a_page_visible_again_before_the_pause_keeps_its_stream() {
    let mut m = opened(pausing(30_000));
    m.handle(Input::PageHidden);
    assert_eq!(m.handle(Input::PageVisible), [Command::DisarmPause]);
    assert_eq!(
        m.handle(Input::PauseFired),
        [],
        "a late firing changes nothing"
    );
    assert!(m.source_live());
    // Without the option, hiding does nothing at all.
    let mut plain = opened(pausing(0));
    assert_eq!(plain.handle(Input::PageHidden), []);
}

#[test]
fn a_waiting_stream_hidden_long_enough_stops_waiting() {
    let mut m = pausing(1000);
    m.handle(Input::Start);
    m.handle(FAIL);
    assert!(m.timer_armed());
    m.handle(Input::PageHidden);
    assert_eq!(m.handle(Input::PauseFired), [Command::DisarmTimer]);
    assert!(m.asleep() && !m.timer_armed());
    assert_eq!(
        m.handle(Input::PageVisible),
        [Command::OpenSource { resume: false }]
    );
    assert_eq!(m.attempt(), 0, "a fresh ladder");
}

#[test]
fn close_disarms_the_pause_timer() {
    let mut m = opened(pausing(1000));
    m.handle(Input::PageHidden);
    let cmds = m.handle(Input::Close);
    assert!(cmds.contains(&Command::DisarmPause) && cmds.contains(&Command::CloseSource));
    assert!(!m.pause_armed());
}

#[test]
fn a_restore_from_the_back_forward_cache_replaces_a_live_source_at_once_resuming() {
    let mut m = opened(resuming());
    m.handle(seen("3", "9"));
    let cmds = m.handle(Input::Restored);
    assert_eq!(
        cmds,
        [
            Command::CloseSource,
            Command::OpenSource { resume: true },
            Command::Status(Status::Reconnecting)
        ],
        "no error reported, no delay"
    );
    assert_eq!(m.resumed_from(), "9");
    // Whatever the engine fires for the cut source afterwards reaches no one: it was closed. A waiting
    // stream is woken as by a visible page.
    let mut w = resuming();
    w.handle(Input::Start);
    w.handle(FAIL);
    let cmds = w.handle(Input::Restored);
    assert_eq!(cmds[0], Command::DisarmTimer);
    assert!(matches!(cmds[1], Command::OpenSource { .. }));
    // With reconnect: false, a restore opens nothing.
    let mut never = opened(machine(Config {
        mode: Reconnect::Never,
        ..Config::default()
    }));
    assert!(!never
        .handle(Input::Restored)
        .iter()
        .any(|c| matches!(c, Command::OpenSource { .. })));
}

// ---- the server's announcement: a heartbeat both halves agree on, and resume with no option (issue 52) --

/// The watchdog's ticks until it calls the stream stalled, each `WatchdogFired` with nothing seen.
fn silent_ticks_until_stalled(m: &mut Machine<SplitMix64>) -> (u32, u32) {
    let mut tick_ms = 0;
    for ticks in 1..=64 {
        let cmds = m.handle(Input::WatchdogFired { active: false });
        if cmds.first() == Some(&Command::CloseSource) {
            return (ticks, tick_ms);
        }
        match cmds.as_slice() {
            [Command::ArmWatchdog { ms }] => tick_ms = *ms,
            other => panic!("a silent tick re-arms the watchdog or stalls, not {other:?}"),
        }
    }
    panic!("never stalled");
}

#[test]
fn an_announced_heartbeat_arms_the_watchdog_at_two_intervals_with_no_option() {
    let mut m = opened(machine(Config::default()));
    assert!(
        !m.timer_armed(),
        "no stallTimeoutMs, no announcement: nothing watches the stream"
    );
    let cmds = m.handle(Input::Announced {
        heartbeat_ms: Some(15_000),
        connect_ms: None,
        resume: false,
    });
    assert_eq!(
        cmds,
        [Command::ArmWatchdog { ms: 7_500 }],
        "2 x 15 s, looked at 4 times"
    );
    // Events and heartbeats keep it alive; silence for two intervals ends it.
    assert_eq!(
        m.handle(Input::WatchdogFired { active: true }),
        [Command::ArmWatchdog { ms: 7_500 }]
    );
    assert_eq!(silent_ticks_until_stalled(&mut m).0, 4);
    assert_eq!(m.status(), Status::Reconnecting);
    // The interval is kept for the next connection, which is watched from its open on.
    m.handle(Input::TimerFired);
    assert_eq!(
        m.handle(Input::Opened)[0],
        Command::ArmWatchdog { ms: 7_500 }
    );
    // A later announcement changes the timeout from the next tick on; 0 (no heartbeats) turns it off.
    m.handle(Input::Announced {
        heartbeat_ms: Some(1_000),
        connect_ms: None,
        resume: false,
    });
    assert_eq!(
        m.handle(Input::WatchdogFired { active: true }),
        [Command::ArmWatchdog { ms: 500 }]
    );
    assert_eq!(
        m.handle(Input::Announced {
            heartbeat_ms: Some(0),
            connect_ms: None,
            resume: false,
        }),
        [Command::DisarmTimer]
    );
    assert!(!m.timer_armed());
}

#[test]
fn an_announced_heartbeat_times_out_a_reconnect_that_never_opens_at_two_intervals() {
    // A reconnect sent into a pooled socket a proxy froze never opens; the server writes its first line at
    // once, so two intervals without an open is a dead attempt, with no connectTimeoutMs of the user's.
    let mut m = opened(machine(Config {
        ladder: LadderConfig {
            strategy: Jitter::None,
            ..LadderConfig::default()
        },
        ..Config::default()
    }));
    assert!(m
        .handle(Input::Announced {
            heartbeat_ms: None,
            connect_ms: Some(1_000),
            resume: false,
        })
        .is_empty());
    m.handle(FAIL);
    let cmds = m.handle(Input::TimerFired);
    assert_eq!(
        cmds[..2],
        [
            Command::OpenSource { resume: false },
            Command::ArmWatchdog { ms: 2_000 }
        ]
    );
    let cmds = m.handle(Input::WatchdogFired { active: false });
    assert_eq!(
        &cmds[..2],
        [Command::CloseSource, Command::ReportError],
        "not open in two intervals: a failed attempt"
    );
    assert!(delay_of(&cmds).is_some(), "and the ladder's next");
    // Announced as 0 (no heartbeats): no timeout from then on.
    m.handle(Input::Announced {
        heartbeat_ms: None,
        connect_ms: Some(0),
        resume: false,
    });
    let cmds = m.handle(Input::TimerFired);
    assert!(
        !cmds
            .iter()
            .any(|c| matches!(c, Command::ArmWatchdog { .. })),
        "{cmds:?}"
    );
    // Only in backoff mode: the browser's own retries and none are not ours to time.
    for mode in [Reconnect::Browser, Reconnect::Never] {
        let mut m = opened(machine(Config {
            mode,
            ..Config::default()
        }));
        m.handle(Input::Announced {
            heartbeat_ms: None,
            connect_ms: Some(1_000),
            resume: false,
        });
        assert_eq!(m.config().connect_timeout_ms, 0, "{mode:?}");
    }
}

#[test]
fn a_users_stall_timeout_and_the_other_modes_are_not_overridden_by_an_announcement() {
    let mut m = opened(machine(Config {
        stall_timeout_ms: 4_000,
        ..Config::default()
    }));
    assert!(m
        .handle(Input::Announced {
            heartbeat_ms: Some(15_000),
            connect_ms: None,
            resume: false,
        })
        .is_empty());
    assert_eq!(
        silent_ticks_until_stalled(&mut m),
        (4, 1_000),
        "still the user's 4 s"
    );
    for mode in [Reconnect::Browser, Reconnect::Never] {
        let mut m = opened(machine(Config {
            mode,
            ..Config::default()
        }));
        let said = Input::Announced {
            heartbeat_ms: Some(15_000),
            connect_ms: None,
            resume: true,
        };
        assert!(m.handle(said).is_empty(), "{mode:?}");
        assert!(
            !m.config().resume && m.config().stall_timeout_ms == 0,
            "{mode:?}"
        );
    }
}

#[test]
fn an_announced_resume_parameter_makes_every_later_reconnect_carry_the_id() {
    let mut m = opened(machine(Config::default()));
    m.handle(Input::Seen {
        first: "1".into(),
        last: "7".into(),
    });
    m.handle(FAIL);
    assert_eq!(
        m.handle(Input::TimerFired)[0],
        Command::OpenSource { resume: false },
        "before the server said where it reads the id, there is nowhere to put it"
    );
    m.handle(Input::Opened);
    m.handle(Input::Announced {
        heartbeat_ms: None,
        connect_ms: None,
        resume: true,
    });
    assert!(!m.timer_armed(), "no interval said: no watchdog");
    m.handle(FAIL);
    assert_eq!(
        m.handle(Input::TimerFired)[0],
        Command::OpenSource { resume: true }
    );
    assert_eq!(m.resumed_from(), "7");
}

/// What the machine is doing, as its public getters show it: the states a trace step leads to.
fn observed(m: &Machine<SplitMix64>) -> &'static str {
    if m.closed() {
        "closed"
    } else if m.source_live() {
        if m.ready_state() == 1 {
            "open"
        } else {
            "connecting"
        }
    } else if m.probing() {
        "probing"
    } else if m.asleep() {
        "asleep"
    } else if m.timer_armed() {
        "waiting"
    } else if m.ready_state() == 2 {
        "stopped"
    } else {
        // Not started, or offline with nothing to wait for.
        "idle"
    }
}

/// The states a step may leave the machine in, when it is the last of an input's steps.
fn leads_to(step: &Step) -> &'static [&'static str] {
    match step {
        Step::Attempt { .. } => &["connecting"],
        Step::Open { .. } => &["open"],
        Step::Wait { .. } => &["waiting"],
        Step::Probe => &["probing"],
        Step::Asleep => &["asleep"],
        Step::Offline => &["idle"],
        Step::GaveUp { .. } => &["stopped"],
        // A 204 closes for good; a server's end leaves RetryNow its say.
        Step::Closed { by_user: true } => &["closed"],
        Step::Closed { by_user: false } => &["closed", "stopped"],
        // Always followed by what comes of it.
        Step::Ended { .. } | Step::Probed { .. } => &[],
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    /// The trace has one step per attempt and per change of state, each matching the commands that carry
    /// it out, and none where nothing changed; with tracing off, the commands are the same but for it.
    #[test]
    fn the_trace_has_one_step_per_transition(
        config in config(),
        seed in any::<u64>(),
        inputs in prop::collection::vec(input(), 0..80),
    ) {
        let config = Config { trace: true, ..config };
        let mut m = Machine::new(config, SplitMix64::new(seed));
        let mut untraced = Machine::new(Config { trace: false, ..config }, SplitMix64::new(seed));
        let mut probe_out = None;
        let mut now = 0.0f64;
        for input in inputs {
            now += 137.0;
            m.set_now(now);
            untraced.set_now(now);
            let before = observed(&m);
            let accepted_probe = matches!(input, Input::Probed { id, .. } if m.probing() && Some(id) == probe_out);
            let cmds = m.handle(input.clone());
            let after = observed(&m);
            let steps: Vec<Step> = cmds.iter().filter_map(|c| match c { Command::Trace(s) => Some(*s), _ => None }).collect();
            let others: Vec<Command> = cmds.iter().copied().filter(|c| !matches!(c, Command::Trace(_))).collect();
            prop_assert_eq!(&others, &untraced.handle(input.clone()), "tracing changed what the machine does");
            let count = |f: &dyn Fn(&Command) -> bool| others.iter().filter(|c| f(c)).count();
            let steps_of = |f: &dyn Fn(&Step) -> bool| steps.iter().filter(|s| f(s)).count();

            // Attempts: one per source made, carrying the id as the source does; the browser's own retries
            // beside them.
            let opens: Vec<bool> = others.iter().filter_map(|c| match c { Command::OpenSource { resume } => Some(*resume), _ => None }).collect();
            let attempts: Vec<bool> = steps.iter().filter_map(|s| match s {
                Step::Attempt { trigger, resume, .. } if *trigger != Trigger::Browser => Some(*resume),
                _ => None,
            }).collect();
            prop_assert_eq!(&opens, &attempts, "attempts and sources made differ on {:?}", input);
            if steps_of(&|s| matches!(s, Step::Attempt { trigger: Trigger::Browser, .. })) > 0 {
                let browser_retry = config.mode == Reconnect::Browser && matches!(input, Input::Failed { browser_gave_up: false });
                prop_assert!(browser_retry, "a browser's retry traced on {:?}", input);
            }
            // Opens, errors, probes, give-ups and closes: one step for each command that tells them.
            let connected: Vec<u32> = others.iter().filter_map(|c| match c { Command::Connected { attempt } => Some(*attempt), _ => None }).collect();
            let open_steps: Vec<u32> = steps.iter().filter_map(|s| match s { Step::Open { attempt } => Some(*attempt), _ => None }).collect();
            prop_assert_eq!(connected, open_steps);
            prop_assert_eq!(count(&|c| *c == Command::ReportError), steps_of(&|s| matches!(s, Step::Ended { .. })));
            prop_assert_eq!(count(&|c| matches!(c, Command::Probe { .. })), steps_of(&|s| *s == Step::Probe));
            prop_assert_eq!(accepted_probe as usize, steps_of(&|s| matches!(s, Step::Probed { .. })));
            prop_assert_eq!(
                count(&|c| matches!(c, Command::GaveUp { .. } | Command::Unauthorized { .. })),
                steps_of(&|s| matches!(s, Step::GaveUp { .. }))
            );
            // The server's end tells `closed`; the user's close() after it is a step of its own.
            let server_closed = !matches!(input, Input::Close) && others.contains(&Command::Status(Status::Closed));
            prop_assert_eq!(server_closed as usize, steps_of(&|s| *s == Step::Closed { by_user: false }));
            prop_assert_eq!(steps_of(&|s| *s == Step::Closed { by_user: true }), (matches!(input, Input::Close) && before != "closed") as usize);
            // Waits: the delay armed and told, its ladder part and what set its size.
            let retries: Vec<(u32, u32)> = others.iter().filter_map(|c| match c { Command::RetryScheduled { attempt, delay_ms } => Some((*attempt, *delay_ms)), _ => None }).collect();
            let waits: Vec<(u32, u32)> = steps.iter().filter_map(|s| match s { Step::Wait { attempt, draw } => Some((*attempt, draw.delay_ms)), _ => None }).collect();
            prop_assert_eq!(retries, waits);
            for s in &steps {
                if let Step::Wait { draw, .. } = s {
                    prop_assert!(draw.ladder_ms <= draw.delay_ms);
                    let own = matches!(draw.bound, Bound::Ladder | Bound::MaxMs);
                    prop_assert!(!own || draw.ladder_ms == draw.delay_ms, "{:?}: a delay over the ladder's with no server's ask", draw);
                    prop_assert!(own || draw.delay_ms > draw.ladder_ms || draw.delay_ms == MAX_DELAY_MS, "{:?}: a server's bound with nothing added", draw);
                    if draw.bound == Bound::MaxMs && config.ladder.strategy != Jitter::Fixed {
                        prop_assert!(draw.ladder_ms as f64 <= config.ladder.max_ms);
                    }
                }
            }
            // Offline and asleep: a wait stopped, a stream put to sleep.
            prop_assert_eq!(steps_of(&|s| *s == Step::Offline), (matches!(input, Input::Offline) && before == "waiting" && after == "idle") as usize);
            prop_assert_eq!(steps_of(&|s| *s == Step::Asleep), (before != "asleep" && after == "asleep") as usize);
            // Every change of state is traced, and the last step says where the machine is; nothing else is.
            match steps.last() {
                None => prop_assert_eq!(before, after, "{:?} changed the state untraced", input),
                Some(last) => prop_assert!(leads_to(last).contains(&after), "{:?} ended on {:?}, the machine {}", input, last, after),
            }
            if let Some(id) = others.iter().find_map(|c| match c { Command::Probe { id } => Some(*id), _ => None }) {
                probe_out = Some(id);
            }
        }
    }
}

/// The trace steps of `cmds`.
fn steps(cmds: &[Command]) -> Vec<Step> {
    cmds.iter()
        .filter_map(|c| match c {
            Command::Trace(s) => Some(*s),
            _ => None,
        })
        .collect()
}

#[test]
fn a_traced_outage_reads_step_by_step() {
    use managed_eventsource::ladder::Draw;
    use managed_eventsource::machine::Cause;
    let mut m = machine(Config {
        trace: true,
        resume: true,
        max_hint_ms: 10_000,
        ladder: LadderConfig {
            strategy: Jitter::None,
            ..LadderConfig::default()
        },
        ..Config::default()
    });
    let attempt = |attempt, trigger, resume| Step::Attempt {
        attempt,
        trigger,
        resume,
    };
    assert_eq!(
        steps(&m.handle(Input::Start)),
        [attempt(0, Trigger::Start, false)]
    );
    assert_eq!(steps(&m.handle(Input::Opened)), [Step::Open { attempt: 0 }]);
    m.handle(seen("1", "42"));
    // The stream drops: an error, then the ladder's first delay.
    let wait = |attempt, delay_ms, ladder_ms, bound| Step::Wait {
        attempt,
        draw: Draw {
            delay_ms,
            ladder_ms,
            bound,
        },
    };
    assert_eq!(
        steps(&m.handle(FAIL)),
        [
            Step::Ended {
                cause: Cause::Error {
                    browser_gave_up: true
                }
            },
            wait(1, 1000, 1000, Bound::Ladder)
        ]
    );
    assert_eq!(
        steps(&m.handle(Input::TimerFired)),
        [attempt(1, Trigger::Timer, true)]
    );
    // A 503 asking for 5 s: the wait rests on it.
    let refused = m.handle(Input::Refused {
        status: Some(503),
        retry_after_ms: Some(5000),
    });
    assert_eq!(
        steps(&refused),
        [
            Step::Ended {
                cause: Cause::Status {
                    status: 503,
                    retry_after_ms: Some(5000)
                }
            },
            wait(2, 7000, 2000, Bound::RetryAfter)
        ]
    );
    // Offline stops the wait; online reconnects at once, with a fresh ladder.
    assert_eq!(steps(&m.handle(Input::Offline)), [Step::Offline]);
    assert_eq!(
        steps(&m.handle(Input::Online)),
        [attempt(0, Trigger::Online, true)]
    );
    // A hint over maxHintMs is cut to it, and the trace says so.
    m.handle(Input::RetryHint { ms: 60_000 });
    let dropped = m.handle(FAIL);
    assert_eq!(steps(&dropped)[1], wait(1, 11_000, 1000, Bound::MaxHintMs));
    // A 401 on the next attempt stops the stream.
    m.handle(Input::TimerFired);
    let stopped = m.handle(Input::Refused {
        status: Some(401),
        retry_after_ms: None,
    });
    assert_eq!(
        steps(&stopped),
        [
            Step::Ended {
                cause: Cause::Status {
                    status: 401,
                    retry_after_ms: None
                }
            },
            Step::GaveUp { attempts: 1 }
        ]
    );
    assert_eq!(
        steps(&m.handle(Input::Close)),
        [Step::Closed { by_user: true }]
    );
    // Untraced, the machine pushes none of it.
    let mut quiet = machine(Config::default());
    assert!(steps(&quiet.handle(Input::Start)).is_empty());
}
