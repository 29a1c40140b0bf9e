// Namespace records and their wire form (DescribeNamespace / ListNamespaces).
import { randomUUID } from 'node:crypto';
import { durFromMs } from '../proto';

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

export function describeNamespace(ns: NamespaceRecord): object {
  return {
    namespaceInfo: {
      name: ns.name,
      state: 1, // REGISTERED
      description: ns.description,
      ownerEmail: ns.ownerEmail,
      data: ns.data,
      id: ns.id,
      capabilities: {
        eagerWorkflowStart: false,
        syncUpdate: true,
        asyncUpdate: true,
        workerHeartbeats: false,
        reportedProblemsSearchAttribute: false,
        workflowPauses: false,
        workerPollCompleteOnShutdown: false,
      },
      supportsSchedules: true,
    },
    config: {
      workflowExecutionRetentionTtl: durFromMs(ns.retentionMs),
      historyArchivalState: 2, // DISABLED
      visibilityArchivalState: 2,
      customSearchAttributeAliases: Object.fromEntries(Object.keys(ns.searchAttributes).map((k) => [k, k])),
    },
    replicationConfig: { activeClusterName: 'active', clusters: [{ clusterName: 'active' }], state: 1 },
    failoverVersion: 0,
    isGlobalNamespace: false,
  };
}
