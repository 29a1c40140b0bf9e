// Which worker builds ran a run, recorded the way the real server does for workers
// that do not use worker versioning: the build on each task's started event, the
// run's most recent stamp, its auto-reset points (one per build that completed a
// workflow task: where `temporal workflow reset` can go back to) and the BuildIds
// search attribute (what task reachability and `BuildIds = '...'` queries read).
import type { Engine } from './engine';
import type { Execution, Payload } from './state';
import { tsFromMs } from '../proto';

export interface VersionStamp {
  buildId: string;
  useVersioning?: boolean;
}

export interface ResetPoint {
  binaryChecksum: string;
  buildId: string;
  runId: string;
  firstWorkflowTaskCompletedId: number;
  createTime: number;
  /** A reset to it would lose nothing it cannot redo: no child was running then. */
  resettable: boolean;
}

/** The real server's default limit.maxResetPoints. */
const MAX_RESET_POINTS = 20;
const VERSIONED_MODE = 2;
const UNVERSIONED = 'unversioned';
/** Identities remembered at most: each worker process polls under one of its own. */
const MAX_POLLERS = 1000;

const pollers = new WeakMap<Engine, Map<string, VersionStamp>>();

/**
 * Notes the build a worker polls with. A task is dispatched long after its poll
 * started, by whatever poll takes it, so the stamp is looked up by the poller's
 * identity when its started event is written.
 */
export function notePoller(eng: Engine, req: any): void {
  let byIdentity = pollers.get(eng);
  if (!byIdentity) pollers.set(eng, (byIdentity = new Map()));
  const identity: string = req.identity ?? '';
  const stamp = stampFromPoll(req);
  byIdentity.delete(identity);
  if (!stamp) return;
  byIdentity.set(identity, stamp);
  if (byIdentity.size > MAX_POLLERS) byIdentity.delete(byIdentity.keys().next().value!);
}

/** The stamp of the task started events of tasks handed to this worker. */
export function pollerStamp(eng: Engine, identity: string | undefined): VersionStamp | undefined {
  return pollers.get(eng)?.get(identity ?? '');
}

// Workers on worker deployments (versioning 3) get no stamp; the others' is their build.
function stampFromPoll(req: any): VersionStamp | undefined {
  const options = req.deploymentOptions;
  if (options?.workerVersioningMode === VERSIONED_MODE && options.deploymentName) return undefined;
  const caps = req.workerVersionCapabilities;
  if (!caps?.buildId || (caps.useVersioning && caps.deploymentSeriesName)) return undefined;
  return caps.useVersioning ? { buildId: caps.buildId, useVersioning: true } : { buildId: caps.buildId };
}

/** What a completed workflow task tells about the build that ran it. */
export function recordCompletedTask(eng: Engine, e: Execution, req: any, completedEventId: number): void {
  const stamp: VersionStamp | undefined = req.workerVersionStamp ?? undefined;
  e.workerVersionStamp = stamp?.buildId || stamp?.useVersioning ? stamp : undefined;
  const buildId: string = req.deploymentOptions?.buildId || stamp?.buildId || '';
  const binaryChecksum: string = req.binaryChecksum ?? '';
  const points = e.resetPoints ?? [];
  const added = !points.some((p) => p.binaryChecksum === binaryChecksum && p.buildId === buildId);
  if (added) {
    const resettable = Object.keys(e.children).length === 0;
    points.push({
      binaryChecksum,
      buildId,
      runId: e.runId,
      firstWorkflowTaskCompletedId: completedEventId,
      createTime: eng.now(),
      resettable,
    });
    e.resetPoints = points.slice(-MAX_RESET_POINTS);
  }
  setList(eng, e, 'BuildIds', buildIds(readList(e, 'BuildIds'), stamp));
  if (added && binaryChecksum) {
    setList(eng, e, 'BinaryChecksums', e.resetPoints!.map((p) => p.binaryChecksum).filter(Boolean));
  }
}

// The unversioned sentinel first, then every build seen, each once.
function buildIds(existing: string[], stamp: VersionStamp | undefined): string[] {
  const out = stamp?.useVersioning ? [] : [UNVERSIONED];
  const own = stamp
    ? stamp.buildId
      ? `${stamp.useVersioning ? 'versioned' : UNVERSIONED}:${stamp.buildId}`
      : UNVERSIONED
    : '';
  for (const v of existing) if (v !== UNVERSIONED && !v.startsWith('assigned:') && !v.startsWith('pinned')) out.push(v);
  if (own && !existing.includes(own)) out.push(own);
  return out;
}

function readList(e: Execution, name: string): string[] {
  const p = e.searchAttributes?.[name];
  if (!p?.data?.length) return [];
  try {
    const v = JSON.parse(Buffer.from(p.data).toString('utf8'));
    return Array.isArray(v) ? v.filter((x) => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

function setList(eng: Engine, e: Execution, name: string, values: string[]): void {
  const before = readList(e, name);
  if (before.length === values.length && before.every((v, i) => v === values[i])) return;
  const payload: Payload = {
    metadata: { encoding: Buffer.from('json/plain'), type: Buffer.from('KeywordList') },
    data: Buffer.from(JSON.stringify(values)),
  };
  e.searchAttributes = { ...(e.searchAttributes ?? {}), [name]: payload };
  eng.markDirty(e);
}

/** DescribeWorkflowExecution's autoResetPoints. */
export function resetPointsToWire(e: Execution): object | undefined {
  if (!e.resetPoints?.length) return undefined;
  return {
    points: e.resetPoints.map((p) => ({
      binaryChecksum: p.binaryChecksum,
      buildId: p.buildId,
      runId: p.runId,
      firstWorkflowTaskCompletedId: p.firstWorkflowTaskCompletedId,
      createTime: tsFromMs(p.createTime),
      resettable: p.resettable,
    })),
  };
}
