// One connection for all tabs (`share`).
//
// Instances with `share` in pages of one origin and the same URL (or share name) hold one connection: the
// one that holds a Web Lock named after it is the leader, with a Rust shell and a real EventSource; it
// relays every event and every notification over a BroadcastChannel of the same name. The others hold a
// stand-in for the shell that mirrors the leader. When the leader closes, or its page goes, the lock passes
// to the next one, which starts a shell of its own, resuming after the last event it saw. Nothing here
// decides anything: the browser grants the lock, and the leader's machine does the rest.
//
// It may not decide anything: the browser grants the lock, and the leader's machine does the rest.

import { I_STATUS, I_READY_STATE, I_ATTEMPT, I_RETRY_NOW, I_CLOSE, I_CLOSED, I_FIRST_QUESTION, N_STATUS, N_OPEN, S_OPEN, S_CLOSED } from './boundary.js';
import { ask, hooks, report } from './base.js';
import { notify } from './control.js';
import { fire, relay, until } from './relay.js';

/** Whether this runtime has what sharing needs (else each instance holds a connection of its own). */
export const sharing = () =>
  typeof BroadcastChannel === 'function' && typeof navigator === 'object' && typeof navigator.locks?.request === 'function';

export function startShared(link, make, key) {
  const name = 'managed-eventsource:' + key;
  const sh = { ch: new BroadcastChannel(name), ac: new AbortController(), types: new Set(), state: [0, 0, 0], lastId: '', leader: false, release: null };
  link.sh = sh;
  // Until it leads, the instance's shell is a stand-in that reads the leader's state and asks it to act.
  link.s = {
    input: (code) =>
      code === I_CLOSED
        ? +!!sh.left
        : code >= I_FIRST_QUESTION
          ? sh.state[code - I_FIRST_QUESTION] ?? 0
          : code === I_CLOSE
            ? leave(link)
            : code === I_RETRY_NOW && sh.ch.postMessage({ k: 'retryNow' }),
    lastEventId: () => sh.lastId,
  };
  sh.ch.onmessage = (m) => fromChannel(link, m.data);
  sh.ch.postMessage({ k: 'hello', types: [...link.t.keys()] });
  navigator.locks
    .request(name, { signal: sh.ac.signal }, () => new Promise((release) => lead(link, make, release)))
    .catch(() => {}); // aborted: closed before it led
}

/**
 * This instance got the lock: it holds the connection now, once the module is compiled (off the main
 * thread, where the constructor did not need it: see `whenCompiled` in the entry).
 */
function lead(link, make, release) {
  const sh = link.sh;
  sh.release = release;
  sh.leader = true;
  const start = () => {
    if (sh.left) return; // closed meanwhile: leave() let the lock go
    try {
      link.s = make(sh.lastId || undefined);
    } catch (e) {
      report(e);
      leave(link);
    }
  };
  if (hooks.whenCompiled) hooks.whenCompiled().then(start);
  else start();
}

/** Closes a shared instance: a follower just stops listening; a leader hands the connection over. */
export function leave(link) {
  const sh = link.sh;
  if (!sh || sh.left) return;
  sh.left = true;
  sh.ch.close();
  sh.ac.abort();
  if (!sh.leader) {
    sh.state[0] = S_CLOSED;
    sh.state[1] = 2;
    notify(link, N_STATUS, S_CLOSED); // 'closed', to both kinds of callback
  }
  sh.leader = false;
  sh.release?.();
}

/** Tells the followers, if this instance leads. */
export const tell = (link, message) => link.sh?.leader && !link.sh.left && link.sh.ch.postMessage(message);

/** What a follower does with the leader's news, and what a leader does with a follower's request. */
function fromChannel(link, m) {
  const sh = link.sh;
  if (sh.leader) {
    if (m.k === 'hello' || m.k === 'types') {
      for (const type of m.types) {
        sh.types.add(type);
        if (link.c) relay(link.c, type);
      }
      if (m.k === 'hello') tell(link, { k: 'state', state: [I_STATUS, I_READY_STATE, I_ATTEMPT].map((q) => ask(link, q)), id: link.s.lastEventId() });
    } else if (m.k === 'retryNow') link.s.input(I_RETRY_NOW);
    return;
  }
  if (m.k === 'event') {
    if (m.id !== '') sh.lastId = m.id;
    const e = new MessageEvent(m.type, { data: m.data, lastEventId: m.id, origin: m.origin });
    fire(link, m.type, e);
    if (link.until) until(link, e);
  } else if (m.k === 'note') {
    if (m.what === N_STATUS) sh.state = m.state;
    notify(link, m.what, m.a, m.b);
  } else if (m.k === 'state') {
    // The leader's state when this instance joined: as if it had connected itself.
    const was = sh.state[0];
    sh.state = m.state;
    if (m.id) sh.lastId = m.id;
    if (m.state[0] !== was) notify(link, N_STATUS, m.state[0], 0);
    if (m.state[0] === S_OPEN) notify(link, N_OPEN, 0, 0);
  }
}
