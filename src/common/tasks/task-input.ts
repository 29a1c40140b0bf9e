// What a task starts with, built in one place for the two that start tasks:
// the gateway (a run request) and the activity of a schedule's run (the
// request the schedule keeps). The deployment's settings (prices, caps,
// tools, timeouts) are read when the task starts, not when it was asked for.
import type { Config } from '../config';
import { modelForMode } from '../config';
import type { CallbackConfig, ScheduledSummary, TaskInput, TaskLimits, TaskRequest } from '../../../workflows/types';
import { SEARCH_ATTRIBUTES } from '../../../workflows/types';
import type { RunRequest } from '../contracts/run-request';
import { agentsOf, mcpServersOf } from './request-tools';
import { expandToolGroups, usesBrowser, usesComputer } from '../../../workflows/tool-registry';

export type TaskInputConfig = Pick<
  Config,
  | 'MAX_RUNNING_TASKS_PER_ACCOUNT'
  | 'MODEL_HEARTBEAT_TIMEOUT_MS'
  | 'MODEL_PRICES'
  | 'MODEL_FLASH'
  | 'MODEL_BASE'
  | 'MODEL_MAX'
  | 'MAX_STEPS_DEFAULT'
  | 'MAX_DURATION_DEFAULT'
  | 'BUILTIN_TOOLS'
  | 'APPROVAL_REQUIRED_TOOLS'
  | 'APPROVAL_TIMEOUT_S'
  | 'MCP_CALL_TIMEOUT_MS'
  | 'MCP_CONNECT_TIMEOUT_MS'
  | 'TOOL_RESULT_MAX_CHARS'
  | 'BASH_TIMEOUT_MAX_S'
  | 'BROWSER_MAX_PAGES_PER_RUN'
  | 'BROWSER_NAVIGATION_TIMEOUT_S'
>;

/** A browser call's time limit beyond two navigations (an action that starts one, then its snapshot): the launch, the files. */
const BROWSER_CALL_MARGIN_S = 30;

/** A computer call's time limit beyond its longest command: the sandbox's start, the workspace's checks, the result's publication. */
const COMPUTER_CALL_MARGIN_S = 60;

export interface TaskStart {
  taskId: string;
  account: string;
  /** The account's running-task limit (absent: the deployment's default). */
  maxRunning?: number;
  session: string;
  createdAt: string;
  callback?: CallbackConfig;
  /** See TaskAdmission.ownsTurn, TaskAdmission.lazySession and TaskAdmission.joinsSession. */
  ownsTurn?: boolean;
  lazySession?: boolean;
  joinsSession?: boolean;
  schedules?: ScheduledSummary[];
}

export function taskInput(config: TaskInputConfig, req: RunRequest, start: TaskStart): TaskInput {
  return {
    taskId: start.taskId,
    account: start.account,
    session: start.session,
    createdAt: start.createdAt,
    request: taskRequest(req, start),
    limits: taskLimits(config, req),
    admission: {
      background: req.background,
      // "steer" that found no run to steer into, and "interrupt" once the running run is ended, queue as usual.
      multitask: req.multitask === 'reject' ? 'reject' : 'queue',
      slots: req.background
        ? { limit: start.maxRunning ?? config.MAX_RUNNING_TASKS_PER_ACCOUNT, releasedByEnd: true }
        : undefined,
      ownsTurn: !!start.ownsTurn,
      ...(start.ownsTurn && start.lazySession && { lazySession: true }),
      ...(start.joinsSession && { joinsSession: true }),
    },
  };
}

/** What the caller asked, as the run takes it (TaskInput.request). */
function taskRequest(req: RunRequest, start: TaskStart): TaskRequest {
  const mcpServers = mcpServersOf(req);
  const agents = agentsOf(req);
  return {
    message: req.message,
    system: req.system,
    rules: req.rules,
    mode: req.mode,
    streamTokens: !!(req.streaming_tokens || req.streaming),
    metadata: req.metadata,
    // Absent when the request has none: older runs' inputs stay as they were.
    ...(mcpServers && { mcpServers }),
    ...(agents && { agents }),
    ...(req.require_approval && {
      requireApproval: {
        tools: req.require_approval.tools,
        onTimeout: req.require_approval.on_timeout,
        ...(req.require_approval.timeout !== undefined && { timeout: req.require_approval.timeout }),
      },
    }),
    ...(req.datastores?.length && { datastores: req.datastores }),
    ...(req.queries?.length && { queries: req.queries }),
    ...(start.callback && { callback: start.callback }),
    ...(start.schedules?.length && { schedules: start.schedules }),
    ...(req.workflows?.length && { workflows: req.workflows }),
    ...(req.final_output && {
      finalOutput: { name: req.final_output.name, strict: req.final_output.strict, schema: req.final_output.schema },
    }),
  };
}

