// Shared records for the visibility query tests: a small, hand-checked population with one
// execution per status and a spread of custom attribute values, including absent ones.
import {
  CompileOptions,
  SearchAttributeType,
  VisibilityRecord,
  compileVisibilityQuery,
} from '../../src/visibility/query';

export const CUSTOM = new Map<string, SearchAttributeType>([
  ['CustomKeyword', 'Keyword'],
  ['CustomText', 'Text'],
  ['CustomInt', 'Int'],
  ['CustomDouble', 'Double'],
  ['CustomBool', 'Bool'],
  ['CustomDatetime', 'Datetime'],
  ['CustomKeywordList', 'KeywordList'],
  ['Order', 'Keyword'], // a custom name that collides with an SQL keyword
  ['ChangeVersion', 'Keyword'], // shadows the "Temporal" prefix fallback
]);

export const T0 = Date.parse('2024-03-01T00:00:00.000Z');
export const HOUR = 3_600_000;

export function record(overrides: Partial<VisibilityRecord> & { workflowId: string }): VisibilityRecord {
  return {
    runId: `run-${overrides.workflowId}`,
    workflowType: 'OrderWorkflow',
    taskQueue: 'orders',
    status: 'Running',
    startTime: T0,
    executionTime: T0,
    searchAttributes: {},
    ...overrides,
  };
}

export const RECORDS: VisibilityRecord[] = [
  record({
    workflowId: 'order-1',
    historyLength: 5,
    rootWorkflowId: 'order-1',
    searchAttributes: {
      CustomKeyword: 'alpha',
      CustomText: 'The quick brown-fox',
      CustomInt: 10,
      CustomDouble: 1.5,
      CustomBool: true,
      CustomDatetime: '2024-03-01T10:00:00.000Z',
      CustomKeywordList: ['red', 'green'],
      TemporalChangeVersion: ['patch-1'],
    },
  }),
  record({
    workflowId: 'order-2',
    status: 'Completed',
    startTime: T0 + HOUR,
    executionTime: T0 + HOUR,
    closeTime: T0 + 2 * HOUR,
    historyLength: 20,
    parentWorkflowId: 'order-1',
    rootWorkflowId: 'order-1',
    searchAttributes: {
      CustomKeyword: 'beta',
      CustomText: 'lazy DOG sleeps',
      CustomInt: -3,
      CustomDouble: 2.25,
      CustomBool: false,
      CustomDatetime: '2024-03-01T12:00:00.123456789Z',
      CustomKeywordList: ['blue'],
    },
  }),
  record({
    workflowId: 'payment-1',
    workflowType: 'PaymentWorkflow',
    taskQueue: 'payments',
    status: 'Failed',
    startTime: T0 + 2 * HOUR,
    executionTime: T0 + 2 * HOUR,
    closeTime: T0 + 3 * HOUR,
    historyLength: 7,
    searchAttributes: { CustomKeyword: 'Alpha', CustomInt: 10, CustomDatetime: '2024-03-02T00:00:00+02:00' },
  }),
  record({
    workflowId: 'payment-2',
    workflowType: 'PaymentWorkflow',
    taskQueue: 'payments',
    status: 'TimedOut',
    startTime: T0 + 3 * HOUR,
    executionTime: T0 + 3 * HOUR + 500,
    closeTime: T0 + 3 * HOUR + 1500,
    searchAttributes: {},
  }),
  record({
    workflowId: "refund_%'1",
    workflowType: 'RefundWorkflow',
    taskQueue: 'payments',
    status: 'ContinuedAsNew',
    startTime: T0 + 4 * HOUR,
    executionTime: T0 + 4 * HOUR,
    closeTime: T0 + 5 * HOUR,
    searchAttributes: { CustomKeyword: "it's", CustomKeywordList: [], CustomDouble: 10, Order: 'first' },
  }),
  record({
    workflowId: 'order-3',
    status: 'Canceled',
    startTime: T0 + 5 * HOUR,
    executionTime: T0 + 6 * HOUR,
    closeTime: T0 + 7 * HOUR,
    searchAttributes: { CustomKeywordList: ['green', 'yellow'], CustomText: 'quick thinking', ChangeVersion: 'v2' },
  }),
  record({
    workflowId: 'order-4',
    status: 'Terminated',
    startTime: T0 + 6 * HOUR,
    executionTime: T0 + 6 * HOUR,
    closeTime: T0 + 6 * HOUR + 30 * 60_000,
    searchAttributes: { CustomInt: 7, CustomBool: true },
  }),
];

export const ALL_IDS = RECORDS.map((r) => r.workflowId).sort();

/** Workflow IDs matched by the query, sorted so tables can list them in any order. */
export function ids(query: string, records: VisibilityRecord[] = RECORDS, options?: CompileOptions): string[] {
  const compiled = compileVisibilityQuery(query, CUSTOM, options);
  return records
    .filter((r) => compiled.matches(r))
    .map((r) => r.workflowId)
    .sort();
}

export function sorted(list: string[]): string[] {
  return [...list].sort();
}

/** The thrown VisibilityQueryError (fails the test when nothing is thrown). */
export function compileError(
  query: string,
  options?: CompileOptions,
): Error & { fragment?: string; kind?: string; position?: number } {
  try {
    compileVisibilityQuery(query, CUSTOM, options);
  } catch (e) {
    return e as Error & { fragment?: string };
  }
  throw new Error(`expected ${JSON.stringify(query)} to be rejected`);
}
