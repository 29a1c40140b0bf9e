// The token thread's fetch (node:http under the OpenAI SDK) against the
// scripted model and small local servers: every scenario runs with the SDK's
// default fetch too, so each test states that the client behaves the same
// either way (results, error classes, statuses, what the activity would retry).
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import OpenAI from 'openai';
import { classifyModelError } from '../../../activities/model-support';
import { createHttpFetch, HttpFetch } from '../../../src/worker/model-stream/http-fetch';
import { startScriptedModel, ScriptedModel } from '../../../src/dev/scripted-model';
import { waitUntil } from '../../support/wait-until';

type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;
const user = (content: string): Msg => ({ role: 'user', content });

let model: ScriptedModel;
const fetches: HttpFetch[] = [];
beforeAll(async () => {
  model = await startScriptedModel({ port: 0 });
});
afterAll(async () => {
  for (const f of fetches) f.close();
  await model.close();
});

// A unit test has 10 s: each wait gives up well before, saying what it waited for.
const WAIT = { timeoutMs: 5000, stepMs: 10 };

/** A throwaway server; `handle` answers every request. */
async function localServer(
  handle: http.RequestListener,
): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
  let connections = 0;
  const server = http.createServer(handle);
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, connections: () => connections, close: () => new Promise((r) => server.close(() => r())) };
}

const transports: [string, () => typeof fetch | undefined][] = [
  ['the default fetch', () => undefined],
  [
    'the node:http fetch',
    () => {
      const f = createHttpFetch();
      fetches.push(f);
      return f;
    },
  ],
];

