// One call of a tool of the session's computer (bash, str_replace_editor, glob, grep) in the
// session's workspace (src/common/workspaces/layout.ts), as an activity the Web UI shows by the
// tool's name. The workflow decides which calls run; this only does the I/O.
//
// At most once: a call that changes the workspace (bash, the editor's edits) is recorded in the
// workspace's state folder before it starts (call-records.ts) and its result after it ends. A
// retry of a call whose record has a result answers that result again (the relay takes it once:
// the call is its producer); a retry of one that started and never ended (its worker died
// mid-command) is not run again: the model reads that its outcome is unknown, as for MCP calls.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityDeps } from '../index';
import type { ToolCall } from '../../workflows/types';
import { workspaceDir } from '../../src/common/config';
import { sessionWorkspace, type SessionWorkspace } from '../../src/common/workspaces/layout';
import type { WorkspaceUsage } from '../../src/common/workspaces/usage';
import {
  heartbeating,
  inputErrorResult,
  parseArguments,
  publishToolResult,
  type SessionToolInput,
} from '../tools/tool-activities';
import { type CallRecords, callRecords } from './call-records';
import { changedFiles, type FilesChanged, snapshotBytes, snapshotFiles } from './files-changed';
import type { CommandEnd, ToolAnswer } from './computer-tools';

export interface RunComputerToolInput extends SessionToolInput {
  /** The run allowed its commands network, through the outbound policy (request `computer.network`). */
  network?: true;
}

export interface RunComputerToolOutput {
  content: string;
  isError: boolean;
  lastSeq: number;
  relayLost?: true;
  /** What the call changed in the workspace (absent when it cannot change anything). */
  files?: FilesChanged;
  /** A command's end (bash): the worker's metrics count them. */
  command?: CommandEnd;
  /** The workspace's size after a call that may change it, bytes (the worker's metrics). */
  workspaceBytes?: number;
}

/** What one call did: the model's text, and for the calls that may change files, what they changed. */
interface CallResult {
  text: string;
  isError: boolean;
  files?: FilesChanged;
  command?: CommandEnd;
  workspaceBytes?: number;
}

export const OUTCOME_UNKNOWN =
  'Error: the outcome of this call is unknown: the worker running it stopped (a crash or a restart) before it answered, so it may have run completely, partly or not at all. It was not run again: look at the workspace before repeating it.';

/** The calls that may change the workspace: recorded, at most once, and their changes reported. */
export function changesWorkspace(tool: string, args: Record<string, unknown>): boolean {
  if (tool === 'bash') return true;
  return tool === 'str_replace_editor' && args.command !== 'view';
}

export function createComputerActivities(deps: Pick<ActivityDeps, 'publisher' | 'config' | 'computer'>) {
  const root = workspaceDir(deps.config);
  return {
    async runComputerTool(input: RunComputerToolInput): Promise<RunComputerToolOutput> {
      const ctx = Context.current();
      const tool = deps.computer?.[input.call.name];
      if (!tool)
        throw ApplicationFailure.nonRetryable(
          `this worker has no computer tool named ${JSON.stringify(input.call.name)}`,
          'ToolBadInput',
        );
      const ws = sessionWorkspace(root, input.account, input.session);
      // The same across the call's retries: the key of its record, and its output files' name.
      const { workflowExecution, activityId } = ctx.info;
      const key = `${workflowExecution?.workflowId ?? input.taskId}/${activityId}`;
      const r = await heartbeating(() =>
        runCall(ws, input.call, key, (args, usage) =>
          tool(args, ws, { id: key, signal: ctx.cancellationSignal, network: !!input.network, usage }),
        ),
      );
      // A cancelled task: its command was killed; the activity ends cancelled, not with a result.
      if (ctx.cancellationSignal.aborted) await ctx.cancelled;
      const published = await publishToolResult(deps, input, r.text, r.isError);
      const { text: _text, ...outcome } = r;
      return { ...published, ...outcome };
    },
  };
}

/** Runs the call once: a recorded result answered again, a started one answered "unknown". */
async function runCall(
  ws: SessionWorkspace,
  call: ToolCall,
  key: string,
  run: (args: Record<string, unknown>, usage?: WorkspaceUsage) => Promise<ToolAnswer>,
): Promise<CallResult> {
  let args: Record<string, unknown>;
  try {
    args = parseArguments(call.arguments);
  } catch (err) {
    return inputErrorResult(err);
  }
  if (!changesWorkspace(call.name, args)) return attempt(() => run(args));
  const records: CallRecords = callRecords(ws.state);
  const earlier = await records.read(key);
  if (earlier?.result) return earlier.result as CallResult;
  if (earlier) return { text: OUTCOME_UNKNOWN, isError: true };
  await records.start(key, call.name);
  const before = await snapshotFiles(ws.files);
  // The walk just made is the workspace's size for the tool too (bash's quota): not walked again.
  const r = await attempt(() => run(args, { bytes: snapshotBytes(before), files: before.size }));
  const after = await snapshotFiles(ws.files);
  const result: CallResult = { ...r, files: changedFiles(before, after), workspaceBytes: snapshotBytes(after) };
  await records.finish(key, result);
  return result;
}

/** The tool's answer; its input errors (bad arguments, a path outside the workspace) as error results. */
async function attempt(run: () => Promise<ToolAnswer>): Promise<CallResult> {
  try {
    const r = await run();
    return { text: r.text, isError: !!r.isError, ...(r.command && { command: r.command }) };
  } catch (err) {
    return inputErrorResult(err);
  }
}
