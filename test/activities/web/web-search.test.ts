// The web_search tool over a provider (a local SearXNG stand-in, test/support/search-servers.ts):
// the model reads numbered results with their URLs; a provider's error answer (401, 429, 500) is
// an error result naming the provider and never the key; a stalled provider is an error result;
// a connection failure is thrown for Temporal to retry; bad arguments are the model's errors.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSearchProvider, type SearchProviderName } from '../../../activities/web/search/providers';
import { formatResults, webSearchTool } from '../../../activities/web/web-search';
import { ToolInputError } from '../../../activities/tools/builtin';
import { startSearchServer, type SearchServer, type SearchServerOptions } from '../../support/search-servers';
import type { SessionWorkspace } from '../../../src/common/workspaces/layout';

const KEY = 'BSA-secret-key-0123456789';
const RESULTS = [
  { title: 'Tides explained', url: 'https://sea.example/tides', snippet: 'The Moon pulls the oceans.' },
  { title: 'Tide tables', url: 'https://sea.example/tables', snippet: 'High and low water.' },
];
const servers: SearchServer[] = [];
afterEach(async () => void (await Promise.all(servers.splice(0).map((s) => s.close()))));

const ws = {} as SessionWorkspace; // web_search writes nothing
const signal = () => new AbortController().signal;

async function tool(provider: SearchProviderName, opts: Partial<SearchServerOptions> = {}, timeoutMs = 5000) {
  const server = await startSearchServer(provider, { results: RESULTS, apiKey: KEY, ...opts });
  servers.push(server);
  const p = createSearchProvider({ provider, url: server.url, apiKey: KEY }, fetch);
  return { server, run: webSearchTool(p, timeoutMs) };
}

test('results are numbered lines with title, URL and snippet, cut to count; the provider got the query', async () => {
  const { server, run } = await tool('searxng');
  const r = await run({ query: ' tides ', count: 1 }, ws, { signal: signal() });
  expect(r).toEqual({
    text: 'Results for "tides":\n\n1. Tides explained\n   https://sea.example/tides\n   The Moon pulls the oceans.',
  });
  expect(server.requests[0].query).toEqual(expect.objectContaining({ q: 'tides', format: 'json' }));
  expect(formatResults('x', [])).toBe('No results for "x".');
});

test.each([
  ['brave', 401, /refused the API key/],
  ['tavily', 401, /refused the API key/],
  ['brave', 429, /rate limiting/],
  ['tavily', 500, /answered HTTP 500/],
] as const)('%s answering %i is an error result the model reads, without the key', async (provider, status, why) => {
  const { run } = await tool(provider, { failWith: { status, body: { detail: { error: `bad key ${KEY}` } } } });
  const r = await run({ query: 'tides' }, ws, { signal: signal() });
  expect(r.isError).toBe(true);
  expect(r.text).toMatch(why);
  expect(r.text).not.toContain(KEY);
});

test('a provider that does not answer in time is an error result; one that is down is thrown (retried)', async () => {
  const stall = http.createServer(() => undefined);
  await new Promise<void>((resolve) => stall.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(stall.address() as AddressInfo).port}`;
  const slow = webSearchTool(createSearchProvider({ provider: 'searxng', url }, fetch), 200);
  expect(await slow({ query: 'tides' }, ws, { signal: signal() })).toEqual({
    text: 'Error: the search provider did not answer within 0.2 s; try again later.',
    isError: true,
  });
  stall.closeAllConnections();
  await new Promise((r) => stall.close(r));
  const down = webSearchTool(createSearchProvider({ provider: 'searxng', url }, fetch), 5000);
  await expect(down({ query: 'tides' }, ws, { signal: signal() })).rejects.toThrow();
});

test('bad arguments are the model\u2019s errors', async () => {
  const { run } = await tool('searxng');
  await expect(run({}, ws, { signal: signal() })).rejects.toThrow(ToolInputError);
  await expect(run({ query: 'x', count: 0 }, ws, { signal: signal() })).rejects.toThrow(/count must be/);
  await expect(run({ query: 'x', count: 21 }, ws, { signal: signal() })).rejects.toThrow(/count must be/);
});
