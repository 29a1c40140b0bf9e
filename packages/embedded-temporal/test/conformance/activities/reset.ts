// Activities for reset.engine.test.ts: each step counts its executions per workflow id, so a test
// sees which steps a reset ran again, and a test can hold a step's next execution until it lets
// it go (to reset to a point where the step is still running).
import { Context } from '@temporalio/activity';

const executions = new Map<string, number>();
const held = new Map<string, Promise<void>>();

/** How many times `name` ran for workflow `workflowId` (in this process). */
export function timesRun(workflowId: string, name: string): number {
  return executions.get(`${workflowId}/${name}`) ?? 0;
}

/** Holds the next execution of `name` for `workflowId` until the function returned is called. */
export function holdNextRun(workflowId: string, name: string): () => void {
  let release!: () => void;
  held.set(`${workflowId}/${name}`, new Promise<void>((resolve) => (release = resolve)));
  return release;
}

/** Records one execution of `name`; its result names the step and what the workflow had seen when it scheduled it. */
export async function step(name: string, seen: string[]): Promise<string> {
  const key = `${Context.current().info.workflowExecution?.workflowId}/${name}`;
  executions.set(key, (executions.get(key) ?? 0) + 1);
  const gate = held.get(key);
  held.delete(key);
  await gate;
  return seen.length ? `${name}(after ${seen.join(', ')})` : name;
}
