//! Mounts both components, so that both compile as a user's app would.

mod leptos_feed;
mod yew_feed;

fn main() {
    leptos::mount::mount_to_body(leptos_feed::Feed);
    let token = yew_feed::Props {
        token: "t0k3n".into(),
    };
    yew::Renderer::<yew_feed::Feed>::with_props(token).render();
}
