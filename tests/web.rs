//! Browser tests: a real `EventSource` in headless Chromium against the fault-injecting server in
//! `tests/server/sse-server.mjs`, whose connection log is the evidence. `npm test` starts the server and
//! hands its address over in `SSE_TEST_SERVER` at compile time.
#![cfg(target_arch = "wasm32")]

use std::rc::Rc;

use js_sys::{Array, Function, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const SERVER: &str = match option_env!("SSE_TEST_SERVER") {
    Some(s) => s,
    None => "http://127.0.0.1:7357",
};

#[wasm_bindgen(inline_js = r#"
export function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }
export async function getJson(url) { const r = await fetch(url, { cache: 'no-store' }); return r.json(); }
export function obj(src) { return new Function('return (' + src + ');')(); }
export function recorder() {
  const f = function (arg) { f.calls.push(arg); };
  f.calls = [];
  return f;
}
export function throwing() { return function () { throw new Error('user callback threw on purpose'); }; }
export function setVisibility(state) {
  Object.defineProperty(document, 'visibilityState', { value: state, configurable: true });
  Object.defineProperty(document, 'hidden', { value: state !== 'visible', configurable: true });
  document.dispatchEvent(new Event('visibilitychange'));
}
export function goOnline() { window.dispatchEvent(new Event('online')); }
export function now() { return performance.now(); }
// Counts every EventSource created and closed, and every listener added to and removed from one.
export function countEventSources() {
  if (globalThis.__esCounts) return globalThis.__esCounts;
  const counts = { created: 0, closed: 0, added: 0, removed: 0 };
  const Native = globalThis.EventSource;
  const p = Native.prototype;
  const add = p.addEventListener, remove = p.removeEventListener, close = p.close;
  // Only sources created after this point count, so that a client left over by another test cannot skew it.
  p.addEventListener = function (...a) { if (this.__tracked) counts.added++; return add.apply(this, a); };
  p.removeEventListener = function (...a) { if (this.__tracked) counts.removed++; return remove.apply(this, a); };
  p.close = function () { if (this.__tracked && !this.__closed) { counts.closed++; this.__closed = true; } return close.call(this); };
  globalThis.EventSource = class extends Native { constructor(...a) { super(...a); this.__tracked = true; counts.created++; } };
  globalThis.__esCounts = counts;
  return counts;
}
"#)]
extern "C" {
    async fn sleep(ms: u32) -> JsValue;
    #[wasm_bindgen(js_name = getJson)]
    async fn get_json(url: String) -> JsValue;
    fn obj(src: &str) -> JsValue;
    fn recorder() -> Function;
    fn throwing() -> Function;
    #[wasm_bindgen(js_name = setVisibility)]
    fn set_visibility(state: &str);
    #[wasm_bindgen(js_name = goOnline)]
    fn go_online();
    fn now() -> f64;
    #[wasm_bindgen(js_name = countEventSources)]
    fn count_event_sources() -> JsValue;
}

fn get(v: &JsValue, key: &str) -> JsValue {
    Reflect::get(v, &JsValue::from_str(key)).unwrap()
}

thread_local! {
    static API: JsValue = managed_eventsource::web::js_api();
}

fn api(name: &str) -> JsValue {
    API.with(|api| get(api, name))
}

/// The JavaScript `ManagedEventSource`, driven through its public members.
struct ManagedEventSource(JsValue);

impl ManagedEventSource {
    fn new(url: JsValue, options: Option<JsValue>) -> Result<Self, JsValue> {
        let args = Array::of2(&url, &options.unwrap_or(JsValue::UNDEFINED));
        let class: Function = api("ManagedEventSource").unchecked_into();
        Reflect::construct(&class, &args).map(Self)
    }
    fn set(&self, key: &str, f: JsValue) -> Result<(), JsValue> {
        Reflect::set(&self.0, &key.into(), &f).map(|_| ())
    }
    fn call(&self, method: &str, args: &[&JsValue]) -> Result<JsValue, JsValue> {
        let f: Function = get(&self.0, method).unchecked_into();
        let args: Array = args.iter().map(|a| (*a).clone()).collect();
        f.apply(&self.0, &args)
    }
    fn set_onretry(&self, f: JsValue) -> Result<(), JsValue> {
        self.set("onretry", f)
    }
    fn set_onopen(&self, f: JsValue) -> Result<(), JsValue> {
        self.set("onopen", f)
    }
    fn set_ongiveup(&self, f: JsValue) -> Result<(), JsValue> {
        self.set("ongiveup", f)
    }
    fn set_onstatus(&self, f: JsValue) -> Result<(), JsValue> {
        self.set("onstatus", f)
    }
    fn set_onmessage(&self, f: JsValue) -> Result<(), JsValue> {
        self.set("onmessage", f)
    }
    fn set_onerror(&self, f: JsValue) -> Result<(), JsValue> {
        self.set("onerror", f)
    }
    fn onmessage(&self) -> JsValue {
        get(&self.0, "onmessage")
    }
    fn status(&self) -> String {
        get(&self.0, "status").as_string().unwrap()
    }
    fn ready_state(&self) -> u16 {
        get(&self.0, "readyState").as_f64().unwrap() as u16
    }
    fn attempt(&self) -> u32 {
        get(&self.0, "attempt").as_f64().unwrap() as u32
    }
    fn url(&self) -> String {
        get(&self.0, "url").as_string().unwrap()
    }
    fn last_event_id(&self) -> String {
        get(&self.0, "lastEventId").as_string().unwrap()
    }
    fn with_credentials(&self) -> bool {
        get(&self.0, "withCredentials").as_bool().unwrap()
    }
    fn add_event_listener(&self, kind: String, f: JsValue) -> Result<(), JsValue> {
        self.call("addEventListener", &[&kind.into(), &f])
            .map(|_| ())
    }
    fn remove_event_listener(&self, kind: String, f: JsValue) {
        self.call("removeEventListener", &[&kind.into(), &f])
            .unwrap();
    }
    fn reconnect_now(&self) {
        self.call("reconnectNow", &[]).unwrap();
    }
    fn close(&self) {
        self.call("close", &[]).unwrap();
    }
    /// Connections, timers and page listeners the client holds: 0 once closed.
    fn live(&self) -> u32 {
        let f: Function = api("live").unchecked_into();
        f.call1(&JsValue::NULL, &self.0).unwrap().as_f64().unwrap() as u32
    }
}

