// How the service's workflows are addressed and spoken to: their ids and task queues, and every
// signal, query and update definition, in one place. The gateway, the activities and the client
// side import these (lint lets service code take only types and these definitions from
// workflows/); the workflows set their handlers for them. Pure code: bundled into the sandbox.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  ApprovalDecision,
  DeliveryItem,
  DeliveryRecord,
  PendingApproval,
  RunMessage,
  TaskView,
  ThreadMessage,
} from './types';
import type { AccountRecord, RegistryState, WebhookSecret } from './accounts';
import type { StepReport } from './dag-workflow';
import type { DatastoreRecord } from './datastores';

// The run (agentTask): its view, its thread, messages and metadata into it

export const statusQuery = defineQuery<TaskView>('status');
/** The run's own thread from message `from` on, a page at a time (the model activity reads it instead of carrying it). */
export const threadQuery = defineQuery<{ messages: RunMessage[]; total: number }, [number]>('thread');
/** What a completed run adds to its session's thread; the session reads it so when it is too large to ride on the hand-over signal. */
export const exchangeQuery = defineQuery<ThreadMessage[]>('exchange');
export const patchMetadataSignal = defineSignal<[Record<string, unknown>]>('patchMetadata');
/**
 * multitask "interrupt": the run's cancellation that follows is an interruption by a new message
 * of its session: the run ends cancelled (error `interrupted`) and hands its exchange so far to the
 * session's thread, its answer marked as interrupted, instead of nothing.
 */
export const interruptSignal = defineSignal('interrupt');
/** A message into the running task: the agent takes it in before its next model turn. */
export const messageUpdate = defineUpdate<{ accepted: true; pending: number }, [{ message: string }]>('message');

/** A person's decision on a gated tool call (POST /tasks/{id}/approvals/{tool_call_id}); `input` replaces its arguments. */
export interface ApprovalRequest {
  tool_call_id: string;
  decision: 'approve' | 'deny';
  reason?: string;
  input?: unknown;
}
/**
 * Decides a gated call. The validator refuses an unknown call (ApplicationFailure type
 * `approval_not_found`) and a decision other than the one already made (`approval_conflict`,
 * its details the first decision); the same decision again answers the first one.
 */
export const approvalUpdate = defineUpdate<ApprovalDecision, [ApprovalRequest]>('approval');
/** The run's gated calls: those waiting (with the tool's parameters schema, for the gateway's check of an edited input) and those decided. */
export const approvalsQuery = defineQuery<{
  pending: (PendingApproval & { parameters?: Record<string, unknown> })[];
  decided: ApprovalDecision[];
}>('approvals');

// Admission of a run: its session hands it its turn, its account's slots workflow its slot

/** The session hands the run its turn, saying how many messages its thread has (the model activity reads them). */
export const turnGrantedSignal = defineSignal<[{ session: string; messages: number; agent?: string }]>('turnGranted');
export const slotGrantedSignal = defineSignal('slotGranted');

// The session (agentSession): the queue of its runs and its thread

export const enqueueSignal = defineSignal<[{ taskId: string }]>('enqueue');
/**
 * A run hands its turn back; a completed one says which agent has the conversation (`agent`; null:
 * the main agent). `byQuery`: its messages are too large for the signal; the session reads them
 * from the run (readExchange).
 */
export const turnDoneSignal =
  defineSignal<[{ taskId: string; messages: ThreadMessage[]; agent?: string | null; byQuery?: true }]>('turnDone');
/**
 * What a run handed (or, holding the turn of a session not opened yet, would hand) its session at
 * its end: its exchange and, with handoff agents, the agent that has the conversation. Null while
 * the run has not ended. A lazily opened session reads its first run's handover so.
 */
export const handoverQuery = defineQuery<Handover | null>('handover');
export interface Handover {
  messages: ThreadMessage[];
  agent?: string | null;
}
export const clearSignal = defineSignal('clear');
export const messagesQuery = defineQuery<ThreadMessage[]>('messages');
export const busyQuery = defineQuery<{ active: string | null; queued: string[] }>('busy');
/**
 * Holds the session for a run about to start (multitask: "reject"): refused when another run is
 * active, queued or holding it, so a refused request starts nothing. The run's enqueue takes the
 * hold over; one never followed up (its start failed) lapses after RESERVATION_MS.
 */
