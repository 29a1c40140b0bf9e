// The client's types, all derived from the zod schemas the OpenAPI document is
// generated from (requests: src/common/contracts/run-request.ts, src/gateway/schemas/request.ts
// and datastore-schemas.ts, responses: src/gateway/schemas/response.ts and schedule-response-schemas.ts;
// a datastore and a document as the service's own types say) and from the one event union
// (src/common/relay/events.ts). Type-only imports: nothing of the gateway is loaded
// at run time, so the client stays a thin layer over fetch.
import type { z } from 'zod';
import type {
  createSessionSchema,
  forkSessionSchema,
  listQuerySchema,
  patchTaskSchema,
  approvalDecisionSchema as approvalDecisionRequestSchema,
  rewindSchema,
  scheduleListQuerySchema,
  schedulePauseSchema,
  sessionListQuerySchema,
} from '../src/gateway/schemas/request';
import type { runRequestSchema, scheduleSchema } from '../src/common/contracts/run-request';
import type {
  cancelAcceptedSchema,
  deliveryListSchema,
  errorBodySchema,
  runResultSchema,
  scheduledSummarySchema,
  sessionCreatedSchema,
  sessionForkedSchema,
  sessionListSchema,
  sessionMessagesSchema,
  taskAcceptedSchema,
  taskListSchema,
  taskMessageAcceptedSchema,
  approvalDecisionSchema,
  approvalsPageSchema,
  rewindAnswerSchema,
  taskResultSchema,
  taskViewSchema,
  webhookSecretSchema,
} from '../src/gateway/schemas/response';
import type {
  scheduleDetailSchema,
  scheduleListSchema,
  scheduleTriggeredSchema,
  scheduleViewSchema,
} from '../src/gateway/schemas/schedule-response';
import type { AgentEvent, EventType } from '../src/common/relay/events';
import type {
  datastoreRegistrationSchema,
  documentListQuerySchema,
  documentSchema,
} from '../src/gateway/schemas/datastore';
import type { DatastoreView } from '../src/gateway/services/datastore-service';
import type { fileListQuerySchema, workspaceFileListSchema } from '../src/gateway/schemas/session-files';
import type { WorkspaceFile } from '../src/common/workspaces/usage';
import type { DocumentInfo } from '../src/common/datastores/types';

export type { AgentEvent, EventType };

/** The run request as a client sends it (fields with server defaults are optional). */
export type RunRequest = z.input<typeof runRequestSchema>;
/** `run()` and `stream()` answer in the foreground: `background` is runBackground's business. */
export type ForegroundRunRequest = Omit<RunRequest, 'background'>;
export type BackgroundRunRequest = Omit<RunRequest, 'background'>;

export type TaskStatus = TaskView['status'];
export type TaskView = z.output<typeof taskViewSchema>;
export type TaskResult = z.output<typeof taskResultSchema>;
/** What `run()` answers: the finished run, plus `schedules` when the request had some. */
export type RunResult = z.output<typeof runResultSchema>;
export type TaskAccepted = z.output<typeof taskAcceptedSchema>;
export type CancelAccepted = z.output<typeof cancelAcceptedSchema>;
export type TaskMessageAccepted = z.output<typeof taskMessageAcceptedSchema>;
/** A decision on a gated tool call (POST /tasks/{id}/approvals/{tool_call_id}). */
export type ApprovalDecisionBody = z.input<typeof approvalDecisionRequestSchema>;
export type ApprovalDecision = z.output<typeof approvalDecisionSchema>;
/** A task's gated calls: waiting and decided (GET /tasks/{id}/approvals). */
export type TaskApprovals = z.output<typeof approvalsPageSchema>;
/** Where a rewind goes back to (POST /tasks/{id}/rewind), and what it answers. */
export type RewindBody = z.input<typeof rewindSchema>;
export type RewindAnswer = z.output<typeof rewindAnswerSchema>;
export type TaskList = z.output<typeof taskListSchema>;
export type TaskListItem = TaskList['tasks'][number];
export type SessionMessages = z.output<typeof sessionMessagesSchema>;
export type ErrorBody = z.output<typeof errorBodySchema>;
export type DeliveryList = z.output<typeof deliveryListSchema>;
export type WebhookSecret = z.output<typeof webhookSecretSchema>;

/** GET /tasks query (`limit` 1..100, the server's default 20; the schema coerces it from text, so its input type is unknown). */
export type ListTasksQuery = Omit<z.input<typeof listQuerySchema>, 'limit'> & { limit?: number };
export type UpdateTaskBody = z.input<typeof patchTaskSchema>;

