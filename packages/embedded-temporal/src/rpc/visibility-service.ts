// List / Count / Scan workflow executions over the engine's runs, filtered with the
// visibility query language (src/visibility), paged and grouped the way the
// real SQLite-backed dev server does it. Page tokens hold the last row's sort key
// (visibility/page-token.ts).
import type { Engine } from '../engine/engine';
import type { Execution } from '../engine/state';
import type { Handlers } from './grpc-service';
import {
  compileVisibilityQuery,
  DEFAULT_ORDER,
  VisibilityQueryError,
  VisibilityRecord,
  CompiledQuery,
} from '../visibility/query';
import { decodePageToken, encodePageToken } from '../visibility/page-token';
import { attributeTypes, SYSTEM_ATTRIBUTES } from '../engine/search-attributes';
import { toRecord } from '../engine/visibility-record';

/** The real frontend's frontend.visibilityMaxPageSize: larger (or no) page sizes are clamped to it. */
const MAX_PAGE_SIZE = 1000;
import { invalidArgument, invalidPageToken } from '../errors';
import { listedExecutionInfo } from './describe';

function compile(eng: Engine, namespace: string, query: string | undefined, count: boolean): CompiledQuery {
  try {
    return compileVisibilityQuery(query ?? '', attributeTypes(eng, namespace), { allowGroupBy: count });
  } catch (err) {
    if (err instanceof VisibilityQueryError) throw invalidArgument(`invalid query: ${err.message}`);
    throw err;
  }
}

interface Row {
  key: string;
  r: VisibilityRecord;
}

/** Runs in memory and archived closed runs (their records are kept in the archive index). */
function matching(eng: Engine, namespace: string, q: CompiledQuery): Row[] {
  const out: Row[] = [];
  for (const [key, e] of eng.executions) {
    if (e.namespace !== namespace) continue;
    const r = toRecord(e);
    if (q.matches(r)) out.push({ key, r });
  }
  for (const { key, record } of eng.archive?.records(namespace) ?? [])
    if (q.matches(record)) out.push({ key, r: record });
  return out;
}

const STATUS_NUMBER: Record<string, number> = {
  Running: 1,
  Completed: 2,
  Failed: 3,
  Canceled: 4,
  Terminated: 5,
  ContinuedAsNew: 6,
  TimedOut: 7,
};
const STATUS: Record<number, string> = Object.fromEntries(Object.entries(STATUS_NUMBER).map(([k, v]) => [v, k]));

export function visibilityHandlers(eng: Engine): Handlers {
  const list = (req: any) => {
    const ns = eng.namespace(req.namespace);
    const q = compile(eng, ns.name, req.query, false);
    const order = q.order ?? DEFAULT_ORDER;
    const after = req.nextPageToken?.length ? decodePageToken(req.nextPageToken, order) : undefined;
    if (req.nextPageToken?.length && !after) throw invalidPageToken();
    const size = req.pageSize > 0 && req.pageSize <= MAX_PAGE_SIZE ? req.pageSize : MAX_PAGE_SIZE;
    let rows = matching(eng, ns.name, q).map((x) => ({ ...x, k: order.keyOf(x.r) }));
    if (after) rows = rows.filter((x) => order.compareKeys(after, x.k) < 0);
    rows.sort((a, b) => order.compareKeys(a.k, b.k));
    const page = rows.slice(0, size);
    return {
      executions: page.map((x) => listedExecutionInfo(eng, eng.run(x.key) as Execution)),
      nextPageToken: rows.length > size ? encodePageToken(page[page.length - 1].k) : undefined,
    };
  };
  return {
    listWorkflowExecutions: list,
    scanWorkflowExecutions: list,
    countWorkflowExecutions: (req) => {
      const ns = eng.namespace(req.namespace);
      const q = compile(eng, ns.name, req.query, true);
      const rows = matching(eng, ns.name, q);
      if (!q.groupBy?.length) return { count: rows.length };
      const groups = new Map<number, number>();
      for (const { r } of rows) groups.set(STATUS_NUMBER[r.status], (groups.get(STATUS_NUMBER[r.status]) ?? 0) + 1);
      return {
        count: rows.length,
        // The SQL store groups by the status column, so groups come in status order.
        groups: [...groups.entries()]
          .sort(([a], [b]) => a - b)
          .map(([status, count]) => ({ groupValues: [keywordPayload(STATUS[status])], count })),
      };
    },
    getSearchAttributes: () => {
      const keys: Record<string, number> = { ...SYSTEM_ATTRIBUTES };
      for (const ns of eng.namespaces.values()) Object.assign(keys, ns.searchAttributes);
      return { keys };
    },
  };
}

/** A search attribute value as the server encodes it: JSON with its type in the metadata. */
function keywordPayload(value: string): object {
  return {
    metadata: { encoding: Buffer.from('json/plain'), type: Buffer.from('Keyword') },
    data: Buffer.from(JSON.stringify(value)),
  };
}
