import { VisibilityQueryError, compileVisibilityQuery } from '../../src/visibility/query';
import { CUSTOM, compileError } from './fixtures';

// [query, kind, message pattern, fragment]
type Row = [string, 'syntax' | 'unsupported' | 'invalid', RegExp, string | undefined];

function check([query, kind, pattern, fragment]: Row) {
  const err = compileError(query);
  expect(err).toBeInstanceOf(VisibilityQueryError);
  expect(err.kind).toBe(kind);
  expect(err.message).toMatch(pattern);
  expect(err.fragment).toBe(fragment);
}

describe('syntax errors name the position and token', () => {
  it.each<Row>([
    ["WorkflowId = 'a' AND", 'syntax', /^malformed SQL query: syntax error at position 21 \(end of query\)/, undefined],
    ['WorkflowId =', 'syntax', /position 13 \(end of query\): expected a value/, undefined],
    ["WorkflowId = 'a' 'b'", 'syntax', /syntax error at position 18 near ''b''/, "'b'"],
    ["AND WorkflowId = 'a'", 'syntax', /position 1 near 'AND'/, 'AND'],
    ["WorkflowId = 'open", 'syntax', /position 14 near ''open': expected closing ' of the string/, "'open"],
    ['WorkflowId = "open\\"', 'syntax', /expected closing " of the string/, '"open\\"'],
    ["`WorkflowId = 'a'", 'syntax', /position 1 .*expected closing ` of the attribute name/, "`WorkflowId = 'a'"],
    ["`` = 'a'", 'syntax', /expected a non-empty attribute name/, '``'],
    ["(WorkflowId = 'a'", 'syntax', /position 18 \(end of query\): expected '\)'/, undefined],
    ["WorkflowId = 'a')", 'syntax', /position 17 near '\)'/, ')'],
    ["WorkflowId IN 'a'", 'syntax', /position 15 near ''a'': expected '\(' to start the IN list/, "'a'"],
    ['WorkflowId IN ()', 'syntax', /near '\)': expected at least one value/, ')'],
    ["WorkflowId IN ('a',)", 'syntax', /near '\)': expected a value/, ')'],
    ["WorkflowId BETWEEN 'a' 'b'", 'syntax', /near ''b'': expected AND/, "'b'"],
    ["WorkflowId IS 'x'", 'syntax', /near ''x'': expected NULL or NOT NULL after IS/, "'x'"],
    ['WorkflowId IS NOT', 'syntax', /expected NULL after IS NOT/, undefined],
    ["WorkflowId NOT = 'a'", 'syntax', /near '=': expected IN, BETWEEN or STARTS_WITH after NOT/, '='],
    ['HistoryLength > 1 + 2', 'syntax', /position 19 near '\+'/, '+'],
    ["WorkflowId = 'a';", 'syntax', /near ';'/, ';'],
    ["WorkflowId = 'a' # note", 'syntax', /position 18 near '#'/, '#'],
    ['HistoryLength = 5abc', 'syntax', /position 17 near '5abc'/, '5abc'],
    ["WorkflowId = 'a' ORDER StartTime", 'syntax', /near 'StartTime': expected BY/, 'StartTime'],
    ['ORDER BY', 'syntax', /expected an attribute name after ORDER BY/, undefined],
    ['ORDER BY StartTime DESC RunId', 'syntax', /near 'RunId': expected ',' or end of query/, 'RunId'],
    ['ORDER BY StartTime DESC, ', 'syntax', /expected an attribute name after ORDER BY/, undefined],
    ["WorkflowId = 'a' GROUP ExecutionStatus", 'syntax', /expected BY/, 'ExecutionStatus'],
    // A keyword needs backticks to be used as an attribute name.
    ["Order = 'x'", 'syntax', /position 7 near '=': expected BY after ORDER \(write `Order` to use an attribute/, '='],
  ])('%s', (...row) => check(row));
});

describe('unknown search attributes', () => {
  it.each<Row>([
    ['Foo = 1', 'invalid', /unknown search attribute Foo$/, 'Foo'],
    ["WorkflowId = 'a' OR Foo IS NULL", 'invalid', /unknown search attribute Foo/, 'Foo'],
    ['Foo BETWEEN 1 AND 2', 'invalid', /unknown search attribute Foo/, 'Foo'],
    ["Foo STARTS_WITH 'a'", 'invalid', /unknown search attribute Foo/, 'Foo'],
    ['Foo NOT IN (1)', 'invalid', /unknown search attribute Foo/, 'Foo'],
    ["Foo LIKE 'a%'", 'invalid', /unknown search attribute Foo/, 'Foo'],
    ['ORDER BY Foo', 'invalid', /unknown search attribute Foo/, 'Foo'],
    ["TemporalFoo = 'x'", 'invalid', /unknown search attribute TemporalFoo/, 'TemporalFoo'],
    [
      "TemporalCustomKeyword = 'x'",
      'invalid',
      /unknown search attribute TemporalCustomKeyword/,
      'TemporalCustomKeyword',
    ],
    ["`Custom``Keyword` = 'x'", 'invalid', /unknown search attribute Custom`Keyword/, 'Custom`Keyword'],
    ["workflowId = 'x'", 'invalid', /unknown search attribute workflowId/, 'workflowId'],
    ["NamespaceId = 'x'", 'invalid', /unknown search attribute NamespaceId/, 'NamespaceId'],
  ])('%s', (...row) => check(row));
});

describe('value type mismatches name the attribute, its type and the literal', () => {
  it.each<Row>([
    ["CustomInt = 'abc'", 'invalid', /search attribute CustomInt of type Int: 'abc' \(string\)/, "'abc'"],
    ["HistoryLength >= '5'", 'invalid', /HistoryLength of type Int: '5' \(string\)/, "'5'"],
    ['CustomInt = true', 'invalid', /CustomInt of type Int: TRUE \(bool\)/, 'true'],
    ['CustomDouble = false', 'invalid', /CustomDouble of type Double: FALSE \(bool\)/, 'false'],
    ['CustomBool = 1', 'invalid', /CustomBool of type Bool: 1 \(integer\)/, '1'],
    ["CustomBool = 'true'", 'invalid', /CustomBool of type Bool: 'true' \(string\)/, "'true'"],
    ['CustomKeyword = 5', 'invalid', /CustomKeyword of type Keyword: 5 \(integer\)/, '5'],
    ['WorkflowId = 1.5', 'invalid', /WorkflowId of type Keyword: 1.5 \(float\)/, '1.5'],
    ['CustomKeywordList = 5', 'invalid', /CustomKeywordList of type KeywordList: 5/, '5'],
    ['CustomText = 5', 'invalid', /CustomText of type Text: 5/, '5'],
    ['CustomDatetime = 1.5', 'invalid', /CustomDatetime of type Datetime: 1.5 \(float\)/, '1.5'],
    ['StartTime > true', 'invalid', /StartTime of type Datetime: TRUE/, 'true'],
    ["StartTime > 'yesterday'", 'invalid', /unable to parse datetime 'yesterday'/, "'yesterday'"],
    ["WorkflowId IN ('a', 5)", 'invalid', /WorkflowId of type Keyword: 5 \(integer\)/, '5'],
    ["CustomInt BETWEEN 1 AND 'x'", 'invalid', /CustomInt of type Int: 'x'/, "'x'"],
    ["ExecutionStatus = 'Bogus'", 'invalid', /invalid ExecutionStatus value 'Bogus'/, "'Bogus'"],
    ["ExecutionStatus = 'running'", 'invalid', /invalid ExecutionStatus value 'running'/, "'running'"],
    ['ExecutionStatus = 42', 'invalid', /invalid ExecutionStatus value 42/, '42'],
    ['ExecutionStatus = 1.5', 'invalid', /ExecutionStatus of type Keyword: 1.5/, '1.5'],
    ["ExecutionStatus IN ('Running', 'Nope')", 'invalid', /invalid ExecutionStatus value 'Nope'/, "'Nope'"],
  ])('%s', (...row) => check(row));
});

describe('operators a type does not support', () => {
  it.each<Row>([
    ["CustomText > 'a'", 'unsupported', /operator '>' not supported for Text type search attribute 'CustomText'/, '>'],
    [
      "CustomText IN ('a')",
      'unsupported',
      /operator 'IN' not supported for Text type search attribute 'CustomText'/,
      'IN',
    ],
    ["CustomText STARTS_WITH 'a'", 'unsupported', /operator 'STARTS_WITH' not supported for Text/, 'STARTS_WITH'],
    [
      "CustomKeywordList > 'a'",
      'unsupported',
      /operator '>' not supported for KeywordList type search attribute 'CustomKeywordList'/,
      '>',
    ],
    [
      "CustomKeywordList NOT STARTS_WITH 'a'",
      'unsupported',
      /'NOT STARTS_WITH' not supported for KeywordList/,
      'NOT STARTS_WITH',
    ],
    [
      "CustomInt STARTS_WITH '1'",
      'unsupported',
      /'STARTS_WITH' not supported for Int type search attribute 'CustomInt'/,
      'STARTS_WITH',
    ],
    ["StartTime STARTS_WITH '2024'", 'unsupported', /'STARTS_WITH' not supported for Datetime/, 'STARTS_WITH'],
    [
      "ExecutionStatus STARTS_WITH 'Run'",
      'unsupported',
      /'STARTS_WITH' not supported for Keyword type search attribute 'ExecutionStatus'/,
      'STARTS_WITH',
    ],
    [
      "WorkflowId LIKE 'a%'",
      'unsupported',
      /operator 'LIKE' not supported for Keyword type search attribute 'WorkflowId'/,
      'LIKE',
    ],
    ["WorkflowId NOT LIKE 'a%' ESCAPE '!'", 'unsupported', /operator 'NOT LIKE' not supported/, 'NOT LIKE'],
    ["WorkflowId REGEXP '^a'", 'unsupported', /operator 'REGEXP' not supported/, 'REGEXP'],
    ["WorkflowId <=> 'a'", 'unsupported', /operator '<=>' not supported/, '<=>'],
    [
      'CustomBool BETWEEN false AND true',
      'invalid',
      /cannot do range condition on search attribute 'CustomBool' of type Bool/,
      'CustomBool',
    ],
    [
      "CustomKeywordList BETWEEN 'a' AND 'b'",
      'invalid',
      /range condition on search attribute 'CustomKeywordList' of type KeywordList/,
      'CustomKeywordList',
    ],
    [
      "CustomText NOT BETWEEN 'a' AND 'b'",
      'invalid',
      /range condition on search attribute 'CustomText' of type Text/,
      'CustomText',
    ],
  ])('%s', (...row) => check(row));
});

describe('malformed expressions', () => {
  it.each<Row>([
    ["'a' = WorkflowId", 'invalid', /left side of a condition must be a search attribute name, got 'a'/, "'a'"],
    ['5 > HistoryLength', 'invalid', /must be a search attribute name, got 5/, '5'],
    [
      "(WorkflowId) = 'a'",
      'invalid',
      /incomplete expression: search attribute 'WorkflowId' must be followed by an operator/,
      'WorkflowId',
    ],
    [
      "(WorkflowId = 'a') = 'b'",
      'invalid',
      /must be a search attribute name, got \(WorkflowId = 'a'\)/,
      "(WorkflowId = 'a')",
    ],
    ['WorkflowId = RunId', 'unsupported', /column name on the right side .*did you forget to quote 'RunId'/, 'RunId'],
    ['WorkflowId = NULL', 'invalid', /cannot compare WorkflowId with NULL; use IS NULL/, 'NULL'],
    ["WorkflowId = ('a', 'b')", 'invalid', /value list is only allowed after IN .* got \('a', 'b'\)/, "('a', 'b')"],
    [
      'CustomBool',
      'invalid',
      /incomplete expression: search attribute 'CustomBool' must be followed by an operator/,
      'CustomBool',
    ],
    ["CustomBool AND WorkflowId = 'a'", 'invalid', /incomplete expression.*'CustomBool'/, 'CustomBool'],
    ["'lonely'", 'invalid', /incomplete expression near 'lonely'/, "'lonely'"],
    ['CustomBool IS TRUE', 'invalid', /'IS' operator can only be used as 'IS NULL' or 'IS NOT NULL'/, 'IS TRUE'],
    ['CustomBool IS NOT FALSE', 'invalid', /'IS' operator can only be used/, 'IS NOT FALSE'],
    ["CustomText = '   '", 'invalid', /no tokens found filtering on Text type search attribute CustomText/, "'   '"],
    ["CustomInt = -'5'", 'invalid', /unary operator '-' is only allowed before a number, got '5'/, "-'5'"],
    ['CustomInt = - -5', 'invalid', /unary operator '-' is only allowed before a number/, '--'],
    ['CustomInt = 0x1F', 'invalid', /unable to parse value '0x1F'/, '0x1F'],
  ])('%s', (...row) => check(row));

  it('rejects absurd nesting instead of overflowing the stack', () => {
    const deep = `${'('.repeat(300)}WorkflowId = 'a'${')'.repeat(300)}`;
    expect(compileError(deep).message).toMatch(/nesting exceeds 200 levels/);
    const nots = `${'NOT '.repeat(300)}WorkflowId = 'a'`;
    expect(compileError(nots).message).toMatch(/nesting exceeds/);
  });
});

describe('clauses', () => {
  it.each<[string, RegExp, string]>([
    ["WorkflowId = 'a' LIMIT 10", /operation is not supported: 'LIMIT' clause/, 'LIMIT'],
    ['LIMIT 10', /'LIMIT' clause/, 'LIMIT'],
    ['ORDER BY StartTime LIMIT 1', /'LIMIT' clause/, 'LIMIT'],
    ['GROUP BY ExecutionStatus', /operation is not supported: 'GROUP BY' clause/, 'GROUP BY'],
    ['ORDER BY CustomText', /unable to sort by search attribute type Text \('CustomText'\)/, 'CustomText'],
  ])('%s', (query, pattern, fragment) => {
    const err = compileError(query);
    expect(err.message).toMatch(pattern);
    expect(err.fragment).toBe(fragment);
  });

  it.each<[string, RegExp, string]>([
    ['GROUP BY ExecutionStatus, WorkflowType', /'GROUP BY' clause supports only a single field/, 'WorkflowType'],
    ['GROUP BY WorkflowType', /only supported for ExecutionStatus search attribute, got WorkflowType/, 'WorkflowType'],
    ['GROUP BY Nope', /unknown search attribute Nope/, 'Nope'],
  ])('%s (count)', (query, pattern, fragment) => {
    const err = compileError(query, { allowGroupBy: true });
    expect(err.message).toMatch(pattern);
    expect(err.fragment).toBe(fragment);
  });
});

describe('error object', () => {
  it('is an Error with a name, kind, fragment and 1-based position', () => {
    let caught: unknown;
    try {
      compileVisibilityQuery("WorkflowId = 'a' AND Nope = 1", CUSTOM);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(Error);
    expect(caught).toBeInstanceOf(VisibilityQueryError);
    const err = caught as VisibilityQueryError;
    expect(err.name).toBe('VisibilityQueryError');
    expect(err.kind).toBe('invalid');
    expect(err.fragment).toBe('Nope');
    expect(err.position).toBe(22);
    expect(err.message).toBe('invalid expression: unknown search attribute Nope');
  });

  it('reports the first problem in reading order once the query parses', () => {
    expect(compileError("Nope = 1 AND CustomInt = 'x'").fragment).toBe('Nope');
    // Syntax is checked for the whole query before any attribute is resolved.
    expect(compileError('Nope = 1 AND (').kind).toBe('syntax');
  });
});