describe.each(transports)('OpenAI client with %s', (name, makeFetch) => {
  const tag = name.replace(/\W+/g, '-');
  const client = (opts: ConstructorParameters<typeof OpenAI>[0] = {}) =>
    new OpenAI({ apiKey: 'sk-test', baseURL: model.url, maxRetries: 0, fetch: makeFetch(), ...opts });
  const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
    {
      type: 'function',
      function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
    },
  ];
  const stream = (c: OpenAI, text: string, signal?: AbortSignal) =>
    c.chat.completions.create(
      { model: 'm', stream: true, stream_options: { include_usage: true }, messages: [user(text)], tools },
      { signal },
    );

  test('a stream yields every delta and the usage; a tool call arrives whole', async () => {
    const seen: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const c of await stream(client(), `[[think]] alpha beta gamma ${tag}`)) seen.push(c);
    const deltas = seen.map((c) => c.choices[0]?.delta as Record<string, any> | undefined);
    expect(deltas.map((d) => d?.content ?? '').join('')).toBe(`You said: alpha beta gamma ${tag}`);
    expect(deltas.map((d) => d?.reasoning_content ?? '').join('')).not.toBe('');
    expect(seen.at(-1)?.usage?.completion_tokens).toBeGreaterThan(0);
    const calls: any[] = [];
    for await (const c of await stream(client(), `[[tool name=lookup args={"q":"x"}]] ${tag}`))
      calls.push(...(c.choices[0]?.delta?.tool_calls ?? []));
    expect(calls.map((t) => t.function?.name ?? '').join('')).toBe('lookup');
    expect(JSON.parse(calls.map((t) => t.function?.arguments ?? '').join(''))).toEqual({ q: 'x' });
  });

  test('a non-streaming answer parses', async () => {
    const res = await client().chat.completions.create({ model: 'm', messages: [user(`plain ${tag}`)] });
    expect(res.choices[0].message.content).toBe(`You said: plain ${tag}`);
    const listed = await client().models.list();
    expect(listed.data.length).toBeGreaterThan(0);
  });

  test('4xx is a BadRequestError the activity does not retry; 429 keeps its headers and is retried', async () => {
    const bad = await client()
      .chat.completions.create({
        model: 'm',
        messages: [user(`[[fail status=400 code=context_length_exceeded message="too long" key=br-${tag}]] x`)],
      })
      .catch((e) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bad.error).toMatchObject({ message: 'too long', code: 'context_length_exceeded' });
    expect(classifyModelError(bad).nonRetryable).toBe(true);
    const limited = await stream(client(), `[[fail status=429 key=rl-${tag}]] y`).catch((e) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(classifyModelError(limited).nonRetryable).toBe(false);
  });

  test('the client timeout ends a hung request, and the server sees the disconnect', async () => {
    const before = model.stats().active;
    const started = Date.now();
    const err = await client({ timeout: 250 })
      .chat.completions.create({ model: 'm', messages: [user(`[[hang]] ${tag}`)] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIConnectionError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    expect(classifyModelError(err).nonRetryable).toBe(false);
    await waitUntil(
      'the scripted model to see the hung request disconnect',
      () => model.stats().active,
      (n) => n === before,
      WAIT,
    );
  });

  test('the caller signal ends a stream mid-way quietly and closes its connection', async () => {
    const ac = new AbortController();
    const s = await stream(client(), `[[hang after=2 key=hm-${tag}]] one two three`, ac.signal);
    const seen: string[] = [];
    const reading = (async () => {
      for await (const c of s) seen.push(c.choices[0]?.delta?.content ?? '');
    })();
    await waitUntil(
      "the stream's first two chunks",
      () => seen.join(''),
      (t) => t === 'You said:',
      WAIT,
    );
    ac.abort();
    await expect(reading).resolves.toBeUndefined();
    await waitUntil(
      "the scripted model to see the aborted stream's connection close",
      () => model.stats().active,
      (n) => n === 0,
      WAIT,
    );
    const aborted = await stream(client(), `before start ${tag}`, AbortSignal.abort()).catch((e) => e);
    expect(aborted).toBeInstanceOf(OpenAI.APIUserAbortError);
  });

  test('a connection cut mid-stream fails the iteration with a retryable error', async () => {
    const s = await stream(client(), `[[drop after=2 key=drop-${tag}]] alpha beta gamma`);
    const seen: string[] = [];
    const err = await (async () => {
      for await (const c of s) seen.push(c.choices[0]?.delta?.content ?? '');
    })().catch((e) => e);
    expect(err).toBeDefined();
    expect(seen.join('')).toBe('You said:');
    expect(classifyModelError(err).nonRetryable).toBe(false);
  });

  test('nothing listening is an APIConnectionError', async () => {
    const gone = await localServer((_req, res) => res.end());
    await gone.close();
    const err = await client({ baseURL: `${gone.url}/v1` })
      .chat.completions.create({ model: 'm', messages: [user('x')] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIConnectionError);
  });

  test('a gzip-encoded answer is decoded', async () => {
    const body = JSON.stringify({
      id: 'c',
      object: 'chat.completion',
      created: 0,
      model: 'm',
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'zipped' } }],
    });
    const srv = await localServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(zlib.gzipSync(body));
    });
    try {
      const res = await client({ baseURL: `${srv.url}/v1` }).chat.completions.create({
        model: 'm',
        messages: [user('x')],
      });
      expect(res.choices[0].message.content).toBe('zipped');
    } finally {
      await srv.close();
    }
  });
});

