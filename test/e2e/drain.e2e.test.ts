// A graceful stop (what Ctrl-C under npm start does) with work in flight: the
// POST in flight gets its answer, open streams end cleanly (no error, no
// terminal event: the client resumes), and the worker hands its running model
// calls back, so after the next start they go on at once, not after a
// heartbeat timeout (set to 60 s here to tell the two apart), and the account's
// slots are not held by them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Stack } from '../../src/dev/launcher/stack';
import { api, KEY_A, readSse, SseEvent, startPersistentStack, waitUntil, withTemporal } from './helpers';

jest.setTimeout(240_000);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aes-drain-'));
let stack: Stack | undefined;

const start = () =>
  startPersistentStack(dataDir, { MODEL_HEARTBEAT_TIMEOUT_MS: '60000', MAX_RUNNING_TASKS_PER_ACCOUNT: '5' });

afterAll(async () => {
  await stack?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const events = (s: Stack, taskId: string, after = 0) =>
  fetch(`${s.gatewayUrl}/tasks/${taskId}/events`, {
    headers: { authorization: `Bearer ${KEY_A}`, 'last-event-id': String(after) },
  });

test('a stop answers the POST in flight, ends streams cleanly, and hands running calls back for the next start', async () => {
  stack = await start();
  let call = api(stack);
  // Five background tasks fill the account's five slots, each in a long model call.
  const running: string[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await call('POST', '/', {
      body: { background: true, message: `[[slow delay=100 tokens=50]] long answer ${i}` },
    });
    running.push(r.json.task_id);
  }
  await waitUntil('the five tasks running', async () => {
    const views = await Promise.all(running.map((id) => call('GET', `/tasks/${id}`)));
    return views.every((v) => v.json.status === 'running');
  });
  const stream = await events(stack, running[0]);
  const streamed: SseEvent[] = [];
  const reading = readSse(stream, (e) => (streamed.push(e), false)).catch((err: Error) => err);
  // A synchronous run that takes about two seconds, in flight when the stop begins.
  const inFlight = call('POST', '/', { body: { message: '[[slow delay=100 tokens=20]] answer me first' } });
  const model = stack.model!;
  await waitUntil("the synchronous run's model call", () =>
    model.received().some((r) => JSON.stringify(r.body.messages).includes('answer me first')),
  );
  await stack.stop();

  const answered = await inFlight;
  expect(answered.status).toBe(200);
  expect(answered.json.status).toBe('completed');
  const ended = await reading;
  expect(ended).not.toBeInstanceOf(Error); // ended by the server, cleanly
  expect(streamed.map((e) => e.data.type)).not.toContain('agent_completed');
  expect(streamed.map((e) => e.data.type)).not.toContain('agent_error');
  const lastSeen = Number(streamed[streamed.length - 1]?.id ?? 0);

  const restartedAt = Date.now();
  stack = await start();
  call = api(stack);
  // A new task of the same account: it needs a slot the five running ones still hold.
  const next = await call('POST', '/', { body: { background: true, message: 'after the restart' } });
  for (const id of running) {
    const done = await call('GET', `/tasks/${id}/result?wait=60`);
    expect([id, done.json.status]).toEqual([id, 'completed']);
    expect(done.json.output.split(' ').length).toBe(50);
  }
  const resumedIn = Date.now() - restartedAt;
  const nextDone = await call('GET', `/tasks/${next.json.task_id}/result?wait=60`);
  expect(nextDone.json.status).toBe('completed');
  process.stdout.write(
    `drain: the five handed-back tasks finished ${resumedIn} ms after the restart; the sixth ${Date.now() - restartedAt} ms\n`,
  );
  // Handed back, not presumed lost: each task's model call ran again after the failure the worker's
  // stop gave it, not after a heartbeat timeout (60 s here), which Temporal would record as a timeout.
  const before = await withTemporal(stack, (client) =>
    Promise.all(
      running.map(async (id) => {
        const history = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
        const turns = new Set(
          history
            .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'modelTurn')
            .map((e) => String(e.eventId)),
        );
        const again = history
          .map((e) => e.activityTaskStartedEventAttributes)
          .find((a) => a && turns.has(String(a.scheduledEventId)) && (a.attempt ?? 1) > 1);
        return {
          id,
          attempt: again?.attempt,
          timedOut: again?.lastFailure?.timeoutFailureInfo != null,
          failure: again?.lastFailure?.message,
        };
      }),
    ),
  );
  for (const b of before) expect(b).toMatchObject({ id: b.id, attempt: expect.any(Number), timedOut: false });

  // The stream, resumed where it was cut, goes on without a gap or a repeat.
  const rest = await readSse(await events(stack, running[0], lastSeen));
  const seqs = [...streamed, ...rest].map((e) => e.data.seq);
  expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  expect(rest[rest.length - 1].data.type).toBe('agent_completed');
});
