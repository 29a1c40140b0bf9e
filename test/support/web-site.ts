// A small web site on 127.0.0.1 for the tests of the browser and of web fetching: each page is a
// route of the table ROUTES (path → handler), so a test file or a later suite adds pages by
// passing its own routes to startWebSite (they win over the built-in ones of the same path).
// Every request is recorded in `hits` (its path, with the query), so that a test can assert that
// a server received nothing. Pages that wait (/slow) use `ctx.later`, whose timers close() clears:
// a test never leaves a 30 s timer behind.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What a route's handler gets besides the request and the response. */
export interface RouteContext {
  /** The request's URL (its host as the client sent it). */
  url: URL;
  /** The request's body (read on demand). */
  body(): Promise<Buffer>;
  /** Runs `fn` after `ms` unless the site closes first. */
  later(ms: number, fn: () => void): void;
}

export type Route = (req: http.IncomingMessage, res: http.ServerResponse, ctx: RouteContext) => unknown;

export interface WebSite {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  port: number;
  /** The paths requested so far (with their query), in order. */
  hits: string[];
  close(): Promise<void>;
}

/** Text made safe to put into HTML. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Answers an HTML page whose body is `body` (already HTML). */
export function sendHtml(res: http.ServerResponse, title: string, body: string, status = 200): void {
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`;
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(html);
}

function redirect(res: http.ServerResponse, to: string): void {
  res.writeHead(302, { location: to }).end();
}

// The picture for screenshots: shapes and colours, no text to render (no fonts needed).
const PICTURE_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="320" height="200"><rect width="320" height="200" fill="#1e6fd9"/>' +
  '<circle cx="100" cy="100" r="60" fill="#f2b705"/><rect x="190" y="50" width="90" height="100" fill="#d93a1e"/></svg>';

/** The built-in pages. */
export const ROUTES: Readonly<Record<string, Route>> = {
  '/': (_req, res) => sendHtml(res, 'Test site', '<h1>Test site</h1><p>Pages for the tests.</p>'),

  // The text exists only once the script ran: a plain HTTP fetch of the page does not contain it.
  '/js-only': (_req, res) =>
    sendHtml(
      res,
      'Script page',
      '<main id="out">Loading…</main><script>' +
        "document.getElementById('out').textContent = ['Rendered', 'by', 'script:'].join(' ') + ' ' + 'purple' + '-' + 'otter';" +
        '</script>',
    ),

  // A form whose POST answer shows what was submitted.
  '/form': async (req, res, ctx) => {
    if (req.method === 'POST') {
      const fields = new URLSearchParams((await ctx.body()).toString('utf8'));
      const shown = [...fields].map(([k, v]) => `${escapeHtml(k)}=${escapeHtml(v)}`).join(', ');
      return sendHtml(res, 'Form received', `<h1>Form received</h1><p id="result">Submitted: ${shown}</p>`);
    }
    sendHtml(
      res,
      'Form',
      '<h1>Contact form</h1><form method="post" action="/form">' +
        '<label for="name">Your name</label> <input id="name" name="name" type="text">' +
        '<label for="colour">Colour</label> <select id="colour" name="colour"><option>red</option><option>green</option></select>' +
        '<button type="submit">Send</button></form>',
    );
  },

  '/cookie/set': (_req, res, ctx) => {
    const value = (ctx.url.searchParams.get('value') ?? 'set').replace(/[^\w-]/g, '');
    res.setHeader('set-cookie', `marker=${value}; Path=/; HttpOnly`);
    sendHtml(res, 'Cookie set', `<p>Cookie marker set to ${escapeHtml(value)}</p>`);
  },
  '/cookie/show': (req, res) =>
    sendHtml(res, 'Cookies', `<p id="cookies">Cookies received: ${escapeHtml(req.headers.cookie ?? '(none)')}</p>`),

  // Answers after 30 s (or ?ms=): for timeouts and cancellation.
  '/slow': (_req, res, ctx) =>
    ctx.later(Number(ctx.url.searchParams.get('ms') ?? 30_000), () =>
      sendHtml(res, 'Slow', '<p>Slow page, finally.</p>'),
    ),

  // The cloud metadata service, by IP literal: the policy must refuse it wherever a redirect leads.
  '/redirect-metadata': (_req, res) => redirect(res, 'http://169.254.169.254/latest/meta-data/'),
  // A redirect to any URL (?to=), e.g. a listener on 127.0.0.1 that must not be reached.
  '/redirect': (_req, res, ctx) => redirect(res, ctx.url.searchParams.get('to') ?? '/'),

  // A page whose script fetches ?target= (e.g. http://127.0.0.1:<port>/secret) and shows the outcome.
  '/fetch-private': (_req, res, ctx) => {
    const target = ctx.url.searchParams.get('target') ?? '';
    sendHtml(
      res,
      'Fetch',
      '<p id="outcome">Fetching…</p><script>' +
        `fetch(${JSON.stringify(target)}).then(r => r.text().then(t => 'Fetch answered ' + r.status + ': ' + t))` +
        ".catch(e => 'Fetch failed: ' + e.message).then(s => { document.getElementById('outcome').textContent = s; });" +
        '</script>',
    );
  },
  // What a "private" server holds (started as a second site).
  '/secret': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' }).end('the secret');
  },

  // Something to see in a screenshot.
  '/picture': (_req, res) =>
    sendHtml(
      res,
      'Picture',
      '<h1>Picture</h1><img id="pic" alt="Shapes" src="/picture.svg" width="320" height="200">' +
        '<div style="width:200px;height:80px;background:linear-gradient(90deg,#0a0,#a0a)"></div>',
    ),
  '/picture.svg': (_req, res) => {
    res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(PICTURE_SVG);
  },

  // A link to a file served as an attachment: the browser downloads it.
  '/download': (_req, res) => sendHtml(res, 'Download', '<p><a href="/download/report.txt">Get the report</a></p>'),
  '/download/report.txt': (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/plain', 'content-disposition': 'attachment; filename="report.txt"' })
      .end('quarterly report\n');
  },
};

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Starts the site on 127.0.0.1 and a free port, with ROUTES and `routes` (which win). */
export async function startWebSite(opts: { routes?: Record<string, Route> } = {}): Promise<WebSite> {
  const table: Record<string, Route> = { ...ROUTES, ...opts.routes };
  const hits: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
    hits.push(url.pathname + url.search);
    const route = table[url.pathname];
    const ctx: RouteContext = {
      url,
      body: () => readBody(req),
      later: (ms, fn) => {
        const t = setTimeout(() => {
          timers.delete(t);
          fn();
        }, ms);
        timers.add(t);
      },
    };
    if (!route) return sendHtml(res, 'Not found', '<p>No such page.</p>', 404);
    Promise.resolve(route(req, res, ctx)).catch((err: Error) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err.message));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    hits,
    close: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
