// WorkflowService schedule RPCs: validation as the frontend does it, then the
// change to the schedule, one scheduler iteration, and a durable flush before
// answering.
import type { Engine } from '../engine/engine';
import type { Handlers } from '../rpc/grpc-service';
import type { Scheduler } from './scheduler';
import { alreadyStarted, failedPrecondition, invalidArgument, notFound } from '../errors';
import { validateStartAttributes, attributeTypes, decodePayloadValue } from '../engine/search-attributes';
import { msFromDur, msFromTs, ReusePolicy, tsFromMs } from '../proto';
import { canonicalizeScheduleSpec, ScheduleSpecError } from './spec';
import {
  compileVisibilityQuery,
  compareDefaultVisibilityOrder,
  VisibilityQueryError,
  VisibilityRecord,
} from '../visibility/query';
import { describeSchedule, listEntry } from './scheduler-views';
import {
  INITIAL_CONFLICT_TOKEN,
  MAX_BUFFER_SIZE,
  MAX_MATCHING_TIMES,
  NOTES_SIZE_LIMIT,
  ScheduleRecord,
  cloneFields,
  conflictTokenBytes,
} from './scheduler-state';

const ID_LIMIT = 1000;
const WORKFLOW_ID_PREFIX = 'temporal-sys-scheduler:';
/** What the frontend appends to the action's workflow id when checking its length. */
const APPENDED_TIMESTAMP = '-2009-11-10T23:00:00Z';

function canonicalSpec(spec: unknown): any {
  try {
    return canonicalizeScheduleSpec(spec ?? {});
  } catch (err) {
    if (err instanceof ScheduleSpecError) throw invalidArgument(err.message);
    throw err;
  }
}

function validateAction(eng: Engine, namespace: string, sw: any): void {
  if (!sw) return;
  if (`${sw.workflowId ?? ''}${APPENDED_TIMESTAMP}`.length > ID_LIMIT)
    throw invalidArgument('WorkflowId length exceeds limit.');
  if (!sw.workflowType?.name) throw invalidArgument('WorkflowType is not set on request.');
  if (sw.workflowType.name.length > ID_LIMIT) throw invalidArgument('WorkflowType length exceeds limit.');
  if (!sw.taskQueue) throw invalidArgument('taskQueue is not set');
  if (!sw.taskQueue.name) throw invalidArgument('missing task queue name');
  for (const [field, label] of [
    ['workflowExecutionTimeout', 'WorkflowExecutionTimeout'],
    ['workflowRunTimeout', 'WorkflowRunTimeout'],
    ['workflowTaskTimeout', 'WorkflowTaskTimeout'],
  ] as const) {
    if (msFromDur(sw[field]) < 0) throw invalidArgument(`Invalid ${label}.`);
  }
  if (sw.cronSchedule) throw invalidArgument('Scheduled workflow must not contain CronSchedule');
  if (sw.workflowIdReusePolicy && sw.workflowIdReusePolicy !== ReusePolicy.ALLOW_DUPLICATE) {
    throw invalidArgument('Scheduled workflow must not contain WorkflowIDReusePolicy');
  }
  validateStartAttributes(eng, namespace, sw.searchAttributes);
}

/** Spec canonicalized, action validated: the schedule as it is stored. */
function scheduleParts(
  eng: Engine,
  namespace: string,
  schedule: any,
): Pick<ScheduleRecord, 'spec' | 'action' | 'policies' | 'state'> {
  const s = schedule ?? {};
  const spec = canonicalSpec(s.spec);
  validateAction(eng, namespace, s.action?.startWorkflow);
  const st = s.state ?? {};
  return {
    spec,
    action: s.action ?? {},
    policies: s.policies ?? {},
    state: {
      notes: st.notes ?? '',
      paused: !!st.paused,
      limitedActions: !!st.limitedActions,
      remainingActions: Number(st.remainingActions ?? 0),
    },
  };
}

function requireSchedule(s: Scheduler, namespace: string, scheduleId: string | undefined): ScheduleRecord {
  const rec = scheduleId ? s.get(namespace, scheduleId) : undefined;
  if (!rec) throw notFound('schedule not found');
  return rec;
}

