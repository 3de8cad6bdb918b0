// managed-eventsource/svelte's suite: tests/bindings/svelte.*, bundled with its framework by tests/bindings/build.mjs
// (tests/page/suites.mjs builds it before the pages load).
import '/target/bindings/svelte.mjs';
