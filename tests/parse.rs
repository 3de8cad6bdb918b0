//! The event-stream parser against the HTML specification's rules, case by case, and a property: any
//! chunking of any stream gives the same items as the stream in one piece.
#![cfg(not(target_arch = "wasm32"))]

use managed_eventsource::parse::{Item, Parser};
use proptest::prelude::*;

/// What a parser says about `chunks`, as owned values: ("type", "data", "id") or ("retry", ms, "").
fn run(chunks: &[&[u8]]) -> Vec<(String, String, String)> {
    let mut p = Parser::new();
    let mut seen = Vec::new();
    for c in chunks {
        p.feed(c, &mut |item| seen.push(own(item)));
    }
    p.finish();
    seen
}

fn own(item: Item) -> (String, String, String) {
    match item {
        Item::Event { kind, data, id } => (kind.into(), data.into(), id.into()),
        Item::Retry(ms) => ("retry".into(), ms.to_string(), String::new()),
    }
}

fn ev(kind: &str, data: &str, id: &str) -> (String, String, String) {
    (kind.into(), data.into(), id.into())
}

fn whole(s: &str) -> Vec<(String, String, String)> {
    run(&[s.as_bytes()])
}

#[test]
fn line_ends_cr_lf_and_crlf_each_end_one_line() {
    let expect = vec![ev("message", "a", ""), ev("message", "b", "")];
    assert_eq!(whole("data: a\n\ndata: b\n\n"), expect);
    assert_eq!(whole("data: a\r\rdata: b\r\r"), expect);
    assert_eq!(whole("data: a\r\n\r\ndata: b\r\n\r\n"), expect);
    assert_eq!(whole("data: a\r\n\ndata: b\r\r\n"), expect);
}

#[test]
fn a_crlf_split_across_chunks_is_one_line_end() {
    // eventsource-parser's open issue 17: two events where there is one.
    assert_eq!(
        run(&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]),
        vec![ev("message", "a\nb", "")]
    );
    // A CR at the end of a chunk followed by a new line's text is a line end too.
    assert_eq!(
        run(&[b"data: a\r", b"\r", b"data: b\n\n"]),
        vec![ev("message", "a", ""), ev("message", "b", "")]
    );
}

#[test]
fn data_lines_join_with_lf_and_one_trailing_lf_goes() {
    assert_eq!(
        whole("data: one\ndata: two\ndata\ndata:  three\n\n"),
        vec![ev("message", "one\ntwo\n\n three", "")]
    );
    // An empty data field is still data: an event with empty data is dispatched.
    assert_eq!(whole("data\n\n"), vec![ev("message", "", "")]);
    assert_eq!(whole("data:\n\n"), vec![ev("message", "", "")]);
    // No data: nothing dispatched, and the event type does not leak into the next event.
    assert_eq!(
        whole("event: x\n\ndata: y\n\n"),
        vec![ev("message", "y", "")]
    );
}

#[test]
fn fields_names_values_and_comments() {
    assert_eq!(whole("event: tick\ndata: 1\n\n"), vec![ev("tick", "1", "")]);
    // Only one space after the colon is dropped; no space is fine.
    assert_eq!(whole("data:x\n\n"), vec![ev("message", "x", "")]);
    assert_eq!(whole("data:  x \n\n"), vec![ev("message", " x ", "")]);
    // Comments and unknown fields are ignored; field names are case-sensitive.
    assert_eq!(
        whole(": hello\nDATA: no\nfoo: bar\ndata: yes\n\n"),
        vec![ev("message", "yes", "")]
    );
    // A field name with a colon later in the value.
    assert_eq!(whole("data: a: b\n\n"), vec![ev("message", "a: b", "")]);
}

#[test]
fn ids_persist_reset_when_empty_and_ignore_nul() {
    assert_eq!(
        whole("id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: 2\0x\ndata: d\n\n"),
        vec![
            ev("message", "a", "1"),
            ev("message", "b", "1"),
            ev("message", "c", ""),
            ev("message", "d", "")
        ]
    );
    // An id with no data still becomes the last event id (at the empty line), with no event.
    let mut p = Parser::new();
    p.feed(b"id: 42\n\n", &mut |_| panic!("no event without data"));
    assert_eq!(p.last_event_id(), "42");
    // An id in a partial event does not: it is discarded with the event at the end of the stream.
    p.feed(b"id: 43\ndata: x\n", &mut |_| panic!("no empty line yet"));
    p.finish();
    assert_eq!(p.last_event_id(), "42");
    let mut seen = Vec::new();
    p.feed(b"data: after\n\n", &mut |i| seen.push(own(i)));
    assert_eq!(
        seen,
        vec![ev("message", "after", "42")],
        "a new connection resumes with the last id"
    );
}

#[test]
fn retry_is_digits_only() {
    assert_eq!(
        whole("retry: 2500\nretry: 1.5\nretry: -1\nretry: 12a\nretry:\nretry:  7\nretry: 0\n"),
        vec![ev("retry", "2500", ""), ev("retry", "0", "")]
    );
    assert_eq!(
        whole("retry: 99999999999999999999999\n"),
        vec![ev("retry", &u64::MAX.to_string(), "")]
    );
}

#[test]
fn a_bom_is_dropped_once_and_only_at_the_start() {
    assert_eq!(whole("\u{FEFF}data: a\n\n"), vec![ev("message", "a", "")]);
    assert_eq!(
        run(&[b"\xEF", b"\xBB", b"\xBFdata: a\n\n"]),
        vec![ev("message", "a", "")]
    );
    // A second one is text: it makes the field name "\u{FEFF}data", which is ignored.
    assert_eq!(whole("\u{FEFF}\u{FEFF}data: a\n\n"), vec![]);
    assert_eq!(
        whole("data: \u{FEFF}\n\n"),
        vec![ev("message", "\u{FEFF}", "")]
    );
}

