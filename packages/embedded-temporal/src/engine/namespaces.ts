// Namespace records, the real server's rules for registering and updating them,
// and their wire form (DescribeNamespace / ListNamespaces).
import { randomUUID } from 'node:crypto';
import type { Engine } from './engine';
import { IndexedValueType, durFromMs, msFromDur } from '../proto';
import { invalidArgument } from '../errors';
import { DEFAULT_LIMITS, Limits, WFT_COMPLETION_SIZE_LIMIT } from './limits';

export interface NamespaceRecord {
  name: string;
  id: string;
  description: string;
  ownerEmail: string;
  retentionMs: number;
  data: Record<string, string>;
  /** Custom search attributes registered through the operator API: name -> IndexedValueType. */
  searchAttributes: Record<string, number>;
}

export function newNamespace(name: string, retentionMs: number): NamespaceRecord {
  return { name, id: randomUUID(), description: '', ownerEmail: '', retentionMs, data: {}, searchAttributes: {} };
}

/**
 * The real server's own namespace, present (and listed) from its first start, with
 * its well-known id. Nothing here runs in it; it exists so that listings match.
 */
export function ensureSystemNamespace(eng: Engine): void {
  if (eng.namespaces.has(SYSTEM_NAMESPACE)) return;
  const ns = eng.ensureNamespace(SYSTEM_NAMESPACE, 7 * 24 * 3600_000);
  Object.assign(ns, {
    id: '32049b68-7872-4094-8e63-d0dd59896a83',
    description: 'Temporal internal system namespace',
    ownerEmail: 'temporal-core@temporal.io',
  });
  eng.markNamespaceDirty(ns);
}
export const SYSTEM_NAMESPACE = 'temporal-system';

/** The real server's default system.namespaceMinRetentionLocal. */
export const MIN_RETENTION_MS = 3600_000;
const MAX_NAME_LENGTH = 1000;

/** Retention of a register/update request; throws INVALID_ARGUMENT like the real namespace handler. */
export function checkedRetention(wire: unknown, minMs = MIN_RETENTION_MS): number {
  const ms = msFromDur(wire);
  if (!Number.isFinite(ms) || ms < minMs) throw invalidArgument('A valid retention period is not set on request.');
  return ms;
}

/**
 * The namespaces the command line asks for, each with the --search-attribute
 * attributes (the CLI registers them on every namespace it creates). Types are the
 * CLI's names: Keyword, KeywordList, Datetime...
 */
export function setUpStartupNamespaces(
  eng: Engine,
  names: readonly string[],
  searchAttributes: Record<string, string>,
): void {
  for (const name of names) {
    const ns = eng.ensureNamespace(name);
    for (const [attr, typeName] of Object.entries(searchAttributes)) {
      const type = IndexedValueType[typeName.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()];
      if (type) ns.searchAttributes[attr] = type;
    }
    eng.markNamespaceDirty(ns);
  }
}

export function checkNamespaceName(name: string): void {
  if (name.length > MAX_NAME_LENGTH) throw invalidArgument('Namespace length exceeds limit.');
}

export function describeNamespace(ns: NamespaceRecord, limits: Limits = DEFAULT_LIMITS): object {
  return {
    namespaceInfo: {
      name: ns.name,
      state: 1, // REGISTERED
      description: ns.description,
      ownerEmail: ns.ownerEmail,
      data: ns.data,
      id: ns.id,
      // Only what this engine does: an SDK may act on a capability it sees.
      capabilities: {
        eagerWorkflowStart: true,
        syncUpdate: true,
        asyncUpdate: true,
        standaloneActivities: true,
        standaloneActivityStartDelay: true,
        workerPollCompleteOnShutdown: true,
      },
      // The limits in force: the SDK's worker checks its completions against them (failing
      // an oversized one itself, PAYLOADS_TOO_LARGE), as it does against a real server.
      limits: {
        blobSizeLimitError: limits.blobSizeError,
        memoSizeLimitError: limits.memoSizeError,
        workflowTaskCompletionSizeLimitError: WFT_COMPLETION_SIZE_LIMIT,
      },
      supportsSchedules: true,
    },
    config: {
      workflowExecutionRetentionTtl: durFromMs(ns.retentionMs),
      badBinaries: { binaries: {} },
      historyArchivalState: 1, // DISABLED
      visibilityArchivalState: 1,
      customSearchAttributeAliases: searchAttributeColumns(ns),
    },
    // A local namespace: the real server leaves its replication state unset.
    replicationConfig: { activeClusterName: 'active', clusters: [{ clusterName: 'active' }] },
    failoverVersion: 0,
    isGlobalNamespace: false,
  };
}

const COLUMN_PREFIX: Record<number, string> = {
  [IndexedValueType.BOOL]: 'Bool',
  [IndexedValueType.DATETIME]: 'Datetime',
  [IndexedValueType.DOUBLE]: 'Double',
  [IndexedValueType.INT]: 'Int',
  [IndexedValueType.KEYWORD]: 'Keyword',
  [IndexedValueType.KEYWORD_LIST]: 'KeywordList',
  [IndexedValueType.TEXT]: 'Text',
};

/**
 * Custom attributes by the SQL visibility column each one occupies (Keyword01...), as
 * the real dev server reports them. Columns are handed out per type in registration
 * order; the real server picks a free one at random.
 */
function searchAttributeColumns(ns: NamespaceRecord): Record<string, string> {
  const used: Record<number, number> = {};
  const out: Record<string, string> = {};
  for (const [name, type] of Object.entries(ns.searchAttributes)) {
    used[type] = (used[type] ?? 0) + 1;
    out[`${COLUMN_PREFIX[type] ?? 'Keyword'}${String(used[type]).padStart(2, '0')}`] = name;
  }
  return out;
}
