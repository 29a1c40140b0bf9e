// When a workflow continues as new: the one set of thresholds. Temporal warns at 10,240 events
// or 10 MB of history and stops a run at 51,200 events or 50 MB; every workflow here continues
// well before, so that a long life never nears either limit and a replay stays quick. Each
// workflow keeps the measures it has always used (a new measure would continue runs in flight at
// another point than their histories did, which replay refuses).
import { workflowInfo } from '@temporalio/workflow';

export const HISTORY_BUDGET = {
  /** A run, a DAG step, a session, the account's slots: events of history. */
  events: 2000,
  /** A run and a DAG step, which carry model answers and tool results: bytes of history. */
  bytes: 4 * 1024 * 1024,
  /** The account registries (accounts, datastores), whose every entry is in their carried state: events. */
  registryEvents: 1000,
} as const;

/**
 * Whether this run should continue as new now: Temporal suggests it, or the history is past
 * `maxEvents` events (or `maxBytes` bytes, when given).
 */
export function historyPastBudget(maxEvents: number, maxBytes?: number): boolean {
  const info = workflowInfo();
  return (
    info.continueAsNewSuggested ||
    info.historyLength > maxEvents ||
    (maxBytes !== undefined && info.historySize > maxBytes)
  );
}
