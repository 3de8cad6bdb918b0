//! Native tests of how long an id is in a reconnect URL. The URL itself is written by the JavaScript half
//! (`withParam`), whose rules tests/browser/recovery.mjs checks in Chromium and Firefox.
#![cfg(not(target_arch = "wasm32"))]

use managed_eventsource::resume::encoded_len;

#[test]
fn encoded_len_counts_as_encode_uri_component_writes() {
    assert_eq!(encoded_len(""), 0);
    assert_eq!(encoded_len("AZaz09-_.!~*'()"), 15, "left as they are");
    assert_eq!(encoded_len("#%+ &=/?"), 24, "each one %XX");
    assert_eq!(encoded_len("é"), 6, "two UTF-8 bytes");
    assert_eq!(encoded_len("€"), 9, "three");
    assert_eq!(encoded_len("😀"), 12, "four");
    assert_eq!(encoded_len(&"x".repeat(4096)), 4096);
}