fn create_managed_stream(
    url: JsValue,
    handlers: JsValue,
    options: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let f: Function = api("createManagedStream").unchecked_into();
    f.call3(
        &JsValue::NULL,
        &url,
        &handlers,
        &options.unwrap_or(JsValue::UNDEFINED),
    )
}

fn num(v: &JsValue, key: &str) -> f64 {
    get(v, key).as_f64().unwrap()
}

fn calls(f: &Function) -> Vec<JsValue> {
    get(f, "calls").unchecked_into::<Array>().to_vec()
}

struct Attempt {
    t: f64,
    url: String,
    header: Option<String>,
}

struct Log {
    attempts: Vec<Attempt>,
    max_open: f64,
}

async fn plan(c: &str, steps: &str, then: &str) {
    get_json(format!("{SERVER}/plan?c={c}&steps={steps}&then={then}")).await;
}

async fn log(c: &str) -> Log {
    let v = get_json(format!("{SERVER}/log?c={c}")).await;
    let attempts = get(&v, "attempts")
        .unchecked_into::<Array>()
        .iter()
        .map(|a| Attempt {
            t: num(&a, "t"),
            url: get(&a, "url").as_string().unwrap(),
            header: get(&a, "lastEventIdHeader").as_string(),
        })
        .collect();
    Log {
        attempts,
        max_open: num(&v, "maxOpen"),
    }
}

async fn figure(name: &str, value: impl std::fmt::Display) {
    get_json(format!("{SERVER}/figure?name={name}&value={value}")).await;
}

/// Polls `cond` every 10 ms for up to `ms`; whether it came true.
async fn until(ms: u32, mut cond: impl FnMut() -> bool) -> bool {
    let start = now();
    while now() - start < ms as f64 {
        if cond() {
            return true;
        }
        sleep(10).await;
    }
    cond()
}

fn url(c: &str) -> JsValue {
    JsValue::from_str(&format!("{SERVER}/sse?c={c}"))
}

fn open(c: &str, options: &str) -> ManagedEventSource {
    ManagedEventSource::new(url(c), Some(obj(options))).expect("valid options")
}

fn retries(rec: &Function) -> Vec<(u32, u32)> {
    calls(rec)
        .iter()
        .map(|i| (num(i, "attempt") as u32, num(i, "delayMs") as u32))
        .collect()
}

fn strings(rec: &Function) -> Vec<String> {
    calls(rec).iter().map(|s| s.as_string().unwrap()).collect()
}

