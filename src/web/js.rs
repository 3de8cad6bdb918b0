//! Small pieces of JavaScript glue: listener guards, typed reads of option objects, errors, user calls.

use alloc::string::String;
use js_sys::{Function, Object, Reflect};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Event, EventTarget};

use crate::options::{ErrorKind, OptionError};

/// One event listener with one owner: removed from its target when dropped.
pub(crate) struct Listener {
    target: EventTarget,
    kind: String,
    closure: Closure<dyn FnMut(Event)>,
}

impl Listener {
    pub(crate) fn new(target: &EventTarget, kind: &str, f: impl FnMut(Event) + 'static) -> Self {
        let closure = Closure::<dyn FnMut(Event)>::new(f);
        // addEventListener only throws for a non-callable listener, which a Closure never is.
        let _ = target.add_event_listener_with_callback(kind, closure.as_ref().unchecked_ref());
        Listener {
            target: target.clone(),
            kind: kind.into(),
            closure,
        }
    }

    pub(crate) fn kind(&self) -> &str {
        &self.kind
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self
            .target
            .remove_event_listener_with_callback(&self.kind, self.closure.as_ref().unchecked_ref());
    }
}

#[wasm_bindgen]
extern "C" {
    // Globals in windows, workers and Node alike; Node's setTimeout returns an object, not a number.
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &Function, ms: i32) -> JsValue;
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(id: &JsValue);
}

/// A pending `setTimeout` with one owner: cancelled when dropped (the shape of gloo's `Timeout`, without
/// its `std` dependency).
#[must_use = "a Timeout is cancelled when dropped"]
pub(crate) struct Timeout {
    id: JsValue,
    _closure: Closure<dyn FnMut()>,
}

impl Timeout {
    /// Calls `f` once after `ms` milliseconds (at most 2147483647, which the ladder guarantees).
    pub(crate) fn new(ms: u32, f: impl FnOnce() + 'static) -> Self {
        let closure = Closure::once(f);
        let id = set_timeout(
            closure.as_ref().unchecked_ref(),
            ms.min(i32::MAX as u32) as i32,
        );
        Timeout {
            id,
            _closure: closure,
        }
    }
}

impl Drop for Timeout {
    fn drop(&mut self) {
        clear_timeout(&self.id);
    }
}

/// A JavaScript `TypeError` or `RangeError` for an invalid option.
pub(crate) fn option_error(e: OptionError) -> JsValue {
    let msg = e.message();
    match e.kind {
        ErrorKind::Type => js_sys::TypeError::new(&msg).into(),
        ErrorKind::Range => js_sys::RangeError::new(&msg).into(),
    }
}

/// A `TypeError` with a fixed message.
pub(crate) fn type_error(msg: &str) -> JsValue {
    js_sys::TypeError::new(msg).into()
}

/// Reports an exception thrown by user code without stopping the client, as a browser reports an
/// exception thrown by an event handler.
pub(crate) fn report(e: &JsValue) {
    web_sys::console::error_1(e);
}

/// Calls a user function with one argument; an exception is reported, not propagated.
pub(crate) fn call(f: &Function, arg: &JsValue) {
    if let Err(e) = f.call1(&JsValue::UNDEFINED, arg) {
        report(&e);
    }
}

/// A property of an options object, treating `null` like `undefined`.
pub(crate) fn get(obj: &JsValue, key: &str) -> Option<JsValue> {
    let v = Reflect::get(obj, &JsValue::from_str(key)).ok()?;
    if v.is_undefined() || v.is_null() {
        None
    } else {
        Some(v)
    }
}

/// Checks that every own key of `obj` is one of `known`, so that a misspelt option is an error, not a
/// silently ignored default.
pub(crate) fn check_keys(obj: &JsValue, what: &'static str, known: &[&str]) -> Result<(), JsValue> {
    let Some(o) = obj.dyn_ref::<Object>() else {
        return Ok(());
    };
    for key in Object::keys(o).iter() {
        let name = key.as_string().unwrap_or_default();
        if !known.contains(&name.as_str()) {
            let mut msg = String::from("managed-eventsource: unknown ");
            msg.push_str(what);
            msg.push_str(" '");
            msg.push_str(&name);
            msg.push('\'');
            return Err(type_error(&msg));
        }
    }
    Ok(())
}

/// Requires `obj` to be an object (or absent).
pub(crate) fn object_or_absent(obj: &JsValue, err: &'static str) -> Result<(), JsValue> {
    if obj.is_undefined() || obj.is_null() || obj.is_object() {
        Ok(())
    } else {
        Err(type_error(err))
    }
}

/// Property `key` of `obj` read with `convert`: `None` when absent, a `TypeError` naming the option (with
/// `rule`) when present but of the wrong type.
fn typed<T>(
    obj: &JsValue,
    key: &'static str,
    rule: &'static str,
    convert: impl FnOnce(JsValue) -> Option<T>,
) -> Result<Option<T>, JsValue> {
    match get(obj, key) {
        None => Ok(None),
        Some(v) => convert(v)
            .map(Some)
            .ok_or_else(|| option_error(OptionError::type_error(key, rule))),
    }
}

pub(crate) fn number(obj: &JsValue, key: &'static str, default: f64) -> Result<f64, JsValue> {
    Ok(typed(obj, key, "must be a number", |v| v.as_f64())?.unwrap_or(default))
}

pub(crate) fn boolean(obj: &JsValue, key: &'static str, default: bool) -> Result<bool, JsValue> {
    Ok(typed(obj, key, "must be a boolean", |v| v.as_bool())?.unwrap_or(default))
}

pub(crate) fn string(obj: &JsValue, key: &'static str) -> Result<Option<String>, JsValue> {
    typed(obj, key, "must be a string", |v| v.as_string())
}

/// A callback property: a function, or absent.
pub(crate) fn callback(obj: &JsValue, key: &'static str) -> Result<Option<Function>, JsValue> {
    typed(obj, key, "must be a function", |v| {
        v.dyn_into::<Function>().ok()
    })
}

/// A plain object `{ key: value, ... }` with number values.
pub(crate) fn info(pairs: &[(&str, u32)]) -> JsValue {
    let o = Object::new();
    for (k, v) in pairs {
        let _ = Reflect::set(&o, &JsValue::from_str(k), &JsValue::from(*v));
    }
    o.into()
}
