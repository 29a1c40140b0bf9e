// Injected trouble: scripted HTTP errors, hangs, dropped streams and slow
// tokens, and proof that the server stays healthy through all of them.
import OpenAI from 'openai';
import { waitUntil } from '../../support/wait-until';
import { collect, contentOf, useScriptedModel, user } from './helpers';

const h = useScriptedModel();

const ask = (client: OpenAI, content: string) =>
  client.chat.completions.create({ model: 'm', messages: [user(content)] });

// A unit test has 10 s: each wait gives up well before, saying what it waited for.
const WAIT = { timeoutMs: 5000, stepMs: 10 };

describe('scripted model: failures and pacing', () => {
  test('[[fail status=429 times=2]]: two RateLimitErrors with retry-after, then success', async () => {
    const msg = '[[fail status=429 times=2 key=rl-1]] hello';
    for (let i = 0; i < 2; i++) {
      const err = await ask(h.client, msg).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.RateLimitError);
      expect(err.status).toBe(429);
      expect(err.headers.get('retry-after')).toBe('1');
      expect(err.error).toMatchObject({ code: 'rate_limit_exceeded', param: null });
    }
    const ok = await ask(h.client, msg);
    expect(ok.choices[0].message.content).toBe('You said: hello');
  });

  test('[[fail status=500 times=1]] also fails a streaming request before any chunk', async () => {
    const msg = '[[fail status=500 key=ise-1]] stream';
    const err = await h.client.chat.completions
      .create({ model: 'm', stream: true, messages: [user(msg)] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(err.error).toMatchObject({ type: 'server_error' });
    const chunks = await collect(
      await h.client.chat.completions.create({ model: 'm', stream: true, messages: [user(msg)] }),
    );
    expect(contentOf(chunks)).toBe('You said: stream');
  });

  test('the client own retries get through once the failures are used up (retry-after honoured)', async () => {
    const client = h.clientWith({ maxRetries: 3 });
    const before = h.model.stats().injectedFailures;
    const ok = await ask(client, '[[fail status=503 times=2 after=20 key=retry-1]] eventually');
    expect(ok.choices[0].message.content).toBe('You said: eventually');
    expect(h.model.stats().injectedFailures - before).toBe(2);
  });

  test('[[fail status=400]] surfaces as BadRequestError with a custom code and message', async () => {
    const err = await ask(
      h.client,
      '[[fail status=400 code=context_length_exceeded message="too long" times=1 key=br-1]] x',
    ).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error).toEqual({
      message: 'too long',
      type: 'invalid_request_error',
      param: null,
      code: 'context_length_exceeded',
    });
  });

  test('without a key, the failure count belongs to the message text', async () => {
    const msg = '[[fail status=500 times=1]] unkeyed message 1';
    await expect(ask(h.client, msg)).rejects.toBeInstanceOf(OpenAI.InternalServerError);
    await expect(ask(h.client, msg)).resolves.toBeDefined();
  });

  test('[[hang]]: the client timeout fires, the server notices the disconnect and stays healthy', async () => {
    const before = h.model.stats();
    const client = h.clientWith({ timeout: 300 });
    const started = Date.now();
    const err = await ask(client, '[[hang]] wait forever').catch((e) => e);
    // A plain Node process gets APIConnectionTimeoutError (a subclass); under jest
    // undici's AbortError comes from another realm, so the client only sees a
    // connection error. The elapsed time shows it was the timeout.
    expect(err).toBeInstanceOf(OpenAI.APIConnectionError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    await waitUntil(
      'the server to see the timed-out request disconnect',
      () => h.model.stats().active,
      (n) => n === before.active,
      WAIT,
    );
    expect(h.model.stats().hangs).toBe(before.hangs + 1);
    const ok = await ask(h.client, 'after the hang');
    expect(ok.choices[0].message.content).toBe('You said: after the hang');
  });

  test('[[hang]] on a stream can be aborted by the caller signal', async () => {
    const ac = new AbortController();
    const pending = h.client.chat.completions.create(
      { model: 'm', stream: true, messages: [user('[[hang]]')] },
      { signal: ac.signal },
    );
    await waitUntil(
      'the hung stream to reach the server',
      () => h.model.stats().active,
      (n) => n > 0,
      WAIT,
    );
    ac.abort();
    await expect(pending).rejects.toBeInstanceOf(OpenAI.APIUserAbortError);
    await waitUntil(
      'the server to see the aborted stream disconnect',
      () => h.model.stats().active,
      (n) => n === 0,
      WAIT,
    );
  });

  test('[[hang after=N times=1]] stalls a stream mid-way once; the retry completes', async () => {
    const msg = '[[hang after=3 times=1 key=hang-mid]] one two three four';
    const ac = new AbortController();
    const stream = await h.client.chat.completions.create(
      { model: 'm', stream: true, messages: [user(msg)] },
      { signal: ac.signal },
    );
    const seen: string[] = [];
    const reading = (async () => {
      for await (const c of stream) seen.push(c.choices[0]?.delta?.content ?? '');
    })().catch((e) => e);
    await waitUntil(
      'the chunks before the stall',
      () => seen.join(''),
      (t) => t === 'You said: one',
      WAIT,
    );
    // Deliberate: time for a chunk that a stream which did not stall would send (tokens come back to back).
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.join('')).toBe('You said: one');
    ac.abort();
    // The client's stream iterator ends quietly when its own signal aborts it.
    await reading;
    expect(seen.join('')).toBe('You said: one');
    await waitUntil(
      'the server to see the aborted stream disconnect',
      () => h.model.stats().active,
      (n) => n === 0,
      WAIT,
    );
    const again = await collect(
      await h.client.chat.completions.create({ model: 'm', stream: true, messages: [user(msg)] }),
    );
    expect(contentOf(again)).toBe('You said: one two three four');
  });

  test('[[drop after=N]] cuts the connection mid-stream once', async () => {
    const msg = '[[drop after=2 key=drop-1]] alpha beta gamma';
    const stream = await h.client.chat.completions.create({ model: 'm', stream: true, messages: [user(msg)] });
    const seen: string[] = [];
    const err = await (async () => {
      for await (const c of stream) seen.push(c.choices[0]?.delta?.content ?? '');
    })().catch((e) => e);
    // undici's "terminated" TypeError; from another realm under jest, so no instanceof check.
    expect(String(err)).toMatch(/terminated|closed|socket/i);
    expect(seen.join('')).toBe('You said:');
    const again = await collect(
      await h.client.chat.completions.create({ model: 'm', stream: true, messages: [user(msg)] }),
    );
    expect(contentOf(again)).toBe('You said: alpha beta gamma');
    expect(h.model.stats().drops).toBeGreaterThanOrEqual(1);
  });

  test('[[drop]] on a non-streaming request is a connection error', async () => {
    const err = await ask(h.client, '[[drop key=drop-2]] x').catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIConnectionError);
  });

  test('[[slow tokens=N delay=MS]] paces N chunks MS apart', async () => {
    const started = Date.now();
    const stream = await h.client.chat.completions.create({
      model: 'm',
      stream: true,
      messages: [user('[[slow tokens=10 delay=40]]')],
    });
    const arrivals: number[] = [];
    for await (const c of stream) if (c.choices[0]?.delta?.content) arrivals.push(Date.now());
    expect(arrivals).toHaveLength(10);
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    // Chunks really arrive spread out, not in one burst at the end.
    expect(arrivals[9] - arrivals[0]).toBeGreaterThanOrEqual(300);
  });

  test('[[slow first=MS]] delays the first token; non-streaming waits for the whole reply', async () => {
    let started = Date.now();
    const stream = await h.client.chat.completions.create({
      model: 'm',
      stream: true,
      messages: [user('[[slow first=200 delay=0]] quick after')],
    });
    let firstAt = 0;
    for await (const c of stream) if (!firstAt && c.choices[0]?.delta?.content) firstAt = Date.now();
    expect(firstAt - started).toBeGreaterThanOrEqual(180);
    started = Date.now();
    const res = await ask(h.client, '[[slow delay=30]] four tokens here');
    expect(res.choices[0].message.content).toBe('You said: four tokens here');
    expect(Date.now() - started).toBeGreaterThanOrEqual(5 * 30 - 20);
  });

  test('close() ends hung requests too', async () => {
    const { startScriptedModel } = await import('../../../src/dev/scripted-model');
    const model = await startScriptedModel();
    const client = new OpenAI({ apiKey: 'x', baseURL: model.url, maxRetries: 0 });
    const pending = client.chat.completions.create({ model: 'm', messages: [user('[[hang]]')] }).catch((e) => e);
    await waitUntil(
      'the hung request to reach the server',
      () => model.stats().active,
      (n) => n === 1,
      WAIT,
    );
    await model.close();
    expect(await pending).toBeInstanceOf(OpenAI.APIConnectionError);
  });
});
