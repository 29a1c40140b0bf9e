// One tool call of the agent loop: publishes its result on the relay and returns
// it to the workflow. A tool that fails returns an error result (the model reads
// it and goes on); only a fault of the machinery fails the activity, which
// Temporal retries. The call is the activity's own producer on the relay, so a
// retry never shows its result twice.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityDeps } from '../index';
import type { EventTag } from '../../src/common/relay/events';
import type { ToolCall } from '../../workflows/types';
import { capToolOutput, toolResponseEvent } from '../../workflows/run-events';
import { WorkspacePathError } from '../../src/common/workspaces/paths';
import { BUILTIN_IMPLS, ToolInputError } from './builtin';

export interface RunToolInput {
  taskId: string;
  session: string;
  /** The call's producer id on the relay (`s<step>:t<index>`). */
  producer: string;
  floor: number;
  call: ToolCall;
  /** Longest result the model gets, characters. */
  maxChars: number;
  /** A DAG step's run: its events carry the workflow and step ids. */
  tag?: EventTag;
}

/** A tool call that works in a session's workspace or browser (computer, web, browser tools): the account too. */
export interface SessionToolInput extends RunToolInput {
  account: string;
}

/** What such a call answers: RunToolOutput and the files it saved in the workspace (workspace-relative). */
export interface SessionToolOutput extends RunToolOutput {
  files?: string[];
}

export interface RunToolOutput {
  content: string;
  isError: boolean;
  lastSeq: number;
  /** The relay did not take the result (relay-recovery.ts): the run republishes it from its record. */
  relayLost?: true;
}

const HEARTBEAT_MS = 1000;

export function createToolActivities(deps: ActivityDeps) {
  return {
    async runTool(input: RunToolInput): Promise<RunToolOutput> {
      const impl = BUILTIN_IMPLS[input.call.name];
      if (!impl)
        throw ApplicationFailure.nonRetryable(
          `no tool named ${JSON.stringify(input.call.name)} runs as an activity`,
          'ToolBadInput',
        );
      const r = await heartbeating(async () => ({
        text: await impl(parseArguments(input.call.arguments)),
        isError: false,
      })).catch(inputErrorResult);
      return { ...(await publishToolResult(deps, input, r.text, r.isError)), isError: r.isError };
    },
  };
}

/**
 * Runs `fn` while the activity heartbeats every second: the worker's liveness for Temporal, and the
 * way a task's cancellation reaches the call (the answer to a heartbeat).
 */
export async function heartbeating<T>(fn: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
  try {
    return await fn();
  } finally {
    clearInterval(beat);
  }
}

/**
 * The model's error result for a mistake of its own (arguments the tool refuses, a path out of the
 * workspace); anything else is thrown on: a fault of the machinery, which Temporal retries.
 */
export function inputErrorResult(err: unknown): { text: string; isError: true } {
  if (err instanceof ToolInputError || err instanceof WorkspacePathError)
    return { text: `Error: ${err.message}`, isError: true };
  throw err;
}

/** Cuts a result to the model's limit and publishes its agent_tool_response as the call's own producer. */
export async function publishToolResult(
  deps: Pick<ActivityDeps, 'publisher'>,
  input: Pick<RunToolInput, 'taskId' | 'session' | 'producer' | 'floor' | 'call' | 'maxChars' | 'tag'>,
  text: string,
  isError: boolean,
): Promise<{ content: string; lastSeq: number; relayLost?: true }> {
  const content = capToolOutput(text, input.maxChars);
  const r = await deps.publisher.publish(
    input.taskId,
    input.session,
    input.producer,
    0,
    [toolResponseEvent(input.call, content, isError)],
    { floor: input.floor, tag: input.tag },
  );
  return { content, lastSeq: Math.max(input.floor, r.lastSeq), ...(r.lost && { relayLost: true as const }) };
}

/** The model's arguments as an object (ToolInputError when they are not a JSON object). */
export function parseArguments(raw: string): Record<string, unknown> {
  if (!raw.trim()) return {};
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    throw new ToolInputError(`the arguments are not JSON: ${raw.slice(0, 200)}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new ToolInputError('the arguments must be a JSON object');
  return v as Record<string, unknown>;
}
