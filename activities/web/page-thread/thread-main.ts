// Entry point of the worker's page thread (page-thread.ts): makes fetched pages readable
// (page-content.ts: HTML through Readability and turndown, PDFs through pdf.js) on an event loop of
// its own, one page at a time, so a large page never holds up the worker's other activities, their
// heartbeats or its workflow tasks.
import { parentPort } from 'node:worker_threads';
import { pageContent, PageContentError } from '../page-content';
import type { FromPageThread, ToPageThread } from './page-thread';

const port = parentPort;
if (!port) throw new Error('page-thread/thread-main runs as a worker thread');
const send = (m: FromPageThread) => port.postMessage(m);

port.on('message', (m: ToPageThread) => {
  // The bytes arrive as a copy of their own (structured clone): used as they are.
  pageContent(m.input).then(
    (content) => send({ id: m.id, content }),
    (err: Error) => send({ id: m.id, error: { message: err.message, unreadable: err instanceof PageContentError } }),
  );
});
send({ type: 'ready' });
