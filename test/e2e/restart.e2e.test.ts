// `npm start` twice on the same data folder: a task that was running when the
// service stopped (Ctrl-C) finishes after the next start, sessions remember, and
// a schedule whose time came while the service was down runs once it is back.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Stack } from '../../src/dev/launcher/stack';
import { ENGINE } from '../engine';
import { api, startPersistentStack, waitUntil } from './helpers';

jest.setTimeout(240_000);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aes-restart-'));
let stack: Stack | undefined;

const start = () => startPersistentStack(dataDir, { MODEL_HEARTBEAT_TIMEOUT_MS: '2000' });

afterAll(async () => {
  await stack?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('a second start resumes unfinished tasks and keeps sessions', async () => {
  stack = await start();
  let call = api(stack);
  const first = await call('POST', '/', { body: { message: 'remember me' } });
  const session = first.json.session;
  // A session with nothing running at the restart: its worker's cache is gone with it.
  const idle = (await call('POST', '/', { body: { message: 'idle through the restart' } })).json.session;
  const bg = await call('POST', `/?session=${session}`, {
    body: { message: '[[slow delay=100 tokens=60]] outlive the restart', background: true },
  });
  await waitUntil(
    'the background task running',
    async () => (await call('GET', `/tasks/${bg.json.task_id}`)).json.status === 'running',
  );
  // Due while the service is down (stopping and starting take longer than this).
  const later = await call('POST', '/', {
    body: { message: 'plan', background: true, schedules: [{ schedule: 2, message: 'due during the restart' }] },
  });
  const scheduleId = later.json.schedules[0].schedule_id;
  await stack.stop(); // what Ctrl-C does
  stack = await start();
  call = api(stack);
  const done = await call('GET', `/tasks/${bg.json.task_id}/result?wait=60`);
  expect(done.json.status).toBe('completed');
  expect(done.json.output.split(' ').length).toBe(60);
  const msgs = await call('GET', `/sessions/${session}/messages`);
  expect(msgs.json.messages.map((m: { content: string }) => m.content)).toContain('remember me');
  const idleMsgs = await call('GET', `/sessions/${idle}/messages`);
  expect(idleMsgs.status).toBe(200);
  expect(idleMsgs.json.messages.map((m: { content: string }) => m.content)).toEqual([
    'idle through the restart',
    'You said: idle through the restart',
  ]);
  let tasks: { task_id: string; status: string }[] = [];
  await waitUntil(
    'the schedule due during the restart to have run once, completed',
    async () => {
      tasks = (await call('GET', `/tasks?schedule=${scheduleId}`)).json.tasks;
      return tasks.length === 1 && tasks[0].status === 'completed';
      // On the real server a workflow task the stop caught (the SDK drops one that reaches it while
      // it drains) waits out its timeout: a minute for the account's slots workflow (SLOTS_TASK_TIMEOUT).
      // The embedded engine gives such tasks back 3 s after the worker's ShutdownWorker.
    },
    { timeoutMs: ENGINE === 'temporal-cli' ? 90_000 : 30_000 },
  );
  expect((await call('GET', `/schedules/${scheduleId}`)).json).toMatchObject({ runs: 1, next_run_at: null });
});
