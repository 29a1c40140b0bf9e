// One call of a web tool (web_fetch, web_search: workflows/web-tools.ts) as an activity the Web UI
// shows by the tool's name. The worker builds the tools around the outbound policy
// (src/worker/web.ts); this only runs one and publishes its result. A tool answers what the model
// reads, errors included (an HTTP status, a refused address, the search provider's refusal); it
// throws only for a network failure worth another attempt, which Temporal retries.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityDeps } from '../index';
import { workspaceDir } from '../../src/common/config';
import { sessionWorkspace, type SessionWorkspace } from '../../src/common/workspaces/layout';
import {
  heartbeating,
  inputErrorResult,
  parseArguments,
  publishToolResult,
  type SessionToolInput,
  type SessionToolOutput,
} from '../tools/tool-activities';

/** One web call: the tool call and where it runs (the session's workspace takes what it saves). */
export type RunWebToolInput = SessionToolInput;

/** Its answer, and the files it saved in the session's workspace (a download, a long page's whole text). */
export type RunWebToolOutput = SessionToolOutput;

/** What a web tool answers. */
export interface WebAnswer {
  text: string;
  isError?: boolean;
  /** Files it saved in the workspace, workspace-relative. */
  files?: string[];
}

/** One web tool: the parsed arguments, the session's workspace (for files it saves), the task's cancellation. */
export type WebTool = (
  args: Record<string, unknown>,
  ws: SessionWorkspace,
  call: { signal: AbortSignal },
) => Promise<WebAnswer>;

export type WebTools = Readonly<Record<string, WebTool>>;

export function createWebActivities(deps: Pick<ActivityDeps, 'publisher' | 'config' | 'web'>) {
  const root = workspaceDir(deps.config);
  return {
    async runWebTool(input: RunWebToolInput): Promise<RunWebToolOutput> {
      const ctx = Context.current();
      const tool = deps.web?.[input.call.name];
      if (!tool)
        throw ApplicationFailure.nonRetryable(
          `this worker has no web tool named ${JSON.stringify(input.call.name)} (a search provider not configured here?)`,
          'ToolBadInput',
        );
      const ws = sessionWorkspace(root, input.account, input.session);
      const answer: WebAnswer = await heartbeating(async () =>
        tool(parseArguments(input.call.arguments), ws, { signal: ctx.cancellationSignal }),
      ).catch(inputErrorResult);
      // A cancelled task: the request was aborted; the activity ends cancelled, not with a result.
      if (ctx.cancellationSignal.aborted) await ctx.cancelled;
      const isError = !!answer.isError;
      const published = await publishToolResult(deps, input, answer.text, isError);
      return { ...published, isError, ...(answer.files?.length && { files: answer.files }) };
    },
  };
}
