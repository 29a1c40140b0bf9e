// OperatorService: custom search attributes per namespace, with the rules of the
// real dev server's SQL visibility store: a fixed number of slots per type, adding
// an existing name or removing an unknown one is a silent no-op, system and
// reserved names are refused.
import type { Engine } from '../engine/engine';
import type { Handlers } from './grpc-service';
import { IndexedValueType } from '../proto';
import { invalidArgument } from '../errors';
import { SYSTEM_ATTRIBUTES } from '../engine/search-attributes';

const TYPE_LABEL: Record<number, string> = Object.fromEntries(
  Object.entries(IndexedValueType).map(([k, v]) => [
    v,
    k
      .split('_')
      .map((w) => w[0] + w.slice(1).toLowerCase())
      .join(''),
  ]),
);

/** Pre-allocated custom search attribute columns per type in the SQLite visibility schema. */
const SLOTS: Record<number, number> = {
  [IndexedValueType.BOOL]: 3,
  [IndexedValueType.INT]: 3,
  [IndexedValueType.DOUBLE]: 3,
  [IndexedValueType.DATETIME]: 3,
  [IndexedValueType.KEYWORD]: 10,
  [IndexedValueType.KEYWORD_LIST]: 3,
  [IndexedValueType.TEXT]: 3,
};

/** Names the real server keeps for itself besides the system attributes. */
const RESERVED = new Set(['NamespaceId', 'MemoEncoding', 'Memo', 'VisibilityTaskKey', 'BatcherNamespace']);

function isReserved(name: string): boolean {
  return SYSTEM_ATTRIBUTES[name] !== undefined || RESERVED.has(name) || name.startsWith('Temporal');
}

export function operatorHandlers(eng: Engine): Handlers {
  const namespaceOf = (req: any) => {
    if (!req.namespace) throw invalidArgument('Namespace is not set on request.');
    return eng.namespace(req.namespace);
  };
  return {
    addSearchAttributes: async (req) => {
      const attrs: Record<string, number> = req.searchAttributes ?? {};
      if (Object.keys(attrs).length === 0) throw invalidArgument('SearchAttributes are not set on request.');
      for (const [name, type] of Object.entries(attrs)) {
        if (isReserved(name)) throw invalidArgument(`Search attribute ${name} is reserved by system.`);
        if (SLOTS[type] === undefined) throw invalidArgument(`Unknown search attribute type: ${type}.`);
      }
      const ns = namespaceOf(req);
      const added: Record<string, number> = {};
      for (const [name, type] of Object.entries(attrs)) {
        if (ns.searchAttributes[name] !== undefined) {
          eng.logger.warn({ namespace: ns.name, searchAttribute: name }, `Search attribute ${name} already exists.`);
          continue;
        }
        const used = [...Object.values(ns.searchAttributes), ...Object.values(added)].filter((t) => t === type).length;
        if (used >= SLOTS[type]) {
          throw invalidArgument(
            `Unable to create search attributes: cannot have more than ${used} search attribute of type ${TYPE_LABEL[type]}.`,
          );
        }
        added[name] = type;
      }
      if (Object.keys(added).length === 0) return {};
      Object.assign(ns.searchAttributes, added);
      eng.markNamespaceDirty(ns);
      await eng.flush();
      return {};
    },
    removeSearchAttributes: async (req) => {
      const names: string[] = req.searchAttributes ?? [];
      if (names.length === 0) throw invalidArgument('SearchAttributes are not set on request.');
      const ns = namespaceOf(req);
      const doomed = names.filter((n) => ns.searchAttributes[n] !== undefined);
      const system = names.find((n) => ns.searchAttributes[n] === undefined && SYSTEM_ATTRIBUTES[n] !== undefined);
      if (system) throw invalidArgument(`Unable to remove non-custom search attributes: ${system}.`);
      if (doomed.length === 0) return {};
      for (const n of doomed) delete ns.searchAttributes[n];
      eng.markNamespaceDirty(ns);
      await eng.flush();
      return {};
    },
    listSearchAttributes: (req) => {
      const ns = namespaceOf(req);
      return { customAttributes: { ...ns.searchAttributes }, systemAttributes: SYSTEM_ATTRIBUTES, storageSchema: {} };
    },
  };
}
