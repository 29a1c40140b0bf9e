import { ApplicationFailure } from '@temporalio/common';
import { buildMessages, classifyModelError, DEFAULT_SYSTEM_PROMPT } from '../../activities/model-support';

test.each([
  [400, false, 'ModelBadRequest'],
  [401, false, 'ModelBadRequest'],
  [404, false, 'ModelBadRequest'],
  [422, false, 'ModelBadRequest'],
  [408, true, 'ModelUnavailable'],
  [409, true, 'ModelUnavailable'],
  [429, true, 'ModelUnavailable'],
  [500, true, 'ModelUnavailable'],
  [503, true, 'ModelUnavailable'],
  [undefined, true, 'ModelUnavailable'],
])('HTTP %s -> retryable %s (%s)', (status, retryable, type) => {
  const f = classifyModelError(Object.assign(new Error('boom'), { status }));
  expect(f).toBeInstanceOf(ApplicationFailure);
  expect(f.nonRetryable).toBe(!retryable);
  expect(f.type).toBe(type);
});

test('prompt: default system prompt, rules appended, partial answer last for continuation', () => {
  const m = buildMessages({ rules: ['be brief', 'no jargon'], messages: [{ role: 'user', content: 'hi' }] }, { content: 'Hel', thinking: '' }) as any[];
  expect(m[0].role).toBe('system');
  expect(m[0].content.startsWith(DEFAULT_SYSTEM_PROMPT)).toBe(true);
  expect(m[0].content).toContain('- be brief\n- no jargon');
  expect(m[m.length - 1]).toEqual({ role: 'assistant', content: 'Hel' });
  const plain = buildMessages({ system: 'S', messages: [] }, { content: '', thinking: '' }) as any[];
  expect(plain).toEqual([{ role: 'system', content: 'S' }]);
});
