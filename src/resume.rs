//! The URL of a reconnect: the last event id as a query parameter.
//!
//! A new `EventSource` cannot send a `Last-Event-ID` header, so with the option `lastEventIdParam` the id
//! travels in the query string instead (seed 003). The parameter is added with `?` or `&`, name and value
//! percent-encoded as `encodeURIComponent` would, an existing parameter of the same name is replaced rather
//! than repeated, and the fragment is kept.
//!
//! ```
//! use managed_eventsource::resume::with_param;
//! assert_eq!(with_param("/feed?lastEventId=1#top", "lastEventId", "42 a"), "/feed?lastEventId=42%20a#top");
//! ```

use alloc::string::String;
use alloc::vec::Vec;

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Percent-encodes `s` as `encodeURIComponent` does: everything but `A-Z a-z 0-9 - _ . ! ~ * ' ( )`.
pub fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 15) as usize] as char);
        }
    }
    out
}

/// The length of `encode_component(s)`, without building it.
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

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// The bytes of a decoded query-string key: `+` is a space, `%XX` a byte; malformed escapes stay as they
/// are.
fn decoded(s: &str) -> impl Iterator<Item = u8> + '_ {
    let mut bytes = s.bytes();
    core::iter::from_fn(move || {
        let b = bytes.next()?;
        let mut ahead = bytes.clone();
        match (
            b,
            ahead.next().and_then(hex_value),
            ahead.next().and_then(hex_value),
        ) {
            (b'%', Some(h), Some(l)) => {
                bytes = ahead;
                Some(h << 4 | l)
            }
            (b'+', ..) => Some(b' '),
            _ => Some(b),
        }
    })
}

/// Decodes a query-string key to bytes: `+` is a space, `%XX` a byte; malformed escapes stay as they are.
pub fn decode_component(s: &str) -> Vec<u8> {
    decoded(s).collect()
}

/// The position of the first `c` in `s`, or its length.
fn find(s: &str, c: u8) -> usize {
    s.bytes().position(|b| b == c).unwrap_or(s.len())
}

/// `url` with the query parameter `name=value`, replacing any parameter already named `name`.
pub fn with_param(url: &str, name: &str, value: &str) -> String {
    // Every cut is at an ASCII byte ('#', '?', '&', '='), so on a char boundary; `get` cannot panic.
    let cut = |from: usize, to: usize| url.get(from..to).unwrap_or("");
    let hash = find(url, b'#');
    let path_end = find(cut(0, hash), b'?');
    let mut out = String::with_capacity(url.len() + name.len() + value.len() * 3 + 2);
    out.push_str(cut(0, path_end));
    out.push('?');
    let mut at = path_end + 1;
    while at < hash {
        let pair = cut(at, hash);
        let pair = cut(at, at + find(pair, b'&'));
        at += pair.len() + 1;
        let key = pair.get(..find(pair, b'=')).unwrap_or(pair);
        if pair.is_empty() || decoded(key).eq(name.bytes()) {
            continue;
        }
        out.push_str(pair);
        out.push('&');
    }
    out.push_str(&encode_component(name));
    out.push('=');
    out.push_str(&encode_component(value));
    if hash < url.len() {
        out.push_str(cut(hash, url.len()));
    }
    out
}