/** Trigger, backfills, pause/unpause: the order the scheduler applies a patch in. */
function applyPatch(s: Scheduler, rec: ScheduleRecord, patch: any): void {
  if (!patch) return;
  const now = s.eng.now();
  if (patch.triggerImmediately) {
    const at = patch.triggerImmediately.scheduledTime ? msFromTs(patch.triggerImmediately.scheduledTime) : now;
    s.addStart(rec, at, at, patch.triggerImmediately.overlapPolicy ?? 0, true);
  }
  for (const bf of patch.backfillRequest ?? []) {
    if (rec.backfills.length >= MAX_BUFFER_SIZE) {
      rec.bufferDropped++;
      continue;
    }
    // The request's start time is inclusive; the range walk is exclusive of its start.
    rec.backfills.push({
      startMs: msFromTs(bf.startTime) - 1,
      endMs: msFromTs(bf.endTime),
      overlapPolicy: bf.overlapPolicy ?? 0,
    });
  }
  if (patch.pause) {
    rec.state.paused = true;
    rec.state.notes = patch.pause;
    rec.conflictToken++;
  }
  if (patch.unpause) {
    rec.state.paused = false;
    rec.state.notes = patch.unpause;
    rec.conflictToken++;
  }
}

/** `ScheduleId` in a list query means the schedule's id, which our records carry as WorkflowId. */
export function rewriteScheduleId(query: string): string {
  let out = '';
  let quote: string | undefined;
  for (let i = 0; i < query.length; i++) {
    const c = query[i];
    if (quote) {
      out += c;
      if (c === quote) quote = undefined;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') {
      quote = c;
      out += c;
      continue;
    }
    const before = i === 0 ? '' : query[i - 1];
    const after = query[i + 'ScheduleId'.length] ?? '';
    if (query.startsWith('ScheduleId', i) && !/[\w]/.test(before) && !/[\w]/.test(after)) {
      out += 'WorkflowId';
      i += 'ScheduleId'.length - 1;
      continue;
    }
    out += c;
  }
  return out;
}

function visibilityRecord(rec: ScheduleRecord): VisibilityRecord {
  return {
    workflowId: rec.scheduleId,
    runId: '',
    workflowType: 'temporal-sys-scheduler-workflow',
    taskQueue: 'temporal-sys-per-ns-tq',
    status: 'Running',
    startTime: rec.createTime,
    executionTime: rec.createTime,
    searchAttributes: { ...decodedSearchAttributes(rec), TemporalSchedulePaused: !!rec.state.paused },
  };
}

function decodedSearchAttributes(rec: ScheduleRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, p] of Object.entries(rec.searchAttributes ?? {})) {
    const v = decodePayloadValue(p);
    if (v !== undefined && v !== null) out[k] = v;
  }
  return out;
}

