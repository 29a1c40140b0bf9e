// How each kind of tool call of the agent loop runs (workflows/tool-registry.ts
// names the kinds): a built-in as the runTool activity, a tool of the session's
// computer as the runComputerTool activity summarised by its name (`bash`...), `wait` as a durable
// timer, an MCP tool as the callMcpTool activity summarised `<server>/<tool>`
// in the Web UI, a datastore tool as the callDatastore activity summarised
// `datastore/<name>`, a web tool as the runWebTool activity summarised by its name (`web_fetch`),
// a browser tool as the runBrowserTool activity summarised by its name (`browser_click`), and a transfer to a handoff agent decided here, in the
// workflow. A failing tool is an error result for the model, never the run's
// failure; only cancellation goes through.
import { ActivityFailure, ApplicationFailure, isCancellation, proxyActivities, sleep } from '@temporalio/workflow';
import type { ActivityOptions } from '@temporalio/common';
import type { Activities } from '../activities';
import type { BlockEvent, DatastoreToolDef, McpServerConfig, TaskInput, ToolCall } from './types';
import { BUILTIN_TOOLS, MAIN_AGENT, MAX_WAIT_SECONDS, RegisteredTool } from './tool-registry';
import { capToolOutput } from './run-events';

export interface ToolOutcome {
  content: string;
  isError: boolean;
  /** The activity published the result itself. */
  published: boolean;
  /** The highest seq the call heard of. */
  lastSeq?: number;
  /** Events the call adds after its result (a handoff, files changed, a screenshot). */
  events?: BlockEvent[];
  /** The relay did not take what the call published. */
  relayLost?: true;
}

/** The context a call runs in: the task, its relay position, and the agent that has the conversation. */
export interface CallContext {
  producer: string;
  floor: number;
  agent: string | undefined;
  /** A transfer moves the conversation to this agent from the next turn on. */
  handOff(to: string): void;
}

/** A tool call's activity options: its time limit and attempts; retries 1 s apart, growing to 10 s. */
function toolOptions(
  heartbeatTimeoutMs: number,
  startToCloseTimeout: ActivityOptions['startToCloseTimeout'],
  maximumAttempts: number,
  nonRetryable: string[] = [],
): ActivityOptions {
  return {
    startToCloseTimeout,
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: {
      initialInterval: '1s',
      maximumInterval: '10s',
      maximumAttempts,
      nonRetryableErrorTypes: ['ToolBadInput', ...nonRetryable],
    },
  };
}

const builtinOptions = (heartbeatTimeoutMs: number) => toolOptions(heartbeatTimeoutMs, '5m', 3);

/**
 * An MCP call is retried for transport errors only (the activity answers a tool's own error
 * as a result); a call whose outcome is unknown after a crash is sent again at most once
 * (the activity counts the sends in its heartbeat details).
 */
const mcpOptions = (heartbeatTimeoutMs: number, callTimeoutMs: number) =>
  toolOptions(heartbeatTimeoutMs, callTimeoutMs, 5);

/**
 * A datastore call is retried for connection errors only (a query's own error is a result
 * for the model; a source that refuses the connection outright is DatastoreUnavailable).
 * The database stops the statement at its own time limit, well within this.
 */
const datastoreOptions = (heartbeatTimeoutMs: number) =>
  toolOptions(heartbeatTimeoutMs, '2m', 4, ['DatastoreUnavailable']);

/**
 * A computer call (bash, the editor, search) runs in the session's workspace. Retried for the
 * machinery's faults only; a call whose worker died mid-command is not run again: the activity
 * answers its retry "outcome unknown" from the workspace's record of the calls it started.
 */
const computerOptions = (heartbeatTimeoutMs: number, callTimeoutMs: number) =>
  toolOptions(heartbeatTimeoutMs, callTimeoutMs, 3);

/**
 * A web call (web_fetch, web_search) reads the web through the outbound policy. Retried for
 * network errors only (a timeout, a reset connection): an HTTP error status, a refusal of the
 * policy or the search provider's error is an answer the model reads. Reads have no side effect
 * worth guarding, so a call cut by a crash is simply made again.
 */
const webOptions = (heartbeatTimeoutMs: number) => toolOptions(heartbeatTimeoutMs, '3m', 3);

/**
 * A browser call acts on the session's browser context, which lives in the worker that runs it:
 * a call whose worker died is not run again (its page died with it, and a click may have
 * happened); the second attempt answers that the browser's state was lost.
 */
