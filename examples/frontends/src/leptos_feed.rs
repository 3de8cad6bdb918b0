//! The README's Leptos component: the feed's status as a signal, and the last message.

use leptos::prelude::*;
use managed_eventsource::browser::{ManagedEventSource, Options};
use managed_eventsource::machine::Status;

#[component]
pub fn Feed() -> impl IntoView {
    let (status, set_status) = signal(Status::Connecting);
    let (last, set_last) = signal(String::new());
    let options = Options {
        max_attempts: 12.0,
        last_event_id_param: Some("lastEventId"),
        ..Options::default()
    };
    let es = ManagedEventSource::new("/api/feed", options).expect("valid options");
    es.on_status(move |s| set_status.set(s));
    let listener = es.on_message(move |ev| set_last.set(ev.data().as_string().unwrap_or_default()));
    // Owned by the component, so dropped (the stream closed, the listener removed) when it goes;
    // `new_local` because the client is not Send: it lives on the page's one thread.
    StoredValue::new_local((listener, es));
    view! { <p>{move || status.get().as_str()}</p><pre>{last}</pre> }
}
