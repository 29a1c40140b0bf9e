// A release rolled out while agents run (docs/operations.md, "Upgrades without stopping agents"):
// workers of the new build start beside the old ones, the new build becomes the deployment's
// current version (new runs start there; sessions and the other long-lived records move there at
// their next task), runs pinned to an old build finish on its workers, and those workers are
// stopped once no run is pinned to their build any more.
import { readState, writeState, type ClusterState } from './state';
import { isAlive, stopPid } from './detached';
import { startWorker } from './topology';
import { runsPinnedTo, setCurrentVersion } from './versions';

export interface RollOutOptions {
  dir: string;
  /** The new release, checked out with its node_modules (e.g. a `git worktree` after `npm ci`). */
  releaseDir: string;
  buildId: string;
  workers: number;
  log: (line: string) => void;
}

function stateOf(dir: string): ClusterState {
  const state = readState(dir);
  if (!state) throw new Error(`no cluster is up in ${dir}`);
  return state;
}

/** Starts the new build's workers and makes it current. Runs in flight stay on their builds. */
export async function rollOut(opts: RollOutOptions): Promise<void> {
  const state = stateOf(opts.dir);
  if (state.deployment.currentBuildId === opts.buildId)
    throw new Error(`build ${opts.buildId} is already the current version of ${state.deployment.name}`);
  for (let i = 1; i <= opts.workers; i++) {
    const node = await startWorker(state, `worker-${opts.buildId}-${i}`, {
      buildId: opts.buildId,
      releaseDir: opts.releaseDir,
    });
    opts.log(`${node.name} (build ${opts.buildId}) started`);
  }
  await setCurrentVersion(state.temporalAddress, state.namespace, state.deployment.name, opts.buildId);
  state.deployment.currentBuildId = opts.buildId;
  writeState(state);
  opts.log(`build ${opts.buildId} is current: new runs start on it`);
}

/**
 * Stops the workers of every build but the current one once no run is pinned to their build,
 * checking every `stepMs`; gives up (leaving them running) after `timeoutMs`. A worker stopped
 * so (SIGTERM) drains: it takes no new task and hands back the calls it is running.
 */
export async function retireOldBuilds(
  dir: string,
  opts: { log: (line: string) => void; timeoutMs?: number; stepMs?: number },
): Promise<string[]> {
  const state = stateOf(dir);
  const { name, currentBuildId } = state.deployment;
  const old = state.nodes.filter((n) => n.role === 'worker' && n.buildId !== currentBuildId && isAlive(n.pid));
  const builds = [...new Set(old.map((n) => n.buildId!))];
  const end = Date.now() + (opts.timeoutMs ?? 24 * 3600_000);
  for (const build of builds) {
    for (let last = -1; ;) {
      const pinned = await runsPinnedTo(state.temporalAddress, state.namespace, name, build);
      if (!pinned) break;
      if (pinned !== last) opts.log(`build ${build}: ${pinned} run(s) still pinned to it`);
      last = pinned;
      if (Date.now() > end) throw new Error(`build ${build} still has ${pinned} run(s) pinned to it; its workers stay`);
      await new Promise((r) => setTimeout(r, opts.stepMs ?? 2000));
    }
    const workers = old.filter((n) => n.buildId === build);
    await Promise.all(workers.map((n) => stopPid(n.pid, 'SIGTERM', 30_000)));
    opts.log(`build ${build}: no run pinned to it; its workers stopped (${workers.map((n) => n.name).join(', ')})`);
  }
  return old.map((n) => n.name);
}
