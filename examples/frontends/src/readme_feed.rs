//! The README's short Leptos component: the status as a signal.

use leptos::prelude::*;
use managed_eventsource::browser::{ManagedEventSource, Options};
use managed_eventsource::machine::Status;

#[component]
pub fn Feed() -> impl IntoView {
    let (status, set_status) = signal(Status::Connecting);
    let es = ManagedEventSource::new("/api/feed", Options::default()).expect("valid options");
    es.on_status(move |s| set_status.set(s));
    StoredValue::new_local(es); // dropped, so closed, with the component
    view! { <p>{move || status.get().as_str()}</p> }
}
