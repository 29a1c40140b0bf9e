// What a rewind (POST /tasks/{id}/rewind) tells the run it makes, carried by the reset itself: the
// reset's reason, which Temporal writes into the new run's history (its WORKFLOW_TASK_FAILED
// RESET_WORKFLOW event) in the same step as it makes the run. No signal could do that on every
// server (a post-reset signal operation is the embedded engine's and a pending pull request's
// only), and a signal sent after the reset could reach the run after its first decision. The
// reason is plain text in history: the message in it is a payload encrypted by the payload codec
// (base64 of its protobuf), never the text itself. The model activity reads it back
// (activities/rewind-check.ts), so the run takes it in through an activity's result: replay-safe.
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { decodeOptionalSinglePayload, encodeToPayload } from '@temporalio/common/lib/internal-non-workflow';
import type { RewindSeen } from '../../../workflows/types';

export const REWIND_REASON_PREFIX = 'rewind:';

/** What the gateway puts in the reason. */
export interface RewindReason {
  step: number;
  epoch: number;
  replace?: boolean;
  rejoin?: boolean;
  /** The message, encrypted: base64 of the encoded payload. */
  message?: string;
}

const Payload = temporal.api.common.v1.Payload;
const EventType = temporal.api.enums.v1.EventType;
const RESET_CAUSE = temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW;

/** The reset's reason for a rewind: the spec, its message encrypted with the client's codec. */
export async function rewindReason(
  client: Client,
  spec: Omit<RewindReason, 'message'> & { message?: string },
): Promise<string> {
  const { message, ...rest } = spec;
  const sealed =
    message === undefined
      ? undefined
      : Buffer.from(
          Payload.encode(await encodeToPayload(client.options.loadedDataConverter, message)).finish(),
        ).toString('base64');
  return REWIND_REASON_PREFIX + JSON.stringify({ ...rest, ...(sealed && { message: sealed }) });
}

/** A rewind's reason read back; undefined for any other reason (a reset from the Web UI, or text that only looks like one). */
export function parseReason(reason: string): RewindReason | undefined {
  if (!reason.startsWith(REWIND_REASON_PREFIX)) return undefined;
  try {
    const spec = JSON.parse(reason.slice(REWIND_REASON_PREFIX.length)) as RewindReason;
    return typeof spec === 'object' && spec !== null && Number.isInteger(spec.epoch) ? spec : undefined;
  } catch {
    return undefined;
  }
}

/** What the reset that made run `runId` asked: a rewind's spec, or a bare reset (the Web UI's), or undefined when it was none. */
export async function readRewind(client: Client, workflowId: string, runId: string): Promise<RewindSeen | undefined> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const reset = history.events?.find(
    (e) =>
      e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED &&
      e.workflowTaskFailedEventAttributes?.cause === RESET_CAUSE &&
      e.workflowTaskFailedEventAttributes?.newRunId === runId,
  );
  if (!reset) return undefined;
  const reason = reset.workflowTaskFailedEventAttributes?.failure?.message ?? '';
  const spec = parseReason(reason);
  if (!spec) return { runId };
  const message =
    spec.message === undefined
      ? undefined
      : await decodeOptionalSinglePayload<string>(
          client.options.loadedDataConverter,
          Payload.decode(Buffer.from(spec.message, 'base64')),
        );
  return {
    runId,
    epoch: spec.epoch,
    ...(typeof message === 'string' && { message }),
    ...(spec.replace && { replace: true }),
    ...(spec.rejoin && { rejoin: true }),
  };
}
