// Every saved history of the service's workflows must replay against the
// current workflow code: a change that breaks determinism for runs already in
// flight fails here. Refresh with `UPDATE_HISTORIES=1 npx jest test/workflows`.
// Each replays twice: as a worker without tracing runs them, and with the
// tracing interceptors in the sandbox (OTEL_EXPORTER_OTLP_ENDPOINT set), so
// turning tracing on (or off) never breaks the runs in flight.
import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import pino from 'pino';
import { HISTORY_GENERATION, WORKFLOWS, workflowBundle } from './env';
import { workflowBundle as cachedBundle } from '../../src/worker/workflow-bundle';
import { WORKFLOW_TRACING_INTERCEPTORS } from '../../src/common/telemetry/worker-tracing';

// One folder per generation of workflow code; runs of every generation may still be in flight.
const dir = path.join(__dirname, 'histories');
const files = fs
  .readdirSync(dir, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.json'))
  .sort();

test('saved histories exist', () => {
  expect(files.length).toBeGreaterThanOrEqual(15);
});

test('the generation the workflow tests save into has histories, replayed with the others', () => {
  const current = files.filter((f) => f.startsWith(HISTORY_GENERATION + path.sep));
  expect(current.length).toBeGreaterThanOrEqual(15);
});

/** Each file's replay error (undefined: it replayed cleanly), by one replay worker for all of them (one per file costs a worker each). */
async function replayAll(
  options: Parameters<typeof Worker.runReplayHistories>[0],
): Promise<Map<string, Error | undefined>> {
  const histories = files.map((file) => ({
    workflowId: file,
    history: historyFromJSON(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'))),
  }));
  const results = new Map<string, Error | undefined>();
  for await (const r of Worker.runReplayHistories(options, histories)) results.set(r.workflowId, r.error);
  return results;
}

function expectClean(results: Map<string, Error | undefined>, file: string): void {
  expect(results.has(file)).toBe(true);
  expect(results.get(file)).toBeUndefined();
}

// The workflows' span sink (not called on replay, but the worker wants it registered).
const noSpans = { exporter: { export: { fn: () => undefined } } };
let plain = new Map<string, Error | undefined>();
let traced = new Map<string, Error | undefined>();

// Both replays run once, up front, with one worker each (a worker per history would cost a
// worker each); bundles come from the worker's on-disk cache. The tests below read the results.
const REPLAY_ALL_MS = 180_000;
beforeAll(async () => {
  plain = await replayAll({ workflowBundle: await workflowBundle() });
  const withTracing = await cachedBundle(
    { workflowsPath: WORKFLOWS, interceptorModules: [WORKFLOW_TRACING_INTERCEPTORS] },
    pino({ enabled: false }),
  );
  traced = await replayAll({ workflowBundle: withTracing, sinks: noSpans });
}, REPLAY_ALL_MS);

test.each(files)('%s replays cleanly', (file) => {
  expectClean(plain, file);
});

test.each(files)('%s replays cleanly with the tracing interceptors', (file) => {
  expectClean(traced, file);
});
