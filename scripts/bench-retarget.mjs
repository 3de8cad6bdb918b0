// `npm run bench:retarget`: what each way of showing a relay's own object as an event's `target` costs per
// event, in Chromium, Firefox and WebKit, beside native `onmessage` in the same page (issue 26: the relay at
// native speed). No package code runs: each variant is a listener on a closed native EventSource, timed over
// prebuilt MessageEvents dispatched with dispatchEvent, so that only the dispatch and the variant's own work
// remain. Rounds are shuffled; medians of µs per event, and each variant's paired ratio to native (the
// median over rounds of native's time divided by the variant's in the same round; higher is faster).
//
//   node scripts/bench-retarget.mjs [--rounds 9] [--events 100000] [--engines Chromium,Firefox,WebKit]
//
// Each engine runs the page with no driver attached (scripts/engines.mjs) and posts its figures back to this
// server on 127.0.0.1.

import http from 'node:http';
import { engines, isolate, open } from './engines.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const rounds = Number(arg('rounds', 9));
const events = Number(arg('events', 100000));
const only = arg('engines', null)?.split(',');

/** Each variant installs its listener on `es`, calling `on` with the event as `me`'s. */
const VARIANTS = {
  'native onmessage': `(es, on) => { es.onmessage = on; }`,
  'listener, no retarget': `(es, on, me) => { es.addEventListener('message', (e) => on.call(me, e)); }`,
  "listener, the source's prototype swapped (our face; no retarget)": `(es, on, me) => {
    es.addEventListener('message', (e) => on.call(me, e));
    Object.setPrototypeOf(es, Object.create(Object.getPrototypeOf(es)));
  }`,
  'listener, its call in a try': `(es, on, me) => { es.addEventListener('message', (e) => { try { on.call(me, e); } catch (err) { reportError(err); } }); }`,
  'setPrototypeOf, fixed prototype': `(es, on, me) => {
    const p = Object.create(MessageEvent.prototype, { target: { get: () => me }, currentTarget: { get: () => me }, srcElement: { get: () => me } });
    es.addEventListener('message', (e) => on.call(me, Object.setPrototypeOf(e, p)));
  }`,
  'setPrototypeOf, to its own prototype': `(es, on, me) => { es.addEventListener('message', (e) => on.call(me, Object.setPrototypeOf(e, MessageEvent.prototype))); }`,
  'class fields': `(es, on, me) => {
    class Given { constructor(e) { return e; } }
    class Retargeted extends Given { target = me; srcElement = me; currentTarget = me; }
    es.addEventListener('message', (e) => on.call(me, new Retargeted(e)));
  }`,
  'class fields declared, then assigned from a constructor argument': `(es, on, me) => {
    class Given { constructor(e) { return e; } }
    class Retargeted extends Given {
      target = null; srcElement = null; currentTarget = null;
      constructor(e, to) { super(e); this.target = to; this.srcElement = to; this.currentTarget = to; }
    }
    es.addEventListener('message', (e) => on.call(me, new Retargeted(e, me)));
  }`,
  'class fields, one class per target': `(es, on, me) => {
    class Given { constructor(e) { return e; } }
    // As many classes as a page with eight clients would make, each used in turn.
    const classes = Array.from({ length: 8 }, () => { const to = me; return class extends Given { target = to; srcElement = to; currentTarget = to; }; });
    let i = 0;
    es.addEventListener('message', (e) => on.call(me, new classes[i++ & 7](e)));
  }`,
  'defineProperty': `(es, on, me) => { es.addEventListener('message', (e) => on.call(me, Object.defineProperty(e, 'target', { value: me }))); }`,
  'an expando (no retarget; for scale)': `(es, on, me) => { es.addEventListener('message', (e) => { e.owner = me; on.call(me, e); }); }`,
};

const page = `<!doctype html><meta charset="utf-8"><title>retarget bench</title>
<script type="module">
const variants = { ${Object.entries(VARIANTS).map(([k, v]) => `${JSON.stringify(k)}: ${v}`).join(',\n')} };
const n = ${events}, rounds = ${rounds};
let sum = 0;
const on = function (ev) { sum += ev.data.length + (ev.target === this ? 1 : 0); };
const times = {};
for (let r = 0; r < rounds; r++) {
  for (const name of Object.keys(variants).sort(() => Math.random() - 0.5)) {
    const es = new EventSource('/none');
    es.close();
    variants[name](es, on, {});
    const list = [];
    for (let i = 0; i < n; i++) list.push(new MessageEvent('message', { data: 'x' + (i % 10), lastEventId: String(i) }));
    await new Promise((r) => setTimeout(r, 30));
    const t0 = performance.now();
    for (const ev of list) es.dispatchEvent(ev);
    (times[name] ??= []).push(((performance.now() - t0) / n) * 1000);
  }
}
await fetch('/result', { method: 'POST', body: JSON.stringify({ times, sum, ua: navigator.userAgent }) });
</script>`;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function run(engine) {
  let done;
  const got = new Promise((r) => (done = r));
  const server = http.createServer((req, res) => {
    isolate(res);
    if (req.url === '/') return res.writeHead(200, { 'Content-Type': 'text/html', 'Cache-Control': 'no-store' }).end(page);
    if (req.url === '/result' && req.method === 'POST') {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => (res.end('ok'), done(JSON.parse(body))));
      return;
    }
    res.writeHead(204).end();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const b = await open(engine, `http://127.0.0.1:${server.address().port}/`);
  const timer = setTimeout(() => done(null), 10 * 60 * 1000);
  const outcome = await got;
  clearTimeout(timer);
  await b.stop();
  server.closeAllConnections?.();
  server.close();
  if (!outcome) throw new Error(`bench:retarget: ${engine.name} did not report within 10 minutes`);
  return outcome;
}

for (const engine of engines().filter((e) => !only || only.includes(e.name))) {
  const { times, ua } = await run(engine);
  const version = ua.match(/Firefox\/[\d.]+/)?.[0] ?? ua.match(/Chrome\/[\d.]+/)?.[0] ?? ua.match(/AppleWebKit\/[\d.]+/)?.[0];
  const native = times['native onmessage'];
  let md = `**${engine.name}** (${version}), ${rounds} rounds of ${events.toLocaleString('en-US')} events:\n\n| variant | µs per event | min – max | paired ÷ native |\n| --- | ---: | ---: | ---: |\n`;
  for (const name of Object.keys(VARIANTS)) {
    const ts = times[name];
    const paired = median(ts.map((t, i) => native[i] / t));
    md += `| ${name} | ${median(ts).toFixed(2)} | ${Math.min(...ts).toFixed(2)} – ${Math.max(...ts).toFixed(2)} | ${paired.toFixed(2)} |\n`;
  }
  console.log(md);
}
