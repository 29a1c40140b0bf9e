// The worker's activities, each wrapped to record its attempt: retries (an
// attempt after the first), step durations (model turns, tool calls), model
// tokens and cost, tool call outcomes, and a task's queue wait and duration
// when its end is published (publishEnd carries the final status document).
// One wrapper in the worker instead of a line in each activity: the
// activities stay free of metrics, and tests that build them directly record
// nothing.
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { modelForMode, type Config } from '../config';
import type { ModelTurnInput, ModelTurnOutput } from '../../../activities/model-turn';
import type { PublishEndInput } from '../../../activities/relay';
import type { RunComputerToolOutput } from '../../../activities/computer/computer-activities';
import type { StepKind, ToolServer, WorkerMetrics } from './worker-metrics';

type Activity = (...args: any[]) => Promise<unknown>;
type PriceConfig = Pick<Config, 'MODEL_FLASH' | 'MODEL_BASE' | 'MODEL_MAX' | 'MODEL_PRICES'>;

const STEP_KIND: Partial<Record<string, StepKind>> = {
  modelTurn: 'model_turn',
  runTool: 'tool_call',
  callMcpTool: 'tool_call',
  runComputerTool: 'tool_call',
};
const TOOL_SERVER: Partial<Record<string, ToolServer>> = {
  runTool: 'builtin',
  callMcpTool: 'mcp',
  runComputerTool: 'computer',
};

/** The running attempt's number (1 for the first); Temporal's activity context by default. */
export type AttemptOf = () => number;
const currentAttempt: AttemptOf = () => Context.current().info.attempt;

/** The same activities, each recording its attempts in `metrics`. */
export function instrumentActivities<T extends Record<string, Activity>>(
  activities: T,
  metrics: WorkerMetrics,
  config: PriceConfig,
  attemptOf: AttemptOf = currentAttempt,
): T {
  const out: Record<string, Activity> = {};
  for (const [name, fn] of Object.entries(activities)) out[name] = instrument(name, fn, metrics, config, attemptOf);
  return out as T;
}

function instrument(
  name: string,
  fn: Activity,
  metrics: WorkerMetrics,
  config: PriceConfig,
  attemptOf: AttemptOf,
): Activity {
  const kind = STEP_KIND[name];
  const server = TOOL_SERVER[name];
  return async (...args: unknown[]) => {
    if (attemptOf() > 1) metrics.retries.inc({ activity: name });
    const stop = kind ? metrics.stepSeconds.startTimer({ kind }) : undefined;
    try {
      const result = await fn(...args);
      try {
        succeeded(name, args[0], result, metrics, config);
      } catch {
        // An outcome the metrics cannot read (a shape they do not expect) never fails the activity.
      }
      return result;
    } catch (err) {
      // A cancelled call (the task was cancelled, the worker is stopping) is not the tool's failure.
      if (server && !(err instanceof CancelledFailure)) metrics.toolCalls.inc({ server, outcome: 'error' });
      throw err;
    } finally {
      stop?.();
    }
  };
}

/** What a successful attempt tells, by activity. */
function succeeded(name: string, input: unknown, result: unknown, metrics: WorkerMetrics, config: PriceConfig): void {
  const server = TOOL_SERVER[name];
  if (server) {
    metrics.toolCalls.inc({ server, outcome: (result as { isError?: boolean }).isError ? 'error' : 'ok' });
    if (name === 'runComputerTool') metrics.computerCall(result as RunComputerToolOutput);
  } else if (name === 'modelTurn') {
    // The turn's usage counts every attempt of it once (a retry's output carries the earlier attempts' tokens).
    const model = modelForMode(config, (input as ModelTurnInput).mode);
    metrics.modelUsage(model, (result as ModelTurnOutput).usage, config.MODEL_PRICES[model]);
  } else if (name === 'publishEnd') {
    metrics.taskEnded((input as PublishEndInput).view);
  }
}
