//! Native tests of the reconnect URL rules.
#![cfg(not(target_arch = "wasm32"))]

use managed_eventsource::resume::{decode_component, encode_component, with_param};

#[test]
fn added_with_question_mark_or_ampersand() {
    assert_eq!(
        with_param("/feed", "lastEventId", "42"),
        "/feed?lastEventId=42"
    );
    assert_eq!(
        with_param("/feed?a=1", "lastEventId", "42"),
        "/feed?a=1&lastEventId=42"
    );
    assert_eq!(
        with_param("https://x.test:8080/a/b?a=1&b=2", "lastEventId", "42"),
        "https://x.test:8080/a/b?a=1&b=2&lastEventId=42"
    );
}

#[test]
fn empty_query_parts_do_not_double_separators() {
    assert_eq!(with_param("/feed?", "id", "1"), "/feed?id=1");
    assert_eq!(with_param("/feed?a=1&", "id", "1"), "/feed?a=1&id=1");
    assert_eq!(with_param("/feed?&&a=1", "id", "1"), "/feed?a=1&id=1");
}

#[test]
fn name_and_value_are_encoded() {
    assert_eq!(
        with_param("/f", "last id", "a&b=c/d?é"),
        "/f?last%20id=a%26b%3Dc%2Fd%3F%C3%A9"
    );
    assert_eq!(encode_component("AZaz09-_.!~*'()"), "AZaz09-_.!~*'()");
    assert_eq!(encode_component("#%+ "), "%23%25%2B%20");
}

#[test]
fn an_existing_parameter_is_replaced_not_repeated() {
    assert_eq!(
        with_param("/f?lastEventId=1", "lastEventId", "2"),
        "/f?lastEventId=2"
    );
    assert_eq!(
        with_param("/f?a=1&lastEventId=1&b=2", "lastEventId", "2"),
        "/f?a=1&b=2&lastEventId=2"
    );
    assert_eq!(
        with_param("/f?lastEventId=1&lastEventId=5", "lastEventId", "2"),
        "/f?lastEventId=2"
    );
    // Also when the existing one is spelled encoded, or has no value.
    assert_eq!(
        with_param("/f?last%20id=1", "last id", "2"),
        "/f?last%20id=2"
    );
    assert_eq!(with_param("/f?last+id=1", "last id", "2"), "/f?last%20id=2");
    assert_eq!(
        with_param("/f?lastEventId", "lastEventId", "2"),
        "/f?lastEventId=2"
    );
    // A parameter whose name only starts the same is kept.
    assert_eq!(
        with_param("/f?lastEventIdx=1", "lastEventId", "2"),
        "/f?lastEventIdx=1&lastEventId=2"
    );
    // Repeated reconnects never grow the URL.
    let mut url = String::from("/f?a=1");
    for i in 0..100 {
        url = with_param(&url, "lastEventId", &i.to_string());
    }
    assert_eq!(url, "/f?a=1&lastEventId=99");
}

#[test]
fn the_fragment_is_kept() {
    assert_eq!(with_param("/f#top", "id", "7"), "/f?id=7#top");
    assert_eq!(with_param("/f?a=1#x?y=2", "id", "7"), "/f?a=1&id=7#x?y=2");
}

#[test]
fn decoding_is_lenient() {
    assert_eq!(decode_component("a%20b+c"), b"a b c");
    assert_eq!(decode_component("100%"), b"100%");
    assert_eq!(decode_component("%zz%4"), b"%zz%4");
    assert_eq!(decode_component("%C3%A9"), "é".as_bytes());
    assert_eq!(decode_component("%2"), b"%2");
    assert_eq!(decode_component("%%41"), b"%A");
}