#[wasm_bindgen_test]
async fn delays_follow_the_ladder_for_every_strategy_and_differ_between_clients() {
    let strategies = ["none", "full", "equal", "decorrelated"];
    let mut clients = Vec::new();
    for s in strategies {
        for k in ["a", "b"] {
            let c = format!("ladder-{s}-{k}");
            plan(&c, "", "503").await;
            let es = open(
                &c,
                &format!("{{ jitter: '{s}', baseMs: 60, maxMs: 1000, maxAttempts: 5 }}"),
            );
            let onretry = recorder();
            let ongiveup = recorder();
            es.set_onretry(onretry.clone().into()).unwrap();
            es.set_ongiveup(ongiveup.clone().into()).unwrap();
            clients.push((s, c, es, onretry, ongiveup));
        }
    }
    assert!(
        until(15_000, || clients.iter().all(|c| !calls(&c.4).is_empty())).await,
        "all give up"
    );
    for (s, c, es, onretry, ongiveup) in &clients {
        assert_eq!(es.status(), "failed");
        assert_eq!(num(&calls(ongiveup)[0], "attempts"), 5.0);
        let r = retries(onretry);
        assert_eq!(
            r.iter().map(|x| x.0).collect::<Vec<_>>(),
            [1, 2, 3, 4, 5],
            "{s}"
        );
        let log = log(c).await;
        assert_eq!(
            log.attempts.len(),
            6,
            "{s}: the first connection and five reconnects"
        );
        assert!(log.max_open <= 1.0);
        let mut previous = 60.0f64;
        for (i, (attempt, delay)) in r.iter().enumerate() {
            let cap = (60.0 * 2f64.powi(*attempt as i32 - 1)).min(1000.0);
            let d = *delay as f64;
            match *s {
                "none" => assert_eq!(d, cap.floor(), "{s} {attempt}"),
                "full" => assert!(d <= cap, "{s} {attempt}: {d} > {cap}"),
                "equal" => assert!(d >= (cap / 2.0).floor() && d <= cap, "{s} {attempt}: {d}"),
                _ => assert!(
                    d >= 60.0 && d <= (previous * 3.0).min(1000.0) + 1.0,
                    "{s} {attempt}: {d}"
                ),
            }
            previous = d;
            // The server saw the next attempt after the reported delay, never before.
            let gap = log.attempts[i + 1].t - log.attempts[i].t;
            assert!(
                gap >= d - 5.0,
                "{s} attempt {attempt}: came {gap} ms after, delay was {d}"
            );
            assert!(
                gap <= d + 400.0,
                "{s} attempt {attempt}: came {gap} ms after, delay was {d}"
            );
        }
    }
    // Two clients with the same options draw different ladders (except with no jitter).
    for pair in clients.chunks(2) {
        let (a, b) = (retries(&pair[0].3), retries(&pair[1].3));
        if pair[0].0 == "none" {
            assert_eq!(a, b);
        } else {
            assert_ne!(a, b, "{} drew the same ladder twice", pair[0].0);
        }
    }
}

#[wasm_bindgen_test]
async fn the_ladder_resets_on_open() {
    plan("reset", "503,503,events:1", "503").await;
    let es = open("reset", "{ jitter: 'none', baseMs: 20, maxAttempts: 3 }");
    let onretry = recorder();
    let onopen = recorder();
    let ongiveup = recorder();
    es.set_onretry(onretry.clone().into()).unwrap();
    es.set_onopen(onopen.clone().into()).unwrap();
    es.set_ongiveup(ongiveup.clone().into()).unwrap();
    assert!(until(5000, || !calls(&ongiveup).is_empty()).await);
    let attempts: Vec<u32> = retries(&onretry).iter().map(|r| r.0).collect();
    assert_eq!(attempts, [1, 2, 1, 2, 3]);
    let delays: Vec<u32> = retries(&onretry).iter().map(|r| r.1).collect();
    assert_eq!(delays, [20, 40, 20, 40, 80]);
    assert_eq!(calls(&onopen).len(), 1);
    assert_eq!(log("reset").await.attempts.len(), 6);
}

#[wasm_bindgen_test]
async fn gives_up_after_max_attempts_and_reconnect_now_revives() {
    plan("giveup", "", "503").await;
    let es = open("giveup", "{ jitter: 'none', baseMs: 20, maxAttempts: 3 }");
    let ongiveup = recorder();
    let onstatus = recorder();
    es.set_ongiveup(ongiveup.clone().into()).unwrap();
    es.set_onstatus(onstatus.clone().into()).unwrap();
    assert!(until(5000, || !calls(&ongiveup).is_empty()).await);
    assert_eq!(es.status(), "failed");
    assert_eq!(es.ready_state(), 2);
    assert_eq!(es.attempt(), 3);
    assert_eq!(log("giveup").await.attempts.len(), 4);
    sleep(400).await;
    assert_eq!(
        log("giveup").await.attempts.len(),
        4,
        "nothing after giving up"
    );
    assert_eq!(calls(&ongiveup).len(), 1);
    assert_eq!(strings(&onstatus), ["reconnecting", "failed"]);

    plan("giveup", "", "stream").await;
    es.reconnect_now();
    assert!(until(3000, || es.status() == "open").await);
    assert_eq!(log("giveup").await.attempts.len(), 1);
    assert_eq!(es.attempt(), 0);
    es.close();
}

#[wasm_bindgen_test]
async fn close_during_a_pending_retry_makes_no_further_request() {
    plan("close-pending", "503", "stream").await;
    let es = open("close-pending", "{ jitter: 'none', baseMs: 300 }");
    let onretry = recorder();
    es.set_onretry(onretry.clone().into()).unwrap();
    assert!(until(3000, || !calls(&onretry).is_empty()).await);
    es.close();
    assert_eq!(es.status(), "closed");
    assert_eq!(es.ready_state(), 2);
    assert_eq!(es.live(), 0);
    sleep(700).await;
    assert_eq!(log("close-pending").await.attempts.len(), 1);
    es.reconnect_now();
    sleep(100).await;
    assert_eq!(
        log("close-pending").await.attempts.len(),
        1,
        "close is final"
    );
}

