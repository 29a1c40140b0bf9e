// Search attributes and memo: validation against the namespace's registered
// attributes, upserts from workflows, and decoding for visibility queries.
import type { Engine } from './engine';
import type { Execution, Payload } from './state';
import { EventType, IndexedValueType, WftFailedCause } from '../proto';
import { BadCommand } from './commands';
import { invalidArgument } from '../errors';
import type { SearchAttributeType } from '../visibility/query';

/** Attributes every namespace has: what the real server's ListSearchAttributes calls system. */
export const SYSTEM_ATTRIBUTES: Record<string, number> = {
  BatcherNamespace: IndexedValueType.KEYWORD,
  BatcherUser: IndexedValueType.KEYWORD,
  BinaryChecksums: IndexedValueType.KEYWORD_LIST,
  BuildIds: IndexedValueType.KEYWORD_LIST,
  CloseTime: IndexedValueType.DATETIME,
  ExecutionDuration: IndexedValueType.INT,
  ExecutionStatus: IndexedValueType.KEYWORD,
  ExecutionTime: IndexedValueType.DATETIME,
  HistoryLength: IndexedValueType.INT,
  HistorySizeBytes: IndexedValueType.INT,
  ParentRunId: IndexedValueType.KEYWORD,
  ParentWorkflowId: IndexedValueType.KEYWORD,
  RootRunId: IndexedValueType.KEYWORD,
  RootWorkflowId: IndexedValueType.KEYWORD,
  RunId: IndexedValueType.KEYWORD,
  StartTime: IndexedValueType.DATETIME,
  StateTransitionCount: IndexedValueType.INT,
  TaskQueue: IndexedValueType.KEYWORD,
  TemporalChangeVersion: IndexedValueType.KEYWORD_LIST,
  TemporalExternalPayloadCount: IndexedValueType.INT,
  TemporalExternalPayloadSizeBytes: IndexedValueType.INT,
  TemporalNamespaceDivision: IndexedValueType.KEYWORD,
  TemporalPauseInfo: IndexedValueType.KEYWORD_LIST,
  TemporalReportedProblems: IndexedValueType.KEYWORD_LIST,
  TemporalSchedulePaused: IndexedValueType.BOOL,
  TemporalScheduledById: IndexedValueType.KEYWORD,
  TemporalScheduledStartTime: IndexedValueType.DATETIME,
  TemporalUsedWorkerDeploymentVersions: IndexedValueType.KEYWORD_LIST,
  TemporalWorkerDeployment: IndexedValueType.KEYWORD,
  TemporalWorkerDeploymentVersion: IndexedValueType.KEYWORD,
  TemporalWorkflowVersioningBehavior: IndexedValueType.KEYWORD,
  WorkflowId: IndexedValueType.KEYWORD,
  WorkflowType: IndexedValueType.KEYWORD,
};

const TYPE_NAMES: Record<number, SearchAttributeType> = {
  [IndexedValueType.TEXT]: 'Text',
  [IndexedValueType.KEYWORD]: 'Keyword',
  [IndexedValueType.INT]: 'Int',
  [IndexedValueType.DOUBLE]: 'Double',
  [IndexedValueType.BOOL]: 'Bool',
  [IndexedValueType.DATETIME]: 'Datetime',
  [IndexedValueType.KEYWORD_LIST]: 'KeywordList',
};

export function typeName(t: number): SearchAttributeType | undefined {
  return TYPE_NAMES[t];
}

/** Registered attribute types of a namespace, system ones that can be set included. */
export function attributeTypes(eng: Engine, namespace: string): Map<string, SearchAttributeType> {
  const ns = eng.namespace(namespace);
  const out = new Map<string, SearchAttributeType>();
  for (const [k, v] of Object.entries(ns.searchAttributes)) out.set(k, TYPE_NAMES[v]);
  return out;
}

/** Kept by the server in fields of their own: never settable by users. */
const RESERVED_SYSTEM = new Set([
  'WorkflowId',
  'RunId',
  'WorkflowType',
  'StartTime',
  'ExecutionTime',
  'CloseTime',
  'ExecutionStatus',
  'TaskQueue',
  'HistoryLength',
  'ExecutionDuration',
  'StateTransitionCount',
  'HistorySizeBytes',
  'ParentWorkflowId',
  'ParentRunId',
  'RootWorkflowId',
  'RootRunId',
]);

/**
 * The type the server gives an attribute in a run's search attribute map: the
 * namespace's custom ones, then the predefined ones (system attributes kept in
 * columns of their own never appear there).
 */
