// Tool calling: the scripted turn structure (call, then answer from the result),
// streamed tool-call deltas as OpenAI sends them, parallel and multi-turn calls.
// The agent loop's tool directives are in tool-loops.test.ts.
import OpenAI from 'openai';
import { collect, useScriptedModel, user } from './helpers';

type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const h = useScriptedModel();

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'lookup',
      description: 'Look something up',
      parameters: {
        type: 'object',
        properties: { q: { type: 'string' }, limit: { type: 'integer', minimum: 1 } },
        required: ['q', 'limit'],
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'weather',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', enum: ['Paris', 'Oslo'] } },
        required: ['city'],
      },
    },
  },
];

describe('scripted model: tools', () => {
  test('non-streaming round trip: tool_calls, then an answer from the tool result', async () => {
    const messages: Msg[] = [user('find it [[tool name=lookup args={"q":"x","limit":3}]]')];
    const first = await h.client.chat.completions.create({ model: 'm', messages, tools });
    const choice = first.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    expect(call).toMatchObject({ type: 'function', function: { name: 'lookup' } });
    expect(call.id).toMatch(/^call_/);
    expect(JSON.parse(call.function.arguments)).toEqual({ q: 'x', limit: 3 });

    messages.push(choice.message, { role: 'tool', tool_call_id: call.id, content: '42 results' });
    const second = await h.client.chat.completions.create({ model: 'm', messages, tools });
    expect(second.choices[0].finish_reason).toBe('stop');
    expect(second.choices[0].message.content).toBe('tool said: 42 results');
    expect(second.choices[0].message.tool_calls ?? []).toHaveLength(0);
  });

  test('streamed tool call deltas reassemble through the official stream helper', async () => {
    const messages: Msg[] = [user('[[think]] weather please [[tool name=weather args={"city":"Oslo"}]]')];
    const stream = h.client.chat.completions.stream({ model: 'm', messages, tools });
    const raw: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    stream.on('chunk', (c) => raw.push(c));
    const final = await stream.finalChatCompletion();
    const msg = final.choices[0].message;
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    expect(msg.tool_calls).toHaveLength(1);
    const call = msg.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    expect(call.function.name).toBe('weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Oslo' });

    // OpenAI's shape: a header delta with id/type/name and empty arguments, then argument pieces.
    const toolDeltas = raw.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(toolDeltas[0]).toMatchObject({
      index: 0,
      id: call.id,
      type: 'function',
      function: { name: 'weather', arguments: '' },
    });
    expect(toolDeltas.length).toBeGreaterThan(2);
    expect(
      toolDeltas
        .slice(1)
        .every((d) => d.index === 0 && d.id === undefined && typeof d.function?.arguments === 'string'),
    ).toBe(true);
    // Thinking comes before the call.
    const firstTool = raw.findIndex((c) => c.choices[0]?.delta?.tool_calls);
    expect(raw.slice(0, firstTool).some((c) => (c.choices[0]?.delta as any)?.reasoning_content)).toBe(true);

    messages.push(
      { role: 'assistant', content: null, tool_calls: msg.tool_calls },
      { role: 'tool', tool_call_id: call.id, content: 'sunny' },
    );
    const answer = await collect(await h.client.chat.completions.create({ model: 'm', stream: true, messages, tools }));
    expect(answer.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('tool said: sunny');
    expect(answer.at(-1)!.choices[0].finish_reason).toBe('stop');
  });

  test('tool call ids are stable for the same conversation (a retried request matches)', async () => {
    const ask = () =>
      h.client.chat.completions.create({ model: 'm', messages: [user('[[tool name=lookup]] same')], tools });
    const [a, b] = await Promise.all([ask(), ask()]);
    expect(a.choices[0].message.tool_calls![0].id).toBe(b.choices[0].message.tool_calls![0].id);
  });

  test('without args, arguments are generated from the tool parameter schema; name defaults to the first tool', async () => {
    const res = await h.client.chat.completions.create({ model: 'm', messages: [user('[[tool]] pizza')], tools });
    const call = res.choices[0].message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    expect(call.function.name).toBe('lookup');
    expect(JSON.parse(call.function.arguments)).toEqual({ q: 'pizza', limit: 1 });
  });

  test('several [[tool]] directives are parallel calls; turn=N spreads them over turns', async () => {
    const text =
      '[[tool name=weather args={"city":"Paris"}]] [[tool name=weather args={"city":"Oslo"}]] [[tool name=lookup args={"q":"hotels","limit":2} turn=2]] plan a trip';
    const messages: Msg[] = [user(text)];
    const t1 = await h.client.chat.completions.create({ model: 'm', messages, tools });
    const calls1 = t1.choices[0].message.tool_calls as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall[];
    expect(calls1.map((c) => JSON.parse(c.function.arguments).city)).toEqual(['Paris', 'Oslo']);
    expect(new Set(calls1.map((c) => c.id)).size).toBe(2);
    messages.push(
      t1.choices[0].message,
      ...calls1.map((c, i): Msg => ({ role: 'tool', tool_call_id: c.id, content: `weather ${i}` })),
    );

    const t2 = await h.client.chat.completions.create({ model: 'm', messages, tools });
    const calls2 = t2.choices[0].message.tool_calls as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall[];
    expect(calls2.map((c) => c.function.name)).toEqual(['lookup']);
    messages.push(t2.choices[0].message, { role: 'tool', tool_call_id: calls2[0].id, content: '3 hotels' });

    const t3 = await h.client.chat.completions.create({ model: 'm', messages, tools });
    expect(t3.choices[0].message.content).toBe('tool said: 3 hotels');
  });

  test('parallel results are all reported in the answer', async () => {
    const stream = await h.client.chat.completions.create({
      model: 'm',
      stream: true,
      tools,
      messages: [
        user('[[tool name=weather]] [[tool name=lookup]] both'),
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'a', type: 'function', function: { name: 'weather', arguments: '{}' } },
            { id: 'b', type: 'function', function: { name: 'lookup', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'a', content: 'rain' },
        { role: 'tool', tool_call_id: 'b', content: 'nothing' },
      ],
    });
    const text = (await collect(stream)).map((c) => c.choices[0]?.delta?.content ?? '').join('');
    expect(text).toBe('tool said: rain\ntool said: nothing');
  });

  test('no tools offered, or tool_choice none: a plain text answer instead', async () => {
    const res = await h.client.chat.completions.create({ model: 'm', messages: [user('[[tool name=lookup]] hi')] });
    expect(res.choices[0].message.content).toBe('You said: hi');
    const none = await h.client.chat.completions.create({
      model: 'm',
      messages: [user('[[tool name=lookup]] hi')],
      tools,
      tool_choice: 'none',
    });
    expect(none.choices[0].finish_reason).toBe('stop');
  });

  test('a forced tool_choice calls that tool without any directive', async () => {
    const res = await h.client.chat.completions.create({
      model: 'm',
      messages: [user('what is the weather')],
      tools,
      tool_choice: { type: 'function', function: { name: 'weather' } },
    });
    const call = res.choices[0].message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    expect(call.function.name).toBe('weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
  });

  test('args that are not JSON pass through verbatim, to exercise bad-argument handling', async () => {
    const res = await h.client.chat.completions.create({
      model: 'm',
      messages: [user("[[tool name=lookup args='{not json']]")],
      tools,
    });
    expect((res.choices[0].message.tool_calls![0] as any).function.arguments).toBe('{not json');
  });

  test('tool directives from the header drive a two-turn scenario', async () => {
    const client = h.clientWith({
      defaultHeaders: { 'x-scripted-model': '[[tool name=lookup args={"q":"h","limit":1}]]' },
    });
    const messages: Msg[] = [user('header driven')];
    const t1 = await client.chat.completions.create({ model: 'm', messages, tools });
    expect(t1.choices[0].finish_reason).toBe('tool_calls');
    messages.push(t1.choices[0].message, {
      role: 'tool',
      tool_call_id: t1.choices[0].message.tool_calls![0].id,
      content: 'ok',
    });
    const t2 = await client.chat.completions.create({ model: 'm', messages, tools });
    expect(t2.choices[0].message.content).toBe('tool said: ok');
  });
});
