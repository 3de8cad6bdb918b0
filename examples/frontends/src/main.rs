//! Mounts every component, so that each compiles as a user's app would.

mod leptos_feed;
mod readme_feed;
mod yew_feed;

fn main() {
    leptos::mount::mount_to_body(leptos_feed::Feed);
    leptos::mount::mount_to_body(readme_feed::Feed);
    let token = yew_feed::Props {
        token: "t0k3n".into(),
    };
    yew::Renderer::<yew_feed::Feed>::with_props(token).render();
}
