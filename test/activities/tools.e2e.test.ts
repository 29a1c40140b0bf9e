// The tool activity and the built-in tools: a result is published once (a retry
// adds nothing), a tool that fails is an error result, long output is cut.
import pino from 'pino';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createToolActivities, RunToolOutput } from '../../activities/tools/tool-activities';
import { evaluate } from '../../activities/tools/builtin';
import { EventPublisher } from '../../src/common/relay/publisher';
import { PrivateRedis, startPrivateRedis } from '../common/relay/private-redis';

const logger = pino({ level: 'silent' });
let server: PrivateRedis;
let publisher: EventPublisher;

beforeAll(async () => {
  server = await startPrivateRedis();
  publisher = new EventPublisher({ redis: server.redis, logger, ttlMs: 60_000 });
});
afterAll(async () => {
  await server?.stop();
});

const run = (taskId: string, name: string, args: string, maxChars = 1000) =>
  new MockActivityEnvironment().run(createToolActivities({ publisher } as never).runTool, {
    taskId,
    session: 's',
    producer: 's1:t0',
    floor: 0,
    call: { id: 'call_1', name, arguments: args },
    maxChars,
  }) as Promise<RunToolOutput>;

test('calculate answers, publishes its response once, and a retry publishes nothing more', async () => {
  expect(await run('task_t1', 'calculate', '{"expression":"(2 + 3) * 4 ^ 2"}')).toEqual({
    content: '80',
    isError: false,
    lastSeq: 1,
  });
  await run('task_t1', 'calculate', '{"expression":"(2 + 3) * 4 ^ 2"}');
  const events = await publisher.readAfter('task_t1', 0);
  expect(events).toEqual([
    {
      seq: 1,
      type: 'agent_tool_response',
      tool_call_id: 'call_1',
      content: JSON.stringify({ tool: 'calculate', content: '80' }),
      session: 's',
      task_id: 'task_t1',
    },
  ]);
});

test('bad input is an error result for the model, not a failed activity', async () => {
  const r = await run('task_t2', 'calculate', '{"expression":"2 +"}');
  expect(r.isError).toBe(true);
  expect(r.content).toMatch(/^Error: unexpected end of expression/);
  expect((await publisher.readAfter('task_t2', 0))[0]).toMatchObject({ is_error: true });
  expect((await run('task_t3', 'calculate', 'not json')).content).toMatch(/^Error: the arguments are not JSON/);
  expect((await run('task_t4', 'current_time', '{"time_zone":"Mars/Olympus"}')).content).toBe(
    'Error: unknown time zone: Mars/Olympus',
  );
});

test('current_time answers in UTC and in a time zone', async () => {
  const asked = Date.now();
  const r = JSON.parse((await run('task_t5', 'current_time', '{"time_zone":"Europe/Paris"}')).content);
  // The time of the call: within it, however long it took.
  expect(Date.parse(r.utc)).toBeGreaterThanOrEqual(asked);
  expect(Date.parse(r.utc)).toBeLessThanOrEqual(Date.now());
  expect(r['Europe/Paris']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
});

test('output longer than the limit is cut, with a note saying so', async () => {
  const r = await run('task_t6', 'calculate', '{"expression":"1/3"}', 5);
  expect(r.content).toBe('0.333\n[cut: the tool returned 18 characters; only the first 5 are shown]');
});

test('the arithmetic evaluator: precedence, right-associative powers, unary minus, errors', () => {
  expect(evaluate('1 + 2 * 3')).toBe(7);
  expect(evaluate('2 ^ 3 ^ 2')).toBe(512);
  expect(evaluate('-(4 - 6) % 3')).toBe(2);
  expect(evaluate('1.5e2 / .5')).toBe(300);
  expect(() => evaluate('1 / 0')).toThrow('not a finite number');
  expect(() => evaluate('process.exit()')).toThrow('unexpected');
});