#[wasm_bindgen_test]
async fn a_visible_page_or_the_network_coming_back_reconnects_at_once() {
    for (c, wake) in [("visible", true), ("online", false)] {
        plan(c, "503", "stream").await;
        let es = open(c, "{ jitter: 'none', baseMs: 20000 }");
        let onretry = recorder();
        es.set_onretry(onretry.clone().into()).unwrap();
        assert!(until(3000, || !calls(&onretry).is_empty()).await);
        if wake {
            set_visibility("hidden");
            sleep(100).await;
            assert_eq!(log(c).await.attempts.len(), 1, "hidden does not reconnect");
        }
        let t0 = now();
        if wake {
            set_visibility("visible");
        } else {
            go_online();
        }
        assert!(until(3000, || es.status() == "open").await);
        let waited = now() - t0;
        assert!(
            waited < 2000.0,
            "reconnected after {waited} ms, not the 20 s the ladder said"
        );
        assert_eq!(log(c).await.attempts.len(), 2);
        // An open stream is left alone.
        if wake {
            set_visibility("visible");
        } else {
            go_online();
        }
        sleep(150).await;
        assert_eq!(log(c).await.attempts.len(), 2);
        assert_eq!(es.status(), "open");
        es.close();
    }
}

#[wasm_bindgen_test]
async fn after_a_drop_the_reconnect_url_carries_the_last_id_and_no_event_is_lost() {
    plan("resume", "events:3,cut:4", "stream").await;
    let es = open("resume", "{ lastEventIdParam: 'lastEventId', baseMs: 20 }");
    let onmessage = recorder();
    es.set_onmessage(onmessage.clone().into()).unwrap();
    assert!(until(5000, || calls(&onmessage).len() >= 12).await);
    es.close();
    let ids: Vec<u32> = calls(&onmessage)
        .iter()
        .map(|m| get(m, "lastEventId").as_string().unwrap().parse().unwrap())
        .collect();
    let expected: Vec<u32> = (1..=ids.len() as u32).collect();
    assert_eq!(ids, expected, "every id exactly once, in order");
    assert_eq!(es.last_event_id(), ids.last().unwrap().to_string());
    let log = log("resume").await;
    assert!(
        !log.attempts[0].url.contains("lastEventId"),
        "the first connection carries none"
    );
    assert!(
        log.attempts[1].url.ends_with("&lastEventId=3"),
        "{}",
        log.attempts[1].url
    );
    assert!(
        log.attempts[2].url.ends_with("&lastEventId=7"),
        "{}",
        log.attempts[2].url
    );
    assert!(es.url().ends_with("&lastEventId=7"));
}

#[wasm_bindgen_test]
async fn browser_mode_leaves_reconnecting_to_the_browser() {
    plan("browser", "retry:150+events:2,events:1", "503").await;
    let es = open("browser", "{ reconnect: 'browser' }");
    let onstatus = recorder();
    let ongiveup = recorder();
    es.set_onstatus(onstatus.clone().into()).unwrap();
    es.set_ongiveup(ongiveup.clone().into()).unwrap();
    let failed = until(5000, || es.status() == "failed").await;
    es.close();
    assert!(failed, "statuses {:?}", strings(&onstatus));
    assert_eq!(
        strings(&onstatus),
        [
            "open",
            "reconnecting",
            "open",
            "reconnecting",
            "failed",
            "closed"
        ]
    );
    let log = log("browser").await;
    assert_eq!(log.attempts.len(), 3);
    // The browser waited the server's retry: value and sent the Last-Event-ID header itself.
    let gap = log.attempts[1].t - log.attempts[0].t;
    assert!(gap >= 140.0, "{gap}");
    assert_eq!(log.attempts[1].header.as_deref(), Some("2"));
    assert_eq!(log.attempts[2].header.as_deref(), Some("3"));
    assert_eq!(calls(&ongiveup).len(), 1);
}

#[wasm_bindgen_test]
async fn reconnect_false_ends_on_the_first_error() {
    plan("never", "events:2", "stream").await;
    let es = open("never", "{ reconnect: false }");
    let onmessage = recorder();
    es.set_onmessage(onmessage.clone().into()).unwrap();
    assert!(until(3000, || es.status() == "failed").await);
    sleep(400).await;
    assert_eq!(log("never").await.attempts.len(), 1);
    assert_eq!(calls(&onmessage).len(), 2);
    set_visibility("visible");
    sleep(100).await;
    assert_eq!(
        log("never").await.attempts.len(),
        1,
        "no reconnect on visibility either"
    );
    es.reconnect_now();
    assert!(until(3000, || es.status() == "open").await);
    es.close();
}

