// One side of `npm run bench:express`: an Express app with a JSON route shaped
// like the gateway's status answer, served either by http.createServer (stock)
// or by createExpressServer. It counts its own GC pauses (perf_hooks) and
// reports them on GET /gc. Prints its port as one JSON line, then serves until
// SIGTERM.
//
//   node -r tsx/cjs scripts/bench-express-server.ts stock|born
import http from 'node:http';
import { serveAndAnnounce } from './bench-proc';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import express from 'express';
import { createExpressServer } from '../src/http/express-server';

const mode = process.argv[2];
if (mode !== 'stock' && mode !== 'born') throw new Error('usage: bench-express-server.ts stock|born');

const pauses = { minor: [] as number[], major: [] as number[] };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
    (kind === constants.NODE_PERFORMANCE_GC_MINOR ? pauses.minor : pauses.major).push(e.duration);
  }
}).observe({ entryTypes: ['gc'] });

const app = express();
app.disable('x-powered-by');
app.set('query parser', 'simple');
const doc = { task_id: 'task_x', session: 'sess_x', status: 'completed', progress: 1, current_step: '1', error: null, metadata: {}, created_at: new Date().toISOString() };
app.get('/status', (req, res) => void res.json({ ...doc, asked: req.query.n ?? null }));
app.get('/gc', (_req, res) => void res.json(pauses));
app.post('/gc/reset', (_req, res) => {
  pauses.minor = [];
  pauses.major = [];
  res.status(204).end();
});

const server = mode === 'born' ? createExpressServer(app) : http.createServer(app);
void serveAndAnnounce(server);
