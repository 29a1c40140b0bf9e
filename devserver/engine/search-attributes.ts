// Search attributes and memo: validation against the namespace's registered
// attributes, upserts from workflows, and decoding for visibility queries.
import type { Engine } from './engine';
import type { Execution, Payload } from './state';
import { EventType, IndexedValueType, WftFailedCause } from '../proto';
import { BadCommand } from './commands';
import { invalidArgument } from '../errors';
import type { SearchAttributeType } from '../visibility/query';

/** Attributes every namespace has (the subset we index). */
export const SYSTEM_ATTRIBUTES: Record<string, number> = {
  WorkflowId: IndexedValueType.KEYWORD,
  RunId: IndexedValueType.KEYWORD,
  WorkflowType: IndexedValueType.KEYWORD,
  ExecutionStatus: IndexedValueType.KEYWORD,
  StartTime: IndexedValueType.DATETIME,
  CloseTime: IndexedValueType.DATETIME,
  ExecutionTime: IndexedValueType.DATETIME,
  TaskQueue: IndexedValueType.KEYWORD,
  HistoryLength: IndexedValueType.INT,
  ExecutionDuration: IndexedValueType.INT,
  ParentWorkflowId: IndexedValueType.KEYWORD,
  ParentRunId: IndexedValueType.KEYWORD,
  RootWorkflowId: IndexedValueType.KEYWORD,
  RootRunId: IndexedValueType.KEYWORD,
  TemporalChangeVersion: IndexedValueType.KEYWORD_LIST,
  BinaryChecksums: IndexedValueType.KEYWORD_LIST,
  BuildIds: IndexedValueType.KEYWORD_LIST,
  BatcherUser: IndexedValueType.KEYWORD,
  TemporalScheduledStartTime: IndexedValueType.DATETIME,
  TemporalScheduledById: IndexedValueType.KEYWORD,
  TemporalSchedulePaused: IndexedValueType.BOOL,
  TemporalNamespaceDivision: IndexedValueType.KEYWORD,
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

/** Throws (via makeError) when an attribute is not registered or a value is malformed. */
export function validateSearchAttributes(eng: Engine, namespace: string, fields: Record<string, Payload> | undefined, makeError: (m: string) => Error): void {
  if (!fields) return;
  const ns = eng.namespace(namespace);
  for (const [name, p] of Object.entries(fields)) {
    const registered = ns.searchAttributes[name] ?? (name.startsWith('Temporal') ? SYSTEM_ATTRIBUTES[name] : undefined);
    if (registered === undefined) {
      throw makeError(`search attribute ${name} is not defined`);
    }
    try {
      decodePayloadValue(p);
    } catch {
      throw makeError(`invalid value for search attribute ${name}`);
    }
  }
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
  validateSearchAttributes(eng, e.namespace, a.searchAttributes?.indexedFields, (m) => new BadCommand(WftFailedCause.BAD_SEARCH_ATTRIBUTES, m));
}

export function validateStartAttributes(eng: Engine, namespace: string, sa: any): void {
  validateSearchAttributes(eng, namespace, sa?.indexedFields, invalidArgument);
}

export function upsertSearchAttributes(eng: Engine, e: Execution, a: any, completedEventId: number): void {
  const fields: Record<string, Payload> = a.searchAttributes?.indexedFields ?? {};
  const merged = { ...(e.searchAttributes ?? {}) };
  for (const [k, v] of Object.entries(fields)) {
    // An empty payload (or JSON null / []) unsets the attribute.
    const decoded = decodePayloadValue(v);
    if (decoded === undefined || decoded === null || (Array.isArray(decoded) && decoded.length === 0)) delete merged[k];
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
    if (!v?.data || v.data.length === 0) delete merged[k];
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
