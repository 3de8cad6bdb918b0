// managed-eventsource/server: an event's bytes on the wire, and an append's argument checked.

import { describe, eventName } from './common.js';
import { parseId } from './ids.js';

const PREFIX = 'managed-eventsource/server';

/** One event's bytes on the wire; `data` split into one `data:` line a line (CR, LF or CRLF). */
export function frameOf(id, event, data) {
  let text = id ? `id: ${id}\n` : '';
  if (event && event !== 'message') text += `event: ${event}\n`;
  return `${text}data: ${data.replace(/\r\n|\r|\n/g, '\ndata: ')}\n\n`;
}

/** An append's argument, checked: `{ data, event?, id? }`. */
export function checkEntry(entry) {
  if (entry === null || typeof entry !== 'object') throw new TypeError(`${PREFIX}: append takes { data, event?, id? }, not ${describe(entry)}`);
  const { data, event, id } = entry;
  if (typeof data !== 'string') throw new TypeError(`${PREFIX}: an event's data must be a string, not ${describe(data)}`);
  if (event !== undefined) eventName('event', event);
  if (id !== undefined && (parseId(id) === null || id === '0-0')) throw new RangeError(`${PREFIX}: a given id must be <ms>-<seq> above 0-0 (two unsigned 64-bit integers, as Redis Streams write them), not ${describe(id)}`);
  return { data, event: event ?? 'message', id };
}
