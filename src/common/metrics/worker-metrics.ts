// The worker's metrics: what its activities did. Workflow code records nothing
// (it is replayed, and must stay deterministic); every observation here is
// made by an activity attempt as it ends, from its input and its outcome
// (activity-metrics.ts wraps the activities), so a replay never counts twice.
import { Counter, Histogram, type Registry } from 'prom-client';
import { BUCKETS, PREFIX } from './registry';
import type { TaskView, Usage } from '../../../workflows/types';

export type StepKind = 'model_turn' | 'tool_call';
export type ToolServer = 'builtin' | 'mcp' | 'computer';
export type Outcome = 'ok' | 'error';
type Price = { input: number; output: number };

export class WorkerMetrics {
  readonly stepSeconds: Histogram<'kind'>;
  readonly modelTokens: Counter<'model' | 'type'>;
  readonly modelCost: Counter<'model'>;
  readonly toolCalls: Counter<'server' | 'outcome'>;
  readonly retries: Counter<'activity'>;
  readonly queueWait: Histogram;
  readonly taskSeconds: Histogram<'status'>;
  readonly commands: Counter<'result'>;
  readonly commandSeconds: Histogram;
  readonly workspaceBytes: Histogram;
  readonly sandboxNetwork: Counter<'kind' | 'result'>;

  constructor(readonly registry: Registry) {
    const registers = [registry];
    this.stepSeconds = new Histogram({
      name: `${PREFIX}step_duration_seconds`,
      help: 'Duration of a step attempt: a model turn (the whole streamed answer) or a tool call (built-in or MCP), by kind.',
      labelNames: ['kind'],
      buckets: [...BUCKETS.step],
      registers,
    });
    this.modelTokens = new Counter({
      name: `${PREFIX}model_tokens_total`,
      help: 'Model tokens billed for completed model turns (every attempt of a turn counted), by model and type (prompt, completion).',
      labelNames: ['model', 'type'],
      registers,
    });
    this.modelCost = new Counter({
      name: `${PREFIX}model_cost_usd_total`,
      help: 'Cost of completed model turns in USD at MODEL_PRICES, by model.',
      labelNames: ['model'],
      registers,
    });
    this.toolCalls = new Counter({
      name: `${PREFIX}tool_calls_total`,
      help: "Tool call attempts run as activities, by server (builtin, mcp, computer: the session's bash, editor and search) and outcome (ok; error: an error result for the model, or a failed attempt).",
      labelNames: ['server', 'outcome'],
      registers,
    });
    this.retries = new Counter({
      name: `${PREFIX}activity_retries_total`,
      help: 'Activity attempts after the first (Temporal retrying a failed or lost attempt), by activity type.',
      labelNames: ['activity'],
      registers,
    });
    this.queueWait = new Histogram({
      name: `${PREFIX}task_queue_wait_seconds`,
      help: 'Time a task waited from its creation to its start (its turn in the session, a slot of its account), observed when it ends.',
      buckets: [...BUCKETS.task],
      registers,
    });
    ({
      commands: this.commands,
      commandSeconds: this.commandSeconds,
      workspaceBytes: this.workspaceBytes,
      sandboxNetwork: this.sandboxNetwork,
    } = computerMetrics(registers));
    this.taskSeconds = new Histogram({
      name: `${PREFIX}task_duration_seconds`,
      help: "Time from a task's creation to its end (queue wait included), by final status.",
      labelNames: ['status'],
      buckets: [...BUCKETS.task],
      registers,
    });
  }

  /** A computer call's end: its command (bash) counted by how it ended, and the workspace's size after a call that may change it. */
  computerCall(r: {
    command?: { exitCode: number | null; killed?: string; durationMs: number };
    workspaceBytes?: number;
  }) {
    if (r.command) {
      const { exitCode, killed, durationMs } = r.command;
      this.commands.inc({ result: killed ?? (exitCode === 0 ? 'exit_0' : 'exit_nonzero') });
      this.commandSeconds.observe(durationMs / 1000);
    }
    if (r.workspaceBytes !== undefined) this.workspaceBytes.observe(r.workspaceBytes);
  }

  /** A completed turn's tokens and their cost (no price: the model costs 0, as in the run's cost). */
  modelUsage(model: string, usage: Usage, price: Price | undefined): void {
    this.modelTokens.inc({ model, type: 'prompt' }, usage.promptTokens);
    this.modelTokens.inc({ model, type: 'completion' }, usage.completionTokens);
    if (price)
      this.modelCost.inc(
        { model },
        (usage.promptTokens * price.input + usage.completionTokens * price.output) / 1_000_000,
      );
  }

  /** A task's end: its queue wait (when it started at all) and its duration, from its final status document. */
  taskEnded(view: Pick<TaskView, 'status' | 'created_at' | 'started_at' | 'completed_at'>): void {
    const created = Date.parse(view.created_at);
    if (Number.isNaN(created)) return;
    const started = view.started_at ? Date.parse(view.started_at) : NaN;
    const ended = view.completed_at ? Date.parse(view.completed_at) : NaN;
    if (!Number.isNaN(started)) this.queueWait.observe(Math.max(0, started - created) / 1000);
    if (!Number.isNaN(ended)) this.taskSeconds.observe({ status: view.status }, Math.max(0, ended - created) / 1000);
  }
}

/** The metrics of sessions' computers: their commands and their workspaces' size. */
function computerMetrics(registers: Registry[]) {
  const commands = new Counter({
    name: `${PREFIX}sandbox_commands_total`,
    help: "Commands run in sessions' sandboxes (bash), by how they ended: exit_0, exit_nonzero, or what the sandbox ended them for (timeout, memory, processes, cpu, output, disk, cancel). A sandbox that failed to start counts in tool_calls_total{server=computer,outcome=error}.",
    labelNames: ['result'],
    registers,
  });
  const commandSeconds = new Histogram({
    name: `${PREFIX}sandbox_command_duration_seconds`,
    help: 'Duration of a command in a sandbox, from its start to its end.',
    buckets: [...BUCKETS.step],
    registers,
  });
  const workspaceBytes = new Histogram({
    name: `${PREFIX}workspace_bytes`,
    help: "A session's workspace size after each call that may change it (bash, the editor's edits), bytes; its quota is WORKSPACE_MAX_BYTES.",
    buckets: [2 ** 10, 2 ** 16, 2 ** 20, 2 ** 24, 2 ** 27, 2 ** 29, 2 ** 30, 2 ** 32],
    registers,
  });
  const sandboxNetwork = new Counter({
    name: `${PREFIX}sandbox_network_requests_total`,
    help: "Connections that commands with network (request computer.network) asked the outbound policy's proxy for, by kind (connect: a tunnel, https; http: a plain request) and result (allowed; refused by the policy; failed: the target could not be reached).",
    labelNames: ['kind', 'result'],
    registers,
  });
  return { commands, commandSeconds, workspaceBytes, sandboxNetwork };
}
