//! WebSocket policy (seed 002): which closes reconnect, and the queue of messages sent while disconnected.
//!
//! Pure, like the rest of the core: the browser shell holds the socket and the queue of payloads (one
//! place: the JavaScript half, which sends them on the next open); this module decides what may wait. The
//! reconnect ladder and the state machine are the ones `EventSource` streams use.
//!
//! ```
//! use managed_eventsource::socket::{admit, after_close, Close, Queue, Refused, RECONNECT_CODES};
//!
//! assert_eq!(after_close(false, 1006, &RECONNECT_CODES), Close::Reconnect); // a dropped connection
//! assert_eq!(after_close(true, 1012, &RECONNECT_CODES), Close::Reconnect); // service restart
//! assert_eq!(after_close(true, 1000, &RECONNECT_CODES), Close::Ended); // the server said goodbye
//!
//! assert!(admit(Queue::Max(2), 0).is_ok() && admit(Queue::Max(2), 1).is_ok());
//! // With two waiting, a third is refused, not dropped silently.
//! assert_eq!(admit(Queue::Max(2), 2), Err(Refused::Full { max: 2 }));
//! ```

/// The close codes after which a clean close still reconnects, by default: 1001 going away (a server
/// shutting down or restarting), 1012 service restart, 1013 try again later.
pub const RECONNECT_CODES: [u16; 3] = [1001, 1012, 1013];

/// What a socket's close means for the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Close {
    /// Reconnect through the ladder.
    Reconnect,
    /// The server ended the stream on purpose: no reconnect until the user asks.
    Ended,
}

/// The policy of seed 002: reconnect after an unclean close (a dropped connection, 1006); after a clean
/// close only for the codes listed.
pub fn after_close(clean: bool, code: u16, reconnect_codes: &[u16]) -> Close {
    if !clean || code == 1006 || reconnect_codes.contains(&code) {
        Close::Reconnect
    } else {
        Close::Ended
    }
}

/// Whether `code` may be listed in `reconnectOnCleanClose`: a code a close frame can carry (1000 to 4999,
/// not the reserved 1004, 1005, 1006 and 1015, which are never sent).
pub fn valid_close_code(code: f64) -> bool {
    (1000.0..=4999.0).contains(&code)
        && code == (code as u16) as f64
        && !matches!(code as u16, 1004..=1006 | 1015)
}

/// What may wait for the next open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// Nothing: `send` while disconnected is an error.
    None,
    /// Everything.
    All,
    /// At most this many messages.
    Max(u32),
}

/// Why a message sent while disconnected was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The queue option is `'none'`.
    NotQueuing,
    /// The queue holds `max` messages already.
    Full {
        /// The limit.
        max: u32,
    },
}

/// Whether one more message sent while disconnected may wait for the next open, with `waiting` messages
/// waiting already: the queue's policy. The shell keeps the messages, in order, and sends each once.
pub fn admit(queue: Queue, waiting: u32) -> Result<(), Refused> {
    match queue {
        Queue::None => Err(Refused::NotQueuing),
        Queue::Max(max) if waiting >= max => Err(Refused::Full { max }),
        _ => Ok(()),
    }
}

/// How long a socket waits for its handshake by default (`connectTimeoutMs`): a server that accepts the
/// connection and never answers the upgrade is otherwise waited on for as long as the browser waits.
pub const DEFAULT_CONNECT_TIMEOUT_MS: f64 = 10_000.0;
