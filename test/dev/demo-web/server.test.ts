// The demo web site npm start runs: its search answers as SearXNG's JSON API does, over its own
// articles (those sharing a word with the query, else all), and each article is a page with the
// chrome around its text that web_fetch must leave out.
import { startDemoWebServer, type DemoWebServer } from '../../../src/dev/demo-web/server';

let site: DemoWebServer;
beforeAll(async () => {
  site = await startDemoWebServer();
});
afterAll(() => site.close());

test('search answers in SearXNG’s JSON shape, the matching article first, with URLs on the site', async () => {
  const r = await fetch(`${site.url}/search?q=durable+workflows&format=json`);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await r.json()) as { query: string; results: { title: string; url: string; content: string }[] };
  expect(body.query).toBe('durable workflows');
  expect(body.results[0]).toEqual({
    title: 'Durable execution in five paragraphs',
    url: `${site.url}/articles/durable-execution`,
    content: expect.stringContaining('Durable execution means'),
    engine: 'demo',
  });
  const none = (await (await fetch(`${site.url}/search?q=zzz&format=json`)).json()) as { results: unknown[] };
  expect(none.results.length).toBeGreaterThan(1);
});

test('an article page has its text inside navigation, an ad and a footer; other paths are 404, other methods 405', async () => {
  const page = await (await fetch(`${site.url}/articles/tides`)).text();
  expect(page).toContain('<title>Why there are two tides a day</title>');
  expect(page).toMatch(/<nav>[\s\S]*<article>[\s\S]*<footer>/);
  expect((await fetch(`${site.url}/nope`)).status).toBe(404);
  expect((await fetch(`${site.url}/search?q=x&format=json`, { method: 'POST' })).status).toBe(405);
});
