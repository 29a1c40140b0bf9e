// The floors' worker (bench/dag.ts) on a real engine (the ENGINE's dev server): its own process, the
// bare workflows bundled from bench/floor-workflows.ts, one sample per tool call and per chain link.
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startFloor, type Floor } from '../../bench/dag';
import { localEnv } from '../engine';

jest.setTimeout(120_000);

let env: TestWorkflowEnvironment;
let floor: Floor;

beforeAll(async () => {
  env = await localEnv();
  floor = await startFloor({
    ...process.env,
    TEMPORAL_ADDRESS: env.address,
    TEMPORAL_NAMESPACE: 'default',
    WORKER_NICE: '0',
  });
});

afterAll(async () => {
  await floor?.stop();
  await env?.teardown();
});

test('a floor tool-call run gives one sample per call, each the time of two activity hand-offs', async () => {
  const samples = await floor.toolCalls('e2e-calls', 3);
  expect(samples).toHaveLength(3);
  for (const ms of samples) expect(ms).toBeGreaterThan(0);
});

test('a floor chain gives one sample per link after the first, from the engine record of each close', async () => {
  const samples = await floor.chain('e2e-chain', 4);
  expect(samples).toHaveLength(3);
  // The engine stamps a close in whole milliseconds: a sample may come out a fraction below zero.
  for (const ms of samples) expect(ms).toBeGreaterThan(-1);
});

test('stopping it ends its process', async () => {
  const other = await startFloor({ ...process.env, TEMPORAL_ADDRESS: env.address, WORKER_NICE: '0' });
  await other.stop();
  expect(other.child.exitCode !== null || other.child.signalCode !== null).toBe(true);
});
