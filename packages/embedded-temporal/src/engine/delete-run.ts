// DeleteWorkflowExecution and retention remove runs the same way: from memory, the
// closed-run archive (and so from visibility) and the durable log. A run deleted while
// open is terminated first, as the real server does. Its workflow id then has no
// current run (a start with the id is new), even if older runs of the id remain.
// Known difference: after a restart, recovery makes the newest remaining run of the
// id current again (the log keeps no record of the deletion).
import type { Engine } from './engine';
import type { Execution } from './state';
import { terminateRun } from './lifecycle';

/** Forgets a run by key everywhere and queues the removal of its stored state. */
export function removeRun(eng: Engine, key: string): void {
  const [namespace, workflowId, runId] = key.split('\u0000');
  eng.forget(key);
  const curKey = `${namespace}\u0000${workflowId}`;
  if (eng.current.get(curKey) === runId) eng.current.delete(curKey);
  eng.addMutation({ op: 'delete', key: `h/${key}` });
}

export async function deleteRun(eng: Engine, e: Execution, identity?: string): Promise<void> {
  if (eng.isOpen(e)) {
    terminateRun(eng, e, 'Delete workflow execution', undefined, identity);
    // Written before it is forgotten: a run still waiting to be written would be written back.
    await eng.flush();
  }
  removeRun(eng, eng.key(e));
  await eng.flush();
}
