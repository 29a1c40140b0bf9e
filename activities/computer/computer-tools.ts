// The tools of the session's computer as the activity calls them: one function per tool name,
// over a session's workspace. The worker builds them around its sandbox (computer-setup.ts);
// tests may hand in their own.
import type { SessionWorkspace } from '../../src/common/workspaces/layout';
import type { WorkspaceUsage } from '../../src/common/workspaces/usage';

export interface ToolAnswer {
  /** What the model reads. */
  text: string;
  isError?: boolean;
  /** A command's end (bash), for the worker's metrics. */
  command?: CommandEnd;
}

export interface CommandEnd {
  /** Null when it did not run or the sandbox ended it. */
  exitCode: number | null;
  /** Why the sandbox ended it (timeout, memory, processes, cpu, output, cancel, disk). */
  killed?: string;
  durationMs: number;
}

/**
 * One call: the parsed arguments, the session's workspace, the call's id (stable across its
 * retries), the task's cancellation, and whether the run allowed its commands network.
 */
export type ComputerTool = (
  args: Record<string, unknown>,
  ws: SessionWorkspace,
  call: {
    id: string;
    signal: AbortSignal;
    network?: boolean;
    /** The workspace's size just before a call that may change it (the activity measured it). */
    usage?: WorkspaceUsage;
  },
) => Promise<ToolAnswer>;

export type ComputerTools = Readonly<Record<string, ComputerTool>>;
