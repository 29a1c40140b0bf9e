// Rebuilding the engine from durable state after a restart: runs, their pending
// tasks, timers (at their original absolute deadlines) and unfinished effects.
import type { Engine } from './engine';
import type { Execution } from './state';
import type { Mutation, RecoveredEntry } from '../storage/store';
import { fromJsonBuffer, historyBatch, namespaceValue, packHistory, restoreExecution, serializeExecution } from './persistence';
import type { NamespaceRecord } from './namespaces';
import { armRunTimers } from './lifecycle';
import { armTimer } from './timers';
import { armActivity } from './activities';
import { recoverWorkflowTask, scheduleWorkflowTask } from './workflow-tasks';
import { runEffect } from './effects';
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
    eng.sideOf(e).persistedEvents = e.history.length;
    runs.push(e);
    if (!eng.isOpen(e)) packHistory(e);
  }
  // The current run of an id is its newest; runs of a chain start in order.
  runs.sort((a, b) => a.startTime - b.startTime);
  for (const e of runs) eng.current.set(`${e.namespace}\u0000${e.workflowId}`, e.runId);
  for (const e of runs) if (eng.isOpen(e)) rearm(eng, e);
}

function rearm(eng: Engine, e: Execution): void {
  armRunTimers(eng, e);
  for (const id of Object.keys(e.timers)) armTimer(eng, e, id);
  for (const a of Object.values(e.activities)) armActivity(eng, e, a);
  const neverScheduled = !e.wft && !e.history.some((h) => h.eventType === EventType.WORKFLOW_TASK_SCHEDULED);
  if (neverScheduled && e.executionTime <= eng.now()) scheduleWorkflowTask(eng, e);
  else recoverWorkflowTask(eng, e);
  const key = eng.key(e);
  for (const eff of [...(e.pendingEffects ?? [])]) queueMicrotask(() => runEffect(eng, key, eff.kind, eff.initiatedEventId));
}

/** The whole live state as store mutations, for compaction. */
export function* liveState(eng: Engine): Iterable<Mutation> {
  for (const ns of eng.namespaces.values()) yield { op: 'put', key: `n/${ns.name}`, value: namespaceValue(ns) };
  const runs = function* () {
    yield* eng.executions.values();
    for (const key of eng.archive?.keys() ?? []) yield eng.archive!.get(key)!;
  };
  for (const e of runs()) {
    const key = `h/${eng.key(e)}`;
    yield { op: 'append', key, value: historyBatch(e.history) };
    yield { op: 'put', key, value: serializeExecution(e) };
  }
}
