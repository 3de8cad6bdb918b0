//! Native tests of the WebSocket policy (seed 002): which closes reconnect, and the queue.
#![cfg(not(target_arch = "wasm32"))]

use managed_eventsource::socket::{
    admit, after_close, valid_close_code, Close, Queue, Refused, RECONNECT_CODES,
};

#[test]
fn an_unclean_close_always_reconnects() {
    for code in [1006, 1000, 1001, 4000] {
        assert_eq!(
            after_close(false, code, &RECONNECT_CODES),
            Close::Reconnect,
            "{code}"
        );
    }
    // 1006 is never clean, whatever a caller says.
    assert_eq!(after_close(true, 1006, &[]), Close::Reconnect);
}

#[test]
fn a_clean_close_reconnects_only_for_the_codes_listed() {
    for code in RECONNECT_CODES {
        assert_eq!(
            after_close(true, code, &RECONNECT_CODES),
            Close::Reconnect,
            "{code}"
        );
    }
    for code in [
        1000, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 4000, 4999,
    ] {
        assert_eq!(
            after_close(true, code, &RECONNECT_CODES),
            Close::Ended,
            "{code}"
        );
    }
    assert_eq!(after_close(true, 4000, &[4000]), Close::Reconnect);
    assert_eq!(
        after_close(true, 1001, &[]),
        Close::Ended,
        "an empty list: only unclean closes reconnect"
    );
}

#[test]
fn only_codes_a_close_frame_can_carry_may_be_listed() {
    for ok in [1000.0, 1001.0, 1011.0, 1012.0, 1013.0, 3000.0, 4999.0] {
        assert!(valid_close_code(ok), "{ok}");
    }
    for bad in [
        999.0,
        1004.0,
        1005.0,
        1006.0,
        1015.0,
        5000.0,
        1001.5,
        f64::NAN,
        -1.0,
        f64::INFINITY,
    ] {
        assert!(!valid_close_code(bad), "{bad}");
    }
}

#[test]
fn the_queue_admits_what_its_policy_allows() {
    assert_eq!(admit(Queue::None, 0), Err(Refused::NotQueuing));
    for waiting in [0, 1, 1000, u32::MAX] {
        assert_eq!(admit(Queue::All, waiting), Ok(()), "{waiting}");
    }
    for waiting in 0..3 {
        assert_eq!(admit(Queue::Max(3), waiting), Ok(()), "{waiting}");
    }
    assert_eq!(
        admit(Queue::Max(3), 3),
        Err(Refused::Full { max: 3 }),
        "past the limit: refused, not dropped silently"
    );
    assert_eq!(admit(Queue::Max(3), 4), Err(Refused::Full { max: 3 }));
    assert_eq!(admit(Queue::Max(0), 0), Err(Refused::Full { max: 0 }));
}
