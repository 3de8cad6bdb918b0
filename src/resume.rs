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

/// Decodes a query-string key: `+` is a space, `%XX` a byte; malformed escapes are kept as they are.
pub fn decode_component(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match (hex_value(bytes[i + 1]), hex_value(bytes[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push(h << 4 | l);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `url` with the query parameter `name=value`, replacing any parameter already named `name`.
pub fn with_param(url: &str, name: &str, value: &str) -> String {
    let (before_fragment, fragment) = match url.find('#') {
        Some(i) => url.split_at(i),
        None => (url, ""),
    };
    let (path, query) = match before_fragment.find('?') {
        Some(i) => (&before_fragment[..i], Some(&before_fragment[i + 1..])),
        None => (before_fragment, None),
    };
    let mut out = String::with_capacity(url.len() + name.len() + value.len() * 3 + 2);
    out.push_str(path);
    out.push('?');
    if let Some(query) = query {
        for pair in query.split('&') {
            if pair.is_empty() {
                continue;
            }
            let key = pair.split('=').next().unwrap_or("");
            if decode_component(key) == name {
                continue;
            }
            out.push_str(pair);
            out.push('&');
        }
    }
    out.push_str(&encode_component(name));
    out.push('=');
    out.push_str(&encode_component(value));
    out.push_str(fragment);
    out
}
