import { ALL_IDS, ids, sorted } from './fixtures';

describe('visibility query: blank and structure', () => {
  it.each(['', '   ', '\n\t ', 'ORDER BY StartTime', 'order by StartTime desc'])('%j matches everything', (q) => {
    expect(ids(q)).toEqual(ALL_IDS);
  });
});

describe('visibility query: boolean precedence', () => {
  it.each<[string, string[]]>([
    // AND binds tighter than OR on either side.
    ["WorkflowId = 'order-1' OR WorkflowId = 'order-2' AND ExecutionStatus = 'Running'", ['order-1']],
    ["ExecutionStatus = 'Running' AND WorkflowId = 'order-2' OR WorkflowId = 'order-3'", ['order-3']],
    ["(WorkflowId = 'order-1' OR WorkflowId = 'order-2') AND ExecutionStatus = 'Completed'", ['order-2']],
    ["WorkflowId = 'order-1' OR (WorkflowId = 'order-2' AND ExecutionStatus = 'Running')", ['order-1']],
    // NOT binds tighter than AND/OR but looser than a comparison.
    ["NOT WorkflowType = 'OrderWorkflow' AND TaskQueue = 'payments'", ['payment-1', 'payment-2', "refund_%'1"]],
    ["NOT (WorkflowType = 'OrderWorkflow' OR TaskQueue = 'orders')", ['payment-1', 'payment-2', "refund_%'1"]],
    [
      "NOT WorkflowType = 'PaymentWorkflow' OR WorkflowId = 'payment-1'",
      sorted(['order-1', 'order-2', 'order-3', 'order-4', "refund_%'1", 'payment-1']),
    ],
    ["NOT NOT WorkflowId = 'order-1'", ['order-1']],
    ["((((WorkflowId = 'order-1'))))", ['order-1']],
    // Long flat chains.
    ["WorkflowId = 'x' OR WorkflowId = 'y' OR WorkflowId = 'order-4' OR WorkflowId = 'z'", ['order-4']],
    [
      "TaskQueue = 'orders' AND WorkflowType = 'OrderWorkflow' AND HistoryLength > 1 AND HistoryLength < 10",
      ['order-1'],
    ],
    // && and || are the MySQL spellings of AND / OR.
    ["WorkflowId = 'order-1' || WorkflowId = 'order-2' && ExecutionStatus = 'Running'", ['order-1']],
  ])('%s', (q, expected) => {
    expect(ids(q)).toEqual(sorted(expected));
  });

  it('handles a very long OR chain without deep recursion', () => {
    const terms = Array.from({ length: 5000 }, (_, i) => `WorkflowId = 'x${i}'`);
    terms.push("WorkflowId = 'order-2'");
    expect(ids(terms.join(' OR '))).toEqual(['order-2']);
  });
});

describe('visibility query: SQL NULL semantics', () => {
  it.each<[string, string[]]>([
    // payment-2 and refund have no CustomInt: they match neither side nor its negation.
    ['CustomInt = 10', ['order-1', 'payment-1']],
    ['CustomInt != 10', ['order-2', 'order-4']],
    ['NOT CustomInt = 10', ['order-2', 'order-4']],
    ['NOT (CustomInt = 10 OR CustomInt = 7)', ['order-2']],
    // Kleene logic: unknown OR true is true, unknown AND false is false.
    ["CustomInt = 99 OR WorkflowId = 'payment-2'", ['payment-2']],
    [
      "NOT (CustomInt = 99 AND WorkflowId = 'payment-2')",
      sorted(['order-1', 'order-2', 'payment-1', 'order-4', 'order-3', "refund_%'1"]),
    ],
    ['CustomInt IS NULL', ['order-3', 'payment-2', "refund_%'1"]],
    ['CustomInt IS NOT NULL', ['order-1', 'order-2', 'order-4', 'payment-1']],
    ['NOT CustomInt IS NULL', ['order-1', 'order-2', 'order-4', 'payment-1']],
    ['CloseTime IS NULL', ['order-1']],
    ['ParentWorkflowId IS NOT NULL', ['order-2']],
    ['HistoryLength IS NULL', sorted(['payment-2', "refund_%'1", 'order-3', 'order-4'])],
    // An empty KeywordList is how SDKs unset the attribute.
    ['CustomKeywordList IS NULL', sorted(['payment-1', 'payment-2', "refund_%'1", 'order-4'])],
  ])('%s', (q, expected) => {
    expect(ids(q)).toEqual(sorted(expected));
  });
});

describe('visibility query: literals and quoting', () => {
  it.each<[string, string[]]>([
    ["WorkflowId = 'order-1'", ['order-1']],
    ['WorkflowId = "order-1"', ['order-1']],
    ["WorkflowId = 'refund_%''1'", ["refund_%'1"]], // doubled delimiter
    ["WorkflowId = 'refund_%\\'1'", ["refund_%'1"]], // backslash escape
    ['WorkflowId = "refund_%\'1"', ["refund_%'1"]], // other quote needs no escape
    ["CustomKeyword = 'it''s'", ["refund_%'1"]],
    ['CustomKeyword = "it\\\'s"', ["refund_%'1"]],
    ["`WorkflowId` = 'order-1'", ['order-1']],
    ["`Order` = 'first'", ["refund_%'1"]], // backticks let a keyword be an attribute name
    ["  WorkflowId   =   'order-1'   ", ['order-1']],
    ["WorkflowId='order-1'AND`CustomInt`=10", ['order-1']],
    ["\tWorkflowId\n=\r\n'order-1'", ['order-1']],
    ['CustomInt = +10', ['order-1', 'payment-1']],
    ['CustomInt = -3', ['order-2']],
    ['CustomInt = - 3', ['order-2']],
    ['CustomInt = 1e1', ['order-1', 'payment-1']],
    ['CustomDouble = .15e1', ['order-1']],
    ['CustomBool = true', ['order-1', 'order-4']],
    ['CustomBool = FALSE', ['order-2']],
  ])('%s', (q, expected) => {
    expect(ids(q)).toEqual(sorted(expected));
  });

  it('decodes MySQL escapes in strings', () => {
    const recs = [
      { ...baseRecord(), workflowId: 'tab\there' },
      { ...baseRecord(), workflowId: 'line\nbreak' },
      { ...baseRecord(), workflowId: 'back\\slash' },
      { ...baseRecord(), workflowId: 'pct%' },
    ];
    expect(ids("WorkflowId = 'tab\\there'", recs)).toEqual(['tab\there']);
    expect(ids("WorkflowId = 'line\\nbreak'", recs)).toEqual(['line\nbreak']);
    expect(ids("WorkflowId = 'back\\\\slash'", recs)).toEqual(['back\\slash']);
    // An unknown escape stands for the character itself.
    expect(ids("WorkflowId = 'pct\\%'", recs)).toEqual(['pct%']);
  });

  it('treats keywords case-insensitively and attribute names case-sensitively', () => {
    expect(ids("WorkflowId = 'order-1' or WorkflowId = 'order-2'")).toEqual(['order-1', 'order-2']);
    expect(ids("WorkflowId In ('order-1') aNd CustomInt iS nOt NuLl")).toEqual(['order-1']);
    expect(() => ids("workflowid = 'order-1'")).toThrow(/unknown search attribute workflowid/);
  });
});

function baseRecord() {
  return {
    runId: 'r',
    workflowType: 'T',
    taskQueue: 'q',
    status: 'Running' as const,
    startTime: 0,
    executionTime: 0,
    searchAttributes: {},
  };
}
