// The agent's web tools end to end (real processes, the scripted model calling the tools): a
// research task (web_search on a SearXNG stand-in, then web_fetch of its first result, the answer
// citing the page's URL), a redirect to the metadata address refused with nothing sent, a search
// provider's rate limit read by the model, and the provider's key in none of the task's history,
// the session's thread or the processes' logs.
import { api, startTestStack, type Api } from './helpers';
import type { Stack } from '../../src/dev/launcher/stack';
import { ChildLogs } from '../../src/dev/launcher/child-logs';
import { rawHistory } from './raw-history';
import { WEB_FETCH_PAGES } from '../support/web-pages';
import { startWebSite, type WebSite } from '../support/web-site';
import { startSearchServer, type SearchServer, type SearchServerOptions } from '../support/search-servers';

jest.setTimeout(120_000);
const SEARCH_KEY = 'searx-proxy-SECRET-0123456789';
let site: WebSite;
let siteUrl: string;
let search: SearchServer;
let searchOptions: SearchServerOptions;
let stack: Stack;
let call: Api;
/** Every line each process wrote, from its start. */
const logLines: string[] = [];

beforeAll(async () => {
  site = await startWebSite({ routes: WEB_FETCH_PAGES });
  siteUrl = site.url;
  searchOptions = {
    apiKey: SEARCH_KEY,
    results: [
      { title: 'How barnacles hold on', url: `${siteUrl}/article`, snippet: 'Barnacles live in the intertidal zone.' },
      { title: 'Tide report', url: `${siteUrl}/report.pdf`, snippet: 'High water at 06:12.' },
    ],
  };
  search = await startSearchServer('searxng', searchOptions);
  stack = await startTestStack(
    {
      WEB_SEARCH_PROVIDER: 'searxng',
      WEB_SEARCH_URL: search.url,
      WEB_SEARCH_API_KEY: SEARCH_KEY,
      // The test site is on loopback; the metadata address stays refused (link-local).
      OUTBOUND_ALLOWLIST: '127.0.0.1',
      LOG_LEVEL: 'debug',
    },
    { childLogs: new ChildLogs({ show: (line) => void logLines.push(line) }) },
  );
  call = api(stack);
});

afterAll(async () => {
  await stack?.stop();
  await search?.close();
  await site?.close();
});

const RESEARCH =
  '[[tool name=web_search args={"query":"how barnacles hold on"}]] [[tool name=web_fetch turn=2 args={"url":"{{url}}"}]] how do barnacles hold on?';

test('research: web_search, then web_fetch of the first result; the answer cites the page it read', async () => {
  const r = await call('POST', '/', { body: { message: RESEARCH } });
  expect(r.status).toBe(200);
  expect(r.json.status).toBe('completed');
  expect(r.json.output).toContain(`URL: ${siteUrl}/article`);
  expect(r.json.output).toContain('protein cement');
  expect(r.json.output).not.toContain('Subscribe now');
  const responses = r.json.events.filter((e: { type: string }) => e.type === 'agent_tool_response');
  expect(responses).toHaveLength(2);
  // The provider got the model's query, as SearXNG's JSON API takes it, with the proxy's token.
  expect(search.requests.at(-1)).toMatchObject({
    path: '/search',
    query: expect.objectContaining({ q: 'how barnacles hold on', format: 'json' }),
    headers: expect.objectContaining({ authorization: `Bearer ${SEARCH_KEY}` }),
  });
});

test('a redirect to the cloud metadata address is refused, and the model reads why', async () => {
  const r = await call('POST', '/', {
    body: { message: `[[tool name=web_fetch args={"url":"${siteUrl}/redirect-metadata"}]] read it` },
  });
  expect(r.json.status).toBe('completed');
  expect(r.json.output).toMatch(
    /tool said: Error: refused, nothing was sent: .*169\.254\.169\.254, a link-local address/,
  );
});

test('a rate-limited provider is an error the model reads; the run goes on', async () => {
  searchOptions.failWith = { status: 429, headers: { 'retry-after': '30' } };
  try {
    const r = await call('POST', '/', { body: { message: '[[tool name=web_search args={"query":"tides"}]] search' } });
    expect(r.json.status).toBe('completed');
    expect(r.json.output).toMatch(/tool said: Error: .*rate limiting.*retry after 30 seconds/);
  } finally {
    delete searchOptions.failWith;
  }
});

test("the provider's key is in no history, thread or log line", async () => {
  const r = await call('POST', '/', { body: { message: RESEARCH } });
  expect(r.json.status).toBe('completed');
  expect(await rawHistory(stack.temporalAddress, r.json.task_id)).not.toContain(SEARCH_KEY);
  const session = await call('GET', `/sessions/${r.json.session}/messages`);
  expect(session.text).not.toContain(SEARCH_KEY);
  // The worker logged (debug level, from its start) and said which provider it uses, never with the key.
  expect(logLines.some((l) => l.includes('web search ready') && l.includes(search.url))).toBe(true);
  expect(logLines.some((l) => l.includes('runWebTool'))).toBe(true);
  expect(logLines.filter((l) => l.includes(SEARCH_KEY))).toEqual([]);
});