#[wasm_bindgen_test]
async fn a_thousand_reconnect_cycles_leave_no_listener_and_no_memory_behind() {
    let counts = count_event_sources();
    let base = (
        num(&counts, "created"),
        num(&counts, "closed"),
        num(&counts, "added"),
        num(&counts, "removed"),
    );
    plan("cycles", "", "events:1").await;
    let es = open("cycles", "{ jitter: 'none', baseMs: 0 }");
    let onopen = recorder();
    let onmessage = recorder();
    es.set_onopen(onopen.clone().into()).unwrap();
    es.set_onmessage(onmessage.clone().into()).unwrap();
    let memory = || {
        wasm_bindgen::memory()
            .unchecked_into::<js_sys::WebAssembly::Memory>()
            .buffer()
            .unchecked_into::<js_sys::ArrayBuffer>()
            .byte_length()
    };
    assert!(until(30_000, || calls(&onopen).len() >= 100).await);
    let before = memory();
    let t0 = now();
    assert!(
        until(60_000, || calls(&onopen).len() >= 1100).await,
        "1000 more cycles"
    );
    let seconds = (now() - t0) / 1000.0;
    let after = memory();
    let listeners_while_open = es.live();
    es.close();
    let created = num(&counts, "created") - base.0;
    let closed = num(&counts, "closed") - base.1;
    let added = num(&counts, "added") - base.2;
    let removed = num(&counts, "removed") - base.3;
    assert_eq!(created, closed, "every EventSource created was closed");
    assert_eq!(added, removed, "every listener added was removed");
    assert_eq!(es.live(), 0);
    assert_eq!(
        listeners_while_open, 2,
        "a connection and the page listeners"
    );
    assert!(
        after <= before + 65536,
        "wasm memory grew from {before} to {after} bytes"
    );
    // Every cycle delivered its one event, except perhaps the last: close() came right after its open.
    let (messages, opens) = (calls(&onmessage).len(), calls(&onopen).len());
    assert!(
        messages == opens || messages + 1 == opens,
        "{messages} events for {opens} connections"
    );
    let log = log("cycles").await;
    assert!(log.max_open <= 1.0, "two connections open at once");
    figure("cycles.sources_created", created).await;
    figure("cycles.listeners_added_minus_removed", added - removed).await;
    figure("cycles.wasm_memory_bytes_at_100", before).await;
    figure("cycles.wasm_memory_bytes_at_1100", after).await;
    figure("cycles.per_second", format!("{:.0}", 1000.0 / seconds)).await;
}

#[wasm_bindgen_test]
fn the_machine_measures_an_id_as_the_javascript_half_encodes_it() {
    // The machine drops an id longer than MAX_RESUME_ID bytes once encoded. In the browser it holds each
    // id as the JavaScript string it arrived as and measures it in JavaScript (`encodedLen` in api.js,
    // which `withParam` writes with); natively, resume::encoded_len measures it. The three must agree.
    use managed_eventsource::machine::EventId;
    for id in ["42", "a b&c=d/e?f#g", "AZaz09-_.!~*'()", "é€😀", "%+", ""] {
        let js: String = js_sys::encode_uri_component(id).into();
        let native = managed_eventsource::resume::encoded_len(id);
        assert_eq!(native, js.len(), "{id}");
        assert_eq!(JsValue::from_str(id).encoded_len(), native, "{id}");
    }
    // A lone surrogate, which a JavaScript string may hold, counts as U+FFFD, as a URL carries it.
    let lone: JsValue = js_sys::JsString::from_char_code1(0xD800).into();
    assert_eq!(
        lone.encoded_len(),
        managed_eventsource::resume::encoded_len("\u{FFFD}")
    );
    assert_eq!(JsValue::UNDEFINED.encoded_len(), 0, "no id yet");
}

fn error_of(options: &str) -> JsValue {
    match ManagedEventSource::new(url("bad"), Some(obj(options))) {
        Ok(es) => {
            es.close();
            panic!("{options} was accepted")
        }
        Err(e) => e,
    }
}

