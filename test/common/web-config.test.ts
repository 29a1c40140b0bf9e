// The web tools' configuration: web_fetch is offered by default, web_search only with a provider
// (the default's `web` group goes without it; a deployment naming web_search must configure one),
// and each provider's required variables.
import { loadConfig, SECRET_VARIABLES } from '../../src/common/config';
import { configError } from './config-error';

const SEARXNG = { WEB_SEARCH_PROVIDER: 'searxng', WEB_SEARCH_URL: 'http://searx.internal:8080' };

test('by default web_fetch is offered and web_search is not; a provider adds it', () => {
  const plain = loadConfig({});
  expect(plain.BUILTIN_TOOLS).toContain('web_fetch');
  expect(plain.BUILTIN_TOOLS).not.toContain('web_search');
  expect(plain).toMatchObject({ WEB_FETCH_MAX_BYTES: 10 * 1024 * 1024, WEB_FETCH_TIMEOUT_S: 30 });
  expect(loadConfig(SEARXNG).BUILTIN_TOOLS).toEqual(expect.arrayContaining(['web_fetch', 'web_search']));
  expect(loadConfig({ BUILTIN_TOOLS: 'calculate,web', ...SEARXNG }).BUILTIN_TOOLS).toEqual([
    'calculate',
    'web_fetch',
    'web_search',
  ]);
  expect(loadConfig({ BUILTIN_TOOLS: 'calculate,web' }).BUILTIN_TOOLS).toEqual(['calculate', 'web_fetch']);
});

test('naming web_search without a provider, and a provider without what it needs, are refused by name', () => {
  expect(configError({ BUILTIN_TOOLS: 'web_search' }).issues).toEqual([
    {
      variable: 'BUILTIN_TOOLS',
      message: expect.stringMatching(/web_search needs a search provider: set WEB_SEARCH_PROVIDER/),
    },
  ]);
  expect(configError({ WEB_SEARCH_PROVIDER: 'searxng' }).issues).toEqual([
    { variable: 'WEB_SEARCH_URL', message: expect.stringMatching(/required with WEB_SEARCH_PROVIDER=searxng/) },
  ]);
  for (const provider of ['brave', 'tavily'])
    expect(configError({ WEB_SEARCH_PROVIDER: provider }).issues).toEqual([
      { variable: 'WEB_SEARCH_API_KEY', message: `required with WEB_SEARCH_PROVIDER=${provider}` },
    ]);
  expect(configError({ WEB_SEARCH_PROVIDER: 'bing' }).issues[0].variable).toBe('WEB_SEARCH_PROVIDER');
  expect(configError({ ...SEARXNG, WEB_SEARCH_URL: 'ftp://x' }).issues[0].variable).toBe('WEB_SEARCH_URL');
  // brave and tavily have public endpoints: a key is enough.
  expect(loadConfig({ WEB_SEARCH_PROVIDER: 'brave', WEB_SEARCH_API_KEY: 'k' }).WEB_SEARCH_URL).toBeUndefined();
});

test('the provider key is a secret', () => {
  expect(SECRET_VARIABLES).toContain('WEB_SEARCH_API_KEY');
});
