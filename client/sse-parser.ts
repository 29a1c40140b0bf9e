// An incremental parser of text/event-stream (the WHATWG "server-sent events"
// framing), fed decoded text in chunks of any size: a line, a field or a CRLF
// may be split across chunks. It knows nothing of the service's events: it
// yields frames, comments (the service's heartbeats) and retry hints, and the
// caller decides what they mean.

export type SseItem =
  /** A dispatched frame. `id` is the last event id in force ('' when none was ever set), as EventSource keeps it. */
  | { kind: 'event'; event: string; data: string; id: string }
  /** A `:` line; the service sends them as heartbeats (`: keep-alive`). */
  | { kind: 'comment'; text: string }
  /** A valid `retry:` field: the reconnection delay the server asks for, in ms. */
  | { kind: 'retry'; ms: number };

export class SseParser {
  private buffer = '';
  /** The previous chunk ended in CR: a LF that starts the next one belongs to that line end. */
  private skipLeadingLf = false;
  private started = false;
  private data: string[] = [];
  private eventType = '';
  private lastEventId = '';

  /** Parses what `chunk` completes; a trailing partial line waits for the next chunk. */
  feed(chunk: string): SseItem[] {
    let text = chunk;
    if (this.skipLeadingLf && text.startsWith('\n')) text = text.slice(1);
    if (text.length) this.skipLeadingLf = false;
    if (!this.started && text.length) {
      // A UTF-8 BOM may only open the stream, never appear later.
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      this.started = true;
    }
    // What is left of earlier chunks holds no line end: scan only the new text.
    const scanFrom = this.buffer.length;
    this.buffer += text;
    const out: SseItem[] = [];
    let start = 0;
    for (let i = scanFrom; i < this.buffer.length; i++) {
      const c = this.buffer.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line(this.buffer.slice(start, i), out);
      if (c === 13) {
        if (i + 1 < this.buffer.length) {
          if (this.buffer.charCodeAt(i + 1) === 10) i++;
        } else {
          this.skipLeadingLf = true;
        }
      }
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  private line(line: string, out: SseItem[]): void {
    if (line === '') return this.dispatch(out);
    if (line.startsWith(':')) {
      out.push({ kind: 'comment', text: line.slice(1).replace(/^ /, '') });
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.data.push(value);
        break;
      case 'id':
        // An id with NUL is ignored, as browsers do: it could not be sent back in a header.
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) out.push({ kind: 'retry', ms: Number(value) });
        break;
      default:
        // Unknown fields are ignored by the format's rules.
        break;
    }
  }

  private dispatch(out: SseItem[]): void {
    // A frame without data lines dispatches nothing, but its id (already kept) still counts.
    if (this.data.length)
      out.push({ kind: 'event', event: this.eventType || 'message', data: this.data.join('\n'), id: this.lastEventId });
    this.data = [];
    this.eventType = '';
  }
}
