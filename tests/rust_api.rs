//! The Rust API (`managed_eventsource::browser`) in a real browser (`wasm-pack test --headless`), against the
//! fault-injecting server `npm test` starts (tests/server/sse-server.mjs): the ladder, resume, `close()` from
//! inside a callback, dropping closes, listener guards, bad options as an `Err`, and 1,000 cycles that leave
//! no connection, listener or timer behind.
#![cfg(target_arch = "wasm32")]

use std::cell::RefCell;
use std::rc::Rc;

use managed_eventsource::browser::{Error, Listener, ManagedEventSource, Options};
use managed_eventsource::machine::Status;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const SERVER: &str = match option_env!("SSE_TEST_SERVER") {
    Some(s) => s,
    None => "http://127.0.0.1:7357",
};

#[wasm_bindgen(inline_js = r#"
export function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }
export function get(url) { return fetch(url, { cache: 'no-store' }).then((r) => r.json()); }
"#)]
extern "C" {
    fn sleep(ms: f64) -> js_sys::Promise;
    fn get(url: &str) -> js_sys::Promise;
}

async fn wait(ms: f64) {
    JsFuture::from(sleep(ms)).await.unwrap();
}

async fn json(path: &str) -> JsValue {
    JsFuture::from(get(&format!("{SERVER}{path}")))
        .await
        .unwrap()
}

async fn plan(c: &str, steps: &str, then: &str) {
    json(&format!("/plan?c={c}&steps={steps}&then={then}")).await;
}

/// The server's log of client `c`: attempts, and streams open now.
async fn attempts(c: &str) -> (u32, u32, Vec<String>) {
    let log = json(&format!("/log?c={c}")).await;
    let list: js_sys::Array = js_sys::Reflect::get(&log, &"attempts".into())
        .unwrap()
        .into();
    let urls = list
        .iter()
        .map(|a| {
            js_sys::Reflect::get(&a, &"url".into())
                .unwrap()
                .as_string()
                .unwrap()
        })
        .collect();
    let open = js_sys::Reflect::get(&log, &"open".into())
        .unwrap()
        .as_f64()
        .unwrap() as u32;
    (list.length(), open, urls)
}

/// How many of client `c`'s streams the server has open, once none is or after 4 s.
async fn open_after(c: &str) -> u32 {
    let mut open = attempts(c).await.1;
    for _ in 0..200 {
        if open == 0 {
            break;
        }
        wait(20.0).await;
        open = attempts(c).await.1;
    }
    open
}

/// Polls `cond` every 10 ms for up to `ms` (times four, as the page suites allow a busy machine).
async fn until(ms: f64, mut cond: impl FnMut() -> bool) -> bool {
    let mut waited = 0.0;
    while waited < ms * 4.0 {
        if cond() {
            return true;
        }
        wait(10.0).await;
        waited += 10.0;
    }
    cond()
}

/// A listener that counts the messages of `es`, and the count.
fn counted(es: &ManagedEventSource) -> (Rc<RefCell<u32>>, Listener) {
    let n = Rc::new(RefCell::new(0));
    let counter = n.clone();
    (n, es.on_message(move |_| *counter.borrow_mut() += 1))
}

fn url(c: &str) -> String {
    format!("{SERVER}/sse?c={c}")
}

fn quick() -> Options {
    Options {
        jitter: managed_eventsource::ladder::Strategy::None,
        base_ms: 50.0,
        max_ms: 200.0,
        ..Options::default()
    }
}

/// `quick()`, resuming with the `lastEventId` query parameter.
fn resuming() -> Options {
    Options {
        last_event_id_param: Some("lastEventId"),
        ..quick()
    }
}

#[wasm_bindgen_test]
async fn the_ladder_recovers_and_resumes_each_event_once() {
    plan("rs-ladder", "503,500,events:3", "events:3").await;
    let es = ManagedEventSource::new(&url("rs-ladder"), resuming()).unwrap();
    let ids = Rc::new(RefCell::new(Vec::<String>::new()));
    let statuses = Rc::new(RefCell::new(Vec::new()));
    let retries = Rc::new(RefCell::new(Vec::new()));
    let _m = {
        let ids = ids.clone();
        es.on_message(move |ev| ids.borrow_mut().push(ev.last_event_id()))
    };
    {
        let statuses = statuses.clone();
        es.on_status(move |s| statuses.borrow_mut().push(s));
        let retries = retries.clone();
        es.on_retry(move |attempt, delay| retries.borrow_mut().push((attempt, delay)));
    }
    assert!(
        until(5000.0, || ids.borrow().len() >= 6).await,
        "{:?}",
        ids.borrow()
    );
    assert_eq!(ids.borrow()[..6], ["1", "2", "3", "4", "5", "6"]);
    assert_eq!(es.last_event_id(), ids.borrow().last().unwrap().as_str());
    assert_eq!(
        retries.borrow()[..2],
        [(1, 50), (2, 100)],
        "the ladder, without jitter"
    );
    assert!(statuses.borrow().contains(&Status::Open));
    let (_, _, urls) = attempts("rs-ladder").await;
    assert!(urls[3].ends_with("lastEventId=3"), "{urls:?}");
    es.close();
    assert_eq!(es.status(), Status::Closed);
    assert_eq!(es.ready_state(), 2);
}