#[wasm_bindgen_test]
async fn bad_input_throws_a_typed_error_naming_the_problem() {
    plan("bad", "", "stream").await;
    let range = [
        ("{ baseMs: -1 }", "baseMs"),
        ("{ baseMs: NaN }", "baseMs"),
        ("{ maxMs: Infinity }", "maxMs"),
        ("{ maxMs: 3e9 }", "maxMs"),
        ("{ baseMs: 20, maxMs: 10 }", "maxMs"),
        ("{ factor: 0.5 }", "factor"),
        ("{ maxAttempts: 1.5 }", "maxAttempts"),
        ("{ maxAttempts: -1 }", "maxAttempts"),
    ];
    for (options, name) in range {
        let e = error_of(options);
        assert!(e.is_instance_of::<js_sys::RangeError>(), "{options}");
        let msg: String = e.unchecked_into::<js_sys::Error>().message().into();
        assert!(msg.contains(name), "{options}: {msg}");
    }
    let types = [
        ("{ baseMs: '100' }", "baseMs"),
        ("{ jitter: 'wild' }", "jitter"),
        ("{ reconnect: 'sometimes' }", "reconnect"),
        ("{ reconnect: 3 }", "reconnect"),
        ("{ lastEventIdParam: '' }", "lastEventIdParam"),
        ("{ retryHintEvent: 7 }", "retryHintEvent"),
        ("{ withCredentials: 'yes' }", "withCredentials"),
        ("{ maxAtempts: 3 }", "maxAtempts"),
        ("42", "options"),
    ];
    for (options, name) in types {
        let e = error_of(options);
        assert!(e.is_instance_of::<js_sys::TypeError>(), "{options}");
        let msg: String = e.unchecked_into::<js_sys::Error>().message().into();
        assert!(msg.contains(name), "{options}: {msg}");
    }
    // The words are the core's (`OptionError::message`), which the JavaScript half puts together.
    use managed_eventsource::options::Options;
    let core = [
        (
            "{ baseMs: -1 }",
            Options {
                base_ms: -1.0,
                ..Options::default()
            },
        ),
        (
            "{ factor: 0.5 }",
            Options {
                factor: 0.5,
                ..Options::default()
            },
        ),
        (
            "{ heartbeatEvent: 'open' }",
            Options {
                heartbeat_event: Some("open"),
                ..Options::default()
            },
        ),
    ];
    for (options, o) in core {
        let msg: String = error_of(options)
            .unchecked_into::<js_sys::Error>()
            .message()
            .into();
        assert_eq!(msg, o.validate().unwrap_err().message(), "{options}");
    }
    // A URL is converted to a string as EventSource converts it; a Symbol cannot be.
    let e = ManagedEventSource::new(obj("Symbol('url')"), None)
        .err()
        .unwrap();
    assert!(e.is_instance_of::<js_sys::TypeError>());
    // An invalid URL throws as new EventSource does.
    let e = ManagedEventSource::new(JsValue::from_str("http://[::1"), None)
        .err()
        .unwrap();
    assert_eq!(get(&e, "name").as_string().as_deref(), Some("SyntaxError"));
    // Handlers and listeners must be functions.
    let es = open("bad", "{}");
    assert!(until(3000, || es.status() == "open").await);
    // Our own callbacks must be functions; the EventSource attributes take a non-object as null, as
    // EventSource's do.
    let e = es.set_onstatus(JsValue::from(5)).unwrap_err();
    assert!(e.is_instance_of::<js_sys::TypeError>());
    es.set_onmessage(recorder().into()).unwrap();
    es.set_onmessage(JsValue::from(5)).unwrap();
    assert!(es.onmessage().is_null());
    assert!(es
        .add_event_listener("x".into(), JsValue::from_str("f"))
        .is_err());
    es.set_onmessage(JsValue::NULL).unwrap();
    assert!(es.onmessage().is_null());
    es.close();
    assert_eq!(
        log("bad").await.attempts.len(),
        1,
        "only the one valid client connected"
    );
}

#[wasm_bindgen_test]
async fn a_url_function_is_called_for_every_attempt_and_may_throw() {
    plan("urlfn", "503", "stream").await;
    let n = Rc::new(std::cell::Cell::new(0));
    let counter = n.clone();
    let f = Closure::<dyn FnMut() -> Result<JsValue, JsValue>>::new(move || {
        counter.set(counter.get() + 1);
        match counter.get() {
            2 => Err(js_sys::Error::new("token service down").into()),
            k => Ok(JsValue::from_str(&format!(
                "{SERVER}/sse?c=urlfn&token={k}"
            ))),
        }
    });
    let es = ManagedEventSource::new(
        f.as_ref().clone(),
        Some(obj("{ jitter: 'none', baseMs: 20, withCredentials: true }")),
    )
    .unwrap();
    assert!(es.with_credentials());
    assert!(until(3000, || es.status() == "open").await);
    assert_eq!(n.get(), 3);
    let urls: Vec<String> = log("urlfn")
        .await
        .attempts
        .into_iter()
        .map(|a| a.url)
        .collect();
    assert_eq!(urls, ["/sse?c=urlfn&token=1", "/sse?c=urlfn&token=3"]);
    assert!(es.url().ends_with("token=3"));
    es.close();
}