export const reserveUpdate = defineUpdate<{ position: number }, [{ taskId: string; reject: boolean }]>('reserve');
/**
 * The task queue of the activities that wait on other runs (awaitRunClose): one per service
 * queue, served apart (the worker runs a second worker on it) so a wait never holds a slot a
 * model turn needs.
 */
export function watchQueueOf(taskQueue: string): string {
  return `${taskQueue}-watch`;
}

// The account's running-task slots (accountSlots)

export const acquireSignal = defineSignal<[{ taskId: string; limit: number; createdAt: string }]>('acquire');
export const releaseSignal = defineSignal<[{ taskId: string }]>('release');
export const slotsQuery = defineQuery<{ limit: number; running: string[]; waiting: string[] }>('slots');
export function slotsWorkflowId(account: string): string {
  return `slots:${account}`;
}
/**
 * Workflow task timeout of the slots workflow (the SDK's default is 10 s). A
 * continue-as-new that signals keep arriving during is refused by Temporal,
 * and the worker then replays the run from its start: under a long burst the
 * history grows until the signals pause, and that replay must fit.
 */
export const SLOTS_TASK_TIMEOUT = '60s';

// The account registry (accountsRegistry): keys, limits, webhook secrets

export const ACCOUNTS_WORKFLOW_ID = 'accounts-registry';
export const snapshotQuery = defineQuery<RegistryState>('snapshot');
export const addKeyUpdate = defineUpdate<AccountRecord, [{ keyHash: string; account: string }]>('addKey');
export const removeKeyUpdate = defineUpdate<boolean, [{ keyHash: string }]>('removeKey');
export const setLimitUpdate = defineUpdate<AccountRecord, [{ account: string; maxRunning: number | null }]>('setLimit');
/** The account's webhook secrets in force; `candidate` becomes its first when it has none. */
export const webhookSecretsUpdate = defineUpdate<WebhookSecret[], [{ account: string; candidate: string }]>(
  'webhookSecrets',
);
/** The account's webhook secrets in force (none until the first read through webhookSecretsUpdate). */
export const webhookSecretsQuery = defineQuery<WebhookSecret[], [string]>('webhookSecrets');
/** Makes `candidate` the account's secret; the one it replaces keeps signing for WEBHOOK_SECRET_OVERLAP_MS. */
export const rotateWebhookSecretUpdate = defineUpdate<WebhookSecret[], [{ account: string; candidate: string }]>(
  'rotateWebhookSecret',
);

// A run's callback deliveries (callbackDelivery)

/** The run's next deliveries, in order; `end` with its last (the delivery workflow ends once they are done). */
export const deliverSignal = defineSignal<[{ items: DeliveryItem[]; end?: boolean }]>('deliver');
export const deliveriesQuery = defineQuery<DeliveryRecord[]>('deliveries');
/** Failure types of the delivery activity that end retries at once. */
export const CALLBACK_GONE = 'callback_gone';
export const CALLBACK_REFUSED = 'callback_refused';
export function callbackWorkflowId(taskId: string): string {
  return `callbacks:${taskId}`;
}

// A DAG run (dagWorkflow) and its steps

export const dagStepSignal = defineSignal<[StepReport]>('dagStep');
/**
 * A workflow step's gated calls, told to its task whenever they change: those waiting (with their
 * tools' parameters) and the step's decisions. The task is input_required while any waits, and its
 * approvals query (what the gateway reads) shows them, each with the step's workflow id.
 */
export const stepApprovalsSignal = defineSignal<
  [
    {
      workflowId: string;
      pending: (PendingApproval & { parameters?: Record<string, unknown> })[];
      decided: ApprovalDecision[];
    },
  ]
>('stepApprovals');
export function dagWorkflowId(taskId: string, workflowId: string): string {
  return `${taskId}:${workflowId}`;
}

// The account's datastores (accountDatastores)

/** Error types of refused updates (the gateway maps them to 409 and 400). */
export const NAME_TAKEN = 'DatastoreNameTaken';
export const TOO_MANY = 'TooManyDatastores';
export const datastoresQuery = defineQuery<DatastoreRecord[]>('datastores');
export const registerDatastoreUpdate = defineUpdate<DatastoreRecord, [DatastoreRecord]>('registerDatastore');
/** The removed record, or null when there was none by that id. */
export const removeDatastoreUpdate = defineUpdate<DatastoreRecord | null, [{ id: string }]>('removeDatastore');
export function datastoresWorkflowId(account: string): string {
  return `datastores:${account}`;
}
