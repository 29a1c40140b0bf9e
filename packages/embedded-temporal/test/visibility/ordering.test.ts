import {
  CompiledQuery,
  VisibilityRecord,
  compareDefaultVisibilityOrder,
  compileVisibilityQuery,
} from '../../src/visibility/query';
import { CUSTOM, HOUR, RECORDS, T0, record } from './fixtures';

const R1 = "refund_%'1";

function order(query: string, records: VisibilityRecord[] = RECORDS): string[] {
  const compiled = compileVisibilityQuery(query, CUSTOM);
  if (!compiled.compare) throw new Error(`no comparator for ${query}`);
  return records
    .filter((r) => compiled.matches(r))
    .sort(compiled.compare)
    .map((r) => r.workflowId);
}

describe('ORDER BY', () => {
  it('is absent without an ORDER BY clause', () => {
    const compiled: CompiledQuery = compileVisibilityQuery("WorkflowId = 'order-1'", CUSTOM);
    expect(compiled.compare).toBeUndefined();
    expect(compiled.orderBy).toBeUndefined();
  });

  it.each<[string, string[]]>([
    ['ORDER BY StartTime', ['order-1', 'order-2', 'payment-1', 'payment-2', R1, 'order-3', 'order-4']],
    ['ORDER BY StartTime ASC', ['order-1', 'order-2', 'payment-1', 'payment-2', R1, 'order-3', 'order-4']],
    ['order by StartTime desc', ['order-4', 'order-3', R1, 'payment-2', 'payment-1', 'order-2', 'order-1']],
    ["TaskQueue = 'payments' ORDER BY StartTime DESC", [R1, 'payment-2', 'payment-1']],
    // Absent values sort last in both directions; among them RunId DESC decides.
    ['ORDER BY CloseTime', ['order-2', 'payment-1', 'payment-2', R1, 'order-4', 'order-3', 'order-1']],
    ['ORDER BY CloseTime DESC', ['order-3', 'order-4', R1, 'payment-2', 'payment-1', 'order-2', 'order-1']],
    ['ORDER BY CustomInt DESC', ['payment-1', 'order-1', 'order-4', 'order-2', R1, 'payment-2', 'order-3']],
    ['ORDER BY CustomInt', ['order-2', 'order-4', 'payment-1', 'order-1', R1, 'payment-2', 'order-3']],
    // Multiple keys: ties on the first fall through to the second; RunId DESC breaks the rest.
    ['ORDER BY CustomInt DESC, StartTime', ['order-1', 'payment-1', 'order-4', 'order-2', 'payment-2', R1, 'order-3']],
    [
      'ORDER BY TaskQueue, WorkflowType DESC',
      ['order-4', 'order-3', 'order-2', 'order-1', R1, 'payment-2', 'payment-1'],
    ],
    // Keywords sort by code point: upper case before lower case.
    ['ORDER BY CustomKeyword', ['payment-1', 'order-1', 'order-2', R1, 'payment-2', 'order-4', 'order-3']],
    ['ORDER BY CustomDouble DESC', [R1, 'order-2', 'order-1', 'payment-2', 'payment-1', 'order-4', 'order-3']],
    [
      'ORDER BY CustomBool DESC, WorkflowId',
      ['order-1', 'order-4', 'order-2', 'order-3', 'payment-1', 'payment-2', R1],
    ],
    ['ORDER BY CustomDatetime', ['order-1', 'order-2', 'payment-1', R1, 'payment-2', 'order-4', 'order-3']],
    // A KeywordList sorts by its smallest element ascending, its largest descending.
    ['ORDER BY CustomKeywordList', ['order-2', 'order-3', 'order-1', R1, 'payment-2', 'payment-1', 'order-4']],
    ['ORDER BY CustomKeywordList DESC', ['order-3', 'order-1', 'order-2', R1, 'payment-2', 'payment-1', 'order-4']],
    ['ORDER BY HistoryLength DESC', ['order-2', 'payment-1', 'order-1', R1, 'payment-2', 'order-4', 'order-3']],
    [
      'ORDER BY ExecutionDuration, WorkflowId',
      ['payment-2', 'order-4', 'order-2', 'order-3', 'payment-1', R1, 'order-1'],
    ],
    ['ORDER BY `WorkflowId` DESC', [R1, 'payment-2', 'payment-1', 'order-4', 'order-3', 'order-2', 'order-1']],
  ])('%s', (query, expected) => {
    expect(order(query)).toEqual(expected);
  });

  it('sorts ExecutionStatus by name, as the Elasticsearch store does', () => {
    expect(order('ORDER BY ExecutionStatus')).toEqual([
      'order-3',
      'order-2',
      R1,
      'payment-1',
      'order-1',
      'order-4',
      'payment-2',
    ]);
  });

  it('breaks full ties by RunId descending for stable pages', () => {
    const recs = [
      record({ workflowId: 'a', runId: 'r1' }),
      record({ workflowId: 'b', runId: 'r3' }),
      record({ workflowId: 'c', runId: 'r2' }),
    ];
    expect(order('ORDER BY StartTime', recs)).toEqual(['b', 'c', 'a']);
  });

  it('exposes the parsed ORDER BY list', () => {
    const compiled = compileVisibilityQuery('ORDER BY CustomInt DESC, StartTime', CUSTOM);
    expect(compiled.orderBy).toEqual([
      { attribute: 'CustomInt', direction: 'DESC' },
      { attribute: 'StartTime', direction: 'ASC' },
    ]);
  });

  it('is a consistent comparator (antisymmetric, zero only for the same run)', () => {
    const compare = compileVisibilityQuery('ORDER BY CustomInt, CloseTime DESC', CUSTOM).compare!;
    for (const a of RECORDS) {
      for (const b of RECORDS) {
        expect(Math.sign(compare(a, b)) + Math.sign(compare(b, a))).toBe(0);
        if (a !== b) expect(compare(a, b)).not.toBe(0);
      }
    }
  });
});