#[wasm_bindgen_test]
async fn close_from_inside_a_callback_and_dropping_close_the_stream() {
    plan("rs-close", "", "stream").await;
    let es = Rc::new(RefCell::new(None::<ManagedEventSource>));
    let seen = Rc::new(RefCell::new(0));
    let client = ManagedEventSource::new(&url("rs-close"), quick()).unwrap();
    let listener = {
        let (es, seen) = (es.clone(), seen.clone());
        client.on_message(move |_| {
            *seen.borrow_mut() += 1;
            if *seen.borrow() == 3 {
                if let Some(es) = es.borrow().as_ref() {
                    es.close();
                }
            }
        })
    };
    *es.borrow_mut() = Some(client);
    assert!(until(3000.0, || *seen.borrow() >= 3).await);
    wait(200.0).await;
    assert_eq!(*seen.borrow(), 3, "nothing after close()");
    assert_eq!(es.borrow().as_ref().unwrap().status(), Status::Closed);
    drop(listener);
    es.borrow_mut().take();
    // Dropping a client that streams closes it: the server sees the connection go.
    plan("rs-drop", "", "stream").await;
    let client = ManagedEventSource::new(&url("rs-drop"), quick()).unwrap();
    let (n, guard) = counted(&client);
    assert!(until(3000.0, || *n.borrow() >= 2).await);
    drop(client);
    assert_eq!(open_after("rs-drop").await, 0, "dropping closed the stream");
    drop(guard);
}

#[wasm_bindgen_test]
async fn a_dropped_listener_hears_nothing_more_and_bad_options_are_an_err() {
    plan("rs-guard", "", "stream").await;
    let es = ManagedEventSource::new(&url("rs-guard"), quick()).unwrap();
    let (a, ga) = counted(&es);
    let (b, _gb) = counted(&es);
    assert!(until(3000.0, || *a.borrow() >= 2).await);
    drop(ga);
    let at = *a.borrow();
    let bt = *b.borrow();
    assert!(until(3000.0, || *b.borrow() >= bt + 3).await);
    assert_eq!(*a.borrow(), at, "the dropped listener");
    drop(es);
    for (options, option) in [
        (
            Options {
                base_ms: -1.0,
                ..Options::default()
            },
            "baseMs",
        ),
        (
            Options {
                factor: 0.5,
                ..Options::default()
            },
            "factor",
        ),
        (
            Options {
                max_ms: 10.0,
                base_ms: 100.0,
                ..Options::default()
            },
            "maxMs",
        ),
        (
            Options {
                last_event_id_param: Some(""),
                ..Options::default()
            },
            "lastEventIdParam",
        ),
    ] {
        match ManagedEventSource::new(&url("never"), options) {
            Err(Error::Option(e)) => assert_eq!(e.option, option),
            Err(e) => panic!("{option}: {e}"),
            Ok(_) => panic!("{option}: accepted"),
        }
    }
    assert!(matches!(
        ManagedEventSource::new("http://[bad", Options::default()),
        Err(Error::Url(_))
    ));
    assert_eq!(attempts("never").await.0, 0);
}

