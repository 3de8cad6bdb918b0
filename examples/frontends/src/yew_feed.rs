//! The README's Yew component: the same feed, with a bearer token sent by the fetch transport.

use managed_eventsource::browser::{ManagedEventSource, Options, Request};
use managed_eventsource::machine::Status;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub token: AttrValue,
}

#[function_component(Feed)]
pub fn feed(props: &Props) -> Html {
    let status = use_state(|| Status::Connecting);
    let last = use_state(String::new);
    {
        let (status, last) = (status.setter(), last.setter());
        // A new client when the token changes; the cleanup drops the old one, which closes it.
        use_effect_with(props.token.clone(), move |token| {
            let bearer = format!("Bearer {token}");
            let request = Request::new().header("Authorization", &bearer);
            let es = ManagedEventSource::fetch("/api/feed", Options::default(), request)
                .expect("valid options");
            es.on_status(move |s| status.set(s));
            let listener =
                es.on_message(move |ev| last.set(ev.data().as_string().unwrap_or_default()));
            move || drop((listener, es))
        });
    }
    html! { <><p>{ status.as_str() }</p><pre>{ (*last).clone() }</pre></> }
}