/** The deployment's settings for the run as it starts, and the caller's caps (TaskInput.limits). */
function taskLimits(config: TaskInputConfig, req: RunRequest): TaskLimits {
  const maxSeconds = req.max_duration ?? config.MAX_DURATION_DEFAULT;
  const tools = req.tools ? expandToolGroups(req.tools) : config.BUILTIN_TOOLS;
  return {
    maxSteps: req.max_steps ?? config.MAX_STEPS_DEFAULT,
    ...(req.max_cost !== undefined && { maxCost: req.max_cost }),
    // Absent without a limit: the run then starts no deadline timer (its commands stay as they were).
    ...(maxSeconds && { maxDurationMs: maxSeconds * 1000 }),
    tools,
    // Only with the computer's tools: older runs' inputs stay as they were.
    ...(usesComputer(tools) && { computerCallTimeoutMs: (config.BASH_TIMEOUT_MAX_S + COMPUTER_CALL_MARGIN_S) * 1000 }),
    // Only when asked: older runs' inputs stay as they were (the gateway checked it is offered).
    ...(req.computer?.network && { computerNetwork: true as const }),
    // Only with the browser's tools: older runs' inputs stay as they were.
    ...(usesBrowser(tools) && {
      browserMaxPages: config.BROWSER_MAX_PAGES_PER_RUN,
      browserCallTimeoutMs: (config.BROWSER_NAVIGATION_TIMEOUT_S * 2 + BROWSER_CALL_MARGIN_S) * 1000,
    }),
    // Only when the deployment gates tools: older runs' inputs stay as they were.
    ...(config.APPROVAL_REQUIRED_TOOLS.length && { approvalTools: config.APPROVAL_REQUIRED_TOOLS }),
    ...(gatesPossible(config, req) && { approvalTimeoutMs: config.APPROVAL_TIMEOUT_S * 1000 }),
    toolResultMaxChars: config.TOOL_RESULT_MAX_CHARS,
    modelHeartbeatTimeoutMs: config.MODEL_HEARTBEAT_TIMEOUT_MS,
    // Only with MCP servers: older runs' inputs stay as they were.
    ...(mcpServersOf(req) && {
      mcpCallTimeoutMs: config.MCP_CALL_TIMEOUT_MS,
      mcpConnectTimeoutMs: config.MCP_CONNECT_TIMEOUT_MS,
    }),
    price: config.MODEL_PRICES[modelForMode(config, req.mode)],
  };
}

/** Whether any call of the run may wait for a decision (the deployment's gates, the request's, an MCP server's). */
function gatesPossible(config: TaskInputConfig, req: RunRequest): boolean {
  if (config.APPROVAL_REQUIRED_TOOLS.length || req.require_approval) return true;
  return !!mcpServersOf(req)?.some((s) => s.requireApproval);
}

/** The memo and search attributes of a task's workflow: visibility lists tasks by them (GET /tasks). */
export function taskStartMeta(input: TaskInput, extra: { requestHash?: string; schedule?: string } = {}) {
  return {
    memo: {
      account: input.account,
      session: input.session,
      preview: input.request.message.slice(0, 200),
      createdAt: input.createdAt,
      ...(extra.requestHash && { requestHash: extra.requestHash }),
      ...(extra.schedule && { schedule: extra.schedule }),
      // The first run of a session opened lazily (src/common/sessions/lazy-sessions.ts).
      ...(input.admission.lazySession && { lazySession: true }),
    },
    searchAttributes: {
      [SEARCH_ATTRIBUTES.status]: ['queued'],
      [SEARCH_ATTRIBUTES.account]: [input.account],
      [SEARCH_ATTRIBUTES.session]: [input.session],
      ...(extra.schedule && { [SEARCH_ATTRIBUTES.schedule]: [extra.schedule] }),
      ...(input.admission.lazySession && { [SEARCH_ATTRIBUTES.opensSession]: [input.session] }),
    },
  };
}