describe('the node:http fetch itself', () => {
  test('requests share one kept-alive connection', async () => {
    const srv = await localServer((_req, res) => res.end('{}'));
    const f = createHttpFetch();
    try {
      for (let i = 0; i < 3; i++)
        expect(await (await f(`${srv.url}/x`, { method: 'POST', body: 'b' })).text()).toBe('{}');
      expect(srv.connections()).toBe(1);
    } finally {
      f.close();
      await srv.close();
    }
  });

  test('follows redirects as fetch does: 307 keeps the POST, 303 becomes a GET, credentials stay on their origin', async () => {
    const seen: { path: string; method: string; auth?: string; body: string }[] = [];
    const record: http.RequestListener = (req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        seen.push({ path: req.url ?? '', method: req.method ?? '', auth: req.headers.authorization, body });
        if (req.url === '/307') res.writeHead(307, { location: '/final' }).end();
        else if (req.url === '/303') res.writeHead(303, { location: '/final' }).end();
        else if (req.url === '/away') res.writeHead(308, { location: `${other.url}/final` }).end();
        else res.end('done');
      });
    };
    const srv = await localServer(record);
    const other = await localServer(record);
    const f = createHttpFetch();
    const post = {
      method: 'POST',
      body: '{"a":1}',
      headers: { authorization: 'Bearer sk-secret', 'content-type': 'application/json' },
    };
    try {
      const r1 = await f(`${srv.url}/307`, post);
      expect([r1.status, r1.redirected, r1.url, await r1.text()]).toEqual([200, true, `${srv.url}/final`, 'done']);
      expect(seen.splice(0)).toEqual([
        { path: '/307', method: 'POST', auth: 'Bearer sk-secret', body: '{"a":1}' },
        { path: '/final', method: 'POST', auth: 'Bearer sk-secret', body: '{"a":1}' },
      ]);
      await (await f(`${srv.url}/303`, post)).text();
      expect(seen.splice(0)[1]).toEqual({ path: '/final', method: 'GET', auth: 'Bearer sk-secret', body: '' });
      await (await f(`${srv.url}/away`, post)).text();
      expect(seen.splice(0)[1]).toEqual({ path: '/final', method: 'POST', auth: undefined, body: '{"a":1}' });
      const manual = await f(`${srv.url}/307`, { ...post, redirect: 'manual' });
      expect(manual.status).toBe(307);
    } finally {
      f.close();
      await srv.close();
      await other.close();
    }
  });

  test('a body it does not send itself goes to the fallback fetch', async () => {
    const calls: unknown[] = [];
    const fallback = (async (input: unknown) => {
      calls.push(input);
      return new Response('from fallback');
    }) as typeof fetch;
    const f = createHttpFetch({ fallback });
    const body = new ReadableStream({ start: (c) => c.close() });
    const res = await f('http://127.0.0.1:9/never', { method: 'POST', body, duplex: 'half' } as RequestInit);
    expect(await res.text()).toBe('from fallback');
    expect(calls).toEqual(['http://127.0.0.1:9/never']);
    f.close();
  });

  test('https: answers and streams over TLS through the agent given; by default an unknown certificate is refused', async () => {
    const dir = path.join(__dirname, 'fixtures/tls');
    const cert = fs.readFileSync(path.join(dir, 'cert.pem'));
    const chunk = (content: string) => ({
      id: 'c',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'm',
      choices: [{ index: 0, delta: { content }, finish_reason: null }],
    });
    const server = https.createServer({ cert, key: fs.readFileSync(path.join(dir, 'key.pem')) }, (req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        if (!JSON.parse(body).stream) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              id: 'c',
              object: 'chat.completion',
              created: 0,
              model: 'm',
              choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'secure' } }],
            }),
          );
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const w of ['se', 'cure']) res.write(`data: ${JSON.stringify(chunk(w))}\n\n`);
        res.end('data: [DONE]\n\n');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const baseURL = `https://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const trusting = createHttpFetch({ httpsAgent: new https.Agent({ ca: cert, keepAlive: true }) });
    const strict = createHttpFetch();
    try {
      const client = new OpenAI({ apiKey: 'k', baseURL, maxRetries: 0, fetch: trusting });
      expect(
        (await client.chat.completions.create({ model: 'm', messages: [user('x')] })).choices[0].message.content,
      ).toBe('secure');
      const parts: string[] = [];
      for await (const c of await client.chat.completions.create({ model: 'm', stream: true, messages: [user('x')] }))
        parts.push(c.choices[0]?.delta?.content ?? '');
      expect(parts.join('')).toBe('secure');
      const unverified = new OpenAI({ apiKey: 'k', baseURL, maxRetries: 0, fetch: strict });
      await expect(unverified.chat.completions.create({ model: 'm', messages: [user('x')] })).rejects.toBeInstanceOf(
        OpenAI.APIConnectionError,
      );
    } finally {
      trusting.close();
      strict.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  test('a body is read once', async () => {
    const srv = await localServer((_req, res) => res.end('{"x":1}'));
    const f = createHttpFetch();
    try {
      const res = await f(`${srv.url}/`);
      expect(await res.json()).toEqual({ x: 1 });
      expect(res.bodyUsed).toBe(true);
      await expect(res.text()).rejects.toThrow(/already been read/);
    } finally {
      f.close();
      await srv.close();
    }
  });
});
