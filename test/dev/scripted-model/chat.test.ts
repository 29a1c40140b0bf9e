// Plain chat through the official client: echo, streaming, usage, reasoning,
// model listing, header directives, token limits and malformed requests.
import OpenAI from 'openai';
import { collect, contentOf, reasoningOf, useScriptedModel, user } from './helpers';

const h = useScriptedModel();

describe('scripted model: chat', () => {
  test('non-streaming echo with usage, id, created and model echo', async () => {
    const asked = Math.floor(Date.now() / 1000);
    const res = await h.client.chat.completions.create({
      model: 'any-model-name',
      messages: [{ role: 'system', content: 'be nice' }, user('hello there')],
    });
    const answered = Math.ceil(Date.now() / 1000);
    expect(res.object).toBe('chat.completion');
    expect(res.id).toMatch(/^chatcmpl-/);
    expect(res.model).toBe('any-model-name');
    // created is the time of the answer, in seconds: within the call, however long it took.
    expect(res.created).toBeGreaterThanOrEqual(asked);
    expect(res.created).toBeLessThanOrEqual(answered);
    expect(res.choices[0].message).toMatchObject({ role: 'assistant', content: 'You said: hello there' });
    expect(res.choices[0].finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ completion_tokens: 4 });
    expect(res.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(res.usage!.total_tokens).toBe(res.usage!.prompt_tokens + res.usage!.completion_tokens);
  });

  test('the same request always gets the same reply', async () => {
    const ask = () =>
      h.client.chat.completions.create({ model: 'scripted-base', messages: [user('determinism please')] });
    const [a, b] = await Promise.all([ask(), ask()]);
    expect(a.choices[0].message.content).toBe(b.choices[0].message.content);
    expect(a.usage).toEqual(b.usage);
  });

  test('streaming echo arrives as several word-piece chunks ending in [DONE]', async () => {
    const stream = await h.client.chat.completions.create({
      model: 'scripted-flash',
      stream: true,
      messages: [user('stream me a reply please')],
    });
    const chunks = await collect(stream);
    expect(contentOf(chunks)).toBe('You said: stream me a reply please');
    const contentChunks = chunks.filter((c) => c.choices[0]?.delta?.content);
    expect(contentChunks.length).toBe(7);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('stop');
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'scripted-flash')).toBe(true);
    expect(chunks.some((c) => c.usage)).toBe(false);
  });

  test('include_usage adds a final chunk with usage and no choices, matching the non-streaming usage', async () => {
    const messages = [user('count my tokens')];
    const stream = await h.client.chat.completions.create({
      model: 'scripted-base',
      stream: true,
      stream_options: { include_usage: true },
      messages,
    });
    const chunks = await collect(stream);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    const plain = await h.client.chat.completions.create({ model: 'scripted-base', messages });
    expect(last.usage).toEqual(plain.usage);
    expect(last.usage!.completion_tokens).toBe(chunks.filter((c) => c.choices[0]?.delta?.content).length);
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  test('[[think]] streams reasoning_content before any content', async () => {
    const stream = await h.client.chat.completions.create({
      model: 'scripted-max',
      stream: true,
      messages: [user('[[think]] why is the sky blue')],
    });
    const chunks = await collect(stream);
    const reasoning = reasoningOf(chunks);
    expect(reasoning).toContain('why is the sky blue');
    expect(contentOf(chunks)).toBe('You said: why is the sky blue');
    const firstContent = chunks.findIndex((c) => c.choices[0]?.delta?.content);
    const lastReasoning = chunks.map((c) => !!(c.choices[0]?.delta as any)?.reasoning_content).lastIndexOf(true);
    expect(lastReasoning).toBeGreaterThan(0);
    expect(lastReasoning).toBeLessThan(firstContent);

    const plain = await h.client.chat.completions.create({
      model: 'scripted-max',
      messages: [user('[[think]] why is the sky blue')],
    });
    expect((plain.choices[0].message as any).reasoning_content).toBe(reasoning);
    expect(plain.usage!.completion_tokens_details!.reasoning_tokens).toBeGreaterThan(0);
  });

  test('[[think words=N]] and [[long words=N]] give exactly N tokens', async () => {
    const stream = await h.client.chat.completions.create({
      model: 'm',
      stream: true,
      stream_options: { include_usage: true },
      messages: [user('[[think words=12]] [[long words=40]]')],
    });
    const chunks = await collect(stream);
    expect(chunks.filter((c) => (c.choices[0]?.delta as any)?.reasoning_content).length).toBe(12);
    expect(chunks.filter((c) => c.choices[0]?.delta?.content).length).toBe(40);
    expect(contentOf(chunks).split(' ')).toHaveLength(40);
    expect(chunks.at(-1)!.usage).toMatchObject({
      completion_tokens: 52,
      completion_tokens_details: { reasoning_tokens: 12 },
    });
  });

  test('[[say text=...]] replies with fixed text', async () => {
    const res = await h.client.chat.completions.create({
      model: 'm',
      messages: [user('[[say text="Hello, world!"]] ignored')],
    });
    expect(res.choices[0].message.content).toBe('Hello, world!');
  });

  test('directives may come from the x-scripted-model header', async () => {
    const client = h.clientWith({ defaultHeaders: { 'x-scripted-model': 'say text=from-header' } });
    const res = await client.chat.completions.create({ model: 'm', messages: [user('hi')] });
    expect(res.choices[0].message.content).toBe('from-header');
    // A directive of the same kind in the message wins over the header.
    const res2 = await client.chat.completions.create({ model: 'm', messages: [user('[[say text=from-message]]')] });
    expect(res2.choices[0].message.content).toBe('from-message');
  });

  test('max_tokens cuts the reply with finish_reason length', async () => {
    const res = await h.client.chat.completions.create({
      model: 'm',
      max_tokens: 3,
      messages: [user('one two three four five')],
    });
    expect(res.choices[0].message.content).toBe('You said: one');
    expect(res.choices[0].finish_reason).toBe('length');
  });

  test('earlier turns are history; only the last user message is read', async () => {
    const res = await h.client.chat.completions.create({
      model: 'm',
      messages: [user('[[say text=old]] first'), { role: 'assistant', content: 'old' }, user('second')],
    });
    expect(res.choices[0].message.content).toBe('You said: second');
  });

  test('GET /v1/models lists the scripted models', async () => {
    const ids: string[] = [];
    for await (const m of h.client.models.list()) ids.push(m.id);
    expect(ids).toEqual(['scripted-flash', 'scripted-base', 'scripted-max']);
    const one = await h.client.models.retrieve('whatever-model');
    expect(one.id).toBe('whatever-model');
  });

  test('a request without messages is a 400 surfacing as BadRequestError with an OpenAI-shaped body', async () => {
    const err = await h.client.chat.completions.create({ model: 'm' } as any).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ type: 'invalid_request_error', param: 'messages', code: null });
    expect(typeof err.error.message).toBe('string');

    const bad = await h.client.chat.completions
      .create({ model: 'm', messages: [{ role: 'wizard', content: 'x' }] } as any)
      .catch((e) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
  });

  test('invalid JSON and unknown routes get OpenAI-shaped errors; the server keeps serving', async () => {
    const r = await fetch(`${h.model.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"messages": [',
    });
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ error: { type: 'invalid_request_error', param: null, code: null } });
    const empty = await fetch(`${h.model.url}/chat/completions`, { method: 'POST' });
    expect(empty.status).toBe(400);
    const missing = await fetch(`${h.model.url}/nowhere`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toContain('/v1/nowhere');
    const ok = await h.client.chat.completions.create({ model: 'm', messages: [user('still alive')] });
    expect(ok.choices[0].message.content).toBe('You said: still alive');
    expect(h.model.stats().badRequests).toBeGreaterThanOrEqual(2);
  });

  test('received() records what the model was sent', async () => {
    await h.client.chat.completions.create({ model: 'record-me', messages: [user('remember this')] });
    const last = h.model.received().at(-1)!;
    expect(last.body.model).toBe('record-me');
    expect(last.body.messages.at(-1)).toMatchObject({ role: 'user', content: 'remember this' });
  });
});
