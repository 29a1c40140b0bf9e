// Sorting. ORDER BY exists only on the Elasticsearch visibility store (SQL stores reject
// it), so custom ordering follows Elasticsearch: absent values sort last in either direction,
// a KeywordList sorts by its smallest element ascending and its largest descending, keywords
// (including ExecutionStatus, stored there as its name) sort by code point, and RunId DESC
// breaks ties so pages are stable. The default order follows the SQL store instead, since the
// real dev server runs on SQLite: running first, then CloseTime DESC, StartTime DESC, RunId.
import { ResolvedAttribute, resolveAttribute } from './attributes';
import { VisibilityQueryError } from './errors';
import type { AttrRef } from './parser';
import type { RecordOrder, SearchAttributeType, SortValue, VisibilityRecord } from './types';
import { Scalar, compareCodePoints, compareScalars, recordValue } from './values';

type SortKey = (r: VisibilityRecord) => Scalar | null;

/**
 * The ORDER BY as sort keys: a record's key holds its value of each item, then its RunId,
 * so a page token can carry the key alone and resume after it without the record.
 */
export function buildOrder(
  items: readonly { attr: AttrRef; desc: boolean }[],
  custom: ReadonlyMap<string, SearchAttributeType>,
): RecordOrder {
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
  return {
    size: keys.length + 1,
    keyOf: (r) => [...keys.map(({ key }) => key(r)), r.runId],
    compareKeys: (a, b) => {
      for (let i = 0; i < keys.length; i++) {
        const c = compareWithMissingLast(a[i], b[i], keys[i].desc);
        if (c !== 0) return c;
      }
      return compareCodePoints(String(b[keys.length]), String(a[keys.length]));
    },
  };
}

function sortKey(attr: ResolvedAttribute, desc: boolean): SortKey {
  if (attr.domain === 'status') return (r) => (recordValue('status', attr.read(r)) === null ? null : r.status);
  if (attr.domain === 'keywordList') {
    return (r) => {
      const list = recordValue('keywordList', attr.read(r)) as string[] | null;
      if (list === null) return null;
      return list.reduce((best, v) =>
        (desc ? compareCodePoints(v, best) > 0 : compareCodePoints(v, best) < 0) ? v : best,
      );
    };
  }
  return (r) => recordValue(attr.domain, attr.read(r)) as Scalar | null;
}

function compareWithMissingLast(x: SortValue, y: SortValue, desc: boolean): number {
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

/** The default order as sort keys [CloseTime (null while running), StartTime, RunId], for page tokens. */
export const DEFAULT_ORDER: RecordOrder = {
  size: 3,
  keyOf: (r) => [r.closeTime ?? null, r.startTime, r.runId],
  compareKeys: (a, b) => {
    const closeA = a[0] ?? Number.POSITIVE_INFINITY;
    const closeB = b[0] ?? Number.POSITIVE_INFINITY;
    if (closeA !== closeB) return closeA > closeB ? -1 : 1;
    if (a[1] !== b[1]) return (a[1] as number) > (b[1] as number) ? -1 : 1;
    return compareCodePoints(String(a[2]), String(b[2]));
  },
};
