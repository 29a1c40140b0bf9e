import { ApplicationFailure } from '@temporalio/common';
import { buildMessages, classifyModelError, DEFAULT_SYSTEM_PROMPT } from '../../activities/model-support';

test.each([
  [400, false, 'ModelBadRequest'],
  [401, false, 'ModelBadRequest'],
  [404, false, 'ModelBadRequest'],
  [422, false, 'ModelBadRequest'],
  [408, true, 'model_unavailable'],
  [409, true, 'model_unavailable'],
  [429, true, 'model_unavailable'],
  [500, true, 'model_unavailable'],
  [503, true, 'model_unavailable'],
])('HTTP %s -> retryable %s (%s)', (status, retryable, type) => {
  const f = classifyModelError(Object.assign(new Error('boom'), { status }));
  expect(f).toBeInstanceOf(ApplicationFailure);
  expect(f.nonRetryable).toBe(!retryable);
  expect(f.type).toBe(type);
});

test('prompt: default system prompt, rules appended, the thread last', () => {
  const m = buildMessages({
    rules: ['be brief', 'no jargon'],
    session: [],
    run: [{ role: 'user', content: 'hi' }],
  }) as any[];
  expect(m[0].role).toBe('system');
  expect(m[0].content.startsWith(DEFAULT_SYSTEM_PROMPT)).toBe(true);
  expect(m[0].content).toContain('- be brief\n- no jargon');
  expect(m[m.length - 1]).toEqual({ role: 'user', content: 'hi' });
  const plain = buildMessages({ system: 'S', session: [], run: [] }) as any[];
  expect(plain).toEqual([{ role: 'system', content: 'S' }]);
});

test.each([
  [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { name: 'APIConnectionError' }), 'model_unavailable'],
  [new Error('fetch failed'), 'model_unavailable'],
  [
    Object.assign(new Error('no data from the model for 60 s after its answer began (MODEL_STREAM_IDLE_MS)'), {
      name: 'ModelStreamStalled',
    }),
    'model_unavailable',
  ],
  [new TypeError("Cannot read properties of undefined (reading 'choices')"), 'ModelCallError'],
])(
  'no HTTP status: a connection error or a stalled stream is model_unavailable, anything else (a bug) ModelCallError, all retried: %s',
  (err, type) => {
    const f = classifyModelError(err);
    expect(f.type).toBe(type);
    expect(f.nonRetryable).toBe(false);
  },
);

test('prompt: the session thread, then the run thread with tool calls and results in Chat Completions form', () => {
  const m = buildMessages({
    session: [
      { role: 'user', content: 'earlier' },
      { role: 'assistant', content: 'reply' },
    ],
    run: [
      { role: 'user', content: 'now' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'c1', name: 'calculate', arguments: '{"expression":"1+1"}' }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'bad', is_error: true },
    ],
  }) as any[];
  expect(m.slice(1)).toEqual([
    { role: 'user', content: 'earlier' },
    { role: 'assistant', content: 'reply' },
    { role: 'user', content: 'now' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'calculate', arguments: '{"expression":"1+1"}' } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'Error: bad' },
  ]);
});
