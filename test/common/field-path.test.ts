// The one style of the API's error paths (no network).
import { fieldPath, pointerSegments } from '../../src/common/field-path';

test('keys after a dot, array positions in brackets, other keys quoted in brackets', () => {
  expect(fieldPath('body')).toBe('body');
  expect(fieldPath('body', 'mcp_servers', 0, 'serverUrl')).toBe('body.mcp_servers[0].serverUrl');
  expect(fieldPath('body.schedules[2]', 'timezone')).toBe('body.schedules[2].timezone');
  expect(fieldPath('body', 'callback', 'headers', 'X-Trace-Id')).toBe('body.callback.headers.X-Trace-Id');
  expect(fieldPath('body', 'schema', 'properties', 'a b', '0', 'x.y')).toBe(
    'body.schema.properties["a b"]["0"]["x.y"]',
  );
});

test('a JSON Pointer reads an index only where the value holds an array', () => {
  const value = { anyOf: [{}, { properties: { '0': {}, 'a/b': {} } }] };
  expect(pointerSegments(value, '')).toEqual([]);
  expect(pointerSegments(value, '/anyOf/1/properties/0')).toEqual(['anyOf', 1, 'properties', '0']);
  expect(pointerSegments(value, '/anyOf/1/properties/a~1b')).toEqual(['anyOf', 1, 'properties', 'a/b']);
  expect(pointerSegments(value, '/missing/0')).toEqual(['missing', '0']);
});
