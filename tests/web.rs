//! The seams between the browser shell's two halves that only Rust can check, in a real browser
//! (`wasm-pack test --headless`): an event id is measured in JavaScript as the core measures it, an option's
//! error carries the core's words, and a shell's handle cannot be misused. Everything the public API does
//! is tested against the package as shipped, in `tests/browser/` (three engines).
#![cfg(target_arch = "wasm32")]

use js_sys::{Function, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

use managed_eventsource::boundary::Code;
use managed_eventsource::machine::EventId;
use managed_eventsource::options::Options;

wasm_bindgen_test_configure!(run_in_browser);

/// The fault-injecting server `npm test` starts (tests/server/sse-server.mjs), whose streams these clients
/// open; only the option tests never connect.
const SERVER: &str = match option_env!("SSE_TEST_SERVER") {
    Some(s) => s,
    None => "http://127.0.0.1:7357",
};

#[wasm_bindgen(inline_js = r#"
export function obj(src) { return new Function('return (' + src + ');')(); }
export function make(api, url, options) {
  try { return new api.ManagedEventSource(url, options); } catch (e) { return e; }
}
"#)]
extern "C" {
    fn obj(src: &str) -> JsValue;
    #[wasm_bindgen(js_name = make)]
    fn make_at(api: &JsValue, url: &str, options: &JsValue) -> JsValue;
}

fn make(api: &JsValue, options: &JsValue) -> JsValue {
    make_at(api, &format!("{SERVER}/sse?c=seams"), options)
}

fn get(v: &JsValue, key: &str) -> JsValue {
    Reflect::get(v, &JsValue::from_str(key)).unwrap()
}

thread_local! {
    static API: JsValue = managed_eventsource::web::js_api();
}

fn api() -> JsValue {
    API.with(|api| api.clone())
}

fn call(f: &str, args: &[&JsValue]) -> JsValue {
    let f: Function = get(&api(), f).unchecked_into();
    let args: js_sys::Array = args.iter().copied().collect();
    f.apply(&JsValue::NULL, &args).unwrap()
}

#[wasm_bindgen_test]
fn the_machine_measures_an_id_as_the_javascript_half_encodes_it() {
    // The machine drops an id longer than MAX_RESUME_ID bytes once encoded. In the browser it holds each
    // id as the JavaScript string it arrived as and measures it in JavaScript (`encodedLen` in control.js,
    // which `withParam` writes with); natively, resume::encoded_len measures it. The three must agree.
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

#[wasm_bindgen_test]
fn an_option_error_carries_the_words_of_the_core() {
    // The JavaScript half words an option's error from the option and the rule Rust hands it; the words
    // must be what OptionError::message says.
    let cases = [
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
        (
            "{ maxAttempts: 1.5 }",
            Options {
                max_attempts: 1.5,
                ..Options::default()
            },
        ),
    ];
    for (options, o) in cases {
        let e = make(&api(), &obj(options));
        let core = o.validate().unwrap_err();
        let kind_ok = match core.kind {
            managed_eventsource::options::ErrorKind::Range => {
                e.is_instance_of::<js_sys::RangeError>()
            }
            managed_eventsource::options::ErrorKind::Type => {
                e.is_instance_of::<js_sys::TypeError>()
            }
        };
        assert!(kind_ok, "{options}");
        let msg: String = get(&e, "message").as_string().unwrap();
        assert_eq!(msg, core.message(), "{options}");
    }
}

#[wasm_bindgen_test]
fn a_freed_or_made_up_handle_finds_nothing() {
    use managed_eventsource::web::{free, input, last_event_id};
    let es = make(&api(), &obj("{ reconnect: false }"));
    let h = call("handle", &[&es]).as_f64().unwrap();
    assert_eq!(
        input(h, Code::Status as u32, 0.0, 0.0, 0.0),
        0,
        "connecting"
    );
    assert_eq!(
        input(h, Code::Live as u32, 0.0, 0.0, 0.0),
        2,
        "a source and the page listeners"
    );
    // Close it, then free it twice: the second is a no-op, and so is every use after.
    input(h, Code::Close as u32, 0.0, 0.0, 0.0);
    assert_eq!(input(h, Code::Closed as u32, 0.0, 0.0, 0.0), 1);
    free(h);
    free(h);
    for code in [
        Code::Status,
        Code::ReadyState,
        Code::Attempt,
        Code::Live,
        Code::Closed,
    ] {
        assert_eq!(
            input(h, code as u32, 0.0, 0.0, 0.0),
            0,
            "{code:?} after free"
        );
    }
    input(h, Code::RetryNow as u32, 0.0, 0.0, 0.0);
    assert!(last_event_id(h).is_undefined());
    // The instance still answers, from nothing: its status reads as the first one, and nothing throws.
    assert_eq!(get(&es, "status").as_string().unwrap(), "connecting");
    // A new shell takes the freed slot with a new generation: the old handle does not reach it.
    let other = make(&api(), &obj("{ reconnect: false }"));
    let h2 = call("handle", &[&other]).as_f64().unwrap();
    assert_ne!(h2, h);
    assert_eq!(h2 % 1048576.0, h % 1048576.0, "the same slot, reused");
    input(h, Code::Close as u32, 0.0, 0.0, 0.0);
    assert_eq!(
        input(h2, Code::Closed as u32, 0.0, 0.0, 0.0),
        0,
        "the stale handle did not close the new shell"
    );
    // Numbers that are no handle at all.
    for bogus in [
        0.0,
        -1.0,
        0.5,
        h + 0.5,
        f64::NAN,
        f64::INFINITY,
        9007199254740991.0,
        h2 + 1.0,
    ] {
        assert_eq!(input(bogus, Code::Live as u32, 0.0, 0.0, 0.0), 0, "{bogus}");
        input(bogus, Code::Close as u32, 0.0, 0.0, 0.0);
        free(bogus);
        assert!(last_event_id(bogus).is_undefined());
    }
    // An unknown code is no input either.
    assert_eq!(input(h2, 1000, 0.0, 0.0, 0.0), 0);
    assert_eq!(
        input(h2, Code::Closed as u32, 0.0, 0.0, 0.0),
        0,
        "still running"
    );
    input(h2, Code::Close as u32, 0.0, 0.0, 0.0);
    assert_eq!(input(h2, Code::Live as u32, 0.0, 0.0, 0.0), 0);
}
