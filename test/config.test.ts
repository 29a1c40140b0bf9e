import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, envSchema, loadConfig } from '../src/config';

test('defaults fill every variable', () => {
  const c = loadConfig({});
  expect(c).toMatchObject({ PORT: 8080, RETENTION_DAYS: 7, MAX_RUNNING_TASKS_PER_ACCOUNT: 50, BODY_LIMIT_BYTES: 5 * 1024 * 1024, TEMPORAL_NAMESPACE: 'default' });
  expect(c.MODEL_PRICES['gpt-4o']).toEqual({ input: 2.5, output: 10 });
});

test('values are coerced and empty strings mean unset', () => {
  const c = loadConfig({ PORT: '9000', LOG_JSON: 'true', OPENAI_API_KEY: '', MODEL_PRICES: '{"m":{"input":1,"output":2}}' });
  expect(c.PORT).toBe(9000);
  expect(c.LOG_JSON).toBe(true);
  expect(c.OPENAI_API_KEY).toBeUndefined();
  expect(c.MODEL_PRICES).toEqual({ m: { input: 1, output: 2 } });
});

test('bad values name the variable and never echo secrets', () => {
  let err: unknown;
  try {
    loadConfig({ PORT: 'eighty', MODEL_PRICES: '{nope', API_KEYS_SOURCE: 'ldap', OPENAI_API_KEY: 'sk-should-not-appear' });
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ConfigError);
  const vars = (err as ConfigError).issues.map((i) => i.variable).sort();
  expect(vars).toEqual(['API_KEYS_SOURCE', 'MODEL_PRICES', 'PORT']);
  expect((err as Error).message).not.toContain('sk-should-not-appear');
});

test('every variable of the schema is documented in the README configuration table', () => {
  const readme = fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
  // A row may document several variables: | `A` / `B` | ...
  const rows = [...readme.matchAll(/^\| (`[A-Z0-9_]+`(?: \/ `[A-Z0-9_]+`)*) \|/gm)].map((m) => m[1]);
  const documented = new Set(rows.flatMap((r) => [...r.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1])));
  expect(Object.keys(envSchema.shape).filter((k) => !documented.has(k))).toEqual([]);
});
