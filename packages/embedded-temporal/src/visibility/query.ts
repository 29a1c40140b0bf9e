// Entry point of the visibility query language used by ListWorkflowExecutions and
// CountWorkflowExecutions: compiles a List Filter string once into a record predicate and an
// optional ORDER BY comparator. Pure: no I/O, no clock, no engine state.
import { NAMESPACE_DIVISION, resolveAttribute } from './attributes';
import { VisibilityQueryError } from './errors';
import { buildOrder } from './ordering';
import { parseQuery } from './parser';
import { PredicateCompiler } from './predicates';
import type { CompileOptions, CompiledQuery, SearchAttributeType, VisibilityRecord } from './types';

export type {
  CompileOptions,
  CompiledQuery,
  ExecutionStatusName,
  OrderByItem,
  RecordOrder,
  SearchAttributeType,
  SortValue,
  VisibilityRecord,
} from './types';
export { VisibilityQueryError } from './errors';
export type { VisibilityQueryErrorKind } from './errors';
export { compareDefaultVisibilityOrder, DEFAULT_ORDER } from './ordering';

/** Throws VisibilityQueryError (message names the unsupported/invalid part) for anything unsupported or malformed. Empty/blank query matches everything. */
export function compileVisibilityQuery(
  query: string,
  customAttributes: ReadonlyMap<string, SearchAttributeType>,
  options: CompileOptions = {},
): CompiledQuery {
  const parsed = parseQuery(query);
  const compiler = new PredicateCompiler(customAttributes);
  const where = parsed.where ? compiler.compile(parsed.where) : undefined;
  const groupBy = checkGroupBy(parsed.groupBy, customAttributes, options);

  // Like the server, hide executions that belong to an internal division (e.g. scheduler
  // workflows) unless the query asks about divisions explicitly.
  const hideDivisions = !compiler.mentionedFields.has(NAMESPACE_DIVISION);
  const inDefaultDivision = (r: VisibilityRecord) => {
    const division = r.searchAttributes?.[NAMESPACE_DIVISION];
    return division === undefined || division === null;
  };

  const result: CompiledQuery = {
    matches: (r) => (!hideDivisions || inDefaultDivision(r)) && (where === undefined || where(r) === true),
  };
  if (parsed.orderBy.length > 0) {
    const order = buildOrder(parsed.orderBy, customAttributes);
    result.order = order;
    result.compare = (a, b) => order.compareKeys(order.keyOf(a), order.keyOf(b));
    result.orderBy = parsed.orderBy.map(({ attr, desc }) => ({
      attribute: attr.name,
      direction: desc ? 'DESC' : 'ASC',
    }));
  }
  if (groupBy) result.groupBy = groupBy;
  return result;
}

function checkGroupBy(
  refs: readonly { name: string; pos: number }[],
  custom: ReadonlyMap<string, SearchAttributeType>,
  options: CompileOptions,
): string[] | undefined {
  if (refs.length === 0) return undefined;
  const first = refs[0];
  if (!options.allowGroupBy) {
    throw new VisibilityQueryError(
      'unsupported',
      "'GROUP BY' clause (only CountWorkflowExecutions accepts it)",
      'GROUP BY',
      first.pos + 1,
    );
  }
  if (refs.length > 1) {
    throw new VisibilityQueryError(
      'unsupported',
      "'GROUP BY' clause supports only a single field",
      refs[1].name,
      refs[1].pos + 1,
    );
  }
  const attr = resolveAttribute(first.name, custom, first.pos + 1);
  if (attr.field !== 'ExecutionStatus') {
    throw new VisibilityQueryError(
      'unsupported',
      `'GROUP BY' clause is only supported for ExecutionStatus search attribute, got ${attr.name}`,
      attr.name,
      first.pos + 1,
    );
  }
  return ['ExecutionStatus'];
}
