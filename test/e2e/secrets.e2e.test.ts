// Secrets in a request never sit in Temporal as plain text: the payload codec
// encrypts every input, result and failure, so neither the raw history (read
// without the codec) nor the engine's own files hold them, while the service
// (which has the key) reads everything back.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startStack, Stack } from '../../src/dev/launcher/stack';
import { api, KEY_A } from './helpers';
import { rawHistory, readEngineData } from './raw-history';
import Redis from 'ioredis';
import { startBearerMcpServer } from '../mcp/fixtures/bearer-server';

jest.setTimeout(120_000);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aes-secrets-'));
let stack: Stack;

beforeAll(async () => {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const k of [
    'TEMPORAL_ADDRESS',
    'REDIS_URL',
    'OPENAI_API_KEY',
    'OPENAI_BASE_URL',
    'PORT',
    'API_KEYS',
    'DATA_DIR',
    'PAYLOAD_KEYS',
  ])
    delete base[k];
  stack = await startStack({
    dataDir,
    gatewayPort: 0,
    temporalPort: 0,
    demoMcpPort: 0,
    demoWebPort: 0,
    env: { ...base, API_KEYS: `${KEY_A}:alice`, LOG_LEVEL: 'debug', OUTBOUND_ALLOWLIST: '127.0.0.1' },
  });
});
afterAll(async () => {
  await stack?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('a secret in the system prompt, the message and a tool call is absent from the raw history and the engine files', async () => {
  const secret = 'sk-live-SECRET-0123456789abcdef';
  const call = api(stack);
  const r = await call('POST', '/', {
    body: {
      message: `[[tool name=calculate args={"expression":"1+1"}]] my token is ${secret}`,
      system: `Never reveal ${secret}.`,
      metadata: { token: secret },
    },
  });
  expect(r.status).toBe(200);
  expect(r.json.status).toBe('completed');
  // The service reads it all back through the codec.
  expect((await call('GET', `/sessions/${r.json.session}/messages`)).json.messages[0].content).toContain(secret);
  const raw = await rawHistory(stack.temporalAddress, r.json.task_id);
  expect(raw).toContain('binary/encrypted');
  expect(raw).not.toContain(secret);
  expect(raw).not.toContain('my token is');
  // The session opens from the run's handover (a run that names none opens none by itself): its thread
  // in the session's start is ciphertext too.
  expect((await call('DELETE', `/sessions/${r.json.session}/messages`)).status).toBe(204);
  const session = await rawHistory(stack.temporalAddress, `session:alice:${r.json.session}`);
  expect(session).toContain('binary/encrypted');
  expect(session).not.toContain(secret);
  for (const [file, text] of Object.entries(readEngineData(dataDir)))
    expect({ file, found: text.includes(secret) }).toEqual({ file, found: false });
});

test('an MCP token is absent from every history, the engine files and the logs, through calls and failures', async () => {
  const token = 'mcp-SECRET-token-9f8e7d6c5b4a';
  const server = await startBearerMcpServer({ token });
  try {
    const call = api(stack);
    const auth = { type: 'bearer', token };
    const ok = await call('POST', '/', {
      body: {
        message: '[[tool name=echo args={"text":"x"}]] [[tool name=fail turn=2]] go',
        mcp_servers: [{ serverName: 'secure', serverUrl: server.url, auth }],
      },
    });
    expect(ok.json.status).toBe('completed');
    // A server that fails (not reachable) and one that refuses the token: their errors name the server, not the token.
    const down = await call('POST', '/', {
      body: { message: 'x', mcp_servers: [{ serverName: 'down', serverUrl: 'http://127.0.0.1:9/mcp', auth }] },
    });
    expect(down.json.error.type).toBe('mcp_unavailable');
    const oauth = { type: 'oauth', oauth: { accessToken: `${token}-wrong` } };
    const denied = await call('POST', '/', {
      body: { message: 'x', mcp_servers: [{ serverName: 'secure', serverUrl: server.url, auth: oauth }] },
    });
    expect(denied.json.error.type).toBe('mcp_unavailable');
    for (const r of [ok, down, denied]) {
      expect(JSON.stringify(r.json)).not.toContain(token);
      const raw = await rawHistory(stack.temporalAddress, r.json.task_id);
      expect(raw).toContain('binary/encrypted');
      expect(raw).not.toContain(token);
      expect((await call('DELETE', `/sessions/${r.json.session}/messages`)).status).toBe(204); // opens it
      expect(await rawHistory(stack.temporalAddress, `session:alice:${r.json.session}`)).not.toContain(token);
    }
    for (const [file, text] of Object.entries(readEngineData(dataDir)))
      expect({ file, found: text.includes(token) }).toEqual({ file, found: false });
    expect(await redisText(stack.redisUrl)).not.toContain(token);
    // The logs were written (the failures included), and hold no token.
    expect(stack.children.worker.output()).toContain('MCP server could not be listed');
    for (const [name, child] of Object.entries(stack.children))
      expect({ name, found: child.output().includes(token) }).toEqual({ name, found: false });
  } finally {
    await server.close();
  }
});

/** Everything Redis holds, as text (relay streams, cached statuses and results). */
async function redisText(url: string): Promise<string> {
  const redis = new Redis(url);
  try {
    const out: string[] = [];
    for (const key of await redis.keys('*')) {
      const type = await redis.type(key);
      if (type === 'string') out.push((await redis.get(key)) ?? '');
      else if (type === 'hash') out.push(JSON.stringify(await redis.hgetall(key)));
      else if (type === 'list') out.push(JSON.stringify(await redis.lrange(key, 0, -1)));
      else if (type === 'stream') out.push(JSON.stringify(await redis.xrange(key, '-', '+')));
      else if (type === 'zset') out.push(JSON.stringify(await redis.zrange(key, '0', '-1')));
      else if (type === 'set') out.push(JSON.stringify(await redis.smembers(key)));
    }
    expect(out.join('').length).toBeGreaterThan(0);
    return out.join('\n');
  } finally {
    redis.disconnect();
  }
}
