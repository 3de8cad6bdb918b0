// managed-eventsource/svelte's suite: tests/bindings/svelte4.*, bundled with its framework by tests/bindings/build.mjs
// (tests/page/suites.mjs builds it before the pages load).
import '/target/bindings/svelte4.mjs';
