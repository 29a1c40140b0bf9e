import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, envSchema, loadConfig } from '../../src/common/config';
import { configError } from './config-error';
import { LATEST_VERSION } from '../../src/common/api-versions';

test('defaults fill every variable', () => {
  const c = loadConfig({});
  expect(c).toMatchObject({
    PORT: 8080,
    RETENTION_DAYS: 7,
    MAX_RUNNING_TASKS_PER_ACCOUNT: 50,
    BODY_LIMIT_BYTES: 1024 * 1024,
    TEMPORAL_NAMESPACE: 'default',
  });
  expect(c.MODEL_PRICES['gpt-4o']).toEqual({ input: 2.5, output: 10 });
});

test('values are coerced and empty strings mean unset', () => {
  const c = loadConfig({
    PORT: '9000',
    LOG_FORMAT: 'json',
    OPENAI_API_KEY: '',
    MODEL_PRICES: '{"m":{"input":1,"output":2}}',
  });
  expect(c.PORT).toBe(9000);
  expect(c.LOG_FORMAT).toBe('json');
  expect(c.OPENAI_API_KEY).toBeUndefined();
  expect(c.MODEL_PRICES).toEqual({ m: { input: 1, output: 2 } });
});

test('bad values name the variable and never echo secrets', () => {
  let err: unknown;
  try {
    loadConfig({
      PORT: 'eighty',
      MODEL_PRICES: '{nope',
      API_KEYS_SOURCE: 'ldap',
      OPENAI_API_KEY: 'sk-should-not-appear',
    });
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ConfigError);
  const vars = (err as ConfigError).issues.map((i) => i.variable).sort();
  expect(vars).toEqual(['API_KEYS_SOURCE', 'MODEL_PRICES', 'PORT']);
  expect((err as Error).message).not.toContain('sk-should-not-appear');
});

test('every variable of the schema is documented in the configuration table of docs/configuration.md', () => {
  const page = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'configuration.md'), 'utf8');
  // A row may document several variables: | `A` / `B` | ...
  const rows = [...page.matchAll(/^\| (`[A-Z0-9_]+`(?: \/ `[A-Z0-9_]+`)*) \|/gm)].map((m) => m[1]);
  const documented = new Set(rows.flatMap((r) => [...r.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1])));
  expect(Object.keys(envSchema.shape).filter((k) => !documented.has(k))).toEqual([]);
});

describe('the codec endpoint’s variables and the payload size limits', () => {
  test('CODEC_AUTH_TOKEN: unset by default; short or path-unsafe tokens are refused without being printed', () => {
    expect(loadConfig({}).CODEC_AUTH_TOKEN).toBeUndefined();
    expect(loadConfig({ CODEC_AUTH_TOKEN: 'a'.repeat(16) }).CODEC_AUTH_TOKEN).toBe('a'.repeat(16));
    for (const bad of ['short-token', 'has/a/slash-in-it-0123']) {
      const err = configError({ CODEC_AUTH_TOKEN: bad });
      expect(err.issues.map((i) => i.variable)).toEqual(['CODEC_AUTH_TOKEN']);
      expect(err.message).not.toContain(bad);
    }
  });

  test('CODEC_CORS_ORIGINS: the Web UI’s origins by default; a list of origins; anything else named', () => {
    expect(loadConfig({}).CODEC_CORS_ORIGINS).toEqual(['http://localhost:8233', 'http://127.0.0.1:8233']);
    expect(
      loadConfig({ CODEC_CORS_ORIGINS: 'https://ui.example.com, http://localhost:9000' }).CODEC_CORS_ORIGINS,
    ).toEqual(['https://ui.example.com', 'http://localhost:9000']);
    for (const bad of ['http://localhost:8233/', 'localhost:8233', 'https://ui.example.com/path']) {
      expect(configError({ CODEC_CORS_ORIGINS: bad }).issues.map((i) => i.variable)).toEqual(['CODEC_CORS_ORIGINS']);
    }
  });

  test('BODY_LIMIT_BYTES: 1 MiB by default, at most 1.5 MiB (under Temporal’s 2 MiB payload limit)', () => {
    expect(loadConfig({}).BODY_LIMIT_BYTES).toBe(1024 * 1024);
    expect(loadConfig({ BODY_LIMIT_BYTES: String(1.5 * 1024 * 1024) }).BODY_LIMIT_BYTES).toBe(1.5 * 1024 * 1024);
    expect(configError({ BODY_LIMIT_BYTES: String(2 * 1024 * 1024) }).issues.map((i) => i.variable)).toEqual([
      'BODY_LIMIT_BYTES',
    ]);
  });

  test('MODEL_ANSWER_MAX_BYTES: 512 KiB by default, at most 960 KiB (the result holds the answer twice, under the 2 MiB payload limit)', () => {
    expect(loadConfig({}).MODEL_ANSWER_MAX_BYTES).toBe(512 * 1024);
    expect(loadConfig({ MODEL_ANSWER_MAX_BYTES: String(960 * 1024) }).MODEL_ANSWER_MAX_BYTES).toBe(960 * 1024);
    expect(configError({ MODEL_ANSWER_MAX_BYTES: String(1024 * 1024) }).issues.map((i) => i.variable)).toEqual([
      'MODEL_ANSWER_MAX_BYTES',
    ]);
  });
});

