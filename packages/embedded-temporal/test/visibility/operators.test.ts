import { compileVisibilityQuery } from '../../src/visibility/query';
import { CUSTOM, ids, record, sorted } from './fixtures';

type Row = [string, string[]];
const R1 = "refund_%'1";

describe('Keyword (system and custom)', () => {
  it.each<Row>([
    ["WorkflowType = 'PaymentWorkflow'", ['payment-1', 'payment-2']],
    ["WorkflowType != 'OrderWorkflow'", ['payment-1', 'payment-2', R1]],
    // Keyword equality is exact: case and whole value matter.
    ["CustomKeyword = 'alpha'", ['order-1']],
    ["CustomKeyword = 'Alpha'", ['payment-1']],
    ["CustomKeyword = 'alph'", []],
    // Ordering is by code point, so upper case sorts before lower case.
    ["CustomKeyword < 'a'", ['payment-1']],
    ["CustomKeyword >= 'beta'", ['order-2', R1]],
    ["CustomKeyword > 'alpha'", ['order-2', R1]],
    ["CustomKeyword <= 'alpha'", ['order-1', 'payment-1']],
    ["CustomKeyword BETWEEN 'alpha' AND 'beta'", ['order-1', 'order-2']],
    ["CustomKeyword NOT BETWEEN 'alpha' AND 'beta'", ['payment-1', R1]],
    ["TaskQueue IN ('payments', 'nope')", ['payment-1', 'payment-2', R1]],
    ["TaskQueue NOT IN ('payments')", ['order-1', 'order-2', 'order-3', 'order-4']],
    ["WorkflowId IN ('order-1')", ['order-1']],
    ["WorkflowId STARTS_WITH 'order-'", ['order-1', 'order-2', 'order-3', 'order-4']],
    ["WorkflowId NOT STARTS_WITH 'order-'", ['payment-1', 'payment-2', R1]],
    // SQL LIKE wildcards in the prefix are literal characters.
    ["WorkflowId STARTS_WITH 'refund_%'", [R1]],
    ["WorkflowId STARTS_WITH 'refund%'", []],
    ["WorkflowId STARTS_WITH ''", ['order-1', 'order-2', 'order-3', 'order-4', 'payment-1', 'payment-2', R1]],
    ["CustomKeyword STARTS_WITH 'al'", ['order-1']],
    ["RunId = 'run-order-2'", ['order-2']],
    ["ParentWorkflowId = 'order-1'", ['order-2']],
    ["RootWorkflowId = 'order-1'", ['order-1', 'order-2']],
  ])('%s', (q, expected) => expect(ids(q)).toEqual(sorted(expected)));

  it('orders keywords by code point, not UTF-16 unit', () => {
    // U+FF21 (fullwidth A) is below U+1F600 by code point but above its surrogates by UTF-16 unit.
    const recs = [record({ workflowId: '\uff21' }), record({ workflowId: '\u{1f600}' })];
    expect(ids("WorkflowId > '\uff21'", recs)).toEqual(['\u{1f600}']);
  });
});

describe('ExecutionStatus', () => {
  it.each<Row>([
    ["ExecutionStatus = 'Running'", ['order-1']],
    ["ExecutionStatus = 'WORKFLOW_EXECUTION_STATUS_COMPLETED'", ['order-2']],
    ['ExecutionStatus = 3', ['payment-1']],
    ["ExecutionStatus != 'Running'", ['order-2', 'order-3', 'order-4', 'payment-1', 'payment-2', R1]],
    ["ExecutionStatus IN ('Canceled', 'Terminated', 7)", ['order-3', 'order-4', 'payment-2']],
    ["ExecutionStatus NOT IN ('Running', 'Completed', 'Failed', 'Canceled', 'Terminated')", ['payment-2', R1]],
    ["ExecutionStatus = 'ContinuedAsNew'", [R1]],
    ["ExecutionStatus = 'Unspecified'", []],
    // Ordered comparisons use the enum number, as the SQL store does.
    ["ExecutionStatus > 'Terminated'", ['payment-2', R1]],
    ['ExecutionStatus BETWEEN 2 AND 3', ['order-2', 'payment-1']],
    ['ExecutionStatus IS NOT NULL', ['order-1', 'order-2', 'order-3', 'order-4', 'payment-1', 'payment-2', R1]],
  ])('%s', (q, expected) => expect(ids(q)).toEqual(sorted(expected)));
});

