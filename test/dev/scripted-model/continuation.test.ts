// Resuming a half-delivered answer, and structured (JSON) output.
import OpenAI from 'openai';
import { z } from 'zod';
import { zodResponseFormat } from 'openai/helpers/zod';
import { collect, contentOf, reasoningOf, useScriptedModel, user } from './helpers';

type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const h = useScriptedModel();

async function streamed(messages: Msg[]): Promise<OpenAI.Chat.Completions.ChatCompletionChunk[]> {
  return collect(
    await h.client.chat.completions.create({
      model: 'm',
      stream: true,
      stream_options: { include_usage: true },
      messages,
    }),
  );
}

describe('scripted model: continuation', () => {
  const question = user('[[long words=30]] tell me a story');

  test('a partial assistant message gets exactly the remainder, at every cut point', async () => {
    const full = contentOf(await streamed([question]));
    expect(full.split(' ')).toHaveLength(30);
    for (const cut of [0, 1, 5, 17, Math.floor(full.length / 2), full.length - 1, full.length]) {
      const prefix = full.slice(0, cut);
      const rest = await h.client.chat.completions.create({
        model: 'm',
        messages: [question, { role: 'assistant', content: prefix }],
      });
      expect(prefix + rest.choices[0].message.content).toBe(full);
    }
  });

  test('streamed continuation: prefix plus streamed remainder equals the full answer', async () => {
    const chunks = await streamed([question]);
    const full = contentOf(chunks);
    // Simulate a crash after 7 delivered chunks.
    const prefix = chunks
      .slice(0, 8)
      .map((c) => c.choices[0]?.delta?.content ?? '')
      .join('');
    const resumed = await streamed([question, { role: 'assistant', content: prefix }]);
    expect(prefix + contentOf(resumed)).toBe(full);
    expect(resumed.at(-2)!.choices[0].finish_reason).toBe('stop');
    expect(h.model.stats().continuations).toBeGreaterThan(0);
  });

  test('echo replies continue too, and reasoning is not repeated once content has started', async () => {
    const q = user('[[think]] resume this sentence for me');
    const first = await streamed([q]);
    const full = contentOf(first);
    expect(reasoningOf(first)).not.toBe('');
    const resumed = await streamed([q, { role: 'assistant', content: full.slice(0, 12) }]);
    expect(full.slice(0, 12) + contentOf(resumed)).toBe(full);
    expect(reasoningOf(resumed)).toBe('');
  });

  test('a partial made only of reasoning resumes inside the reasoning', async () => {
    const q = user('[[think words=20]] ok');
    const first = await streamed([q]);
    const reasoning = reasoningOf(first);
    const partial = { role: 'assistant', content: '', reasoning_content: reasoning.slice(0, 30) } as Msg;
    const resumed = await streamed([q, partial]);
    expect(reasoning.slice(0, 30) + reasoningOf(resumed)).toBe(reasoning);
    expect(contentOf(resumed)).toBe(contentOf(first));
  });

  test('continuation works after a tool round too', async () => {
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } },
    ];
    const base: Msg[] = [
      user('[[tool name=lookup]] go'),
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'the answer is 42' },
    ];
    const rest = await h.client.chat.completions.create({
      model: 'm',
      tools,
      messages: [...base, { role: 'assistant', content: 'tool said: the ans' }],
    });
    expect(rest.choices[0].message.content).toBe('wer is 42');
  });

  test('a prefix that is not ours gets the whole reply (and a warning in the log)', async () => {
    const res = await h.client.chat.completions.create({
      model: 'm',
      messages: [user('hi'), { role: 'assistant', content: 'Something else' }],
    });
    expect(res.choices[0].message.content).toBe('You said: hi');
  });
});

describe('scripted model: structured output', () => {
  const Answer = z.object({
    title: z.string(),
    score: z.number().int().min(3).max(10),
    ratio: z.number(),
    tags: z.array(z.string()).min(2),
    status: z.enum(['draft', 'final']),
    nested: z.object({ ok: z.boolean(), note: z.string().nullable() }),
    items: z.array(z.object({ id: z.number().int(), label: z.string().max(5) })).min(1),
  });

  test('json_schema response_format yields JSON valid against the schema (zodResponseFormat + parse)', async () => {
    const res = await h.client.chat.completions.parse({
      model: 'm',
      messages: [user('summarise')],
      response_format: zodResponseFormat(Answer, 'answer'),
    });
    const parsed = res.choices[0].message.parsed!;
    expect(Answer.parse(parsed)).toEqual(parsed);
    expect(parsed.score).toBeGreaterThanOrEqual(3);
    expect(parsed.tags.length).toBeGreaterThanOrEqual(2);
    expect(parsed.status).toBe('draft');
    expect(parsed.title).toBe('You said: summarise');
  });

  test('a hand-written schema with $defs and required fields, streamed', async () => {
    const schema = {
      type: 'object',
      properties: {
        person: { $ref: '#/$defs/person' },
        when: { type: 'string', format: 'date-time' },
        count: { type: 'integer', exclusiveMinimum: 0 },
      },
      required: ['person', 'when', 'count'],
      additionalProperties: false,
      $defs: {
        person: {
          type: 'object',
          properties: {
            name: { type: 'string', minLength: 40 },
            age: { anyOf: [{ type: 'null' }, { type: 'integer' }] },
          },
          required: ['name', 'age'],
        },
      },
    };
    const chunks = await collect(
      await h.client.chat.completions.create({
        model: 'm',
        stream: true,
        messages: [user('[[json]] who')],
        response_format: { type: 'json_schema', json_schema: { name: 'p', schema, strict: true } },
      }),
    );
    const value = JSON.parse(contentOf(chunks));
    expect(value.person.name.length).toBeGreaterThanOrEqual(40);
    expect(value.person.age).toBe(0);
    expect(Number.isNaN(Date.parse(value.when))).toBe(false);
    expect(value.count).toBe(1);
  });

  test('json_object or a bare [[json]] gives {"reply": ...}', async () => {
    const a = await h.client.chat.completions.create({
      model: 'm',
      messages: [user('as json')],
      response_format: { type: 'json_object' },
    });
    expect(JSON.parse(a.choices[0].message.content!)).toEqual({ reply: 'You said: as json' });
    const b = await h.client.chat.completions.create({ model: 'm', messages: [user('[[json]] bare')] });
    expect(JSON.parse(b.choices[0].message.content!)).toEqual({ reply: 'You said: bare' });
  });
});
