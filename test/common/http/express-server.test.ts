// createExpressServer: requests and responses are born with the app's
// prototypes (so Express's per-request setPrototypeOf changes nothing), and
// everything Express does on top of them still works.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createExpressServer } from '../../../src/common/http/express-server';

interface Seen {
  reqProto: boolean;
  resProto: boolean;
}

async function serve(
  server: http.Server,
  app: express.Express,
): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  // Runs before Express's own 'request' listener: what Node built, untouched.
  server.prependListener('request', (req, res) =>
    seen.push({
      reqProto: Object.getPrototypeOf(req) === app.request,
      resProto: Object.getPrototypeOf(res) === app.response,
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function appUnderTest(): express.Express {
  const app = express();
  app.set('query parser', 'simple');
  app.get(
    '/q',
    (req, res) =>
      void res.json({
        x: req.query.x ?? null,
        host: req.hostname,
        ua: req.get('user-agent'),
        ip: req.ip,
        path: req.path,
        sameRes: req.res === res,
      }),
  );
  app.post('/echo', express.json(), (req, res) => void res.status(201).set('X-Seen', 'yes').json(req.body));
  app.get('/stream', (_req, res) => {
    res.setHeader('Content-Type', 'text/event-stream');
    res.flushHeaders();
    res.write('data: 1\n\n');
    setTimeout(() => res.end('data: 2\n\n'), 5);
  });
  app.get('/boom', () => {
    throw Object.assign(new Error('nope'), { status: 418 });
  });
  app.use(
    (err: Error & { status?: number }, _req: express.Request, res: express.Response, _next: express.NextFunction) =>
      void res.status(err.status ?? 500).json({ error: err.message }),
  );
  return app;
}

describe('createExpressServer', () => {
  test('requests and responses arrive with the app prototypes already set', async () => {
    const app = appUnderTest();
    const s = await serve(createExpressServer(app), app);
    try {
      for (let i = 0; i < 3; i++) expect((await fetch(`${s.url}/q?x=${i}`)).status).toBe(200);
      expect(s.seen).toHaveLength(3);
      expect(s.seen.every((x) => x.reqProto && x.resProto)).toBe(true);
    } finally {
      await s.close();
    }
  });

  test('the stock server does not (the reason this module exists)', async () => {
    const app = appUnderTest();
    const s = await serve(http.createServer(app), app);
    try {
      await fetch(`${s.url}/q`);
      expect(s.seen).toEqual([{ reqProto: false, resProto: false }]);
    } finally {
      await s.close();
    }
  });

  test('Express request and response helpers, body parsing, streaming and error handlers behave as usual', async () => {
    const app = appUnderTest();
    const s = await serve(createExpressServer(app), app);
    try {
      const q = await fetch(`${s.url}/q?x=7`, { headers: { 'User-Agent': 'jest-ua' } });
      expect(await q.json()).toEqual({
        x: '7',
        host: '127.0.0.1',
        ua: 'jest-ua',
        ip: '127.0.0.1',
        path: '/q',
        sameRes: true,
      });
      expect(q.headers.get('content-type')).toMatch(/^application\/json/);

      const e = await fetch(`${s.url}/echo`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ a: [1, 2] }),
      });
      expect(e.status).toBe(201);
      expect(e.headers.get('x-seen')).toBe('yes');
      expect(await e.json()).toEqual({ a: [1, 2] });

      const st = await fetch(`${s.url}/stream`);
      expect(await st.text()).toBe('data: 1\n\ndata: 2\n\n');

      const b = await fetch(`${s.url}/boom`);
      expect(b.status).toBe(418);
      expect(await b.json()).toEqual({ error: 'nope' });
    } finally {
      await s.close();
    }
  });

  test('server options pass through', async () => {
    const app = appUnderTest();
    const s = await serve(createExpressServer(app, { maxHeaderSize: 1024 }), app);
    try {
      const res = await fetch(`${s.url}/q`, { headers: { 'X-Big': 'y'.repeat(2048) } });
      expect(res.status).toBe(431);
    } finally {
      await s.close();
    }
  });

  test('falls back to the stock server when Node ships its request class as an ES class', async () => {
    const original = http.IncomingMessage;
    const mutable = http as unknown as { IncomingMessage: typeof http.IncomingMessage };
    mutable.IncomingMessage = class extends original {};
    try {
      const app = appUnderTest();
      const s = await serve(createExpressServer(app), app);
      try {
        const res = await fetch(`${s.url}/q?x=1`);
        expect(((await res.json()) as { x: string }).x).toBe('1');
        expect(s.seen).toEqual([{ reqProto: false, resProto: false }]);
      } finally {
        await s.close();
      }
    } finally {
      mutable.IncomingMessage = original;
    }
  });
});
