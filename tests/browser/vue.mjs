// managed-eventsource/vue's suite: tests/bindings/vue.*, bundled with its framework by tests/bindings/build.mjs
// (tests/page/suites.mjs builds it before the pages load).
import '/target/bindings/vue.mjs';
