// Search attribute catalogue and name resolution. The tables reflect the server's system
// attributes (stored as columns) and predefined attributes (stored alongside custom ones in
// the search attribute map). Resolution follows the server's order: names with the reserved
// "Temporal" prefix only ever mean predefined attributes; other names are looked up as
// custom attributes first, then as system/predefined names, then with "Temporal" prepended.
import { VisibilityQueryError } from './errors';
import type { SearchAttributeType, VisibilityRecord } from './types';

/**
 * How values of an attribute are represented once normalised:
 * keyword/text → string, keywordList → string[], number → number, bool → boolean,
 * datetime/duration → bigint nanoseconds, status → enum number.
 */
export type ValueDomain = 'keyword' | 'keywordList' | 'text' | 'number' | 'bool' | 'datetime' | 'duration' | 'status';

export interface ResolvedAttribute {
  /** the name as written in the query, used in every message */
  name: string;
  /** the underlying attribute, e.g. TemporalChangeVersion for the alias ChangeVersion */
  field: string;
  type: SearchAttributeType;
  domain: ValueDomain;
  origin: 'system' | 'predefined' | 'custom';
  /** the raw stored value; undefined/null means the attribute is absent (SQL NULL) */
  read(r: VisibilityRecord): unknown;
}

type SystemDef = { type: SearchAttributeType; domain?: ValueDomain; read(r: VisibilityRecord): unknown };

const RESERVED_PREFIX = 'Temporal';

const SYSTEM: Readonly<Record<string, SystemDef>> = {
  WorkflowId: { type: 'Keyword', read: (r) => r.workflowId },
  RunId: { type: 'Keyword', read: (r) => r.runId },
  WorkflowType: { type: 'Keyword', read: (r) => r.workflowType },
  TaskQueue: { type: 'Keyword', read: (r) => r.taskQueue },
  // Keyword on the wire, but values are status names or enum numbers, compared as enum numbers.
  ExecutionStatus: { type: 'Keyword', domain: 'status', read: (r) => r.status },
  StartTime: { type: 'Datetime', read: (r) => r.startTime },
  ExecutionTime: { type: 'Datetime', read: (r) => r.executionTime },
  CloseTime: { type: 'Datetime', read: (r) => r.closeTime },
  HistoryLength: { type: 'Int', read: (r) => r.historyLength },
  HistorySizeBytes: { type: 'Int', read: (r) => r.historySizeBytes },
  StateTransitionCount: { type: 'Int', read: (r) => r.stateTransitionCount },
  // The server stores CloseTime - ExecutionTime for closed runs only; queries use nanoseconds or duration strings.
  ExecutionDuration: {
    type: 'Int',
    domain: 'duration',
    read: (r) => (r.closeTime === undefined ? undefined : Math.max(0, r.closeTime - r.executionTime)),
  },
  ParentWorkflowId: { type: 'Keyword', read: (r) => r.parentWorkflowId },
  ParentRunId: { type: 'Keyword', read: (r) => r.parentRunId },
  RootWorkflowId: { type: 'Keyword', read: (r) => r.rootWorkflowId },
  RootRunId: { type: 'Keyword', read: (r) => r.rootRunId },
};

/** Server-owned attributes that live in the search attribute map (e.g. SDK patch markers). */
const PREDEFINED: Readonly<Record<string, SearchAttributeType>> = {
  TemporalChangeVersion: 'KeywordList',
  BinaryChecksums: 'KeywordList',
  BuildIds: 'KeywordList',
  BatcherNamespace: 'Keyword',
  BatcherUser: 'Keyword',
  TemporalScheduledStartTime: 'Datetime',
  TemporalScheduledById: 'Keyword',
  TemporalSchedulePaused: 'Bool',
  TemporalNamespaceDivision: 'Keyword',
  TemporalPauseInfo: 'KeywordList',
  TemporalReportedProblems: 'KeywordList',
  TemporalWorkerDeploymentVersion: 'Keyword',
  TemporalWorkflowVersioningBehavior: 'Keyword',
  TemporalWorkerDeployment: 'Keyword',
  TemporalUsedWorkerDeploymentVersions: 'KeywordList',
  TemporalWorkerVersioningRampThreshold: 'Double',
  TemporalExternalPayloadCount: 'Int',
  TemporalExternalPayloadSizeBytes: 'Int',
};

export const NAMESPACE_DIVISION = 'TemporalNamespaceDivision';

const DOMAIN_OF_TYPE: Record<SearchAttributeType, ValueDomain> = {
  Keyword: 'keyword',
  KeywordList: 'keywordList',
  Text: 'text',
  Int: 'number',
  Double: 'number',
  Bool: 'bool',
  Datetime: 'datetime',
};

export function isSystemAttribute(name: string): boolean {
  return Object.prototype.hasOwnProperty.call(SYSTEM, name);
}

function isPredefinedAttribute(name: string): boolean {
  return Object.prototype.hasOwnProperty.call(PREDEFINED, name);
}

function systemAttribute(alias: string, field: string): ResolvedAttribute {
  const def = SYSTEM[field];
  return {
    name: alias,
    field,
    type: def.type,
    domain: def.domain ?? DOMAIN_OF_TYPE[def.type],
    origin: 'system',
    read: def.read,
  };
}

function mapAttribute(
  alias: string,
  field: string,
  type: SearchAttributeType,
  origin: 'predefined' | 'custom',
): ResolvedAttribute {
  return { name: alias, field, type, domain: DOMAIN_OF_TYPE[type], origin, read: (r) => r.searchAttributes?.[field] };
}

export function resolveAttribute(
  name: string,
  custom: ReadonlyMap<string, SearchAttributeType>,
  pos?: number,
): ResolvedAttribute {
  if (name.startsWith(RESERVED_PREFIX)) {
    // "TemporalBuildIds" is an accepted spelling of the unprefixed BuildIds attribute.
    const field = name === `${RESERVED_PREFIX}BuildIds` ? 'BuildIds' : name;
    if (isPredefinedAttribute(field)) return mapAttribute(name, field, PREDEFINED[field], 'predefined');
    throw unknownAttribute(name, pos);
  }
  if (!isSystemAttribute(name) && !isPredefinedAttribute(name)) {
    const type = custom.get(name);
    if (type !== undefined) {
      if (!(type in DOMAIN_OF_TYPE)) {
        throw new VisibilityQueryError(
          'invalid',
          `unknown search attribute type ${String(type)} for ${name}`,
          name,
          pos,
        );
      }
      return mapAttribute(name, name, type, 'custom');
    }
  }
  if (isSystemAttribute(name)) return systemAttribute(name, name);
  if (isPredefinedAttribute(name)) return mapAttribute(name, name, PREDEFINED[name], 'predefined');
  const prefixed = RESERVED_PREFIX + name;
  if (isPredefinedAttribute(prefixed)) return mapAttribute(name, prefixed, PREDEFINED[prefixed], 'predefined');
  throw unknownAttribute(name, pos);
}

function unknownAttribute(name: string, pos?: number): VisibilityQueryError {
  return new VisibilityQueryError('invalid', `unknown search attribute ${name}`, name, pos);
}
