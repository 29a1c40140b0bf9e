// MCP tool servers (SPEC 2.2): listing a server's tools at a run's start, and
// one tool call of the agent loop. Sessions come from the worker's pool
// (activities/mcp/pool.ts); every request goes through the outbound policy.
//
// A call heartbeats every second (so a cancelled task aborts the call within
// about that: the SDK sends the server notifications/cancelled) and on each MCP
// progress notification. Its heartbeat details count how often the call was
// sent: a call whose outcome is unknown after a crash (sent, no answer) is sent
// once more at most, then the model is told the outcome is unknown.
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import type { ActivityDeps } from '../index';
import type { EventTag } from '../../src/common/relay/events';
import type { McpServerConfig, ToolCall } from '../../workflows/types';
import type { ListedMcpTools } from '../../workflows/tool-registry';
import { callFailure, classifyMcpError, errorText, unavailable } from './errors';
import type { PooledClient } from './pool';
import { toolResultText } from './results';
import { parseArguments, publishToolResult } from '../tools/tool-activities';
import { ToolInputError } from '../tools/builtin';
import { noticeRetry } from '../retry-notice';

export interface ListMcpToolsInput {
  account: string;
  server: McpServerConfig;
}

export interface CallMcpToolInput {
  taskId: string;
  session: string;
  account: string;
  /** The call's producer id on the relay (`s<step>:t<index>`). */
  producer: string;
  floor: number;
  server: McpServerConfig;
  /** The tool's own name on its server. */
  tool: string;
  /** The call as the model made it (under the tool's public name). */
  call: ToolCall;
  maxChars: number;
  /** A DAG step's run: its events carry the workflow and step ids. */
  tag?: EventTag;
}

/** What a call's heartbeats carry across attempts. */
interface CallBeat {
  /** Attempts that sent the call to the server. */
  sends: number;
  progress?: Progress;
}

/** A call is sent at most this often: the first time, and once more when its outcome is unknown. */
const MAX_SENDS = 2;
const HEARTBEAT_MS = 1000;
/** Pages of tools/list read at most (a server that pages forever does not hang the run). */
const MAX_PAGES = 50;

