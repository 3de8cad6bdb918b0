// managed-eventsource/solid's suite: tests/bindings/solid.*, bundled with its framework by tests/bindings/build.mjs
// (tests/page/suites.mjs builds it before the pages load).
import '/target/bindings/solid.mjs';
