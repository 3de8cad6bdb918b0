// Issue 16: a drop-in EventSource. Tests written from the EventSource and EventTarget interfaces of the
// HTML and DOM specifications, run side by side: every scenario runs once with the browser's own
// EventSource and once with ours in `reconnect: 'browser'` mode, against the same server, and what user
// code can observe must be the same.
import { ManagedEventSource } from '/pkg/index.js';
import { test, figure, until, sleep, ok, eq, throws, plan, log, url } from './lib.mjs';

const Native = globalThis.EventSource;
/** Ours, made to behave as a drop-in: the browser reconnects. */
class Ours extends ManagedEventSource {
  constructor(u, init) {
    super(u, { ...init, reconnect: 'browser' });
  }
}

let compared = 0;

/**
 * Runs `scenario(es, record)` with a source of class `C` on client `c` and returns what user code saw:
 * every event (type, data, lastEventId, readyState while dispatching, target/currentTarget/this is the
 * source, or for ours answers as it), and the readyState at the end.
 */
async function observe(C, c, steps, then, scenario, { settle = 300, stopWhen } = {}) {
  await plan(c, steps, then);
  const seen = [];
  const es = new C(url(c));
  // Ours shows an event of its connection with that connection's source as target, which answers as the
  // instance (docs/reference.md): what user code reads through it must be what it reads on the instance.
  const is = (t) => t === es || (C === Ours && t instanceof Ours && t.url === es.url && t.readyState === es.readyState && t.status === es.status);
  const record = (label) =>
    function (e) {
      seen.push([label, e.type, e.data ?? null, e.lastEventId ?? null, es.readyState, is(e.target), is(e.currentTarget), this === es || this === undefined]);
    };
  await scenario(es, record, seen);
  await until(8000, () => (stopWhen ? stopWhen(seen, es) : es.readyState === 2));
  await sleep(settle);
  const finalState = es.readyState;
  es.close();
  // With `stopWhen`, what was seen is compared up to where it first held: a stream that goes on sends more
  // while the test notices, and how much more is timing, not behaviour.
  if (stopWhen) {
    const end = seen.findIndex((_, i) => stopWhen(seen.slice(0, i + 1), es));
    if (end >= 0) seen.length = end + 1;
  }
  const attempts = (await log(c)).attempts.map((a) => a.lastEventIdHeader);
  return { seen, finalState, attempts };
}

/** The same scenario with the native class and ours; what user code saw must match. */
async function sameAsNative(name, steps, then, scenario, opts) {
  const native = await observe(Native, `${name}-native`, steps, then, scenario, opts);
  const ours = await observe(Ours, `${name}-ours`, steps, then, scenario, opts);
  eq(ours, native, `${name}:`);
  ok(native.seen.length > 0, `${name}: the scenario saw nothing`);
  compared++;
  return native;
}

test('the parser corner cases reach listeners exactly as from EventSource', async () => {
  await sameAsNative('special', 'retry:100+special', '404', (es, record) => {
    es.onmessage = record('onmessage');
    es.addEventListener('custom', record('custom'));
    es.onerror = record('onerror');
    es.onopen = record('onopen');
  });
});

test('a reconnect by the browser: retry:, Last-Event-ID, then a fatal status', async () => {
  const native = await sameAsNative('reconnect', 'retry:100+events:3,retry:100+events:2', '404', (es, record) => {
    es.addEventListener('message', record('message'));
    es.addEventListener('error', record('error'));
    es.addEventListener('open', record('open'));
  });
  eq(native.attempts, [null, '3', '5'], 'Last-Event-ID headers');
});

test('204 No Content closes the source for good', async () => {
  await sameAsNative('204', '204', '204', (es, record) => {
    es.onerror = record('onerror');
  });
});

test('500 and a wrong content type fail the connection', async () => {
  await sameAsNative('500', '500', '500', (es, record) => (es.onerror = record('onerror')));
  await sameAsNative('type', 'type', 'type', (es, record) => (es.onerror = record('onerror')));
});

test('named events, the server event named error, and listeners for types never sent', async () => {
  await sameAsNative(
    'named',
    'named:2:error',
    'stream',
    (es, record) => {
      es.addEventListener('error', record('error'));
      es.onerror = record('onerror');
      es.addEventListener('never', record('never'));
      es.onmessage = record('onmessage');
    },
    { stopWhen: (seen) => seen.filter((s) => s[0] === 'onmessage').length >= 4, settle: 0 },
  );
});

