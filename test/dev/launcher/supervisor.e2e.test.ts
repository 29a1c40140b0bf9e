// The supervisor over real (tiny) child processes: a death is restarted with
// a line naming the component, how it ended and the count; a frozen one is
// caught by its health check; too many restarts in the window give up.
import { Child, startChild } from '../../../src/dev/launcher/processes';
import { Supervised, Supervisor } from '../../../src/dev/launcher/supervisor';
import { waitUntil } from '../../support/wait-until';

const spawnIdle = () => startChild('idle', process.execPath, ['-e', 'setInterval(() => {}, 1000)']);

function component(name: string, probe?: () => Promise<boolean>): Supervised & { child: Child; starts: number } {
  const c = {
    name,
    child: spawnIdle(),
    starts: 0,
    current: () => c.child,
    restart: async () => {
      c.starts++;
      c.child = spawnIdle();
      return c.child;
    },
    probe,
  };
  return c;
}

const WAIT = { stepMs: 20 };

let live: Supervisor[] = [];
let children: (() => Child)[] = [];
afterEach(async () => {
  for (const s of live) s.stop();
  for (const c of children) await c().stop('SIGKILL');
  live = [];
  children = [];
});

test('a component that dies is started again after a backoff, the others untouched, with a line saying what happened', async () => {
  const lines: string[] = [];
  const a = component('worker');
  const b = component('gateway');
  children.push(
    () => a.child,
    () => b.child,
  );
  const s = new Supervisor([a, b], { log: (l) => lines.push(l), backoffBaseMs: 10 });
  live.push(s);
  s.start();
  const firstB = b.child;
  a.child.proc.kill('SIGKILL');
  await waitUntil('the worker started again', () => a.starts === 1 && lines.includes('worker is running again'), WAIT);
  expect(lines[0]).toBe('worker was killed by SIGKILL; restarting it in 10 ms (restart 1 of at most 5 a minute)');
  expect(b.child).toBe(firstB);
  // The new process is watched too.
  a.child.proc.kill('SIGTERM');
  await waitUntil(
    'a second restart of the worker',
    () => a.starts,
    (n) => n === 2,
    WAIT,
  );
  expect(lines).toContain('worker was killed by SIGTERM; restarting it in 20 ms (restart 2 of at most 5 a minute)');
  expect(s.restartCount('worker')).toBe(2);
});

test('a component that stops answering its health check (frozen) is killed and started again', async () => {
  const lines: string[] = [];
  let healthy = true;
  const a = component('engine', async () => healthy);
  children.push(() => a.child);
  const s = new Supervisor([a], {
    log: (l) => lines.push(l),
    probeEveryMs: 30,
    failuresBeforeRestart: 3,
    backoffBaseMs: 10,
  });
  live.push(s);
  s.start();
  const frozen = a.child;
  frozen.proc.kill('SIGSTOP');
  healthy = false;
  await waitUntil(
    'the frozen engine started again',
    () => a.starts,
    (n) => n === 1,
    WAIT,
  );
  healthy = true;
  expect(lines[0]).toBe('engine stopped answering (3 health checks failed in a row); killing it');
  expect(lines[1]).toMatch(/^engine was killed by SIGKILL; restarting it/);
  expect(frozen.proc.signalCode).toBe('SIGKILL');
});

test('more restarts than allowed within the window: the supervisor gives up, saying why', async () => {
  const a = component('redis');
  children.push(() => a.child);
  const s = new Supervisor([a], { log: () => undefined, maxRestarts: 2, windowMs: 60_000, backoffBaseMs: 1 });
  live.push(s);
  s.start();
  for (let i = 1; i <= 2; i++) {
    a.child.proc.kill('SIGKILL');
    await waitUntil(
      `restart ${i}`,
      () => a.starts,
      (n) => n === i,
      WAIT,
    );
  }
  a.child.proc.kill('SIGKILL');
  expect(await s.gaveUp).toBe('redis was killed by SIGKILL; it was restarted 2 times within 60 s: giving up');
  expect(a.starts).toBe(2);
});