const browserOptions = (heartbeatTimeoutMs: number, callTimeoutMs: number) =>
  toolOptions(heartbeatTimeoutMs, callTimeoutMs, 2);

/** agent_files_changed for the files a call saved (workspace-relative), if any. */
function savedFiles(call: ToolCall, files: string[] | undefined): Pick<ToolOutcome, 'events'> {
  if (!files?.length) return {};
  return {
    events: [{ type: 'agent_files_changed', tool_call_id: call.id, created: files, modified: [], deleted: [] }],
  };
}

export class ToolCalls {
  private readonly builtins;
  private readonly computer;
  private readonly computerOptions: ActivityOptions;
  /**
   * The computer's calls of a run go one at a time, in the order the model made them: a command
   * never runs while the editor reads or writes the same workspace (a link it swapped in between
   * the editor's check of a path and its write could lead out of the workspace), and the shell's
   * directory and variables carry from one call to the next as in a terminal.
   */
  private computerQueue: Promise<unknown> = Promise.resolve();
  private readonly mcp;
  private readonly mcpOptions: ActivityOptions;
  private readonly datastoreOptions: ActivityOptions;
  private readonly datastores;
  private readonly web;
  private readonly webOptions: ActivityOptions;
  private readonly browser;
  private readonly browserOptions: ActivityOptions;
  /** browser_navigate calls of the run so far (limits.browserMaxPages). */
  private browserPages = 0;

  constructor(private readonly input: TaskInput) {
    const heartbeat = input.limits.modelHeartbeatTimeoutMs || 20_000;
    this.builtins = proxyActivities<Activities>(builtinOptions(heartbeat));
    this.computerOptions = computerOptions(heartbeat, input.limits.computerCallTimeoutMs ?? 11 * 60_000);
    this.computer = proxyActivities<Activities>(this.computerOptions);
    this.mcpOptions = mcpOptions(heartbeat, input.limits.mcpCallTimeoutMs ?? 5 * 60_000);
    this.mcp = proxyActivities<Activities>(this.mcpOptions);
    this.datastoreOptions = datastoreOptions(heartbeat);
    this.datastores = proxyActivities<Activities>(this.datastoreOptions);
    this.webOptions = webOptions(heartbeat);
    this.web = proxyActivities<Activities>(this.webOptions);
    this.browserOptions = browserOptions(heartbeat, input.limits.browserCallTimeoutMs ?? 90_000);
    this.browser = proxyActivities<Activities>(this.browserOptions);
  }

  async run(tool: RegisteredTool | undefined, call: ToolCall, ctx: CallContext): Promise<ToolOutcome> {
    if (!tool)
      return {
        content: `Error: no tool named ${JSON.stringify(call.name)} is offered`,
        isError: true,
        published: false,
      };
    try {
      switch (tool.kind) {
        case 'timer':
          return await this.timer(call);
        case 'handoff':
          return this.handoff(tool.agent, ctx);
        case 'mcp':
          return await this.mcpCall(tool.server, tool.tool, call, ctx);
        case 'datastore':
          return await this.datastoreCall(tool.def, call, ctx);
        case 'web':
          return await this.webCall(call, ctx);
        case 'browser':
          return await this.browserCall(call, ctx);
        case 'computer': {
          const turn = this.computerQueue.then(() => this.computerCall(call, ctx));
          this.computerQueue = turn.catch(() => undefined);
          return await turn;
        }
        default:
          return await this.builtin(call, ctx);
      }
    } catch (err) {
      if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
      const cause = err.cause instanceof ApplicationFailure ? err.cause.message : (err.cause?.message ?? err.message);
      return {
        content: capToolOutput(`Error: the tool failed: ${cause}`, this.input.limits.toolResultMaxChars),
        isError: true,
        published: false,
      };
    }
  }

  /** What every tool activity is told: the task, the call, its place on the relay, the model's limit. */
  private callFields(call: ToolCall, ctx: CallContext) {
    const { taskId, session } = this.input;
    return {
      taskId,
      session,
      producer: ctx.producer,
      floor: ctx.floor,
      call,
      maxChars: this.input.limits.toolResultMaxChars,
      ...(this.input.step && { tag: this.input.step.tag }),
    };
  }

  private async builtin(call: ToolCall, ctx: CallContext): Promise<ToolOutcome> {
    return publishedOutcome(await this.builtins.runTool(this.callFields(call, ctx)));
  }