#[wasm_bindgen_test]
async fn a_url_function_gives_each_attempt_a_fresh_url_and_1000_cycles_leave_nothing() {
    plan("rs-url", "503", "events:1").await;
    let n = Rc::new(RefCell::new(0));
    let es = {
        let n = n.clone();
        ManagedEventSource::with_url_fn(
            move || {
                *n.borrow_mut() += 1;
                format!("{}&token={}", url("rs-url"), n.borrow())
            },
            quick(),
        )
        .unwrap()
    };
    let (got, _g) = counted(&es);
    assert!(until(3000.0, || *got.borrow() >= 1).await);
    drop(es);
    let (_, _, urls) = attempts("rs-url").await;
    assert!(
        urls[0].ends_with("token=1") && urls[1].ends_with("token=2"),
        "{urls:?}"
    );
    // 1,100 connection cycles of one client (each stream sends one event and ends; no delay between):
    // wasm memory is the same after 100 and after 1,100, as for the JavaScript API (tests/browser/api.mjs).
    let memory = || {
        wasm_bindgen::memory()
            .unchecked_into::<js_sys::WebAssembly::Memory>()
            .buffer()
            .unchecked_into::<js_sys::ArrayBuffer>()
            .byte_length()
    };
    plan("rs-cycles", "", "events:1").await;
    let es = ManagedEventSource::new(
        &url("rs-cycles"),
        Options {
            base_ms: 0.0,
            ..quick()
        },
    )
    .unwrap();
    let opens = Rc::new(RefCell::new(0u32));
    let _o = {
        let opens = opens.clone();
        es.on_open(move |_| *opens.borrow_mut() += 1)
    };
    let _m = es.on_message(|_| {});
    assert!(until(30000.0, || *opens.borrow() >= 100).await);
    let before = memory();
    assert!(
        until(120000.0, || *opens.borrow() >= 1100).await,
        "1,000 more cycles"
    );
    let after = memory();
    assert!(
        after <= before + 65536,
        "wasm memory grew from {before} to {after} bytes"
    );
    drop(es);
    // 1,000 clients made, listened to and dropped at once: none is left connected.
    plan("rs-many", "", "stall").await;
    for _ in 0..1000 {
        let es = ManagedEventSource::new(&url("rs-many"), quick()).unwrap();
        let _l = es.on_message(|_| {});
        es.on_status(|_| {});
    }
    assert_eq!(open_after("rs-many").await, 0, "no stream left open");
}

/// `events()`: every message in order, and the end once the client closes (`npm test` builds these tests
/// with the `stream` feature).
#[cfg(feature = "stream")]
#[wasm_bindgen_test]
async fn events_stream_every_message_and_end_when_the_client_closes() {
    use futures_core::Stream;
    use std::pin::Pin;
    async fn next(
        events: &mut managed_eventsource::browser::Events,
    ) -> Option<web_sys::MessageEvent> {
        std::future::poll_fn(|cx| Pin::new(&mut *events).poll_next(cx)).await
    }
    plan("rs-stream", "events:3,503", "events:3").await;
    let es = ManagedEventSource::new(&url("rs-stream"), resuming()).unwrap();
    let mut events = es.events();
    let mut ids = Vec::new();
    while ids.len() < 6 {
        ids.push(next(&mut events).await.unwrap().last_event_id());
    }
    assert_eq!(ids, ["1", "2", "3", "4", "5", "6"]);
    es.close();
    assert!(
        next(&mut events).await.is_none(),
        "the stream ends with the client"
    );
    // A server's 204 ends it too (with `probe`, an EventSource learns the status: the second 204 is the
    // probe's); dropping the client ends a stream that waits.
    plan("rs-204", "events:1,204,204", "stream").await;
    let es = ManagedEventSource::new(
        &url("rs-204"),
        Options {
            probe: true,
            ..quick()
        },
    )
    .unwrap();
    let mut events = es.events();
    assert!(next(&mut events).await.is_some());
    assert!(next(&mut events).await.is_none(), "204: closed");
    plan("rs-sdrop", "", "stall").await;
    let es = ManagedEventSource::new(&url("rs-sdrop"), quick()).unwrap();
    let mut events = es.events();
    let pending = async move { next(&mut events).await };
    let dropper = async move {
        wait(100.0).await;
        drop(es);
    };
    let (got, ()) = join(pending, dropper).await;
    assert!(got.is_none(), "dropping the client ends its stream");
}