#[test]
fn utf8_split_across_chunks_and_invalid_bytes() {
    let text = "data: é漢😀\n\n".as_bytes();
    for cut in 0..text.len() {
        assert_eq!(
            run(&[&text[..cut], &text[cut..]]),
            vec![ev("message", "é漢😀", "")],
            "cut at {cut}"
        );
    }
    // Invalid bytes become U+FFFD, one per maximal subpart, as from_utf8_lossy has it.
    let bad: &[u8] = b"data: a\xFFb\xE6\x97c\xF0\x9F\x98\n\n";
    let expect = String::from_utf8_lossy(&bad[6..bad.len() - 2]).into_owned();
    assert_eq!(expect, "a\u{FFFD}b\u{FFFD}c\u{FFFD}");
    assert_eq!(run(&[bad]), vec![ev("message", &expect, "")]);
    let bytes: Vec<&[u8]> = bad.chunks(1).collect();
    assert_eq!(
        run(&bytes),
        vec![ev("message", &expect, "")],
        "byte by byte"
    );
}

#[test]
fn a_partial_event_at_the_end_is_discarded() {
    assert_eq!(whole("data: a\n\ndata: b\n"), vec![ev("message", "a", "")]);
    assert_eq!(whole("data: a\n\ndata: b"), vec![ev("message", "a", "")]);
}

#[test]
fn a_large_event_and_many_events() {
    let big = "x".repeat(5 << 20);
    let stream = format!("data: {big}\n\n");
    let chunks: Vec<&[u8]> = stream.as_bytes().chunks(65_536).collect();
    let seen = run(&chunks);
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].1.len(), 5 << 20);
    let many: String = (1..=100_000)
        .map(|i| format!("id: {i}\ndata: {i}\n\n"))
        .collect();
    let chunks: Vec<&[u8]> = many.as_bytes().chunks(4096).collect();
    let seen = run(&chunks);
    assert_eq!(seen.len(), 100_000);
    assert!(seen
        .iter()
        .enumerate()
        .all(|(i, e)| e.1 == (i + 1).to_string() && e.2 == e.1));
}

/// Streams made of the pieces that matter: field names, separators, line ends of every kind, text
/// with multi-byte characters, a BOM, NUL, invalid bytes.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"data".to_vec()),
        Just(b"event".to_vec()),
        Just(b"id".to_vec()),
        Just(b"retry".to_vec()),
        Just(b":".to_vec()),
        Just(b": ".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\n\n".to_vec()),
        Just("\u{FEFF}".as_bytes().to_vec()),
        Just(b"\0".to_vec()),
        Just(b"\xFF".to_vec()),
        Just(b"\xE6\x97".to_vec()),
        Just("é😀".as_bytes().to_vec()),
        "[0-9]{1,3}".prop_map(|s| s.into_bytes()),
        "[a-z ]{1,4}".prop_map(|s| s.into_bytes()),
    ];
    proptest::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

/// The specification's steps written again the plain way, on the whole stream at once: decode lossily,
/// drop one BOM, split at CRLF, LF or CR (a last line with no end is never processed), run each line.
fn reference(bytes: &[u8]) -> Vec<(String, String, String)> {
    let text = String::from_utf8_lossy(bytes);
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(&text);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                lines.push(std::mem::take(&mut line));
            }
            '\n' => lines.push(std::mem::take(&mut line)),
            c => line.push(c),
        }
    }
    let (mut data, mut kind, mut id_buf, mut out) =
        (None::<String>, String::new(), String::new(), Vec::new());
    for line in lines {
        if line.is_empty() {
            let last_id = id_buf.clone();
            if let Some(mut d) = data.take() {
                if d.ends_with('\n') {
                    d.pop();
                }
                out.push((
                    if kind.is_empty() {
                        "message".to_string()
                    } else {
                        kind.clone()
                    },
                    d,
                    last_id.clone(),
                ));
            }
            kind.clear();
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f.to_string(), v.strip_prefix(' ').unwrap_or(v).to_string()),
            None => (line.clone(), String::new()),
        };
        match field.as_str() {
            "data" => {
                let d = data.get_or_insert_with(String::new);
                d.push_str(&value);
                d.push('\n');
            }
            "event" => kind = value,
            "id" if !value.contains('\0') => id_buf = value,
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                out.push((
                    "retry".into(),
                    value.parse::<u64>().unwrap_or(u64::MAX).to_string(),
                    String::new(),
                ))
            }
            _ => {}
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_parser_agrees_with_the_plain_reading(s in stream()) {
        prop_assert_eq!(run(&[&s]), reference(&s));
    }

    #[test]
    fn any_chunking_gives_the_same_items(s in stream(), cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..8)) {
        let mut at: Vec<usize> = cuts.iter().map(|i| i.index(s.len() + 1)).collect();
        at.sort();
        let mut chunks = Vec::new();
        let mut from = 0;
        for a in at {
            chunks.push(&s[from..a]);
            from = a;
        }
        chunks.push(&s[from..]);
        prop_assert_eq!(run(&chunks), run(&[&s]));
    }

    #[test]
    fn byte_by_byte_gives_the_same_items(s in stream()) {
        let chunks: Vec<&[u8]> = s.chunks(1).collect();
        prop_assert_eq!(run(&chunks), run(&[&s]));
    }
}
