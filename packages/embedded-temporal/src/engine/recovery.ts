// Rebuilding the engine from durable state after a restart: runs, their pending
// tasks, timers (at their original absolute deadlines) and unfinished effects.
import type { Engine } from './engine';
import type { Execution } from './state';
import type { Mutation, RecoveredEntry } from '../storage/store';
import {
  fromJsonBuffer,
  historyBatch,
  namespaceValue,
  owned,
  packHistory,
  restoreExecution,
  serializeExecution,
} from './persistence';
import type { NamespaceRecord } from './namespaces';
import { armRunTimers } from './create-run';
import { armTimer } from './timers';
import { armActivity } from './activities';
import { recoverWorkflowTask, scheduleWorkflowTask } from './workflow-tasks';
import { runEffect } from './effects';
import { recoverAdmittedUpdates } from './updates';
import { EventType } from '../proto';

export function recoverEngine(eng: Engine, state: Map<string, RecoveredEntry>): void {
  for (const [key, entry] of state) {
    if (key.startsWith('n/') && entry.value) {
      const ns = fromJsonBuffer<NamespaceRecord>(entry.value);
      eng.namespaces.set(ns.name, ns);
    }
  }
  const runs: Execution[] = [];
  for (const [key, entry] of state) {
    if (!key.startsWith('h/') || !entry.value) continue;
    const e = restoreExecution(entry.value, entry.appends);
    eng.executions.set(eng.key(e), e);
    const side = eng.sideOf(e);
    side.persistedEvents = e.history.length;
    // Copies: the recovered buffers are views on the whole file's image.
    const history = eng.isOpen(e) ? entry.appends.map(owned) : [owned(Buffer.concat(entry.appends))];
    side.encoded = { state: owned(entry.value), history };
    runs.push(e);
    if (!eng.isOpen(e)) packHistory(e, history[0]);
  }
  // The current run of an id is its newest; runs of a chain start in order.
  runs.sort((a, b) => a.startTime - b.startTime);
  for (const e of runs) eng.current.set(`${e.namespace}\u0000${e.workflowId}`, e.runId);
  for (const e of runs) if (eng.isOpen(e)) rearm(eng, e);
  // All but the newest closed runs leave memory, as if they had closed in this process.
  for (const e of runs.filter((r) => !eng.isOpen(r)).sort((a, b) => (a.closeTime ?? 0) - (b.closeTime ?? 0)))
    eng.trackClosed(e);
  eng.evictClosed();
}

function rearm(eng: Engine, e: Execution): void {
  armRunTimers(eng, e);
  for (const id of Object.keys(e.timers)) armTimer(eng, e, id);
  for (const a of Object.values(e.activities)) armActivity(eng, e, a);
  const neverScheduled = !e.wft && !e.history.some((h) => h.eventType === EventType.WORKFLOW_TASK_SCHEDULED);
  if (neverScheduled && e.executionTime <= eng.now()) scheduleWorkflowTask(eng, e);
  else recoverWorkflowTask(eng, e);
  // Only a reset writes UpdateAdmitted events here, and no message brings their updates back.
  if (e.resetFrom) recoverAdmittedUpdates(eng, e);
  const key = eng.key(e);
  for (const eff of [...(e.pendingEffects ?? [])])
    queueMicrotask(() => runEffect(eng, key, eff.kind, eff.initiatedEventId));
}

/**
 * The whole live state as store mutations, for compaction: a snapshot taken
 * now (references to the runs' encoded forms and to archive entries, which
 * never change), read lazily as the compaction writes it out.
 */
export function liveState(eng: Engine): Iterable<Mutation> {
  const now: Mutation[] = [];
  for (const ns of eng.namespaces.values()) now.push({ op: 'put', key: `n/${ns.name}`, value: namespaceValue(ns) });
  for (const [key, e] of eng.executions) {
    const encoded = eng.side.get(key)?.encoded;
    const history = encoded?.history ?? [historyBatch(e.history)];
    for (const value of history) now.push({ op: 'append', key: `h/${key}`, value });
    now.push({ op: 'put', key: `h/${key}`, value: encoded?.state ?? serializeExecution(e) });
  }
  const archive = eng.archive;
  const archived = archive?.snapshot() ?? [];
  return (function* () {
    yield* now;
    for (const { key, entry } of archived) {
      const { state, history } = archive!.readRaw(entry);
      yield { op: 'append', key: `h/${key}`, value: history };
      yield { op: 'put', key: `h/${key}`, value: state };
    }
  })();
}
