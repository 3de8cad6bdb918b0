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

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Decodes a query-string key to bytes: `+` is a space, `%XX` a byte; malformed escapes stay as they are.
pub fn decode_component(s: &str) -> Vec<u8> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = match bytes.get(i..i + 3) {
            Some([b'%', h, l]) => hex_value(*h).zip(hex_value(*l)),
            _ => None,
        };
        match (bytes[i], escaped) {
            (_, Some((h, l))) => {
                out.push(h << 4 | l);
                i += 2;
            }
            (b'+', None) => out.push(b' '),
            (b, None) => out.push(b),
        }
        i += 1;
    }
    out
}

/// `url` with the query parameter `name=value`, replacing any parameter already named `name`.
pub fn with_param(url: &str, name: &str, value: &str) -> String {
    // split_once never slices off a char boundary, so nothing here can panic.
    let (before_fragment, fragment) = match url.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (url, None),
    };
    let (path, query) = match before_fragment.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (before_fragment, None),
    };
    let mut out = String::with_capacity(url.len() + name.len() + value.len() * 3 + 2);
    out.push_str(path);
    out.push('?');
    for pair in query.unwrap_or("").split('&') {
        let key = pair.split('=').next().unwrap_or("");
        if pair.is_empty() || decode_component(key) == name.as_bytes() {
            continue;
        }
        out.push_str(pair);
        out.push('&');
    }
    out.push_str(&encode_component(name));
    out.push('=');
    out.push_str(&encode_component(value));
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}
