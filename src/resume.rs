//! How long the last event id is in a reconnect URL.
//!
//! A new `EventSource` cannot send a `Last-Event-ID` header, so with the option `lastEventIdParam` the id
//! travels in the query string instead (seed 003). The machine decides whether an attempt carries it: not
//! when it is longer than [`crate::machine::MAX_RESUME_ID`] bytes once percent-encoded, which
//! [`encoded_len`] measures. The JavaScript half writes the parameter into the URL (`withParam` in
//! `src/web/control.js`), encoding as `encodeURIComponent` does, which is what `encoded_len` counts.
//!
//! ```
//! use managed_eventsource::resume::encoded_len;
//! assert_eq!(encoded_len("42 a"), 6); // "42%20a"
//! assert_eq!(encoded_len("é"), 6); // "%C3%A9"
//! ```

/// The length of `s` once percent-encoded as `encodeURIComponent` encodes it: three bytes for every byte
/// of its UTF-8 but `A-Z a-z 0-9 - _ . ! ~ * ' ( )`, which stay as they are.
pub fn encoded_len(s: &str) -> usize {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
                1
            } else {
                3
            }
        })
        .sum()
}
