// ListActivityExecutions and CountActivityExecutions: standalone activities
// filtered with the visibility query language, where ActivityId and ActivityType
// are attributes beside ExecutionStatus, TaskQueue, the times and the
// namespace's custom search attributes.
import type { Engine } from '../engine/engine';
import type { Handlers } from './grpc-service';
import type { ActivityExecutions } from '../engine/activity-executions';
import { ACTIVITY_QUERY_FIELDS, ActivityRun, activityListInfo, activityRecord } from '../engine/activity-run';
import {
  compileVisibilityQuery,
  compareDefaultVisibilityOrder,
  CompiledQuery,
  SearchAttributeType,
  VisibilityQueryError,
  VisibilityRecord,
} from '../visibility/query';
import { attributeTypes } from '../engine/search-attributes';
import { invalidArgument, invalidPageToken } from '../errors';

const MAX_PAGE_SIZE = 1000;

function compile(eng: Engine, namespace: string, query: string | undefined, count: boolean): CompiledQuery {
  const types = new Map<string, SearchAttributeType>(attributeTypes(eng, namespace));
  for (const f of ACTIVITY_QUERY_FIELDS) types.set(f, 'Keyword');
  try {
    return compileVisibilityQuery(query ?? '', types, { allowGroupBy: count });
  } catch (err) {
    if (err instanceof VisibilityQueryError) throw invalidArgument(`invalid query: ${err.message}`);
    throw err;
  }
}

interface Row {
  a: ActivityRun;
  r: VisibilityRecord;
}

function matching(eng: Engine, reg: ActivityExecutions, req: any, count: boolean): { q: CompiledQuery; rows: Row[] } {
  const ns = eng.namespace(req.namespace);
  const q = compile(eng, ns.name, req.query, count);
  const rows: Row[] = [];
  for (const a of reg.runs.values()) {
    if (a.namespace !== ns.name) continue;
    const r = activityRecord(a);
    if (q.matches(r)) rows.push({ a, r });
  }
  return { q, rows };
}

function pageOffset(token: Uint8Array | undefined): number {
  if (!token?.length) return 0;
  const n = Number(Buffer.from(token).toString('utf8'));
  if (!Number.isInteger(n) || n < 0) throw invalidPageToken();
  return n;
}

function keywordPayload(value: string): object {
  return {
    metadata: { encoding: Buffer.from('json/plain'), type: Buffer.from('Keyword') },
    data: Buffer.from(JSON.stringify(value)),
  };
}

export function activityExecutionVisibility(eng: Engine, reg: ActivityExecutions): Handlers {
  return {
    listActivityExecutions: (req) => {
      const { q, rows } = matching(eng, reg, req, false);
      const compare = q.compare ?? compareDefaultVisibilityOrder;
      rows.sort((x, y) => compare(x.r, y.r));
      const from = pageOffset(req.nextPageToken);
      const size = req.pageSize > 0 && req.pageSize <= MAX_PAGE_SIZE ? req.pageSize : MAX_PAGE_SIZE;
      const page = rows.slice(from, from + size);
      const next = from + page.length;
      return {
        executions: page.map((x) => activityListInfo(x.a)),
        nextPageToken: next < rows.length ? Buffer.from(String(next)) : undefined,
      };
    },
    countActivityExecutions: (req) => {
      const { q, rows } = matching(eng, reg, req, true);
      if (!q.groupBy?.length) return { count: rows.length };
      const groups = new Map<number, { status: string; count: number }>();
      for (const { a, r } of rows) {
        const g = groups.get(a.status) ?? { status: r.status, count: 0 };
        g.count++;
        groups.set(a.status, g);
      }
      return {
        count: rows.length,
        groups: [...groups.entries()]
          .sort(([x], [y]) => x - y)
          .map(([, g]) => ({ groupValues: [keywordPayload(g.status)], count: g.count })),
      };
    },
  };
}
