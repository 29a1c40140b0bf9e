// A run terminated from outside (the Web UI, the CLI) reads as finished
// everywhere Temporal decides: its status, the task list, and its session,
// whose next run completes (the session watches its active run).
import { useStack, waitUntil, withTemporal } from './helpers';

jest.setTimeout(120_000);
const ctx = useStack({ RUN_WATCH_MS: '1000' });

test('terminate the active run of a session: status and list say failed, the next run of the session completes', async () => {
  const first = await ctx.call('POST', '/', { body: { message: '[[slow delay=200 tokens=200]] long one', background: true } });
  const id = first.json.task_id;
  const session = first.json.session;
  await waitUntil(async () => (await ctx.call('GET', `/tasks/${id}`)).json.status === 'running');
  const next = await ctx.call('POST', `/?session=${session}`, { body: { message: 'after it', background: true } });
  expect(next.status).toBe(202);
  await withTemporal(ctx.stack(), (client) => client.workflow.getHandle(id).terminate('operator stop'));
  const status = await ctx.call('GET', `/tasks/${id}`);
  expect(status.json).toMatchObject({ status: 'failed', error: { type: 'terminated' } });
  await waitUntil(async () => (await ctx.call('GET', `/tasks?session=${session}`)).json.tasks.some((t: { task_id: string; status: string }) => t.task_id === id && t.status === 'failed'));
  const result = await ctx.call('GET', `/tasks/${next.json.task_id}/result?wait=30`);
  expect(result.json).toMatchObject({ status: 'completed', output: 'You said: after it' });
});