export function storedAttributeType(eng: Engine, namespace: string, name: string): number | undefined {
  return (
    eng.namespace(namespace).searchAttributes[name] ?? (RESERVED_SYSTEM.has(name) ? undefined : SYSTEM_ATTRIBUTES[name])
  );
}

/**
 * The fields with their type in each payload's metadata, for the attributes the
 * namespace knows: the real server adds it to whatever the client sent before it
 * hands a payload out (history and describe alike), so here it is added once, as
 * the payload is stored.
 */
export function typedSearchAttributes(
  eng: Engine,
  namespace: string,
  fields: Record<string, Payload>,
): Record<string, Payload>;
export function typedSearchAttributes(
  eng: Engine,
  namespace: string,
  fields: Record<string, Payload> | undefined,
): Record<string, Payload> | undefined;
export function typedSearchAttributes(
  eng: Engine,
  namespace: string,
  fields: Record<string, Payload> | undefined,
): Record<string, Payload> | undefined {
  if (!fields) return undefined;
  const out: Record<string, Payload> = {};
  for (const [name, p] of Object.entries(fields)) {
    const type = storedAttributeType(eng, namespace, name);
    out[name] =
      type === undefined || p.metadata?.type
        ? p
        : { ...p, metadata: { ...(p.metadata ?? {}), type: Buffer.from(TYPE_NAMES[type]) } };
  }
  return out;
}

/** Predefined attributes users (and SDKs: patches set TemporalChangeVersion) may still set. */
const SETTABLE_PREDEFINED: Record<string, number> = {
  TemporalChangeVersion: IndexedValueType.KEYWORD_LIST,
  BinaryChecksums: IndexedValueType.KEYWORD_LIST,
  BuildIds: IndexedValueType.KEYWORD_LIST,
  BatcherNamespace: IndexedValueType.KEYWORD,
  BatcherUser: IndexedValueType.KEYWORD,
  TemporalScheduledStartTime: IndexedValueType.DATETIME,
  TemporalScheduledById: IndexedValueType.KEYWORD,
  TemporalSchedulePaused: IndexedValueType.BOOL,
  TemporalNamespaceDivision: IndexedValueType.KEYWORD,
  TemporalPauseInfo: IndexedValueType.KEYWORD_LIST,
  TemporalReportedProblems: IndexedValueType.KEYWORD_LIST,
};

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function fitsOne(v: unknown, type: number): boolean {
  switch (type) {
    case IndexedValueType.BOOL:
      return typeof v === 'boolean';
    case IndexedValueType.INT:
      return Number.isInteger(v);
    case IndexedValueType.DOUBLE:
      return typeof v === 'number';
    case IndexedValueType.DATETIME:
      return typeof v === 'string' && RFC3339.test(v) && !Number.isNaN(Date.parse(v));
    default:
      return typeof v === 'string';
  }
}

/**
 * The server's DecodeValue (lists of values allowed, its default): JSON null, a value
 * of the attribute's type, or a list of such; a KeywordList takes a list of strings.
 * Returns the decoded value, or throws.
 */
function decodeTyped(p: Payload, type: number): unknown {
  const encoding = p.metadata?.encoding ? Buffer.from(p.metadata.encoding).toString() : '';
  if (encoding === 'binary/null') return null;
  if (encoding !== 'json/plain') throw new Error('not JSON');
  const v: unknown = JSON.parse(Buffer.from(p.data ?? []).toString('utf8'));
  if (v === null) return v;
  const list = Array.isArray(v) ? v : undefined;
  if (type === IndexedValueType.KEYWORD_LIST) {
    if (list?.every((x) => typeof x === 'string')) return v;
    if (list?.length === 1 && Array.isArray(list[0]) && list[0].every((x: unknown) => typeof x === 'string'))
      return list[0];
    throw new Error('not a list of strings');
  }
  if (fitsOne(v, type) || list?.every((x) => fitsOne(x, type))) return v;
  throw new Error('wrong type');
}

function show(v: unknown): string {
  return Array.isArray(v) ? `[${v.map(show).join(' ')}]` : typeof v === 'string' ? v : JSON.stringify(v);
}