  private async mcpCall(serverName: string, tool: string, call: ToolCall, ctx: CallContext): Promise<ToolOutcome> {
    const server = this.server(serverName);
    const options = { ...this.mcpOptions, summary: `${serverName}/${tool}` };
    const fields = { ...this.callFields(call, ctx), account: this.input.account, server, tool };
    return publishedOutcome(await this.mcp.callMcpTool.executeWithOptions(options, [fields]));
  }

  private async datastoreCall(def: DatastoreToolDef, call: ToolCall, ctx: CallContext): Promise<ToolOutcome> {
    const options = { ...this.datastoreOptions, summary: `datastore/${def.datastoreName}` };
    const fields = { ...this.callFields(call, ctx), account: this.input.account, def };
    return publishedOutcome(await this.datastores.callDatastore.executeWithOptions(options, [fields]));
  }

  private async computerCall(call: ToolCall, ctx: CallContext): Promise<ToolOutcome> {
    const options = { ...this.computerOptions, summary: call.name };
    const fields = {
      ...this.callFields(call, ctx),
      account: this.input.account,
      ...(this.input.limits.computerNetwork && { network: true as const }),
    };
    const r = await this.computer.runComputerTool.executeWithOptions(options, [fields]);
    const changed = r.files && r.files.created.length + r.files.modified.length + r.files.deleted.length > 0;
    return {
      ...publishedOutcome(r),
      ...(changed && { events: [{ type: 'agent_files_changed', tool_call_id: call.id, ...r.files! }] }),
    };
  }

  private async webCall(call: ToolCall, ctx: CallContext): Promise<ToolOutcome> {
    const fields = { ...this.callFields(call, ctx), account: this.input.account };
    const r = await this.web.runWebTool.executeWithOptions({ ...this.webOptions, summary: call.name }, [fields]);
    return { ...publishedOutcome(r), ...savedFiles(call, r.files) };
  }

  private async browserCall(call: ToolCall, ctx: CallContext): Promise<ToolOutcome> {
    const max = this.input.limits.browserMaxPages;
    if (call.name === 'browser_navigate' && max !== undefined && this.browserPages++ >= max)
      return {
        content: `Error: this run has opened ${max} pages, its limit (BROWSER_MAX_PAGES_PER_RUN); answer with what you have.`,
        isError: true,
        published: false,
      };
    const fields = { ...this.callFields(call, ctx), account: this.input.account };
    const r = await this.browser.runBrowserTool.executeWithOptions({ ...this.browserOptions, summary: call.name }, [
      fields,
    ]);
    const shots = (r.screenshots ?? []).map((path: string): BlockEvent => ({
      type: 'agent_screenshot',
      tool_call_id: call.id,
      path,
      ...(r.url && { url: r.url }),
    }));
    const files = savedFiles(call, r.files);
    return { ...publishedOutcome(r), events: [...(files.events ?? []), ...shots] };
  }

  private server(name: string): McpServerConfig {
    const server = this.input.request.mcpServers?.find((s) => s.name === name);
    // The registry only offers tools of the request's servers.
    if (!server) throw new Error(`no MCP server named ${name} in the request`);
    return server;
  }

  private handoff(to: string, ctx: CallContext): ToolOutcome {
    const from = ctx.agent ?? MAIN_AGENT;
    ctx.handOff(to);
    return {
      content: `Transferred the conversation to the ${to} agent.`,
      isError: false,
      published: false,
      events: [{ type: 'agent_handoff', from, to }],
    };
  }

  private async timer(call: ToolCall): Promise<ToolOutcome> {
    // Only `wait` is a timer tool today.
    let seconds: unknown;
    try {
      seconds = (JSON.parse(call.arguments || '{}') as { seconds?: unknown }).seconds;
    } catch {
      seconds = undefined;
    }
    if (typeof seconds !== 'number' || !(seconds >= 0)) {
      return {
        content: `Error: ${BUILTIN_TOOLS.wait.name} needs {"seconds": number}`,
        isError: true,
        published: false,
      };
    }
    const s = Math.min(seconds, MAX_WAIT_SECONDS);
    await sleep(s * 1000);
    return { content: `waited ${s} seconds`, isError: false, published: false };
  }
}

/** The outcome of a call whose activity published its result itself. */
function publishedOutcome(r: { content: string; isError: boolean; lastSeq: number; relayLost?: true }): ToolOutcome {
  return {
    content: r.content,
    isError: r.isError,
    published: true,
    lastSeq: r.lastSeq,
    ...(r.relayLost && { relayLost: r.relayLost }),
  };
}
