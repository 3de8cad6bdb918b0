// The fetch transport's parser of one connection's bytes: the HTML specification's "interpreting an event
// stream" (WHATWG HTML, 9.2.6), as src/parse.rs has it for the Rust API, so that the shell's wasm carries
// no parser and a page that never imports the fetch entry pays nothing for one.
//
// - The bytes are decoded as UTF-8 as a stream (TextDecoder: a sequence split across chunks is joined, an
//   invalid one becomes U+FFFD, one byte order mark at the very start is dropped).
// - Lines end at CRLF, LF or CR, a CRLF split across two chunks included (one line end, not two).
// - A line starting with `:` is a comment; otherwise the field name runs to the first `:` and one space
//   after it is dropped from the value; a line with no `:` is a field with an empty value.
// - `data` appends the value and LF to the data buffer; `event` sets the type; `id` sets the last event id
//   buffer unless the value holds U+0000; `retry` is taken only when it is ASCII digits.
// - An empty line dispatches: the last event id becomes the buffer's; with no data nothing is dispatched;
//   else one trailing LF is dropped and the event has the type (or `message`), the data and the last id.
// - A partial event at the end of the stream is discarded: a parser serves one connection.
//
// It imports nothing and holds no policy: what it reads goes to the `sink` it is given, in stream order.

const LF = 10, SPACE = 32;
const DIGITS = /^[0-9]+$/;

export class EventStreamParser {
  decoder = new TextDecoder();
  /** The line read so far, and whether the last character was CR (an LF next ends no other line). */
  line = '';
  afterCr = false;
  /** The data lines so far, joined with LF, and whether there was one (its text may be empty). */
  data = '';
  hasData = false;
  type = '';
  idBuffer;

  /** A parser for a connection that resumes after `lastId` ('' for none): its events carry it until the
   * stream sets another. */
  constructor(lastId) {
    this.idBuffer = lastId;
  }

  /**
   * Parses one chunk of bytes. Calls `sink.event(type, data, lastEventId)` for each event and
   * `sink.retry(ms)` for each `retry:` field, in order; `sink.stopped()` is asked after each event, and
   * true ends the chunk there (a listener closed the stream).
   */
  feed(bytes, sink) {
    const text = this.decoder.decode(bytes, { stream: true });
    const n = text.length;
    if (n === 0) return;
    let start = 0;
    if (this.afterCr) {
      this.afterCr = false;
      if (text.charCodeAt(0) === LF) start = 1;
    }
    // The next LF and the next CR from `start`, each found by the engine's own search (-1: none left).
    let lf = text.indexOf('\n', start), cr = text.indexOf('\r', start);
    while (lf >= 0 || cr >= 0) {
      const end = cr < 0 || (lf >= 0 && lf < cr) ? lf : cr;
      const line = this.line === '' ? text.slice(start, end) : this.line + text.slice(start, end);
      this.line = '';
      start = end + 1;
      if (end === cr) {
        if (start === n) this.afterCr = true;
        else if (lf === start) start++;
        cr = text.indexOf('\r', start);
      }
      if (lf >= 0 && lf < start) lf = text.indexOf('\n', start);
      if (this.process(line, sink) && sink.stopped()) return;
    }
    this.line += text.slice(start);
  }

  /** One line of the stream. True when it dispatched an event. The field name is compared where it
   * stands (no string is made of it): the hot path is a `data` line. */
  process(line, sink) {
    if (line === '') return this.dispatch(sink);
    const colon = line.indexOf(':');
    if (colon === 0) return false;
    const end = colon < 0 ? line.length : colon;
    const value = colon < 0 ? '' : line.slice(line.charCodeAt(colon + 1) === SPACE ? colon + 2 : colon + 1);
    if (end === 4 && line.startsWith('data')) {
      this.data = this.hasData ? this.data + '\n' + value : value;
      this.hasData = true;
    } else if (end === 5 && line.startsWith('event')) this.type = value;
    else if (end === 2 && line.startsWith('id')) {
      if (!value.includes('\0')) this.idBuffer = value;
    } else if (end === 5 && line.startsWith('retry') && DIGITS.test(value)) sink.retry(Number(value));
    return false;
  }

  dispatch(sink) {
    const { data, type, hasData } = this;
    this.data = this.type = '';
    this.hasData = false;
    if (!hasData) return false;
    sink.event(type || 'message', data, this.idBuffer);
    return true;
  }
}