export type SessionList = z.output<typeof sessionListSchema>;
/** One entry of GET /sessions. */
export type SessionInfo = SessionList['sessions'][number];
/** POST /sessions → 201. */
export type SessionCreated = z.output<typeof sessionCreatedSchema>;
/** POST /sessions body: an id of one's own choosing, or none for a new sess_… id. */
export type CreateSessionBody = z.input<typeof createSessionSchema>;
/** POST /sessions/{id}/fork body: how many messages to keep (default all), the new session's id. */
export type ForkSessionBody = z.input<typeof forkSessionSchema>;
/** POST /sessions/{id}/fork → 201. */
export type SessionForked = z.output<typeof sessionForkedSchema>;
/** GET /sessions query (`limit` 1..100, default 20; coerced from text by the schema, as for tasks). */
export type ListSessionsQuery = Omit<z.input<typeof sessionListQuerySchema>, 'limit'> & { limit?: number };

/** A file of a session's workspace (what an upload answers, one entry of a listing). */
export type { WorkspaceFile };
/** GET /sessions/{id}/files: every file, sorted by path. */
export type WorkspaceFileList = z.output<typeof workspaceFileListSchema>;
/** GET /sessions/{id}/files query: `prefix`, the start of the paths listed. */
export type ListFilesQuery = z.input<typeof fileListQuerySchema>;

/** One entry of a run request's `schedules`: seconds from now, an ISO 8601 date-time with its zone, or a five-field cron string. */
export type ScheduleEntry = z.input<typeof scheduleSchema>;
/** A schedule a run request made, as its answer (`schedules`) and its agent_scheduled event show it. */
export type ScheduledSummary = z.output<typeof scheduledSummarySchema>;
/** One entry of GET /schedules. */
export type ScheduleView = z.output<typeof scheduleViewSchema>;
/** GET /schedules/{id} (and the answer of pause and unpause): the schedule, its next runs and the tasks it started. */
export type ScheduleDetail = z.output<typeof scheduleDetailSchema>;
export type ScheduleList = z.output<typeof scheduleListSchema>;
/** POST /schedules/{id}/trigger → 202. */
export type ScheduleTriggered = z.output<typeof scheduleTriggeredSchema>;
/** GET /schedules query (`limit` 1..100, default 20; coerced from text by the schema, as for tasks). */
export type ListSchedulesQuery = Omit<z.input<typeof scheduleListQuerySchema>, 'limit'> & { limit?: number };
/** POST /schedules/{id}/pause body. */
export type PauseScheduleBody = z.input<typeof schedulePauseSchema>;

/** POST /datastores (JSON): a PostgreSQL URL, a SQLite file under the service's DATASTORE_SQLITE_ROOT, or a documents knowledge base. */
export type RegisterDatastoreBody = z.input<typeof datastoreRegistrationSchema>;
/** A registered datastore as the service shows it: never its connection details. */
export type Datastore = DatastoreView;
export type DatastoreType = Datastore['type'];
/** GET /datastores: every datastore of the account, oldest first. */
export interface DatastoreList {
  datastores: Datastore[];
}
/** The fields of an uploaded SQLite file (they travel beside it, in a multipart/form-data body). */
export interface UploadDatastoreOptions {
  name: string;
  description?: string;
  /** true: the agent also gets query_<name> (its own read-only SELECT). Default false. */
  allow_sql?: boolean;
  query_timeout_ms?: number;
  max_rows?: number;
}
/** One document for a knowledge base (`format` text by default; json: searched by its string values). */
export type DocumentInput = z.input<typeof documentSchema>;
/** A stored document, without its content. */
export type { DocumentInfo };
/** POST /datastores/{id}/documents → 201: the documents as stored. */
export interface AddedDocuments {
  documents: DocumentInfo[];
}
/** GET /datastores/{id}/documents: one page, ordered by id; pass `next_cursor` back as `cursor`. */
export interface DocumentList {
  documents: DocumentInfo[];
  next_cursor: string | null;
}
/** GET /datastores/{id}/documents query (`limit` 1..100, default 50). */
export type ListDocumentsQuery = Omit<z.input<typeof documentListQuerySchema>, 'limit'> & { limit?: number };
/** What a document sent as a file may carry besides its text. */
export interface AddTextOptions {
  /** Absent: the service makes one. An existing id is replaced. */
  id?: string;
  title?: string;
  /** Format markdown instead of text. */
  markdown?: boolean;
}
/** One entry of a run request's `datastores`: a registered datastore and the name its tools get (describe_<name>, query_<name>, search_<name>). */
export type RunDatastore = NonNullable<RunRequest['datastores']>[number];
/** One entry of a run request's `queries`: a named query, one tool; `datastore` (an id or name of the request's datastores) is needed when it holds several SQL ones. */
export type NamedQuery = NonNullable<RunRequest['queries']>[number];