/// Runs two futures to completion on one thread (no executor crate needed).
#[cfg(feature = "stream")]
async fn join<A: std::future::Future, B: std::future::Future>(
    a: A,
    b: B,
) -> (A::Output, B::Output) {
    let (mut a, mut b) = (Box::pin(a), Box::pin(b));
    let (mut ra, mut rb) = (None, None);
    std::future::poll_fn(|cx| {
        if ra.is_none() {
            if let std::task::Poll::Ready(v) = a.as_mut().poll(cx) {
                ra = Some(v);
            }
        }
        if rb.is_none() {
            if let std::task::Poll::Ready(v) = b.as_mut().poll(cx) {
                rb = Some(v);
            }
        }
        if ra.is_some() && rb.is_some() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    (ra.unwrap(), rb.unwrap())
}

/// Field `k` of each attempt in the server's log of client `c`, as a string ("" for null).
#[cfg(feature = "fetch")]
async fn logged(c: &str, k: &str) -> Vec<String> {
    let log = json(&format!("/log?c={c}")).await;
    let list: js_sys::Array = js_sys::Reflect::get(&log, &"attempts".into())
        .unwrap()
        .into();
    list.iter()
        .map(|a| {
            js_sys::Reflect::get(&a, &k.into())
                .unwrap()
                .as_string()
                .unwrap_or_default()
        })
        .collect()
}

/// The fetch transport from Rust (`npm test` builds these tests with the `fetch` feature): a header and a
/// body made for each attempt, resuming by `Last-Event-ID`, a 401 told and waited on, bad requests an `Err`,
/// and options with owned strings.
#[cfg(feature = "fetch")]
#[wasm_bindgen_test]
async fn the_fetch_transport_sends_each_attempt_its_own_header_and_body() {
    use managed_eventsource::browser::Request;
    plan("rs-fetch", "503,events:2", "events:2").await;
    let n = Rc::new(RefCell::new(0));
    let request = {
        let (a, b) = (n.clone(), n.clone());
        Request::new()
            .method("post")
            .header("X-Client", "rust")
            .headers_with(move || {
                *a.borrow_mut() += 1;
                vec![("Authorization".into(), format!("Bearer t{}", a.borrow()))]
            })
            .body_with(move || format!("ask {}", b.borrow()))
    };
    let es = ManagedEventSource::fetch(&url("rs-fetch"), quick(), request).unwrap();
    let ids = Rc::new(RefCell::new(Vec::<String>::new()));
    let _m = {
        let ids = ids.clone();
        es.on_message(move |ev| ids.borrow_mut().push(ev.last_event_id()))
    };
    assert!(
        until(5000.0, || ids.borrow().len() >= 4).await,
        "{:?}",
        ids.borrow()
    );
    assert_eq!(ids.borrow()[..4], ["1", "2", "3", "4"]);
    es.close();
    assert_eq!(open_after("rs-fetch").await, 0, "close() ends the fetch");
    let auth = logged("rs-fetch", "auth").await;
    assert_eq!(
        auth[..3],
        ["Bearer t1", "Bearer t2", "Bearer t3"],
        "a fresh token per attempt"
    );
    assert_eq!(
        logged("rs-fetch", "method").await[..3],
        ["POST", "POST", "POST"]
    );
    // The body is made after the headers, so attempt k sends "ask k".
    assert_eq!(
        logged("rs-fetch", "body").await[..3],
        ["ask 1", "ask 2", "ask 3"]
    );
    let resumed = logged("rs-fetch", "lastEventIdHeader").await;
    assert_eq!(resumed[..3], ["", "", "2"], "resumed by the header");

    // A 401: told once, failed, and nothing retried until reconnect_now().
    plan("rs-401", "401", "events:1").await;
    let es = Rc::new(ManagedEventSource::fetch(&url("rs-401"), quick(), Request::new()).unwrap());
    let told = Rc::new(RefCell::new(Vec::new()));
    {
        let told = told.clone();
        es.on_unauthorized(move |status| told.borrow_mut().push(status));
    }
    let (got, _g) = counted(&es);
    assert!(until(3000.0, || !told.borrow().is_empty()).await);
    wait(300.0).await;
    assert_eq!(*told.borrow(), [401]);
    assert_eq!(es.status(), Status::Failed);
    assert_eq!(attempts("rs-401").await.0, 1, "nothing retried");
    es.reconnect_now();
    assert!(until(3000.0, || *got.borrow() == 1).await);
    es.close();

    // What fetch would refuse is an Err naming the option; nothing is sent.
    for (request, option) in [
        (Request::new().method("TRACE"), "method"),
        (Request::new().method("GET now"), "method"),
        (Request::new().body("x"), "body"),
        (Request::new().method("HEAD").body_with(String::new), "body"),
        (Request::new().header("Bad Name", "v"), "headers"),
        (Request::new().header("X-Ok", "a\r\nb"), "headers"),
    ] {
        match ManagedEventSource::fetch(&url("never"), Options::default(), request) {
            Err(Error::Option(e)) => assert_eq!(e.option, option),
            Err(e) => panic!("{option}: {e}"),
            Ok(_) => panic!("{option}: accepted"),
        }
    }
    assert_eq!(attempts("never").await.0, 0);

    // Options with strings made at run time.
    plan("rs-owned", "", "events:2").await;
    let param = String::from("lastEventId");
    let owned = managed_eventsource::options::Options::<String> {
        last_event_id_param: Some(param),
        base_ms: 50.0,
        ..Default::default()
    };
    let es = ManagedEventSource::new(&url("rs-owned"), owned).unwrap();
    let (seen, _s) = counted(&es);
    assert!(until(5000.0, || *seen.borrow() >= 3).await);
    drop(es);
    let (_, _, urls) = attempts("rs-owned").await;
    assert!(urls[1].ends_with("lastEventId=2"), "{urls:?}");
    let empty = managed_eventsource::options::Options::<String> {
        retry_hint_event: Some(String::new()),
        ..Default::default()
    };
    assert!(matches!(
        ManagedEventSource::new(&url("never"), empty),
        Err(Error::Option(e)) if e.option == "retryHintEvent"
    ));
}
