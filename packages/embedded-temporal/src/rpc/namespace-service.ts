// WorkflowService namespace methods: register, describe, list, update. The
// "namespace set / registered" checks happen before these run (request-checks.ts).
import type { Engine } from '../engine/engine';
import type { Handlers } from './grpc-service';
import { checkedRetention, checkNamespaceName, describeNamespace } from '../engine/namespaces';
import { invalidArgument, invalidPageToken, namespaceAlreadyExists, namespaceNotFound } from '../errors';

const DEFAULT_LIST_PAGE = 100;

export function namespaceHandlers(eng: Engine): Handlers {
  return {
    registerNamespace: async (req) => {
      checkNamespaceName(req.namespace);
      if (req.isGlobalNamespace) throw invalidArgument('Cannot register global namespace when not enabled');
      const retentionMs = checkedRetention(req.workflowExecutionRetentionPeriod);
      if (eng.namespaces.has(req.namespace)) throw namespaceAlreadyExists(req.namespace);
      const ns = eng.ensureNamespace(req.namespace, retentionMs);
      ns.description = req.description ?? '';
      ns.ownerEmail = req.ownerEmail ?? '';
      ns.data = { ...(req.data ?? {}) };
      eng.markNamespaceDirty(ns);
      await eng.flush();
      return {};
    },

    describeNamespace: (req) => {
      if (req.id) {
        if (req.namespace)
          throw invalidArgument('GetNamespace operation failed. Both ID and Name specified in request.');
        const ns = eng.namespaceById(req.id);
        if (!ns) throw namespaceNotFound(req.id);
        return describeNamespace(ns, eng.limits);
      }
      return describeNamespace(eng.namespace(req.namespace), eng.limits);
    },

    listNamespaces: (req) => {
      const all = [...eng.namespaces.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const size = req.pageSize > 0 ? req.pageSize : DEFAULT_LIST_PAGE;
      const offset = pageOffset(req.nextPageToken);
      const page = all.slice(offset, offset + size);
      const next = offset + size < all.length ? Buffer.from(JSON.stringify({ offset: offset + size })) : undefined;
      return { namespaces: page.map((ns) => describeNamespace(ns, eng.limits)), nextPageToken: next };
    },

    updateNamespace: async (req) => {
      const ns = eng.namespace(req.namespace);
      // Validate everything before changing anything, so a rejected update changes nothing.
      const retentionMs = req.config?.workflowExecutionRetentionTtl
        ? checkedRetention(req.config.workflowExecutionRetentionTtl)
        : undefined;
      const info = req.updateInfo ?? {};
      if (info.description !== undefined) ns.description = info.description;
      if (info.ownerEmail !== undefined) ns.ownerEmail = info.ownerEmail;
      if (info.data) Object.assign(ns.data, info.data);
      if (retentionMs !== undefined) ns.retentionMs = retentionMs;
      eng.markNamespaceDirty(ns);
      await eng.flush();
      return { ...describeNamespace(ns, eng.limits), isGlobalNamespace: false };
    },
  };
}

function pageOffset(token: Uint8Array | undefined): number {
  if (!token?.length) return 0;
  try {
    const { offset } = JSON.parse(Buffer.from(token).toString('utf8'));
    if (Number.isInteger(offset) && offset >= 0) return offset;
  } catch {
    // fall through: not one of our tokens
  }
  throw invalidPageToken();
}
