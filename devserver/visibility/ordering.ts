// Sorting. ORDER BY exists only on the Elasticsearch visibility store (SQL stores reject
// it), so custom ordering follows Elasticsearch: absent values sort last in either direction,
// a KeywordList sorts by its smallest element ascending and its largest descending, keywords
// (including ExecutionStatus, stored there as its name) sort by code point, and RunId DESC
// breaks ties so pages are stable. The default order follows the SQL store instead, since the
// real dev server runs on SQLite: running first, then CloseTime DESC, StartTime DESC, RunId.
import { ResolvedAttribute, resolveAttribute } from './attributes';
import { VisibilityQueryError } from './errors';
import type { AttrRef } from './parser';
import type { SearchAttributeType, VisibilityRecord } from './types';
import { Scalar, compareCodePoints, compareScalars, recordValue } from './values';

type Comparator = (a: VisibilityRecord, b: VisibilityRecord) => number;
type SortKey = (r: VisibilityRecord) => Scalar | null;

export function buildOrderComparator(
  items: readonly { attr: AttrRef; desc: boolean }[],
  custom: ReadonlyMap<string, SearchAttributeType>,
): Comparator {
  const keys = items.map(({ attr: ref, desc }) => {
    const attr = resolveAttribute(ref.name, custom, ref.pos + 1);
    if (attr.type === 'Text') {
      throw new VisibilityQueryError(
        'unsupported',
        `unable to sort by search attribute type Text ('${attr.name}')`,
        attr.name,
        ref.pos + 1,
      );
    }
    return { key: sortKey(attr, desc), desc };
  });
  return (a, b) => {
    for (const { key, desc } of keys) {
      const c = compareWithMissingLast(key(a), key(b), desc);
      if (c !== 0) return c;
    }
    return compareCodePoints(b.runId, a.runId);
  };
}

function sortKey(attr: ResolvedAttribute, desc: boolean): SortKey {
  if (attr.domain === 'status') return (r) => (recordValue('status', attr.read(r)) === null ? null : r.status);
  if (attr.domain === 'keywordList') {
    return (r) => {
      const list = recordValue('keywordList', attr.read(r)) as string[] | null;
      if (list === null) return null;
      return list.reduce((best, v) => ((desc ? compareCodePoints(v, best) > 0 : compareCodePoints(v, best) < 0) ? v : best));
    };
  }
  return (r) => recordValue(attr.domain, attr.read(r)) as Scalar | null;
}

function compareWithMissingLast(x: Scalar | null, y: Scalar | null, desc: boolean): number {
  if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
  const c = compareScalars(x, y);
  return desc ? -c : c;
}

/**
 * The order the real SQLite-backed dev server lists executions in when no ORDER BY is given:
 * open executions first, then most recently closed, then most recently started, then RunId.
 */
export function compareDefaultVisibilityOrder(a: VisibilityRecord, b: VisibilityRecord): number {
  const closeA = a.closeTime ?? Number.POSITIVE_INFINITY;
  const closeB = b.closeTime ?? Number.POSITIVE_INFINITY;
  if (closeA !== closeB) return closeA > closeB ? -1 : 1;
  if (a.startTime !== b.startTime) return a.startTime > b.startTime ? -1 : 1;
  return compareCodePoints(a.runId, b.runId);
}