describe('Int and Double', () => {
  it.each<Row>([
    ['CustomInt = 10', ['order-1', 'payment-1']],
    ['CustomInt != 10', ['order-2', 'order-4']],
    ['CustomInt > 7', ['order-1', 'payment-1']],
    ['CustomInt >= 7', ['order-1', 'order-4', 'payment-1']],
    ['CustomInt < 0', ['order-2']],
    ['CustomInt <= -3', ['order-2']],
    ['CustomInt IN (7, -3)', ['order-2', 'order-4']],
    ['CustomInt NOT IN (7, -3)', ['order-1', 'payment-1']],
    ['CustomInt BETWEEN -3 AND 7', ['order-2', 'order-4']],
    ['CustomInt NOT BETWEEN -3 AND 7', ['order-1', 'payment-1']],
    ['CustomInt BETWEEN 7 AND -3', []], // reversed bounds select nothing, as in SQL
    ['CustomInt > 6.5', ['order-1', 'order-4', 'payment-1']], // a float literal is fine for Int
    ['CustomDouble = 1.5', ['order-1']],
    ['CustomDouble > 2', ['order-2', R1]],
    ['CustomDouble = 10', [R1]], // an integer literal is fine for Double
    ['CustomDouble BETWEEN 1.5 AND 2.25', ['order-1', 'order-2']],
    ['CustomDouble IN (2.25, 10.0)', ['order-2', R1]],
    ['HistoryLength >= 7', ['order-2', 'payment-1']],
    ['HistoryLength BETWEEN 5 AND 7', ['order-1', 'payment-1']],
  ])('%s', (q, expected) => expect(ids(q)).toEqual(sorted(expected)));

  it('reads HistorySizeBytes and StateTransitionCount when the engine records them', () => {
    const recs = [
      record({ workflowId: 'a', historySizeBytes: 2048, stateTransitionCount: 3 }),
      record({ workflowId: 'b' }),
    ];
    expect(ids('HistorySizeBytes > 1024', recs)).toEqual(['a']);
    expect(ids('StateTransitionCount = 3', recs)).toEqual(['a']);
    expect(ids('HistorySizeBytes IS NULL', recs)).toEqual(['b']);
  });
});

describe('Bool', () => {
  it.each<Row>([
    ['CustomBool = true', ['order-1', 'order-4']],
    ['CustomBool = false', ['order-2']],
    ['CustomBool != true', ['order-2']],
    ['CustomBool IN (true, false)', ['order-1', 'order-2', 'order-4']],
    ['CustomBool NOT IN (false)', ['order-1', 'order-4']],
    ['CustomBool > false', ['order-1', 'order-4']],
    ['CustomBool <= false', ['order-2']],
    ['CustomBool IS NULL', ['order-3', 'payment-1', 'payment-2', R1]],
  ])('%s', (q, expected) => expect(ids(q)).toEqual(sorted(expected)));
});

describe('KeywordList', () => {
  it.each<Row>([
    // "=" means "contains", "!=" means "does not contain".
    ["CustomKeywordList = 'green'", ['order-1', 'order-3']],
    ["CustomKeywordList = 'gree'", []],
    ["CustomKeywordList != 'green'", ['order-2']],
    ["CustomKeywordList IN ('blue', 'yellow')", ['order-2', 'order-3']],
    ["CustomKeywordList NOT IN ('blue', 'yellow')", ['order-1']],
    ["CustomKeywordList IN ('purple')", []],
    ["TemporalChangeVersion = 'patch-1'", ['order-1']],
    ["BuildIds IN ('x')", []],
  ])('%s', (q, expected) => expect(ids(q)).toEqual(sorted(expected)));

  it('treats a scalar string stored for a list as a one-element list', () => {
    const recs = [record({ workflowId: 'a', searchAttributes: { CustomKeywordList: 'solo' } })];
    expect(ids("CustomKeywordList = 'solo'", recs)).toEqual(['a']);
  });
});

