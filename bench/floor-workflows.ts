// The floors' workflows: the least the engine and the SDK worker need for what
// the MCP and DAG phases time, with no product code. Bundled only by the
// bench's floor worker (bench/floor.ts), on a task queue of its own.
import { executeChild, proxyActivities, workflowInfo } from '@temporalio/workflow';

/** [started, returned] of one activity, epoch ms on the worker's clock. */
export type Stamp = [number, number];

export interface FloorActivities {
  /** Returns at once. */
  floorStep(): Promise<Stamp>;
  /** One chat completion of the model at `baseUrl` (the bench's scripted model), its answer's text. */
  floorModelCall(baseUrl: string, message: string): Promise<string>;
}

const { floorStep, floorModelCall } = proxyActivities<FloorActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 1 },
});

/**
 * `calls` tool calls the way a run makes them: turn, tool, turn, ..., turn
 * (2 x calls + 1 activities, one after the other). Each call is two activity
 * hand-offs: the turn's end to the tool's start, the tool's end to the next turn's start.
 */
export async function floorToolCalls(calls: number): Promise<Stamp[]> {
  const steps = [await floorStep()];
  for (let k = 0; k < calls; k++) {
    steps.push(await floorStep());
    steps.push(await floorStep());
  }
  return steps;
}

/** A chain of `links` child workflows, each one activity; the next starts when one closes. Returns each child's activity start. */
export async function floorChain(links: number): Promise<number[]> {
  const starts: number[] = [];
  for (let k = 0; k < links; k++)
    starts.push(await executeChild(floorLink, { workflowId: `${workflowInfo().workflowId}-${k}` }));
  return starts;
}

export async function floorLink(): Promise<number> {
  return (await floorStep())[0];
}

/** The cost phase's floor: a one-turn agent at its barest, one activity calling the model. */
export async function floorModelTurn(baseUrl: string, message: string): Promise<string> {
  return floorModelCall(baseUrl, message);
}
