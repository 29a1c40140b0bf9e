// Raw ExecuteMultiOperation requests (update-with-start) for the conformance
// tests, and the per-operation statuses of their MultiOperationExecutionFailure.
import { randomUUID } from 'node:crypto';
import { google, temporal } from '@temporalio/proto';
import { defaultPayloadConverter } from '@temporalio/common';
import type { Env } from './harness';

export const Stage = temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage;
export const Conflict = temporal.api.enums.v1.WorkflowIdConflictPolicy;

const payloads = (v: unknown) => ({ payloads: [defaultPayloadConverter.toPayload(v)] });

export interface OperationStatus {
  code: number;
  message: string;
  /** Short type names of the status' details (e.g. WorkflowExecutionAlreadyStartedFailure). */
  details: string[];
  /** The decoded details, by short type name. */
  values: Record<string, any>;
}

/** A `counter` start operation on env's task queue; `patch` overrides or adds fields. */
export function startOp(env: Env, workflowId: string, patch: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    namespace: env.namespace,
    workflowId,
    workflowType: { name: 'counter' },
    taskQueue: { name: env.taskQueue },
    input: payloads(1),
    requestId: randomUUID(),
    identity: 'conformance',
    ...patch,
  };
}

/** An update operation calling `name(arg)` on workflowId; `patch` overrides or adds fields. */
export function updateOp(
  env: Env,
  workflowId: string,
  name: string,
  arg: number,
  updateId: string,
  patch: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    namespace: env.namespace,
    workflowExecution: { workflowId },
    request: { meta: { updateId, identity: 'conformance' }, input: { name, args: payloads(arg) } },
    waitPolicy: { lifecycleStage: Stage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED },
    ...patch,
  };
}

export function multiOp(env: Env, start: object, update: object) {
  const req = { namespace: env.namespace, operations: [{ startWorkflow: start }, { updateWorkflow: update }] };
  return env.connection.withDeadline(Date.now() + 30_000, () =>
    env.connection.workflowService.executeMultiOperation(req as never),
  );
}

/** The update's value from an ExecuteMultiOperation response. */
export function updateValue(res: temporal.api.workflowservice.v1.IExecuteMultiOperationResponse): unknown {
  const p = res.responses?.[1]?.updateWorkflow?.outcome?.success?.payloads?.[0];
  return p ? defaultPayloadConverter.fromPayload(p as never) : undefined;
}

function decodeAny(a: google.protobuf.IAny): [string, any] {
  const name = a.type_url!.split('/').pop()!;
  const short = name.split('.').pop()!;
  const type = name.startsWith('temporal.api.failure.v1.')
    ? (temporal.api.failure.v1 as any)[short]
    : (temporal.api.errordetails.v1 as any)[short];
  return [short, type ? type.decode(a.value) : undefined];
}

/** The operations' statuses of a failed ExecuteMultiOperation, or undefined when it carries none. */
export function operationStatuses(err: any): OperationStatus[] | undefined {
  const bin = err?.metadata?.get('grpc-status-details-bin')?.[0];
  if (!bin) return undefined;
  const st = google.rpc.Status.decode(Buffer.isBuffer(bin) ? bin : Buffer.from(bin));
  const [type, failure] = decodeAny(st.details![0]);
  if (type !== 'MultiOperationExecutionFailure') return undefined;
  return (failure as temporal.api.errordetails.v1.IMultiOperationExecutionFailure).statuses!.map((s) => {
    const decoded = (s.details ?? []).map(decodeAny);
    return {
      code: s.code ?? 0,
      message: s.message ?? '',
      details: decoded.map(([t]) => t),
      values: Object.fromEntries(decoded),
    };
  });
}