#[wasm_bindgen_test]
async fn callbacks_may_close_or_reconnect_and_may_throw() {
    // close() from inside onerror: nothing is scheduled and no stale news follows.
    plan("cb-close", "", "503").await;
    let es = Rc::new(open("cb-close", "{ baseMs: 20 }"));
    let me = es.clone();
    let onerror = Closure::<dyn FnMut(JsValue)>::new(move |_| me.close());
    let onretry = recorder();
    let onstatus = recorder();
    es.set_onerror(onerror.as_ref().clone()).unwrap();
    es.set_onretry(onretry.clone().into()).unwrap();
    es.set_onstatus(onstatus.clone().into()).unwrap();
    assert!(until(3000, || es.status() == "closed").await);
    sleep(200).await;
    assert_eq!(log("cb-close").await.attempts.len(), 1);
    assert!(calls(&onretry).is_empty());
    assert_eq!(strings(&onstatus), ["closed"]);

    // reconnectNow() from inside onretry: the pending timer is replaced by an immediate attempt.
    plan("cb-now", "503", "stream").await;
    let es = Rc::new(open("cb-now", "{ jitter: 'none', baseMs: 20000 }"));
    let me = es.clone();
    let onretry = Closure::<dyn FnMut(JsValue)>::new(move |_| me.reconnect_now());
    es.set_onretry(onretry.as_ref().clone()).unwrap();
    assert!(until(3000, || es.status() == "open").await);
    assert_eq!(log("cb-now").await.attempts.len(), 2);
    es.close();

    // A throwing callback is reported and the client carries on.
    plan("cb-throw", "503", "stream").await;
    let es = open("cb-throw", "{ baseMs: 20 }");
    es.set_onstatus(throwing().into()).unwrap();
    es.set_onerror(throwing().into()).unwrap();
    es.set_onmessage(throwing().into()).unwrap();
    assert!(until(3000, || es.status() == "open").await);
    es.close();
}

#[wasm_bindgen_test]
async fn listeners_survive_reconnects() {
    plan("named", "events:2:update,events:2:update", "stream").await;
    let es = open("named", "{ baseMs: 20 }");
    let update = recorder();
    let message = recorder();
    es.add_event_listener("update".into(), update.clone().into())
        .unwrap();
    es.add_event_listener("update".into(), update.clone().into())
        .unwrap(); // no duplicate
    assert!(until(3000, || calls(&update).len() >= 4).await);
    sleep(100).await;
    assert_eq!(calls(&update).len(), 4);
    // Added while connected: hears this connection.
    es.add_event_listener("message".into(), message.clone().into())
        .unwrap();
    assert!(until(3000, || calls(&message).len() >= 3).await);
    es.remove_event_listener("message".into(), message.clone().into());
    let heard = calls(&message).len();
    sleep(150).await;
    assert_eq!(
        calls(&message).len(),
        heard,
        "removed listeners hear nothing more"
    );
    es.close();
}

#[wasm_bindgen_test]
async fn create_managed_stream_reports_in_seed_000s_shapes() {
    plan("stream", "503,503", "stream").await;
    let handlers = js_sys::Object::new();
    let (on_open, on_retry, on_status, on_message) =
        (recorder(), recorder(), recorder(), recorder());
    for (k, f) in [
        ("onOpen", &on_open),
        ("onRetryScheduled", &on_retry),
        ("onStatus", &on_status),
        ("onMessage", &on_message),
    ] {
        Reflect::set(&handlers, &k.into(), f).unwrap();
    }
    let stop: Function = create_managed_stream(
        url("stream"),
        handlers.into(),
        Some(obj("{ jitter: 'none', baseMs: 20 }")),
    )
    .unwrap()
    .unchecked_into();
    assert!(until(3000, || !calls(&on_message).is_empty()).await);
    assert_eq!(
        num(&calls(&on_open)[0], "attempt"),
        2.0,
        "the attempt that succeeded"
    );
    let waits: Vec<(f64, f64)> = calls(&on_retry)
        .iter()
        .map(|i| (num(i, "attempt"), num(i, "wait")))
        .collect();
    assert_eq!(waits, [(1.0, 20.0), (2.0, 40.0)]);
    stop.call0(&JsValue::NULL).unwrap();
    stop.call0(&JsValue::NULL).unwrap(); // twice is harmless
    assert_eq!(
        strings(&on_status),
        ["connecting", "reconnecting", "open", "closed"]
    );

    plan("stream-giveup", "", "404").await;
    let handlers = js_sys::Object::new();
    let on_give_up = recorder();
    Reflect::set(&handlers, &"onGiveUp".into(), &on_give_up).unwrap();
    let stop: Function = create_managed_stream(
        url("stream-giveup"),
        handlers.into(),
        Some(obj("{ baseMs: 10, maxAttempts: 1 }")),
    )
    .unwrap()
    .unchecked_into();
    assert!(until(3000, || !calls(&on_give_up).is_empty()).await);
    stop.call0(&JsValue::NULL).unwrap();
    assert_eq!(calls(&on_give_up)[0].as_f64(), Some(1.0));
    let bad = create_managed_stream(url("x"), obj("{ onOpn: () => {} }"), None)
        .err()
        .unwrap();
    assert!(bad.is_instance_of::<js_sys::TypeError>());
}