// eslint-disable-next-line max-lines-per-function -- a table of the Schedules RPC handlers, one entry per method
export function scheduleHandlers(eng: Engine, s: Scheduler): Handlers {
  const commit = async <T>(v: T): Promise<T> => {
    await eng.flush();
    return v;
  };
  return {
    createSchedule: (req) => {
      const ns = eng.namespace(req.namespace);
      if (!req.scheduleId) throw invalidArgument('ScheduleId is not set on request.');
      if (`${WORKFLOW_ID_PREFIX}${req.scheduleId}`.length > ID_LIMIT)
        throw invalidArgument('WorkflowId length exceeds limit.');
      if (!req.requestId) throw invalidArgument('RequestId is not set on request.');
      if (req.requestId.length > ID_LIMIT) throw invalidArgument('RequestId length exceeds limit.');
      const existing = s.get(ns.name, req.scheduleId);
      // A retried create (same request id) succeeds again, like a retried workflow start.
      if (existing?.requestId === req.requestId) return { conflictToken: conflictTokenBytes(INITIAL_CONFLICT_TOKEN) };
      const parts = scheduleParts(eng, ns.name, req.schedule);
      validateStartAttributes(eng, ns.name, req.searchAttributes);
      if (existing) throw alreadyStarted(`schedule "${req.scheduleId}" is already registered`, '', '');
      const now = eng.now();
      const rec: ScheduleRecord = {
        namespace: ns.name,
        namespaceId: ns.id,
        scheduleId: req.scheduleId,
        ...parts,
        memo: cloneFields(req.memo?.fields),
        searchAttributes: cloneFields(req.searchAttributes?.indexedFields),
        requestId: req.requestId,
        conflictToken: INITIAL_CONFLICT_TOKEN,
        createTime: now,
        lastProcessedTime: now,
        actionCount: 0,
        missedCatchupWindow: 0,
        overlapSkipped: 0,
        bufferDropped: 0,
        running: [],
        recent: [],
        buffer: [],
        backfills: [],
      };
      s.add(rec);
      applyPatch(s, rec, req.initialPatch);
      s.wake(rec);
      return commit({ conflictToken: conflictTokenBytes(INITIAL_CONFLICT_TOKEN) });
    },

    describeSchedule: (req) => {
      const ns = eng.namespace(req.namespace);
      return describeSchedule(s, requireSchedule(s, ns.name, req.scheduleId));
    },

    updateSchedule: (req) => {
      const ns = eng.namespace(req.namespace);
      if ((req.requestId ?? '').length > ID_LIMIT) throw invalidArgument('RequestId length exceeds limit.');
      const parts = scheduleParts(eng, ns.name, req.schedule);
      validateStartAttributes(eng, ns.name, req.searchAttributes);
      const rec = requireSchedule(s, ns.name, req.scheduleId);
      if (req.conflictToken?.length && !Buffer.from(req.conflictToken).equals(conflictTokenBytes(rec.conflictToken))) {
        throw failedPrecondition('mismatched conflict token');
      }
      // Time that already passed is handled under the old schedule first.
      s.wake(rec);
      Object.assign(rec, parts);
      s.specChanged(rec);
      if (req.searchAttributes) rec.searchAttributes = cloneFields(req.searchAttributes.indexedFields);
      if (req.memo) rec.memo = cloneFields(req.memo.fields);
      rec.updateTime = eng.now();
      rec.conflictToken++;
      s.wake(rec);
      return commit({});
    },

    patchSchedule: (req) => {
      const ns = eng.namespace(req.namespace);
      if (!req.patch) throw invalidArgument('Patch is not set on request.');
      if ((req.requestId ?? '').length > ID_LIMIT) throw invalidArgument('RequestId length exceeds limit.');
      if ((req.patch.pause ?? '').length > NOTES_SIZE_LIMIT || (req.patch.unpause ?? '').length > NOTES_SIZE_LIMIT) {
        throw invalidArgument('Schedule notes exceeds limit.');
      }
      const rec = requireSchedule(s, ns.name, req.scheduleId);
      s.wake(rec);
      applyPatch(s, rec, req.patch);
      s.wake(rec);
      return commit({});
    },

    deleteSchedule: (req) => {
      const ns = eng.namespace(req.namespace);
      s.remove(requireSchedule(s, ns.name, req.scheduleId));
      return commit({});
    },

    listSchedules: (req) => {
      const ns = eng.namespace(req.namespace);
      let matches = (_r: VisibilityRecord) => true;
      if ((req.query ?? '').trim()) {
        try {
          matches = compileVisibilityQuery(rewriteScheduleId(req.query), attributeTypes(eng, ns.name)).matches;
        } catch (err) {
          if (err instanceof VisibilityQueryError) throw invalidArgument(`invalid query: ${err.message}`);
          throw err;
        }
      }
      const rows = s
        .list(ns.name)
        .map((rec) => ({ rec, r: visibilityRecord(rec) }))
        .filter((x) => matches(x.r))
        // Newest first, as visibility lists the scheduler workflows.
        .sort((a, b) => compareDefaultVisibilityOrder(a.r, b.r) || a.rec.scheduleId.localeCompare(b.rec.scheduleId));
      const offset = req.nextPageToken?.length ? Number(Buffer.from(req.nextPageToken).toString()) || 0 : 0;
      const size = req.maximumPageSize > 0 ? Math.min(req.maximumPageSize, 1000) : 1000;
      const page = rows.slice(offset, offset + size);
      return {
        schedules: page.map((x) => listEntry(s, x.rec)),
        nextPageToken: offset + size < rows.length ? Buffer.from(String(offset + size)) : undefined,
      };
    },

    listScheduleMatchingTimes: (req) => {
      const ns = eng.namespace(req.namespace);
      const rec = requireSchedule(s, ns.name, req.scheduleId);
      if (!req.startTime || !req.endTime) throw invalidArgument('missing or invalid query');
      const spec = s.compiledSpec(rec);
      const end = msFromTs(req.endTime);
      const out: object[] = [];
      let t = msFromTs(req.startTime);
      while (out.length < MAX_MATCHING_TIMES) {
        const next = spec.nextTime(t, s.seed(rec));
        if (!next || next.actualMs > end) break;
        t = next.actualMs;
        out.push(tsFromMs(t));
      }
      return { startTime: out };
    },
  };
}
