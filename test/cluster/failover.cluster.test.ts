// Gateways and workers are interchangeable: a stream whose gateway dies resumes through another
// with Last-Event-ID (no event lost or doubled), a run whose worker is killed mid-call goes on on
// the other worker, and a drained worker (SIGTERM) hands its calls back at once, not after a
// heartbeat timeout. Each test starts again what it stopped, as an orchestrator would.
import type { temporal } from '@temporalio/proto';
import { KEY_A, readSse, SseEvent, waitUntil, withTemporal } from '../e2e/helpers';
import { clusterApi, clusterStack, node, nodeUrl, restartNode, stopNode } from './cluster';

jest.setTimeout(180_000);
const lb = clusterApi();

const events = (base: string, taskId: string, after = 0) =>
  fetch(`${base}/tasks/${taskId}/events`, {
    headers: { authorization: `Bearer ${KEY_A}`, 'last-event-id': String(after) },
  });

test('a stream resumes through the other gateway after its own dies: every event once, in order', async () => {
  const r = await lb('POST', '/', {
    body: { message: '[[slow delay=100 tokens=60]] a long answer', background: true, streaming_tokens: true },
  });
  expect(r.status).toBe(202);
  const id = r.json.task_id as string;
  // Read through gateway-1 until the answer is under way, then kill it mid-stream.
  const seen: SseEvent[] = [];
  const first = await events(nodeUrl('gateway-1'), id);
  const reading = readSse(first, (e) => (seen.push(e), false)).catch((err: Error) => err);
  await waitUntil('tokens through gateway-1', () => seen.filter((e) => e.data.type === 'agent_response').length >= 5);
  await stopNode('gateway-1', 'SIGKILL');
  await reading;
  const last = Number(seen[seen.length - 1].id);
  // The client's reconnect: the load balancer, which no longer sends anything to gateway-1.
  const rest = await readSse(
    await events(clusterStack().gatewayUrl, id, last),
    (e) => e.data.type === 'agent_completed',
  );
  const ids = [...seen, ...rest].map((e) => Number(e.id));
  expect(ids).toEqual(ids.map((_, i) => i + 1));
  expect(rest[rest.length - 1].data.type).toBe('agent_completed');
  // What the client put together is what the task's whole stream holds.
  const whole = await readSse(await events(clusterStack().gatewayUrl, id), (e) => e.data.type === 'agent_completed');
  expect([...seen, ...rest].map((e) => e.data)).toEqual(whole.map((e) => e.data));
  await restartNode('gateway-1');
});

/** The identity (`pid@host`) of the worker running the task's pending activity, once one is running. */
async function runningOn(taskId: string): Promise<string> {
  return withTemporal(clusterStack(), async (client) => {
    const d = await waitUntil(`an activity of ${taskId} running`, async () => {
      const desc = await client.workflow.getHandle(taskId).describe();
      return desc.raw.pendingActivities?.find((a) => a.lastWorkerIdentity);
    });
    return d.lastWorkerIdentity!;
  });
}

/** Background tasks in a long model call until one runs on `worker` (the queue decides which worker polls first). */
async function taskOn(worker: string): Promise<string> {
  const pid = node(worker).pid;
  for (let i = 0; i < 10; i++) {
    const r = await lb('POST', '/', {
      body: { message: `[[slow delay=100 tokens=80]] long call ${i}`, background: true },
    });
    expect(r.status).toBe(202);
    if ((await runningOn(r.json.task_id)).startsWith(`${pid}@`)) return r.json.task_id;
  }
  throw new Error(`ten tasks, none of them on ${worker}`);
}

/** The model call's last attempt in the finished task's history: who ran it, and why the one before ended. */
async function lastModelAttempt(taskId: string): Promise<temporal.api.history.v1.IActivityTaskStartedEventAttributes> {
  return withTemporal(clusterStack(), async (client) => {
    const events = (await client.workflow.getHandle(taskId).fetchHistory()).events!;
    const modelCalls = new Set(
      events
        .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'modelTurn')
        .map((e) => String(e.eventId)),
    );
    const started = events.filter(
      (e) =>
        e.activityTaskStartedEventAttributes &&
        modelCalls.has(String(e.activityTaskStartedEventAttributes.scheduledEventId)),
    );
    return started[started.length - 1].activityTaskStartedEventAttributes!;
  });
}

/**
 * A task in a model call on worker `from`, which is then stopped with `signal`: the task completes,
 * its model call's last attempt made by worker `to`. That attempt, for the caller to check why the
 * one before ended; `from` is started again.
 */
async function handOver(from: string, to: string, signal: NodeJS.Signals) {
  const id = await taskOn(from);
  await stopNode(from, signal);
  const done = await lb('GET', `/tasks/${id}/result?wait=60`);
  expect(done.json.status).toBe('completed');
  const attempt = await lastModelAttempt(id);
  expect(attempt.identity).toMatch(new RegExp(`^${node(to).pid}@`));
  expect(attempt.attempt).toBeGreaterThanOrEqual(2);
  await restartNode(from);
  return attempt;
}

test('a worker killed mid-call: the run goes on on the other worker and completes', async () => {
  const attempt = await handOver('worker-1', 'worker-2', 'SIGKILL');
  // The killed worker's attempt ended by its heartbeat timeout: nobody was left to say otherwise.
  expect(attempt.lastFailure?.timeoutFailureInfo).toBeTruthy();
});

test('a drained worker (SIGTERM) hands its call back at once: the retry does not wait out a timeout', async () => {
  const attempt = await handOver('worker-2', 'worker-1', 'SIGTERM');
  // Ended by the worker's cancellation as it stopped, not by a heartbeat or start-to-close timeout.
  expect(attempt.lastFailure).toBeTruthy();
  expect(attempt.lastFailure?.timeoutFailureInfo).toBeFalsy();
});
