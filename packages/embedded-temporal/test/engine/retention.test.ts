import pino from 'pino';
import { Clock } from '../../src/clock';
import { Engine } from '../../src/engine/engine';
import { MemoryStore } from '../../src/storage/store';
import { startRetention } from '../../src/engine/retention';
import { createRun } from '../../src/engine/create-run';
import { terminateRun } from '../../src/engine/lifecycle';

function engineWithRun(retentionMs: number) {
  const clock = new Clock();
  const eng = new Engine({ clock, logger: pino({ level: 'silent' }), store: new MemoryStore() });
  eng.ensureNamespace('default', retentionMs);
  const run = createRun(eng, {
    namespace: 'default',
    workflowId: 'wf',
    workflowType: 'T',
    taskQueue: 'q',
    runTimeoutMs: 0,
    executionTimeoutMs: 0,
    taskTimeoutMs: 10_000,
    requestId: 'r',
    backoffMs: 0,
    attempt: 1,
  });
  return { clock, eng, run };
}

test('closed runs past retention are removed from memory and store; open and recent ones stay', async () => {
  const { clock, eng, run } = engineWithRun(1000);
  const retention = startRetention(eng, 60_000);
  expect(retention.sweep()).toBe(0); // open
  terminateRun(eng, run, 'test', undefined);
  expect(retention.sweep()).toBe(0); // closed just now
  run.closeTime = eng.now() - 1001;
  expect(retention.sweep()).toBe(1);
  expect(eng.executions.size).toBe(0);
  expect(eng.currentRun('default', 'wf')).toBeUndefined();
  retention.stop();
  clock.stop();
});
