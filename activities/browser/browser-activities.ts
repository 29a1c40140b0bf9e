// One call of a browser tool (workflows/browser-tools.ts) as an activity the Web UI shows by the
// tool's name: the worker's BrowserService runs it in the session's own browser context, and the
// result is published on the relay as the call's own producer. A call runs at most once: its
// context lives in the worker that ran it, so a retry (that worker died, or stopped heartbeating)
// answers that the browser's state was lost instead of acting again on a fresh page.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityDeps } from '../index';
import { workspaceDir } from '../../src/common/config';
import { sessionWorkspace } from '../../src/common/workspaces/layout';
import {
  heartbeating,
  inputErrorResult,
  parseArguments,
  publishToolResult,
  type SessionToolInput,
  type SessionToolOutput,
} from '../tools/tool-activities';
import type { BrowserCallResult } from './browser-service';

/** One browser call: the tool call and the session whose browser context it acts in. */
export type RunBrowserToolInput = SessionToolInput;

/** Its answer, the files it saved (screenshots, downloads), and which of them are screenshots of which page. */
export interface RunBrowserToolOutput extends SessionToolOutput {
  /** The screenshots among them (workspace-relative). */
  screenshots?: string[];
  /** The page the screenshots show. */
  url?: string;
}

/** The worker's browser as the activity uses it (activities/browser/browser-service.ts; tests may fake it). */
export interface BrowserRunner {
  call(
    session: string,
    tool: string,
    args: Record<string, unknown>,
    opts: { signal: AbortSignal; workspaceFiles: string },
  ): Promise<BrowserCallResult>;
}

export const BROWSER_STATE_LOST =
  'Error: the worker running this browser call stopped before it answered, so the call may or may not have happened, and the pages and cookies of this session were lost with that worker. It was not run again: open the page again with browser_navigate and check before repeating an action.';

export function createBrowserActivities(deps: Pick<ActivityDeps, 'publisher' | 'config' | 'browser'>) {
  const root = workspaceDir(deps.config);
  return {
    async runBrowserTool(input: RunBrowserToolInput): Promise<RunBrowserToolOutput> {
      const ctx = Context.current();
      if (!deps.browser)
        throw ApplicationFailure.nonRetryable(
          'this worker runs no browser (BUILTIN_TOOLS leaves it out)',
          'ToolBadInput',
        );
      const browser = deps.browser;
      const call = async (): Promise<BrowserCallResult> =>
        browser.call(`${input.account}/${input.session}`, input.call.name, parseArguments(input.call.arguments), {
          signal: ctx.cancellationSignal,
          workspaceFiles: sessionWorkspace(root, input.account, input.session).files,
        });
      const r: BrowserCallResult =
        ctx.info.attempt > 1
          ? { text: BROWSER_STATE_LOST, isError: true }
          : await heartbeating(call).catch(async (err: unknown) => {
              // A cancelled task: the page was closed; the activity ends cancelled, not with a result.
              if (ctx.cancellationSignal.aborted) await ctx.cancelled;
              return inputErrorResult(err);
            });
      const isError = !!r.isError;
      const published = await publishToolResult(deps, input, r.text, isError);
      const shots = r.screenshots ?? [];
      return {
        ...published,
        isError,
        ...(r.files?.length && { files: r.files }),
        ...(shots.length && { screenshots: shots.map((s) => s.path), url: shots[0].url }),
      };
    },
  };
}