/** Throws (via makeError) what the server's search attribute validator would refuse. */
export function validateSearchAttributes(
  eng: Engine,
  namespace: string,
  fields: Record<string, Payload> | undefined,
  makeError: (m: string) => Error,
): void {
  if (!fields) return;
  const ns = eng.namespace(namespace);
  for (const [name, p] of Object.entries(fields)) {
    if (RESERVED_SYSTEM.has(name)) throw makeError(`${name} attribute can't be set in SearchAttributes`);
    const type = ns.searchAttributes[name] ?? SETTABLE_PREDEFINED[name];
    if (type === undefined) {
      if (name.startsWith('Temporal') || SYSTEM_ATTRIBUTES[name] !== undefined)
        throw makeError(`${name} attribute can't be set in SearchAttributes`);
      throw makeError(`search attribute ${name} is not defined`);
    }
    try {
      decodeTyped(p, type);
    } catch {
      let shown: string;
      try {
        shown = show(JSON.parse(Buffer.from(p.data ?? []).toString('utf8')));
      } catch {
        shown = 'value';
      }
      throw makeError(`invalid value for search attribute ${name} of type ${TYPE_NAMES[type]}: ${shown}`);
    }
  }
}

/**
 * The server's test for "this value unsets the key" (memo and search attribute
 * upserts): no payload, or data that is empty, JSON null, or an empty JSON list.
 */
export function isNilPayload(p: Payload | undefined): boolean {
  if (!p?.data || p.data.length === 0) return true;
  const text = Buffer.from(p.data).toString('utf8');
  return text === 'null' || text === '[]';
}

/** Drops nil values, as the server does with search attributes given at start; undefined when none remain. */
export function withoutNilPayloads(fields: Record<string, Payload> | undefined): Record<string, Payload> | undefined {
  if (!fields) return undefined;
  const out: Record<string, Payload> = {};
  for (const [k, v] of Object.entries(fields)) if (!isNilPayload(v)) out[k] = v;
  return Object.keys(out).length ? out : undefined;
}

export function decodePayloadValue(p: Payload | undefined): unknown {
  if (!p?.data || p.data.length === 0) return undefined;
  return JSON.parse(Buffer.from(p.data).toString('utf8'));
}

/** Decoded custom attributes of a run, as the visibility query layer wants them. */
export function decodedAttributes(e: Execution): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, p] of Object.entries(e.searchAttributes ?? {})) {
    const v = decodePayloadValue(p);
    if (v === undefined || v === null || (Array.isArray(v) && v.length === 0)) continue;
    out[k] = Array.isArray(v) && v.length === 1 && typeof v[0] !== 'object' ? v : v;
  }
  return out;
}

export function validateUpsert(eng: Engine, e: Execution, a: any): void {
  validateSearchAttributes(
    eng,
    e.namespace,
    a.searchAttributes?.indexedFields,
    (m) => new BadCommand(WftFailedCause.BAD_SEARCH_ATTRIBUTES, m),
  );
}

export function validateStartAttributes(eng: Engine, namespace: string, sa: any): void {
  validateSearchAttributes(eng, namespace, sa?.indexedFields, invalidArgument);
}

export function upsertSearchAttributes(eng: Engine, e: Execution, a: any, completedEventId: number): void {
  const fields = typedSearchAttributes(
    eng,
    e.namespace,
    (a.searchAttributes?.indexedFields ?? {}) as Record<string, Payload>,
  );
  const merged = { ...(e.searchAttributes ?? {}) };
  for (const [k, v] of Object.entries(fields)) {
    if (isNilPayload(v)) delete merged[k];
    else merged[k] = v;
  }
  e.searchAttributes = merged;
  eng.appendEvent(
    e,
    eng.event(EventType.UPSERT_WORKFLOW_SEARCH_ATTRIBUTES, 'upsertWorkflowSearchAttributesEventAttributes', {
      workflowTaskCompletedEventId: completedEventId,
      searchAttributes: { indexedFields: fields },
    }),
  );
}

export function upsertMemo(eng: Engine, e: Execution, a: any, completedEventId: number): void {
  const fields: Record<string, Payload> = a.upsertedMemo?.fields ?? {};
  const merged = { ...(e.memo ?? {}) };
  for (const [k, v] of Object.entries(fields)) {
    if (isNilPayload(v)) delete merged[k];
    else merged[k] = v;
  }
  e.memo = merged;
  eng.appendEvent(
    e,
    eng.event(EventType.WORKFLOW_PROPERTIES_MODIFIED, 'workflowPropertiesModifiedEventAttributes', {
      workflowTaskCompletedEventId: completedEventId,
      upsertedMemo: a.upsertedMemo,
    }),
  );
}
