// The launcher's supervision over the real processes (the same stack and
// supervisor `npm start` runs, in process): kill -9 of each component in turn
// while background tasks run, then a frozen worker (SIGSTOP). Each time the
// service answers again by itself, the supervisor stays up, and in the end
// every task completed, its events gap-free and each once.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Stack } from '../../../src/dev/launcher/stack';
import { superviseStack, SupervisedStack } from '../../../src/dev/launcher/supervise-stack';
import { api, Api, KEY_A, readSse, SseEvent, startPersistentStack, waitUntil } from '../../e2e/helpers';

jest.setTimeout(300_000);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aes-supervise-'));
let stack: Stack;
let supervised: SupervisedStack;
let call: Api;
const lines: string[] = [];
let gaveUp: string | undefined;

beforeAll(async () => {
  // A data folder: the engine and Redis come back with their data, as under npm start.
  stack = await startPersistentStack(dataDir, { MODEL_HEARTBEAT_TIMEOUT_MS: '2000' });
  call = api(stack);
  supervised = superviseStack(stack, {
    log: (l) => lines.push(l),
    probeEveryMs: 500,
    failuresBeforeRestart: 3,
    backoffBaseMs: 200,
  });
  void supervised.supervisor.gaveUp.then((r) => (gaveUp = r));
});

afterAll(async () => {
  await supervised?.close();
  await stack?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Waits until a synchronous run answers again; returns how long that took. */
async function answersAgain(since: number): Promise<number> {
  await waitUntil(
    'a synchronous run to complete again',
    () => call('POST', '/', { body: { message: 'are you back?' } }),
    (r) => r.status === 200 && r.json.status === 'completed',
    { timeoutMs: 60_000, stepMs: 250 },
  );
  return Date.now() - since;
}

async function allEvents(taskId: string): Promise<SseEvent[]> {
  const res = await fetch(`${stack.gatewayUrl}/tasks/${taskId}/events`, {
    headers: { authorization: `Bearer ${KEY_A}` },
  });
  return readSse(res);
}

test('kill -9 of each component in turn, then a frozen worker: restarted each time, no task lost, no event twice', async () => {
  const tasks: string[] = [];
  const submit = async () => {
    const r = await call('POST', '/', {
      body: { background: true, message: '[[slow delay=100 tokens=40]] keep going' },
    });
    expect(r.status).toBe(202);
    tasks.push(r.json.task_id);
  };
  const recovery: Record<string, number> = {};
  for (const name of ['worker', 'gateway', 'redis', 'engine']) {
    await submit();
    await submit();
    const before = stack.children[name];
    const killedAt = Date.now();
    before.proc.kill('SIGKILL');
    recovery[name] = await answersAgain(killedAt);
    expect(stack.children[name]).not.toBe(before);
    expect(lines).toContain(`${name} was killed by SIGKILL; restarting it in 200 ms (restart 1 of at most 5 a minute)`);
  }
  // Frozen: alive to the OS, answering nothing. The health check catches it and the supervisor replaces it.
  await submit();
  const frozen = stack.children.worker;
  const frozenAt = Date.now();
  frozen.proc.kill('SIGSTOP');
  await waitUntil('the frozen worker replaced', () => stack.children.worker !== frozen);
  recovery['frozen worker'] = await answersAgain(frozenAt);
  expect(lines).toContain('worker stopped answering (3 health checks failed in a row); killing it');
  process.stdout.write(`supervision: back to answering after (ms) ${JSON.stringify(recovery)}\n`);

  for (const id of tasks) {
    const done = await call('GET', `/tasks/${id}/result?wait=60`);
    expect([id, done.json.status]).toEqual([id, 'completed']);
    expect(done.json.output.split(' ').length).toBe(40);
    const events = await allEvents(id);
    expect(events.map((e) => e.data.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.data.type === 'agent_completed')).toHaveLength(1);
  }
  expect(gaveUp).toBeUndefined();
});