describe('default order helper', () => {
  it('lists open executions first, then CloseTime DESC, StartTime DESC, RunId ASC', () => {
    const recs = [
      record({ workflowId: 'closed-early', startTime: T0, closeTime: T0 + HOUR }),
      record({ workflowId: 'open-old', startTime: T0 }),
      record({ workflowId: 'closed-late', startTime: T0, closeTime: T0 + 2 * HOUR }),
      record({ workflowId: 'open-new', startTime: T0 + HOUR }),
      record({ workflowId: 'tie-b', runId: 'b', startTime: T0, closeTime: T0 + 3 * HOUR }),
      record({ workflowId: 'tie-a', runId: 'a', startTime: T0, closeTime: T0 + 3 * HOUR }),
      record({ workflowId: 'tie-newer', runId: 'z', startTime: T0 + 1, closeTime: T0 + 3 * HOUR }),
    ];
    expect([...recs].sort(compareDefaultVisibilityOrder).map((r) => r.workflowId)).toEqual([
      'open-new',
      'open-old',
      'tie-newer',
      'tie-a',
      'tie-b',
      'closed-late',
      'closed-early',
    ]);
  });
});

describe('GROUP BY (CountWorkflowExecutions)', () => {
  it.each([
    'GROUP BY ExecutionStatus',
    "TaskQueue = 'payments' GROUP BY ExecutionStatus",
    'group by `ExecutionStatus` ORDER BY StartTime',
  ])('%s', (query) => {
    const compiled = compileVisibilityQuery(query, CUSTOM, { allowGroupBy: true });
    expect(compiled.groupBy).toEqual(['ExecutionStatus']);
  });

  it('still filters when grouping', () => {
    const compiled = compileVisibilityQuery("TaskQueue = 'payments' GROUP BY ExecutionStatus", CUSTOM, {
      allowGroupBy: true,
    });
    expect(
      RECORDS.filter((r) => compiled.matches(r))
        .map((r) => r.status)
        .sort(),
    ).toEqual(['ContinuedAsNew', 'Failed', 'TimedOut']);
  });

  it('is not reported without the clause', () => {
    expect(compileVisibilityQuery('', CUSTOM, { allowGroupBy: true }).groupBy).toBeUndefined();
  });
});
