// OperatorService: custom search attribute registration (what the real dev
// server's operator API offers and SDK tests use).
import type { Engine } from '../engine/engine';
import type { Handlers } from './grpc-service';
import { IndexedValueType } from '../proto';
import { alreadyExists, invalidArgument, notFound } from '../errors';
import { SYSTEM_ATTRIBUTES } from '../engine/search-attributes';

const VALID = new Set(Object.values(IndexedValueType).filter((v) => v !== 0));

export function operatorHandlers(eng: Engine): Handlers {
  return {
    addSearchAttributes: async (req) => {
      const ns = eng.namespace(req.namespace || 'default');
      const attrs: Record<string, number> = req.searchAttributes ?? {};
      if (Object.keys(attrs).length === 0) throw invalidArgument('SearchAttributes are not set on request.');
      for (const [name, type] of Object.entries(attrs)) {
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw invalidArgument(`Search attribute name ${name} is invalid.`);
        if (SYSTEM_ATTRIBUTES[name] !== undefined) throw invalidArgument(`Search attribute ${name} is reserved by system.`);
        if (!VALID.has(type)) throw invalidArgument(`Unknown search attribute type: ${type}.`);
        const existing = ns.searchAttributes[name];
        if (existing !== undefined && existing !== type) throw alreadyExists(`Search attribute ${name} already exists with another type.`);
      }
      Object.assign(ns.searchAttributes, attrs);
      eng.markNamespaceDirty(ns);
      await eng.flush();
      return {};
    },
    removeSearchAttributes: async (req) => {
      const ns = eng.namespace(req.namespace || 'default');
      for (const name of req.searchAttributes ?? []) {
        if (ns.searchAttributes[name] === undefined) throw notFound(`Search attribute ${name} doesn't exist.`);
        delete ns.searchAttributes[name];
      }
      eng.markNamespaceDirty(ns);
      await eng.flush();
      return {};
    },
    listSearchAttributes: (req) => {
      const ns = eng.namespace(req.namespace || 'default');
      return { customAttributes: ns.searchAttributes, systemAttributes: SYSTEM_ATTRIBUTES, storageSchema: {} };
    },
  };
}