describe('Text (word match, any word)', () => {
  it.each<Row>([
    ["CustomText = 'quick'", ['order-1', 'order-3']],
    ["CustomText = 'QUICK'", ['order-1', 'order-3']], // case-insensitive
    ["CustomText = 'fox'", ['order-1']], // hyphens split words
    ["CustomText = 'brown-fox'", ['order-1']], // so does the query side
    ["CustomText = 'qui'", []], // no partial-word match
    ["CustomText = 'dog cat'", ['order-2']], // any query word is enough
    ["CustomText = 'sleeps thinking'", ['order-2', 'order-3']],
    ["CustomText != 'quick'", ['order-2']], // absent Text never matches either way
    ["CustomText = '---'", []], // punctuation only: no words, nothing matches
  ])('%s', (q, expected) => expect(ids(q)).toEqual(sorted(expected)));
});

describe('predefined attributes and name resolution', () => {
  it.each<Row>([
    // A custom attribute wins over the "Temporal" prefix fallback...
    ["ChangeVersion = 'v2'", ['order-3']],
    // ...while the reserved name always means the predefined attribute.
    ["TemporalChangeVersion = 'v2'", []],
  ])('%s', (q, expected) => expect(ids(q)).toEqual(sorted(expected)));

  it('resolves unprefixed names of predefined attributes when no custom one exists', () => {
    const noCustom = new Map();
    const r = record({ workflowId: 'a', searchAttributes: { TemporalScheduledById: 'sched-1', BuildIds: ['b1'] } });
    expect(compileVisibilityQuery("ScheduledById = 'sched-1'", noCustom).matches(r)).toBe(true);
    expect(compileVisibilityQuery("TemporalBuildIds = 'b1'", noCustom).matches(r)).toBe(true);
    expect(compileVisibilityQuery('ChangeVersion IS NULL', noCustom).matches(r)).toBe(true);
  });

  it('unwraps one-element lists that SDKs use for scalar attributes', () => {
    const r = record({ workflowId: 'a', searchAttributes: { CustomKeyword: ['wrapped'], CustomInt: [3] } });
    expect(compileVisibilityQuery("CustomKeyword = 'wrapped' AND CustomInt = 3", CUSTOM).matches(r)).toBe(true);
  });

  it('treats a stored value of the wrong type as absent', () => {
    const r = record({ workflowId: 'a', searchAttributes: { CustomInt: 'ten', CustomBool: 'true' } });
    expect(compileVisibilityQuery('CustomInt IS NULL AND CustomBool IS NULL', CUSTOM).matches(r)).toBe(true);
    expect(compileVisibilityQuery('CustomInt != 1', CUSTOM).matches(r)).toBe(false);
  });
});

describe('TemporalNamespaceDivision', () => {
  const recs = [
    record({ workflowId: 'user' }),
    record({ workflowId: 'sched', searchAttributes: { TemporalNamespaceDivision: 'TemporalScheduler' } }),
  ];

  it('hides executions of another division unless the query names the attribute', () => {
    expect(ids('', recs)).toEqual(['user']);
    expect(ids("WorkflowId STARTS_WITH ''", recs)).toEqual(['user']);
    expect(ids("TemporalNamespaceDivision = 'TemporalScheduler'", recs)).toEqual(['sched']);
    expect(ids('TemporalNamespaceDivision IS NULL OR TemporalNamespaceDivision IS NOT NULL', recs)).toEqual([
      'sched',
      'user',
    ]);
  });
});
