// The tests every binding passes, in its framework's own terms: `mount(el, url, options)` renders a
// component that shows the binding's state with `show` in a `.feed` element, and returns
// { setUrl(url), unmount(), feed() }, where feed() is the binding's controls as the component last saw them.
import { test, ok, eq, until, sleep, plan, log, url } from '/tests/browser/lib.mjs';
import { ManagedEventSource as FetchSource } from '/pkg/fetch.js';
import { counting, mountPoint, rendered } from './common.mjs';

const text = (el) => el.querySelector('.feed')?.textContent ?? '';
const clientOf = (u) => new URL(u).searchParams.get('c');

/**
 * `sameText`: whether the binding itself sees each new URL value (false where the component makes a new
 * store for each, as Svelte 4's reactive statement does: then what reconnects is the component's code).
 */
export function scenarios(name, mount, { sameText = true } = {}) {
  (globalThis.mounts ??= {})[name] = mount;
  /** This suite's bundle, as tests/page/suites.mjs loads it. */
  const suite = new URL(import.meta.url).pathname;

  test(`${name}: share across two frames: one connection for both; when the first unmounts, the other carries on with one connection`, async () => {
    const c = `${name}-share`;
    await plan(c, '', 'stream');
    const frames = [0, 1].map(() => {
      const frame = document.createElement('iframe');
      frame.src = `/target/bindings/frame.html?suite=${suite.split('/').at(-1).replace(/\.mjs$/, '')}`;
      document.body.append(frame);
      return frame;
    });
    ok(await until(5000, () => frames.every((f) => f.contentWindow?.loaded && f.contentWindow.mounts?.[name])), 'the frames did not load');
    const share = `bindings-${name}-${Math.random()}`;
    const inFrame = (f) => f.contentDocument.body.appendChild(f.contentDocument.createElement('div'));
    const els = frames.map(inFrame);
    const events = (el) => Number(/#event (\d+)/.exec(text(el))?.[1] ?? 0);
    const apps = [];
    apps.push(await frames[0].contentWindow.mounts[name](els[0], url(c), { share }));
    ok(await until(3000, () => events(els[0]) >= 2), text(els[0]));
    apps.push(await frames[1].contentWindow.mounts[name](els[1], url(c), { share }));
    ok(await until(3000, () => text(els[1]).startsWith('open|0|message') && events(els[1]) >= events(els[0]) - 1), text(els[1]));
    let l = await log(c);
    eq([l.attempts.length, l.maxOpen], [1, 1], 'attempts and most open at once, two frames');
    await apps[0].unmount();
    const at = events(els[1]);
    ok(await until(5000, () => events(els[1]) > at + 3), `the second frame after the first unmounted: ${text(els[1])}`);
    ok(await until(3000, async () => (await log(c)).open === 1), 'open at the server after the handover');
    l = await log(c);
    ok(l.attempts.length <= 2, `${l.attempts.length} attempts`);
    await apps[1].unmount();
    ok(await until(3000, async () => (await log(c)).open === 0), 'open at the server after both unmounted');
    for (const f of frames) f.remove();
  });
  test(`${name}: mount opens one connection; unmount closes it and the server sees nothing open`, async () => {
    const c = `${name}-mount`;
    await plan(c, '', 'stream');
    const { Counted, history } = counting();
    const el = mountPoint();
    const app = await mount(el, url(c), { client: Counted });
    ok(await until(3000, () => /^open\|0\|message .*#event [3-9]/.test(text(el))), text(el));
    const l = await log(c);
    eq([l.attempts.length, l.open], [1, 1]);
    await app.unmount();
    ok(await until(3000, async () => (await log(c)).open === 0), 'the server still sees a stream open after unmount');
    eq(history.map((h) => h[0]), ['new', 'close']);
    el.remove();
  });

  test(`${name}: a URL change closes the old connection before the new one opens, and no event of the old one reaches the new state (vueuse#5596)`, async () => {
    const from = `${name}-from`;
    const to = `${name}-to`;
    await plan(from, '', 'stream');
    // The new URL's server waits 500 ms: an old stream left open would send about 20 events meanwhile.
    await plan(to, 'slow:500', 'stream');
    const { Counted, history } = counting();
    const el = mountPoint();
    const app = await mount(el, url(from), { client: Counted });
    ok(await until(3000, () => text(el).includes(`c=${from}#event 3`)), text(el));
    const record = rendered(el);
    await app.setUrl(url(to));
    ok(!text(el).includes(`c=${from}`), `rendered right after the change: ${text(el)}`);
    ok(await until(5000, () => text(el).includes(`c=${to}#event 2`)), text(el));
    record.stop();
    eq(record.texts.slice(1).filter((t) => t.includes(`c=${from}`)), [], 'rendered after the change');
    eq(history.map(([what, u]) => `${what} ${clientOf(u)}`), [`new ${from}`, `close ${from}`, `new ${to}`]);
    ok(await until(3000, async () => (await log(from)).open === 0), 'the old stream closed at the server');
    eq((await log(to)).attempts.length, 1);
    await app.unmount();
    ok(await until(3000, async () => (await log(to)).open === 0));
    el.remove();
  });

  if (sameText) test(`${name}: a new URL object, or a string, with the same text keeps the connection`, async () => {
    const c = `${name}-same-text`;
    await plan(c, '', 'stream');
    const { Counted, history } = counting();
    const el = mountPoint();
    const app = await mount(el, new URL(url(c)), { client: Counted });
    ok(await until(3000, () => /^open\|0\|message .*#event [2-9]/.test(text(el))), text(el));
    const at = Number(/#event (\d+)/.exec(text(el))[1]);
    await app.setUrl(new URL(url(c)));
    await app.setUrl(url(c));
    ok(await until(3000, () => Number(/#event (\d+)/.exec(text(el))?.[1]) > at + 1), `events go on: ${text(el)}`);
    eq((await log(c)).attempts.length, 1, 'one request');
    eq(history.map((h) => h[0]), ['new']);
    await app.unmount();
    ok(await until(3000, async () => (await log(c)).open === 0));
    el.remove();
  });

  test(`${name}: the status rendered in the DOM follows the ladder through an outage`, async () => {
    const c = `${name}-outage`;
    await plan(c, '', 'stream');
    const el = mountPoint();
    const app = await mount(el, url(c), { baseMs: 100, maxMs: 300, jitter: 'none' });
    ok(await until(3000, () => text(el).startsWith('open|')), text(el));
    const record = rendered(el);
    // Real refusals: the server stops listening and drops its streams for 600 ms.
    await fetch('/outage?ms=600');
    ok(await until(8000, () => record.statuses().length >= 3 && text(el).startsWith('open|0|message')), record.texts.join(' / '));
    record.stop();
    eq(record.statuses(), ['open', 'reconnecting', 'open']);
    const waiting = record.texts.filter((t) => t.startsWith('reconnecting|'));
    ok(waiting.some((t) => /^reconnecting\|[1-9]/.test(t)), `an attempt shown while reconnecting: ${waiting.join(' / ')}`);
    ok(waiting.some((t) => t.endsWith('|error')), `the error shown while reconnecting: ${waiting.join(' / ')}`);
    ok(text(el).endsWith('|'), `no error once open again: ${text(el)}`);
    await app.unmount();
    ok(await until(3000, async () => (await log(c)).open === 0));
    el.remove();
  });

  test(`${name}: a null URL opens nothing; options reach the client as given; named events; close()`, async () => {
    const c = `${name}-options`;
    // One named event, then the response ends: it stays the last event until the reconnect (250 ms).
    await plan(c, 'events:1:update', 'stream');
    const { Counted, history } = counting();
    const stop = () => false;
    const heard = [];
    const el = mountPoint();
    const options = { client: Counted, events: ['update'], onMessage: (ev) => heard.push([ev.type, ev.lastEventId]), baseMs: 250, jitter: 'none', lastEventIdParam: 'lastEventId', share: false, until: stop };
    const app = await mount(el, null, options);
    await sleep(100);
    eq(text(el), 'closed|0||');
    eq(history, [], 'a null URL constructs nothing');
    const record = rendered(el);
    await app.setUrl(url(c));
    ok(await until(3000, () => text(el).includes('|message ') && text(el).includes('lastEventId=1')), text(el));
    record.stop();
    ok(record.texts.some((t) => t.includes('|update ') && t.includes('#event 1|')), `the named event shown: ${record.texts.join(' / ')}`);
    const given = history[0][2];
    eq(Object.keys(given).sort(), ['baseMs', 'jitter', 'lastEventIdParam', 'share', 'until'], 'the binding keeps client, events and onMessage');
    // onMessage hears every event, in order, where a render may show only the last of several.
    eq(heard[0], ['update', '1']);
    eq(heard.map((h) => Number(h[1])), heard.map((_, i) => i + 1));
    ok(given.until === stop && given.share === false && given.baseMs === 250, 'values as given');
    app.feed().close();
    const told = heard.length;
    ok(await until(3000, () => text(el).startsWith('closed|')), text(el));
    ok(await until(3000, async () => (await log(c)).open === 0));
    eq(history.map((h) => h[0]), ['new', 'close']);
    eq(heard.length, told, 'nothing heard after close()');
    await app.unmount();
    el.remove();
  });

  test(`${name}: a URL set to null closes the connection; set back, it opens one new connection`, async () => {
    const c = `${name}-null-back`;
    await plan(c, '', 'stream');
    const { Counted, history } = counting();
    const el = mountPoint();
    const app = await mount(el, url(c), { client: Counted });
    ok(await until(3000, () => /^open\|0\|message .*#event [2-9]/.test(text(el))), text(el));
    await app.setUrl(null);
    ok(await until(3000, () => text(el) === 'closed|0||'), text(el));
    ok(await until(3000, async () => (await log(c)).open === 0), 'open at the server with a null URL');
    await app.setUrl(url(c));
    ok(await until(3000, () => /^open\|0\|message .*#event [2-9]/.test(text(el))), text(el));
    eq(history.map((h) => h[0]), ['new', 'close', 'new']);
    const l = await log(c);
    eq([l.attempts.length, l.open], [2, 1]);
    await app.unmount();
    ok(await until(3000, async () => (await log(c)).open === 0));
    el.remove();
  });

  test(`${name}: the fetch transport with headers, through managed-eventsource/fetch's class`, async () => {
    const c = `${name}-fetch`;
    await plan(c, '', 'stream');
    const el = mountPoint();
    const app = await mount(el, url(c), { client: FetchSource, transport: 'fetch', headers: { Authorization: `Bearer ${name}` } });
    ok(await until(3000, () => /^open\|0\|message .*#event 2/.test(text(el))), text(el));
    ok(app.feed() && text(el).includes(`c=${c}`));
    eq((await log(c)).attempts.map((a) => a.auth), [`Bearer ${name}`]);
    await app.unmount();
    ok(await until(3000, async () => (await log(c)).open === 0));
    el.remove();
  });

  test(`${name}: unmounted from inside onMessage: nothing is heard after, and nothing stays open`, async () => {
    const c = `${name}-unmount-inside`;
    await plan(c, '', 'stream');
    const { Counted, history } = counting();
    const heard = [];
    let app;
    let unmounted = null;
    const el = mountPoint();
    app = await mount(el, url(c), {
      client: Counted,
      onMessage: (ev) => {
        heard.push(ev.data);
        if (heard.length === 3) unmounted = app.unmount();
      },
    });
    ok(await until(3000, () => unmounted !== null), `${heard.length} heard`);
    await unmounted;
    ok(await until(3000, async () => (await log(c)).open === 0), 'open at the server after the unmount');
    await sleep(200);
    eq(heard, ['event 1', 'event 2', 'event 3']);
    eq(history.map((h) => h[0]), ['new', 'close']);
    el.remove();
  });
}