test('OUTBOUND_ALLOWLIST: empty by default; host names, addresses and CIDRs; a bad entry is named', () => {
  expect(loadConfig({}).OUTBOUND_ALLOWLIST).toBe('');
  expect(loadConfig({ OUTBOUND_ALLOWLIST: '127.0.0.1, 10.20.0.0/16,fd00::/8,mcp.internal' }).OUTBOUND_ALLOWLIST).toBe(
    '127.0.0.1, 10.20.0.0/16,fd00::/8,mcp.internal',
  );
  for (const bad of ['http://mcp.internal', '10.0.0.0/33', 'mcp.internal:8080']) {
    const err = configError({ OUTBOUND_ALLOWLIST: `127.0.0.1,${bad}` });
    expect(err.issues.map((i) => i.variable)).toEqual(['OUTBOUND_ALLOWLIST']);
    expect(err.message).toContain(`"${bad}"`);
  }
});

test('API_VERSION: the newest version by default; one this service does not have is named', () => {
  expect(loadConfig({}).API_VERSION).toBe(LATEST_VERSION);
  expect(loadConfig({ API_VERSION: LATEST_VERSION }).API_VERSION).toBe(LATEST_VERSION);
  expect(configError({ API_VERSION: '2020-01-01' }).issues.map((i) => i.variable)).toEqual(['API_VERSION']);
});

test('API_VERSION_DEPRECATIONS: none by default; version:deprecated-on[:sunset-on]; a bad entry is named', () => {
  expect(loadConfig({}).API_VERSION_DEPRECATIONS).toEqual({});
  expect(
    loadConfig({ API_VERSION_DEPRECATIONS: `${LATEST_VERSION}:2027-01-15:2027-07-15` }).API_VERSION_DEPRECATIONS,
  ).toEqual({
    [LATEST_VERSION]: { deprecatedAt: new Date('2027-01-15T00:00:00Z'), sunsetAt: new Date('2027-07-15T00:00:00Z') },
  });
  expect(loadConfig({ API_VERSION_DEPRECATIONS: `${LATEST_VERSION}:2027-01-15` }).API_VERSION_DEPRECATIONS).toEqual({
    [LATEST_VERSION]: { deprecatedAt: new Date('2027-01-15T00:00:00Z') },
  });
  for (const bad of [
    '2020-01-01:2027-01-15',
    `${LATEST_VERSION}`,
    `${LATEST_VERSION}:soon`,
    `${LATEST_VERSION}:2027-01-15:2026-12-01`,
    `${LATEST_VERSION}:2027-02-30`,
  ]) {
    const err = configError({ API_VERSION_DEPRECATIONS: bad });
    expect([bad, err.issues.map((i) => i.variable)]).toEqual([bad, ['API_VERSION_DEPRECATIONS']]);
  }
});