// eslint-disable-next-line max-lines-per-function -- the factory's body is the MCP activities and their helpers, closures over deps, each short
export function createMcpActivities(deps: ActivityDeps) {
  const connectTimeout = () => {
    // No heartbeat goes out before the call is sent (see callMcpTool), so connecting must fit in the heartbeat timeout.
    const beat = Context.current().info.heartbeatTimeoutMs;
    return beat
      ? Math.min(deps.config.MCP_CONNECT_TIMEOUT_MS, Math.floor(beat * 0.8))
      : deps.config.MCP_CONNECT_TIMEOUT_MS;
  };

  /** Runs `fn` on the pooled session; a session the server lost is opened again once (the request never ran). */
  async function withSession<T>(
    account: string,
    server: McpServerConfig,
    fn: (c: PooledClient) => Promise<T>,
  ): Promise<T> {
    for (let retried = false; ; retried = true) {
      try {
        return await deps.mcpPool.use(account, server, connectTimeout(), fn);
      } catch (err) {
        // A cancelled call leaves the session as it was: other runs' calls may share it.
        if (Context.current().cancellationSignal.aborted) throw err;
        const kind = classifyMcpError(err);
        if (kind === 'transport' || kind === 'lost-session' || kind === 'internal')
          deps.mcpPool.forget(account, server);
        if (kind !== 'lost-session' || retried) throw err;
      }
    }
  }

  return {
    async listMcpTools(input: ListMcpToolsInput): Promise<ListedMcpTools> {
      const { server } = input;
      try {
        const tools = await withSession(input.account, server, async ({ client }) => {
          const out: ListedMcpTools['tools'] = [];
          let cursor: string | undefined;
          for (let page = 0; page < MAX_PAGES; page++) {
            const r = await client.listTools(cursor ? { cursor } : undefined, {
              timeout: deps.config.MCP_CONNECT_TIMEOUT_MS,
            });
            out.push(
              ...r.tools.map((t) => ({
                name: t.name,
                description: t.description,
                inputSchema: t.inputSchema as Record<string, unknown>,
              })),
            );
            cursor = r.nextCursor;
            if (!cursor) break;
          }
          return out;
        });
        return { server: server.name, tools };
      } catch (err) {
        deps.logger.warn({ server: server.name, err: errorText(err, server) }, 'MCP server could not be listed');
        throw unavailable(err, server);
      }
    },

    async callMcpTool(
      input: CallMcpToolInput,
    ): Promise<{ content: string; isError: boolean; lastSeq: number; relayLost?: true }> {
      const ctx = Context.current();
      const sent = (ctx.info.heartbeatDetails as CallBeat | undefined)?.sends ?? 0;
      let outcome: { content: string; isError: boolean };
      if (sent >= MAX_SENDS) {
        outcome = {
          content: `Error: the outcome of this call is unknown: the server had it ${sent} times when the worker running it was lost, and it is not sent again`,
          isError: true,
        };
      } else {
        outcome = await send(ctx, input, sent).catch(async (err: unknown) => {
          if (err instanceof ApplicationFailure && !err.nonRetryable) {
            await noticeRetry(
              deps,
              ctx,
              {
                taskId: input.taskId,
                session: input.session,
                producer: input.producer,
                floor: input.floor,
                tag: input.tag,
              },
              { what: 'tool', tool: input.call.name },
              err,
            );
          }
          throw err;
        });
      }
      const r = await publishToolResult(deps, input, outcome.content, outcome.isError);
      return {
        content: r.content,
        isError: outcome.isError,
        lastSeq: r.lastSeq,
        ...(r.relayLost && { relayLost: r.relayLost }),
      };
    },
  };

  async function send(
    ctx: Context,
    input: CallMcpToolInput,
    sent: number,
  ): Promise<{ content: string; isError: boolean }> {
    let args: Record<string, unknown>;
    try {
      args = parseArguments(input.call.arguments);
    } catch (err) {
      if (err instanceof ToolInputError) return { content: `Error: ${err.message}`, isError: true };
      throw err;
    }
    const { server } = input;
    const beat: CallBeat = { sends: sent };
    let timer: NodeJS.Timeout | undefined;
    try {
      return await withSession(input.account, server, async ({ client }) => {
        beat.sends = sent + 1;
        // The first heartbeat of an attempt goes out at once: the count is on the server before the request is.
        ctx.heartbeat(beat);
        timer ??= setInterval(() => ctx.heartbeat(beat), HEARTBEAT_MS);
        const result = await client.callTool({ name: input.tool, arguments: args }, undefined, {
          signal: ctx.cancellationSignal,
          timeout: Math.max(1000, deps.config.MCP_CALL_TIMEOUT_MS - 1000),
          resetTimeoutOnProgress: false,
          onprogress: (progress) => {
            beat.progress = progress;
            ctx.heartbeat(beat);
          },
        });
        return toolResultText(result);
      });
    } catch (err) {
      if (ctx.cancellationSignal.aborted) throw new CancelledFailure('MCP tool call cancelled');
      const kind = classifyMcpError(err);
      if (kind === 'tool') return { content: `Error: ${errorText(err, server)}`, isError: true };
      if (kind === 'timeout')
        return {
          content: `Error: the tool did not answer within ${Math.round(deps.config.MCP_CALL_TIMEOUT_MS / 1000)} s`,
          isError: true,
        };
      if (kind === 'lost-session') throw ApplicationFailure.retryable(errorText(err, server), 'mcp_transport');
      throw callFailure(err, server, kind);
    } finally {
      if (timer) clearInterval(timer);
    }
  }
}
