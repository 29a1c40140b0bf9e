// kill -9 of the embedded server in the middle of each kind of durable state;
// after a restart on the same file every workflow completes with the right
// result and its history replays cleanly.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { NativeConnection, Worker, bundleWorkflowCode, DefaultLogger, Runtime } from '@temporalio/worker';
import { startServerProcess, ServerProcess, freePort } from '../server-process';
import * as activities from './activities';
import { inActivity, inTimer, inBackoff, inChild } from './workflows';
import { waitUntil } from '../support/wait-until';

const ET = temporal.api.enums.v1.EventType;
/** The timer's length: far longer than the set-up before the kill and the restart after it. */
const TIMER_MS = 20_000;

jest.setTimeout(120_000);

let dir: string;
let server: ServerProcess | undefined;

beforeAll(() => {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devserver-durability-'));
});
afterAll(async () => {
  await server?.kill();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('every workflow survives SIGKILL of the server mid-flight', async () => {
  const db = path.join(dir, 'temporal.db');
  const port = await freePort();
  server = await startServerProcess({ port, dbFilename: db });
  const taskQueue = `durability-${randomUUID()}`;
  const bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('./workflows'),
    logger: new DefaultLogger('ERROR'),
  });

  let connection = await Connection.connect({ address: server.address });
  let client = new Client({ connection });
  const nativeConn = await NativeConnection.connect({ address: server.address });
  const worker = await Worker.create({ connection: nativeConn, taskQueue, workflowBundle: bundle, activities });
  const running = worker.run();

  const id = (p: string) => `${p}-${randomUUID()}`;
  const handles = {
    activity: await client.workflow.start(inActivity, { taskQueue, workflowId: id('activity') }),
    timer: await client.workflow.start(inTimer, { taskQueue, workflowId: id('timer'), args: [TIMER_MS] }),
    backoff: await client.workflow.start(inBackoff, { taskQueue, workflowId: id('backoff') }),
    child: await client.workflow.start(inChild, { taskQueue, workflowId: id('child') }),
  };
  // Wait until each is in the state we want to interrupt.
  await waitUntil(
    'the activity to be running',
    async () => (await handles.activity.describe()).raw.pendingActivities?.[0]?.state === 2 /* STARTED */,
  );
  await waitUntil(
    'the activity to wait out its backoff before attempt 2',
    async () => (await handles.backoff.describe()).raw.pendingActivities?.[0]?.attempt === 2,
  );
  await waitUntil(
    'the child to be started',
    async () => (await handles.child.describe()).raw.pendingChildren?.length === 1,
  );
  const timerEvents = async () => (await client.workflow.getHandle(handles.timer.workflowId).fetchHistory()).events!;
  await waitUntil('the timer to be started', timerEvents, (evs) =>
    evs.some((e) => e.eventType === ET.EVENT_TYPE_TIMER_STARTED),
  );
  // A schedule that fires every 2 s; it must keep firing after the restart.
  const scheduleId = id('schedule');
  await client.schedule.create({
    scheduleId,
    spec: { intervals: [{ every: '2s' }] },
    action: { type: 'startWorkflow', workflowType: inTimer, args: [10], taskQueue, workflowId: `${scheduleId}-wf` },
  });
  await waitUntil(
    'the schedule to take an action',
    async () => ((await client.schedule.getHandle(scheduleId).describe()).info.numActionsTaken ?? 0) >= 1,
  );

  // The kill must come while the timer is pending, for it to be carried across.
  expect((await timerEvents()).some((e) => e.eventType === ET.EVENT_TYPE_TIMER_FIRED)).toBe(false);
  const killedAt = Date.now();
  await server.kill('SIGKILL');
  await connection.close();
  server = await startServerProcess({ port, dbFilename: db });
  connection = await Connection.connect({ address: server.address });
  client = new Client({ connection });

  const result = (h: { workflowId: string }) => client.workflow.getHandle(h.workflowId).result();
  expect(await result(handles.activity)).toBe('activity-done');
  const slept = await result(handles.timer);
  expect(slept).toBeGreaterThanOrEqual(TIMER_MS);
  // The timer resumed at its original deadline rather than starting over (the server's times):
  // started over at the restart, it would fire a whole timer's length after the kill.
  const timer = await timerEvents();
  const at = (t: number) => tsToMs(timer.find((e) => e.eventType === t)!.eventTime!);
  expect(at(ET.EVENT_TYPE_TIMER_FIRED) - at(ET.EVENT_TYPE_TIMER_STARTED)).toBeGreaterThanOrEqual(TIMER_MS);
  expect(at(ET.EVENT_TYPE_TIMER_FIRED)).toBeLessThan(killedAt + TIMER_MS);
  expect(await result(handles.backoff)).toBe(2);
  expect(await result(handles.child)).toBe('child slept 2500');

  for (const h of Object.values(handles)) {
    const hist = await client.workflow.getHandle(h.workflowId).fetchHistory();
    const ids = hist.events!.map((e) => Number(e.eventId));
    expect(ids).toEqual(ids.map((_, i) => i + 1)); // no duplicated or reordered event
    await Worker.runReplayHistory({ workflowBundle: bundle }, hist, h.workflowId);
  }
  const childHist = await client.workflow.getHandle(`${handles.child.workflowId}-child`).fetchHistory();
  await Worker.runReplayHistory({ workflowBundle: bundle }, childHist);

  // The schedule survived: its state is back and it fires again after the restart.
  const sched = client.schedule.getHandle(scheduleId);
  const before = (await sched.describe()).info.numActionsTaken;
  const restartedAt = Date.now();
  await waitUntil(
    'the schedule to take an action after the restart',
    async () => (await sched.describe()).info.numActionsTaken > before,
  );
  const recent = (await sched.describe()).info.recentActions;
  const after = recent.filter((a) => a.takenAt.getTime() >= restartedAt - 1000);
  expect(after.length).toBeGreaterThan(0);
  const run = client.workflow.getHandle(after[0].action.workflow.workflowId);
  expect(await run.result()).toBeGreaterThanOrEqual(10);
  await Worker.runReplayHistory({ workflowBundle: bundle }, await run.fetchHistory());
  await sched.delete();

  worker.shutdown();
  await running;
  await nativeConn.close();
  await connection.close();
});