test('close() from a handler: no event after it, readyState CLOSED, no error event', async () => {
  await sameAsNative(
    'close',
    '',
    'stream',
    (es, record) => {
      const r = record('message');
      es.onerror = record('error');
      es.onmessage = function (e) {
        r.call(this, e);
        if (e.lastEventId === '2') es.close();
      };
    },
    { settle: 200 },
  );
});

test('on* attributes: set, replace, null and non-objects; their place among listeners', async () => {
  await sameAsNative(
    'attributes',
    '',
    'stream',
    (es, record, seen) => {
      const order = (label) => (e) => seen.push(['order', label, e.lastEventId]);
      es.addEventListener('message', order('listener 1'));
      es.onmessage = order('attribute A');
      es.addEventListener('message', order('listener 2'));
      es.onmessage = order('attribute B'); // replaces A in A's place
      seen.push(['values', typeof es.onmessage, es.onopen, es.onerror]);
      es.onopen = 'not a function';
      seen.push(['non-object', es.onopen]);
      const obj = {};
      es.onerror = obj;
      seen.push(['object kept', es.onerror === obj]);
      es.onerror = null;
    },
    { stopWhen: (seen) => seen.filter((s) => s[0] === 'order').length >= 6, settle: 0 },
  );
});

test('listeners: handleEvent objects, once, signal, capture, duplicates, added and removed while dispatching', async () => {
  await sameAsNative(
    'listeners',
    '',
    'stream',
    (es, record, seen) => {
      const push = (label) => (e) => seen.push([label, e.lastEventId]);
      const dup = push('dup');
      es.addEventListener('message', dup);
      es.addEventListener('message', dup); // ignored
      es.addEventListener('message', dup, true); // a separate registration (capture)
      es.addEventListener('message', { handleEvent: (e) => seen.push(['handleEvent', e.lastEventId]) });
      es.addEventListener('message', push('once'), { once: true });
      const ctl = new AbortController();
      es.addEventListener('message', push('signal'), { signal: ctl.signal });
      const late = push('added during dispatch');
      const removed = push('removed during dispatch');
      es.addEventListener('message', (e) => {
        if (e.lastEventId === '1') {
          es.addEventListener('message', late);
          es.removeEventListener('message', removed);
          ctl.abort();
        }
      });
      es.addEventListener('message', removed);
      es.removeEventListener('message', dup, true);
      es.addEventListener('message', null);
    },
    { stopWhen: (seen) => seen.filter((s) => s[0] === 'dup').length >= 3, settle: 0 },
  );
});

test('what the constructor takes: URL objects, relative URLs, withCredentials; what it throws', async () => {
  const relative = new ManagedEventSource('sse?c=relative');
  const nativeRelative = new Native('sse?c=relative');
  eq(relative.url, nativeRelative.url);
  relative.close();
  nativeRelative.close();
  const u = new URL(url('url-object'));
  const fromUrl = new ManagedEventSource(u);
  eq(fromUrl.url, new Native(u).url);
  ok(await until(3000, () => fromUrl.readyState === 1));
  fromUrl.close();
  const withCredentials = new ManagedEventSource(url('cred'), { withCredentials: true });
  eq(withCredentials.withCredentials, new Native(url('cred'), { withCredentials: true }).withCredentials);
  withCredentials.close();
  // Whatever the browser's constructor makes of a URL (it throws a SyntaxError DOMException for some),
  // ours makes the same.
  const outcome = (C, u) => {
    try {
      new C(u).close();
      return 'accepted';
    } catch (e) {
      return [e.name, e instanceof DOMException];
    }
  };
  let threw = 0;
  for (const u of ['http://[::1', 'http://exa mple.com/', 'http://:99999/', 'javascript:alert(1)', '', 'http://127.0.0.1:0/x']) {
    eq(outcome(ManagedEventSource, u), outcome(Native, u), u);
    if (outcome(Native, u) !== 'accepted') threw++;
  }
  ok(threw > 0, 'no URL made the browser throw');
  eq(throws(() => new ManagedEventSource(Symbol('u'))).name, throws(() => new Native(Symbol('u'))).name);
  compared++;
});

