// List / Count workflow executions over the engine's runs, filtered with the
// visibility query language (devserver/visibility).
import type { Engine } from '../engine/engine';
import type { Execution } from '../engine/state';
import type { Handlers } from './grpc-service';
import { compileVisibilityQuery, compareDefaultVisibilityOrder, VisibilityQueryError, VisibilityRecord, ExecutionStatusName, CompiledQuery } from '../visibility/query';
import { attributeTypes, decodedAttributes } from '../engine/search-attributes';
import { invalidArgument } from '../errors';
import { executionInfo } from './describe';
import { encode, lookupType } from '../proto';

const STATUS: Record<number, ExecutionStatusName> = {
  1: 'Running',
  2: 'Completed',
  3: 'Failed',
  4: 'Canceled',
  5: 'Terminated',
  6: 'ContinuedAsNew',
  7: 'TimedOut',
};

export function toRecord(e: Execution): VisibilityRecord {
  return {
    workflowId: e.workflowId,
    runId: e.runId,
    workflowType: e.workflowType,
    taskQueue: e.taskQueue,
    status: STATUS[e.status],
    startTime: e.startTime,
    executionTime: e.executionTime,
    closeTime: e.closeTime,
    historyLength: e.nextEventId - 1,
    parentWorkflowId: e.parent?.workflowId,
    parentRunId: e.parent?.runId,
    rootWorkflowId: e.root?.workflowId,
    rootRunId: e.root?.runId,
    historySizeBytes: e.historySizeBytes,
    stateTransitionCount: e.stateTransitions,
    searchAttributes: decodedAttributes(e),
  };
}

function compile(eng: Engine, namespace: string, query: string | undefined, count: boolean): CompiledQuery {
  try {
    return compileVisibilityQuery(query ?? '', attributeTypes(eng, namespace), { allowGroupBy: count });
  } catch (err) {
    if (err instanceof VisibilityQueryError) throw invalidArgument(`invalid query: ${err.message}`);
    throw err;
  }
}

function matching(eng: Engine, namespace: string, q: CompiledQuery): { e: Execution; r: VisibilityRecord }[] {
  const out: { e: Execution; r: VisibilityRecord }[] = [];
  for (const e of eng.executions.values()) {
    if (e.namespace !== namespace) continue;
    const r = toRecord(e);
    if (q.matches(r)) out.push({ e, r });
  }
  return out;
}

export function visibilityHandlers(eng: Engine): Handlers {
  const list = (req: any) => {
    const ns = eng.namespace(req.namespace);
    const q = compile(eng, ns.name, req.query, false);
    const rows = matching(eng, ns.name, q);
    rows.sort((a, b) => (q.compare ?? compareDefaultVisibilityOrder)(a.r, b.r));
    const offset = req.nextPageToken?.length ? Number(Buffer.from(req.nextPageToken).toString()) || 0 : 0;
    const size = req.pageSize > 0 ? req.pageSize : 1000;
    const page = rows.slice(offset, offset + size);
    return {
      executions: page.map((x) => executionInfo(eng, x.e)),
      nextPageToken: offset + size < rows.length ? Buffer.from(String(offset + size)) : undefined,
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
      for (const { e } of rows) groups.set(e.status, (groups.get(e.status) ?? 0) + 1);
      const payloadType = lookupType('temporal.api.common.v1.Payload');
      void payloadType;
      return {
        count: rows.length,
        groups: [...groups.entries()].map(([status, count]) => ({
          groupValues: [{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(STATUS[status])) }],
          count,
        })),
      };
    },
    getSearchAttributes: () => ({ keys: {} }),
  };
}

export { encode };
