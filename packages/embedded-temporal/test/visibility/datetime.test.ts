import { compileVisibilityQuery } from '../../src/visibility/query';
import { parseDurationNanos, parseRfc3339Nanos } from '../../src/visibility/values';
import { CUSTOM, HOUR, T0, compileError, ids, record, sorted } from './fixtures';

type Row = [string, string[]];
const R1 = "refund_%'1";
const iso = (ms: number) => new Date(ms).toISOString();

describe('system datetime attributes', () => {
  it.each<Row>([
    [`StartTime = '${iso(T0)}'`, ['order-1']],
    [`StartTime > '${iso(T0)}'`, ['order-2', 'order-3', 'order-4', 'payment-1', 'payment-2', R1]],
    [`StartTime >= '${iso(T0 + 5 * HOUR)}'`, ['order-3', 'order-4']],
    [`StartTime < '${iso(T0 + HOUR)}'`, ['order-1']],
    [`StartTime <= '${iso(T0 + HOUR)}'`, ['order-1', 'order-2']],
    [`StartTime != '${iso(T0)}'`, ['order-2', 'order-3', 'order-4', 'payment-1', 'payment-2', R1]],
    // BETWEEN is inclusive at both ends.
    [`StartTime BETWEEN '${iso(T0 + HOUR)}' AND '${iso(T0 + 3 * HOUR)}'`, ['order-2', 'payment-1', 'payment-2']],
    [`StartTime NOT BETWEEN '${iso(T0 + HOUR)}' AND '${iso(T0 + 3 * HOUR)}'`, ['order-1', 'order-3', 'order-4', R1]],
    [`StartTime IN ('${iso(T0)}', '${iso(T0 + 6 * HOUR)}')`, ['order-1', 'order-4']],
    [`StartTime NOT IN ('${iso(T0)}')`, ['order-2', 'order-3', 'order-4', 'payment-1', 'payment-2', R1]],
    // Offsets are honoured: 01:00+01:00 is midnight UTC.
    ["StartTime = '2024-03-01T01:00:00+01:00'", ['order-1']],
    ["StartTime = '2024-02-29T19:30:00-04:30'", ['order-1']],
    // No fractional digits, 3, 6 or 9 are all accepted.
    ["StartTime = '2024-03-01T00:00:00Z'", ['order-1']],
    ["StartTime = '2024-03-01T00:00:00.000000Z'", ['order-1']],
    ["StartTime = '2024-03-01T00:00:00.000000000Z'", ['order-1']],
    // Sub-millisecond precision is kept: .0000001s after T0 is strictly later than T0.
    ["StartTime >= '2024-03-01T00:00:00.0000001Z'", ['order-2', 'order-3', 'order-4', 'payment-1', 'payment-2', R1]],
    ["StartTime < '2024-03-01T00:00:00.000000001Z'", ['order-1']],
    // An integer is Unix nanoseconds.
    [`StartTime = ${BigInt(T0) * 1_000_000n}`, ['order-1']],
    [`StartTime < ${BigInt(T0 + HOUR) * 1_000_000n}`, ['order-1']],
    // ExecutionTime may differ from StartTime (delayed start).
    [`ExecutionTime > '${iso(T0 + 5 * HOUR)}'`, ['order-3', 'order-4']],
    [`ExecutionTime = '${iso(T0 + 3 * HOUR + 500)}'`, ['payment-2']],
  ])('%s', (q, expected) => expect(ids(q)).toEqual(sorted(expected)));
});

describe('CloseTime of running executions', () => {
  it.each<Row>([
    // A running execution has no CloseTime: no comparison matches it, in either direction.
    [`CloseTime > '${iso(T0)}'`, ['order-2', 'order-3', 'order-4', 'payment-1', 'payment-2', R1]],
    [`CloseTime < '9999-12-31T23:59:59Z'`, ['order-2', 'order-3', 'order-4', 'payment-1', 'payment-2', R1]],
    [`NOT CloseTime < '${iso(T0 + 3 * HOUR)}'`, ['order-3', 'order-4', 'payment-1', 'payment-2', R1]],
    ['CloseTime IS NULL', ['order-1']],
    [`CloseTime IS NULL OR CloseTime > '${iso(T0 + 6 * HOUR)}'`, ['order-1', 'order-3', 'order-4']],
  ])('%s', (q, expected) => expect(ids(q)).toEqual(sorted(expected)));
});