test("addEventListener's signal may be an AbortSignal of another realm (an iframe's), and dispatchEvent an Event of another realm, as on EventTarget", async () => {
  const frame = document.createElement('iframe');
  document.body.append(frame);
  try {
    const heard = {};
    for (const C of [Native, Ours]) {
      const c = `realm-${C === Native ? 'native' : 'ours'}`;
      await plan(c, 'retry:50+events:3', '404');
      const es = new C(url(c));
      const ac = new frame.contentWindow.AbortController();
      const seen = { signalled: 0, plain: 0 };
      es.addEventListener('message', () => (seen.signalled++, ac.abort()), { signal: ac.signal });
      es.addEventListener('message', () => seen.plain++);
      ok(await until(5000, () => es.readyState === 2), `${c}: ${es.readyState}`);
      es.close();
      heard[c] = seen;
    }
    eq(heard['realm-ours'], heard['realm-native']);
    eq(heard['realm-native'], { signalled: 1, plain: 3 });
    const dispatched = [];
    for (const C of [Native, Ours]) {
      const es = new C(url('realm-dispatch'));
      es.close();
      const seen = [];
      es.addEventListener('ping', (e) => seen.push([e.type, e.target === es]));
      seen.push(es.dispatchEvent(new frame.contentWindow.Event('ping')));
      dispatched.push(seen);
    }
    eq(dispatched[1], dispatched[0]);
    eq(dispatched[0], [['ping', true], true]);
    compared++;
  } finally {
    frame.remove();
  }
});

test('the constants and readyState before anything happens', async () => {
  const es = new ManagedEventSource(url('constants'));
  const n = new Native(url('constants'));
  for (const k of ['CONNECTING', 'OPEN', 'CLOSED']) {
    eq([ManagedEventSource[k], es[k]], [Native[k], n[k]], k);
  }
  eq(es.readyState, n.readyState);
  es.close();
  n.close();
  eq(es.readyState, n.readyState);
  compared++;
});

test('dispatchEvent: listeners run with the instance as target; the return value', async () => {
  const es = new ManagedEventSource(url('dispatch-event'));
  const n = new Native(url('dispatch-event'));
  const run = (source) => {
    const seen = [];
    source.addEventListener('ping', (e) => {
      seen.push([e.target === source, e.currentTarget === source]);
      e.preventDefault();
    });
    const ret = source.dispatchEvent(new Event('ping', { cancelable: true }));
    source.close();
    return [seen, ret];
  };
  eq(run(es), run(n));
  compared++;
});

test('stopImmediatePropagation: the listeners after it do not hear that event, and hear the next one', async () => {
  await sameAsNative('stop-immediate', 'retry:100+events:4', '204', (es, record) => {
    const first = record('first'), second = record('second'), attribute = record('onmessage');
    es.addEventListener('message', function (e) {
      first.call(this, e);
      if (Number(e.data) % 2 === 1) e.stopImmediatePropagation();
    });
    es.addEventListener('message', second);
    es.onmessage = attribute;
  });
});

test('dispatchEvent of an event being dispatched throws InvalidStateError, at any depth; once done, it may be dispatched again', async () => {
  const run = async (C, c) => {
    await plan(c, 'retry:100+events:1', '204');
    const es = new C(url(c));
    const seen = [];
    const name = (f) => {
      try {
        f();
        return 'ok';
      } catch (x) {
        return `${x.constructor.name}:${x.name}`;
      }
    };
    let kept = null;
    es.addEventListener('message', (e) => {
      kept = e;
      seen.push(['message', name(() => es.dispatchEvent(e))]);
      // A synthetic event dispatched from here, which re-dispatches itself and the outer event.
      const inner = new Event('ping');
      es.addEventListener('ping', (p) => seen.push(['ping', name(() => es.dispatchEvent(p)), name(() => es.dispatchEvent(e))]), { once: true });
      es.dispatchEvent(inner);
    });
    await until(8000, () => es.readyState === 2);
    es.addEventListener('message', () => seen.push(['again']));
    seen.push(['after', name(() => es.dispatchEvent(kept))]);
    es.close();
    return seen;
  };
  const native = await run(Native, 'redispatch-native');
  eq(await run(Ours, 'redispatch-ours'), native);
  eq(native[0], ['message', 'DOMException:InvalidStateError']);
  compared++;
});

test('figures', async () => {
  figure('behaviours compared with the native EventSource', compared);
});