#[wasm_bindgen_test]
async fn a_retry_hint_event_makes_the_next_reconnect_wait_at_least_that_long() {
    plan("hint", "hint:700", "stream").await;
    let es = open(
        "hint",
        "{ retryHintEvent: 'retry-hint', jitter: 'none', baseMs: 20 }",
    );
    let onretry = recorder();
    let hints = recorder();
    es.set_onretry(onretry.clone().into()).unwrap();
    es.add_event_listener("retry-hint".into(), hints.clone().into())
        .unwrap();
    assert!(until(5000, || !calls(&onretry).is_empty()).await);
    assert_eq!(
        retries(&onretry),
        [(1, 720)],
        "the hint plus the ladder's own delay"
    );
    assert!(until(5000, || es.status() == "open").await);
    assert_eq!(
        calls(&hints).len(),
        1,
        "the hint event still reaches listeners"
    );
    let log = log("hint").await;
    assert_eq!(log.attempts.len(), 2);
    let gap = log.attempts[1].t - log.attempts[0].t;
    assert!(gap >= 700.0, "came back after {gap} ms");
    es.close();

    // Without the option the same event is only an event.
    plan("no-hint", "hint:700", "stream").await;
    let es = open("no-hint", "{ jitter: 'none', baseMs: 20 }");
    let onretry = recorder();
    es.set_onretry(onretry.clone().into()).unwrap();
    assert!(until(5000, || !calls(&onretry).is_empty()).await);
    assert_eq!(retries(&onretry), [(1, 20)]);
    es.close();
}

#[wasm_bindgen_test]
async fn every_kind_of_failure_goes_through_the_ladder() {
    // A 404 must not be retried a hundred times a second (fanout/reconnecting-eventsource issue 73):
    // statuses, a wrong content type and a dropped socket all back off alike.
    plan("kinds", "500,401,404,204,type,drop", "stream").await;
    let es = open("kinds", "{ jitter: 'none', baseMs: 10, maxMs: 1000 }");
    let onretry = recorder();
    let onerror = recorder();
    es.set_onretry(onretry.clone().into()).unwrap();
    es.set_onerror(onerror.clone().into()).unwrap();
    assert!(until(8000, || es.status() == "open").await);
    assert_eq!(
        retries(&onretry),
        [(1, 10), (2, 20), (3, 40), (4, 80), (5, 160), (6, 320)]
    );
    assert_eq!(calls(&onerror).len(), 6, "each failure reported once");
    let log = log("kinds").await;
    assert_eq!(
        log.attempts.len(),
        7,
        "one request per attempt, none repeated by the browser"
    );
    for (i, pair) in log.attempts.windows(2).enumerate() {
        let wanted = 10.0 * 2f64.powi(i as i32);
        assert!(
            pair[1].t - pair[0].t >= wanted - 5.0,
            "attempt {}: {} ms",
            i + 1,
            pair[1].t - pair[0].t
        );
    }
    es.close();
}

#[wasm_bindgen_test]
async fn an_outage_that_refuses_connections_is_ridden_out_and_resumed() {
    plan("outage", "", "stream").await;
    let es = open(
        "outage",
        "{ lastEventIdParam: 'lastEventId', baseMs: 100, maxMs: 400 }",
    );
    let onmessage = recorder();
    let onstatus = recorder();
    es.set_onmessage(onmessage.clone().into()).unwrap();
    es.set_onstatus(onstatus.clone().into()).unwrap();
    assert!(until(3000, || calls(&onmessage).len() >= 3).await);
    // The server stops listening for 1.2 s: open streams drop and new connections are refused.
    get_json(format!("{SERVER}/outage?ms=1200")).await;
    assert!(until(3000, || es.status() == "reconnecting").await);
    let t0 = now();
    assert!(until(8000, || es.status() == "open").await);
    assert!(
        now() - t0 >= 1000.0,
        "back only once the server listens again"
    );
    let heard = calls(&onmessage).len();
    assert!(until(3000, || calls(&onmessage).len() >= heard + 3).await);
    es.close();
    let ids: Vec<u32> = calls(&onmessage)
        .iter()
        .map(|m| get(m, "lastEventId").as_string().unwrap().parse().unwrap())
        .collect();
    assert_eq!(
        ids,
        (1..=ids.len() as u32).collect::<Vec<_>>(),
        "no event lost or repeated"
    );
    assert_eq!(
        strings(&onstatus),
        ["open", "reconnecting", "open", "closed"]
    );
}

#[wasm_bindgen_test]
async fn a_stalled_stream_stays_connected_until_closed() {
    // Headers then silence: the browser sees an open stream, and so do we (no watchdog yet).
    plan("stall", "stall", "stream").await;
    let es = open("stall", "{ baseMs: 20 }");
    assert!(until(3000, || es.status() == "open").await);
    sleep(300).await;
    assert_eq!(es.status(), "open");
    assert_eq!(log("stall").await.attempts.len(), 1);
    es.close();
    assert_eq!(es.ready_state(), 2);
}