describe('custom Datetime attributes', () => {
  it.each<Row>([
    ["CustomDatetime = '2024-03-01T10:00:00Z'", ['order-1']],
    // The stored value has nanoseconds; comparisons keep them.
    ["CustomDatetime = '2024-03-01T12:00:00.123456789Z'", ['order-2']],
    ["CustomDatetime > '2024-03-01T12:00:00.123456788Z'", ['order-2', 'payment-1']],
    ["CustomDatetime < '2024-03-01T12:00:00.123456789Z'", ['order-1']],
    // Stored with an offset: 2024-03-02T00:00+02:00 is 2024-03-01T22:00Z.
    ["CustomDatetime = '2024-03-01T22:00:00Z'", ['payment-1']],
    [
      "CustomDatetime BETWEEN '2024-03-01T00:00:00Z' AND '2024-03-01T23:59:59.999Z'",
      ['order-1', 'order-2', 'payment-1'],
    ],
    ['CustomDatetime IS NULL', ['order-3', 'order-4', 'payment-2', R1]],
  ])('%s', (q, expected) => expect(ids(q)).toEqual(sorted(expected)));

  it('accepts Date objects and epoch milliseconds stored by the engine', () => {
    const recs = [
      record({ workflowId: 'date', searchAttributes: { CustomDatetime: new Date(T0) } }),
      record({ workflowId: 'ms', searchAttributes: { CustomDatetime: T0 } }),
      record({ workflowId: 'bad', searchAttributes: { CustomDatetime: 'not a date' } }),
    ];
    expect(ids(`CustomDatetime = '${iso(T0)}'`, recs)).toEqual(['date', 'ms']);
    expect(ids('CustomDatetime IS NULL', recs)).toEqual(['bad']);
  });
});

describe('ExecutionDuration', () => {
  // Durations: order-2 1h, payment-1 1h, payment-2 1s, refund 1h, order-3 1h, order-4 30m.
  it.each<Row>([
    ["ExecutionDuration = '1h'", ['order-2', 'order-3', 'payment-1', R1]],
    ["ExecutionDuration < '1h'", ['order-4', 'payment-2']],
    ["ExecutionDuration <= '30m'", ['order-4', 'payment-2']],
    ["ExecutionDuration = '00:30:00'", ['order-4']],
    ["ExecutionDuration = '1s'", ['payment-2']],
    ['ExecutionDuration = 1000000000', ['payment-2']],
    ["ExecutionDuration BETWEEN '1m' AND '0.5h'", ['order-4']],
    ["ExecutionDuration > '0.03d'", ['order-2', 'order-3', 'payment-1', R1]], // 43.2 minutes
    ["ExecutionDuration = '1h0m0s'", ['order-2', 'order-3', 'payment-1', R1]],
    ['ExecutionDuration IS NULL', ['order-1']],
  ])('%s', (q, expected) => expect(ids(q)).toEqual(sorted(expected)));

  it.each(["'soon'", "'1x'", "'01:61:00'", '1.5', 'true'])('rejects %s', (v) => {
    expect(compileError(`ExecutionDuration > ${v}`).message).toMatch(/ExecutionDuration/);
  });
});

describe('RFC3339 parsing', () => {
  it.each<[string, bigint]>([
    ['1970-01-01T00:00:00Z', 0n],
    ['1970-01-01T00:00:00.5Z', 500_000_000n],
    ['1970-01-01T00:00:00.000000001Z', 1n],
    ['1970-01-01T01:00:00+01:00', 0n],
    ['1969-12-31T23:00:00-01:00', 0n],
    ['2024-02-29T00:00:00Z', BigInt(Date.parse('2024-02-29T00:00:00Z')) * 1_000_000n],
    // Years below 100 must not be mapped onto the 1900s (a Date.UTC pitfall).
    ['0001-01-01T00:00:00Z', -62_135_596_800_000n * 1_000_000n],
  ])('%s', (text, ns) => expect(parseRfc3339Nanos(text)).toBe(ns));

  it.each([
    '2024-03-01',
    '2024-03-01 00:00:00Z',
    '2024-03-01T00:00:00',
    '2024-03-01t00:00:00z',
    '2024-02-30T00:00:00Z',
    '2023-02-29T00:00:00Z',
    '2024-13-01T00:00:00Z',
    '2024-03-01T24:00:00Z',
    '2024-03-01T00:60:00Z',
    '2024-03-01T00:00:60Z',
    '2024-03-01T00:00:00.Z',
    '2024-03-01T00:00:00.1234567890Z',
    '2024-03-01T00:00:00+0100',
    '2024-03-01T00:00:00+24:00',
    '24-03-01T00:00:00Z',
  ])('rejects %s', (text) => {
    expect(parseRfc3339Nanos(text)).toBeUndefined();
    const err = compileError(`StartTime > '${text}'`);
    expect(err.message).toContain(`unable to parse datetime '${text}'`);
    expect(err.fragment).toBe(`'${text}'`);
  });
});

describe('duration parsing', () => {
  it.each<[string, bigint | undefined]>([
    ['0', 0n],
    ['1500', 1500n],
    ['-1h', -3_600_000_000_000n],
    ['1h30m', 5_400_000_000_000n],
    ['1.5h', 5_400_000_000_000n],
    ['300ms', 300_000_000n],
    ['2us', 2000n],
    ['2µs', 2000n],
    ['1d', 86_400_000_000_000n],
    ['01:02:03', 3_723_000_000_000n],
    ['1', 1n],
    ['h', undefined],
    ['1 h', undefined],
    ['1w', undefined],
    ['00:00:61', undefined],
  ])('%s', (text, ns) => expect(parseDurationNanos(text)).toBe(ns));

  it('is exercised end-to-end through the compiled query', () => {
    const r = record({ workflowId: 'a', closeTime: T0 + 90 * 60_000 });
    expect(compileVisibilityQuery("ExecutionDuration = '1h30m'", CUSTOM).matches(r)).toBe(true);
  });
});
