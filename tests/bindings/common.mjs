// What the bindings' suites share: a client class that records what the binding does with it, a mount point,
// and a record of what a component rendered.
import { ManagedEventSource } from '/pkg/index.js';

/**
 * A ManagedEventSource that writes to `history`, in order, each construction (before the client starts:
 * ['new', url, options]) and each close() (['close', url]); the binding constructs it through its `client`
 * option.
 */
export function counting(Base = ManagedEventSource) {
  const history = [];
  class Counted extends Base {
    constructor(url, options) {
      history.push(['new', String(url), options]);
      super(url, options);
    }
    close() {
      history.push(['close', this.url]);
      super.close();
    }
  }
  return { Counted, history, made: () => history.filter((h) => h[0] === 'new').length };
}

/** A fresh element in the page to mount a component into. */
export function mountPoint() {
  const el = document.createElement('div');
  document.body.append(el);
  return el;
}

/**
 * Records the text of `el`'s `.feed` element, which each suite's component renders as
 * `status|attempt|type url#data|error`, every time it changes, from now on; `stop()` ends the record.
 */
export function rendered(el) {
  const texts = [];
  const take = () => {
    const t = el.querySelector('.feed')?.textContent ?? '';
    if (texts.at(-1) !== t) texts.push(t);
  };
  take();
  const observer = new MutationObserver(take);
  observer.observe(el, { childList: true, subtree: true, characterData: true, attributes: true });
  return { texts, stop: () => observer.disconnect(), statuses: () => texts.map((t) => t.split('|')[0]).filter((s, i, all) => s !== all[i - 1]) };
}

/** What a component shows for a binding's state: `status|attempt|type url#data|error`. */
export const show = ({ status, attempt, lastEvent, error }) =>
  `${status}|${attempt}|${lastEvent ? `${lastEvent.type} ${lastEvent.target.url}#${lastEvent.data}` : ''}|${error ? 'error' : ''}`;

/** The number of a numbered event ('event 7' is 7), or NaN for no event: a moving stream is waited on
 * for an event at or past a number, never for an exact one a loaded engine may pass between two looks. */
export const eventNumber = (event) => Number(/\d+$/.exec(event?.data ?? '')?.[0]);
