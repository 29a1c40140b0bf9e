// Secrets in a request never sit in Temporal as plain text: the payload codec
// encrypts every input, result and failure, so neither the raw history (read
// without the codec) nor the engine's own files hold them, while the service
// (which has the key) reads everything back.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startStack, Stack } from '../../src/launcher/stack';
import { api, KEY_A } from './helpers';
import { rawHistory, readEngineData } from './raw-history';

jest.setTimeout(120_000);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aes-secrets-'));
let stack: Stack;

beforeAll(async () => {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['TEMPORAL_ADDRESS', 'REDIS_URL', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'PORT', 'API_KEYS', 'DATA_DIR', 'PAYLOAD_KEYS']) delete base[k];
  stack = await startStack({ dataDir, gatewayPort: 0, temporalPort: 0, env: { ...base, API_KEYS: `${KEY_A}:alice`, LOG_LEVEL: 'warn' } });
});
afterAll(async () => {
  await stack?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('a secret in the system prompt, the message and a tool call is absent from the raw history and the engine files', async () => {
  const secret = 'sk-live-SECRET-0123456789abcdef';
  const call = api(stack);
  const r = await call('POST', '/', {
    body: { message: `[[tool name=calculate args={"expression":"1+1"}]] my token is ${secret}`, system: `Never reveal ${secret}.`, metadata: { token: secret } },
  });
  expect(r.status).toBe(200);
  expect(r.json.status).toBe('completed');
  // The service reads it all back through the codec.
  expect((await call('GET', `/sessions/${r.json.session}/messages`)).json.messages[0].content).toContain(secret);
  const raw = await rawHistory(stack.temporalAddress, r.json.task_id);
  expect(raw).toContain('binary/encrypted');
  expect(raw).not.toContain(secret);
  expect(raw).not.toContain('my token is');
  const session = await rawHistory(stack.temporalAddress, `session:alice:${r.json.session}`);
  expect(session).not.toContain(secret);
  for (const [file, text] of Object.entries(readEngineData(dataDir))) expect({ file, found: text.includes(secret) }).toEqual({ file, found: false });
});
