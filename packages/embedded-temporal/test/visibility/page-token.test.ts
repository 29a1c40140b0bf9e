// Page tokens hold the last row's sort key only: a few dozen bytes whatever the
// records carry, and a token of another query's order is refused.
import { DEFAULT_ORDER, compileVisibilityQuery } from '../../src/visibility/query';
import { decodePageToken, encodePageToken } from '../../src/visibility/page-token';
import { CUSTOM, T0, record } from './fixtures';

const big = record({
  workflowId: 'w'.repeat(200),
  runId: '01a217b5-77f7-72fd-b791-9254984d0239',
  searchAttributes: { CustomKeyword: 'x'.repeat(2000) },
  closeTime: T0 + 5,
  startTime: T0,
});

test('the default order keeps CloseTime, StartTime and RunId', () => {
  const key = DEFAULT_ORDER.keyOf(big);
  const token = encodePageToken(key);
  expect(token.length).toBeLessThan(100);
  expect(decodePageToken(token, DEFAULT_ORDER)).toEqual(key);
});

test('an ORDER BY keeps its values (datetimes as bigint nanoseconds) and the RunId', () => {
  const order = compileVisibilityQuery('ORDER BY StartTime DESC, CustomKeyword', CUSTOM).order!;
  const key = order.keyOf(big);
  expect(typeof key[0]).toBe('bigint');
  const token = encodePageToken(key);
  expect(decodePageToken(token, order)).toEqual(key);
});

test.each([
  ['not JSON', Buffer.from('garbage')],
  ['not an array', Buffer.from('{"runId":"x"}')],
  ['another order (wrong size)', encodePageToken(['a', 'b'])],
  ['a RunId that is not a string', Buffer.from('[1, 2, 3]')],
  ['a value of no sort type', Buffer.from('[{"x":1}, 2, "r"]')],
  ['a malformed bigint', Buffer.from('[{"n":"12a"}, 2, "r"]')],
])('%s is refused', (_name, token) => {
  expect(decodePageToken(token, DEFAULT_ORDER)).toBeUndefined();
});
