// The client's SSE parser on its own: the text/event-stream framing rules
// (fields, comments, line ends of all three kinds, frames split anywhere across
// chunks), without a network.
import { SseParser, type SseItem } from '../../client/sse-parser';

/** Feeds the chunks one by one and collects everything parsed. */
function parse(...chunks: string[]): SseItem[] {
  const p = new SseParser();
  return chunks.flatMap((c) => p.feed(c));
}

const events = (items: SseItem[]) => items.filter((i) => i.kind === 'event');

test('the service framing: id and data per event, comments as heartbeats, the event: error frame', () => {
  const text =
    ': stream open\n\nid: 1\ndata: {"seq":1}\n\n: keep-alive\n\nid: 2\ndata: {"seq":2}\n\nevent: error\ndata: {"error":{}}\n\n';
  expect(parse(text)).toEqual([
    { kind: 'comment', text: 'stream open' },
    { kind: 'event', event: 'message', data: '{"seq":1}', id: '1' },
    { kind: 'comment', text: 'keep-alive' },
    { kind: 'event', event: 'message', data: '{"seq":2}', id: '2' },
    // No id line: the last id stays in force, as EventSource keeps it.
    { kind: 'event', event: 'error', data: '{"error":{}}', id: '2' },
  ]);
});

test('every split of a stream into two chunks gives the same items, CRLF and CR line ends included', () => {
  const text = '\ufeffid: 7\r\nevent: custom\r\ndata: a\r\ndata:  b\r\n\r\n:c\rretry: 1500\rdata: x\r\rdata: y\n\n';
  const whole = parse(text);
  expect(whole).toEqual([
    { kind: 'event', event: 'custom', data: 'a\n b', id: '7' },
    { kind: 'comment', text: 'c' },
    { kind: 'retry', ms: 1500 },
    { kind: 'event', event: 'message', data: 'x', id: '7' },
    { kind: 'event', event: 'message', data: 'y', id: '7' },
  ]);
  for (let i = 1; i < text.length; i++) expect([i, parse(text.slice(0, i), text.slice(i))]).toEqual([i, whole]);
  // One character at a time too: a CR at the end of one chunk and its LF at the start of the next are one line end.
  expect(parse(...text.split(''))).toEqual(whole);
});

test('field rules: no colon, no space, unknown fields, bad retry, NUL in id, frames without data, an unfinished frame', () => {
  const items = parse('data\n\ndata:x\nfoo: bar\nretry: 12a\n\nid: 5\n\nid: a\0b\ndata: z\n\ndata: never dispatched');
  expect(items).toEqual([
    { kind: 'event', event: 'message', data: '', id: '' },
    { kind: 'event', event: 'message', data: 'x', id: '' },
    // `id: 5` alone dispatches nothing but sets the id; the id with NUL is ignored.
    { kind: 'event', event: 'message', data: 'z', id: '5' },
  ]);
  expect(events(parse('event: a\n\ndata: 1\n\n'))).toEqual([{ kind: 'event', event: 'message', data: '1', id: '' }]);
});

test('a BOM is dropped only at the very start of the stream', () => {
  expect(parse('\ufeffdata: 1\n\n')).toEqual([{ kind: 'event', event: 'message', data: '1', id: '' }]);
  expect(parse('data: 1\n\n', '\ufeffdata: 2\n\n')).toEqual([{ kind: 'event', event: 'message', data: '1', id: '' }]);
});
