//! WebSocket policy (seed 002): which closes reconnect, and the queue of messages sent while disconnected.
//!
//! Pure, like the rest of the core: the browser shell holds the socket and the queued payloads; this
//! module decides. The reconnect ladder and the state machine are the ones `EventSource` streams use.
//!
//! ```
//! use managed_eventsource::socket::{after_close, Close, Outbox, Queue, RECONNECT_CODES};
//!
//! assert_eq!(after_close(false, 1006, &RECONNECT_CODES), Close::Reconnect); // a dropped connection
//! assert_eq!(after_close(true, 1012, &RECONNECT_CODES), Close::Reconnect); // service restart
//! assert_eq!(after_close(true, 1000, &RECONNECT_CODES), Close::Ended); // the server said goodbye
//!
//! let mut out = Outbox::new(Queue::Max(2));
//! assert!(out.push().is_ok() && out.push().is_ok());
//! assert!(out.push().is_err()); // the third is refused, not dropped silently
//! assert_eq!(out.take(), 2); // on the next open: both, in order, once
//! assert_eq!(out.take(), 0);
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

/// The outgoing queue's accounting: the shell keeps the payloads in the same order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outbox {
    queue: Queue,
    len: u32,
}

impl Outbox {
    /// An empty queue under `queue`'s policy.
    pub fn new(queue: Queue) -> Self {
        Outbox { queue, len: 0 }
    }

    /// Room for one more message sent while disconnected, or why not.
    pub fn push(&mut self) -> Result<(), Refused> {
        match self.queue {
            Queue::None => Err(Refused::NotQueuing),
            Queue::Max(max) if self.len >= max => Err(Refused::Full { max }),
            _ => {
                self.len = self.len.saturating_add(1);
                Ok(())
            }
        }
    }

    /// On open: how many queued messages to send now, in the order queued. Each is counted once.
    pub fn take(&mut self) -> u32 {
        core::mem::take(&mut self.len)
    }

    /// Messages waiting.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether none is waiting.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
