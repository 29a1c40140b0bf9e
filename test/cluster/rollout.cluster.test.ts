// A release rolled out with runs in flight (Temporal Worker Versioning): runs started on build A
// finish on A's workers, untouched by build B's changed task workflow (which none of them could
// replay); runs started after the switch run on B; A's workers are stopped once no run is pinned
// to A. The cluster pass runs this file last (test/cluster/sequencer.js): A's workers are gone after it.
import fs from 'node:fs';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { waitUntil, withTemporal } from '../e2e/helpers';
import { isAlive } from '../../src/dev/cluster/detached';
import { retireOldBuilds, rollOut } from '../../src/dev/cluster/deploy';
import { runsPinnedTo } from '../../src/dev/cluster/versions';
import { clusterApi, clusterStack, clusterState } from './cluster';
import { B_MARKER, makeReleaseB } from './release';

jest.setTimeout(240_000);
const lb = clusterApi();
const ET = temporal.api.enums.v1.EventType;
let releaseDir: string | undefined;
afterAll(() => releaseDir && fs.rmSync(releaseDir, { recursive: true, force: true }));

/** The build a run is on (the server's record of it), and whether its history has a workflow task failure or a timer first. */
async function runOf(client: Client, taskId: string) {
  const handle = client.workflow.getHandle(taskId);
  const info = (await handle.describe()).raw.workflowExecutionInfo?.versioningInfo;
  const events = (await handle.fetchHistory()).events!;
  const commands = events.filter(
    (e) =>
      e.eventType === ET.EVENT_TYPE_TIMER_STARTED ||
      e.eventType === ET.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED ||
      e.eventType === ET.EVENT_TYPE_MARKER_RECORDED,
  );
  return {
    buildId: info?.deploymentVersion?.buildId,
    pinned: info?.behavior === temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED,
    taskFailures: events.filter((e) => e.eventType === ET.EVENT_TYPE_WORKFLOW_TASK_FAILED).length,
    timerFirst: commands[0]?.eventType === ET.EVENT_TYPE_TIMER_STARTED,
  };
}

test('build A’s runs finish on A, new runs start on B, and A’s workers are retired once none is pinned to A', async () => {
  const buildA = clusterState().deployment.currentBuildId;
  const workersA = clusterState().nodes.filter((n) => n.role === 'worker' && n.buildId === buildA && isAlive(n.pid));
  expect(workersA.length).toBeGreaterThan(0);
  // Two runs on A, each in a 20-second wait (a timer of the workflow) when B arrives.
  const inFlight: string[] = [];
  for (let i = 0; i < 2; i++) {
    const r = await lb('POST', '/', {
      body: { message: `[[tool name=wait args={"seconds":20}]] long run ${i}`, background: true },
    });
    expect(r.status).toBe(202);
    inFlight.push(r.json.task_id);
  }
  await withTemporal(clusterStack(), async (client) => {
    for (const id of inFlight) {
      // The server records a run's version once its first workflow task is done.
      const run = await waitUntil(
        `${id} on a build`,
        () => runOf(client, id),
        (r) => r.buildId !== undefined,
      );
      expect(run).toMatchObject({ buildId: buildA, pinned: true });
    }
  });

  releaseDir = makeReleaseB();
  const buildB = `b${Date.now()}`;
  await rollOut({ dir: clusterState().dir, releaseDir, buildId: buildB, workers: 2, log: () => undefined });

  // What retiring waits on: A's two runs are counted as pinned to A while they wait.
  const { temporalAddress, namespace, deployment } = clusterState();
  await waitUntil('A’s two runs counted as pinned to A', () =>
    runsPinnedTo(temporalAddress, namespace, deployment.name, buildA).then((n) => n === 2),
  );
  const fresh = await lb('POST', '/', { body: { message: 'after the rollout' } });
  expect(fresh.json).toMatchObject({ status: 'completed', output: 'You said: after the rollout' });
  for (const id of inFlight) {
    const done = await lb('GET', `/tasks/${id}/result?wait=60`);
    expect(done.json.status).toBe('completed');
  }
  await withTemporal(clusterStack(), async (client) => {
    // B's run did what only B's code does; A's runs never ran it (they would have failed a task on replay).
    expect(await runOf(client, fresh.json.task_id)).toEqual({
      buildId: buildB,
      pinned: true,
      taskFailures: 0,
      timerFirst: true,
    });
    for (const id of inFlight)
      expect(await runOf(client, id)).toEqual({ buildId: buildA, pinned: true, taskFailures: 0, timerFirst: false });
  });
  expect(B_MARKER).toContain('sleep');

  const retired = await retireOldBuilds(clusterState().dir, { log: () => undefined, stepMs: 500, timeoutMs: 120_000 });
  expect(retired.sort()).toEqual(workersA.map((n) => n.name).sort());
  for (const n of workersA) expect({ name: n.name, alive: isAlive(n.pid) }).toEqual({ name: n.name, alive: false });
  // Only B's workers are left, and they serve.
  const after = await lb('POST', '/', { body: { message: 'on B alone' } });
  expect(after.json).toMatchObject({ status: 'completed', output: 'You said: on B alone' });
});
