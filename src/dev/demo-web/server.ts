// A small web site and search engine for the offline demo: `npm start` runs it so the agent's web
// tools (web_search, web_fetch: docs/web.md) can be tried without the internet. Its search answers
// as SearXNG's JSON API does (GET /search?q=...&format=json), over the site's own articles, each a
// page with a navigation bar, an ad and a footer around the text, as real pages have.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DemoWebServer {
  /** The site's root, e.g. http://127.0.0.1:8791 (also the SearXNG base URL). */
  url: string;
  close(): Promise<void>;
}

interface Article {
  slug: string;
  title: string;
  paragraphs: string[];
}

const ARTICLES: readonly Article[] = [
  {
    slug: 'durable-execution',
    title: 'Durable execution in five paragraphs',
    paragraphs: [
      'Durable execution means a program keeps going after the machine under it fails: every step it took is recorded, and a new worker replays the record to arrive where the old one stopped.',
      'Temporal records each workflow as a history of events. Activities, the steps that touch the world, are retried by the server under a policy of their own.',
      'Because the history is the source of truth, a workflow can wait for days at no cost: a timer is an event, not a sleeping process.',
      'Agents fit the model well: each model call and each tool call is an activity, and the loop that decides is the workflow.',
      'The price is determinism: the workflow code must take the same decisions when replayed, so clocks and random numbers come from the engine.',
    ],
  },
  {
    slug: 'tides',
    title: 'Why there are two tides a day',
    paragraphs: [
      'The Moon pulls the near side of the Earth more strongly than its centre, and the centre more strongly than the far side, so the oceans bulge on both sides.',
      'The Earth turns under both bulges once a day, which brings most coasts two high tides and two low tides in a little over twenty-four hours.',
    ],
  },
];

function articlePage(a: Article): string {
  const body = a.paragraphs.map((p) => `<p>${p}</p>`).join('\n');
  return `<!doctype html><html><head><meta charset="utf-8"><title>${a.title}</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About the demo site</a> <a href="/login">Sign in</a></nav>
<div class="ad">Advertisement: buy one demo, get one free</div>
<main><article><h1>${a.title}</h1>
${body}
<p>Related: <a href="/articles/${a.slug === 'tides' ? 'durable-execution' : 'tides'}">another article</a>.</p>
</article></main>
<footer>Demo site of the Agent Execution Service. No cookies were harmed.</footer>
</body></html>`;
}

/** SearXNG's JSON answer: the articles sharing a word with the query (all of them when none does). */
function searchAnswer(base: string, query: string): unknown {
  const words = query
    .toLowerCase()
    .split(/\W+/)
    .filter((w) => w.length > 2);
  const text = (a: Article) => `${a.title} ${a.paragraphs.join(' ')}`.toLowerCase();
  const hits = ARTICLES.filter((a) => words.some((w) => text(a).includes(w)));
  const results = (hits.length ? hits : ARTICLES).map((a) => ({
    title: a.title,
    url: `${base}/articles/${a.slug}`,
    content: a.paragraphs[0].slice(0, 160),
    engine: 'demo',
  }));
  return { query, number_of_results: results.length, results };
}

export async function startDemoWebServer(opts: { port?: number; host?: string } = {}): Promise<DemoWebServer> {
  const host = opts.host ?? '127.0.0.1';
  let base = '';
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', base);
    const send = (status: number, type: string, body: string) =>
      res.writeHead(status, { 'content-type': `${type}; charset=utf-8` }).end(body);
    if (req.method !== 'GET') return send(405, 'text/plain', 'only GET here');
    if (url.pathname === '/search' && url.searchParams.get('format') === 'json')
      return send(200, 'application/json', JSON.stringify(searchAnswer(base, url.searchParams.get('q') ?? '')));
    const article = ARTICLES.find((a) => url.pathname === `/articles/${a.slug}`);
    if (article) return send(200, 'text/html', articlePage(article));
    if (url.pathname === '/')
      return send(
        200,
        'text/html',
        ARTICLES.map((a) => `<p><a href="/articles/${a.slug}">${a.title}</a></p>`).join(''),
      );
    send(404, 'text/plain', 'no such page on the demo site');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, resolve);
  });
  base = `http://${host}:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
