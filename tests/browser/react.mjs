// managed-eventsource/react's suite: tests/bindings/react.jsx, bundled with React by tests/bindings/build.mjs
// (tests/page/suites.mjs builds it before the pages load).
import '/target/bindings/react.mjs';
