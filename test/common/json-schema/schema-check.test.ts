// JSON Schemas users give: usable or not, strict subset or not, and the
// problems of an answer against one (no network).
import { schemaIssues, strictSubsetIssues, validationErrors } from '../../../src/common/json-schema/schema-check';

test('a usable schema has no issues; a broken one names where it breaks', () => {
  expect(schemaIssues({ type: 'object', properties: { a: { type: 'string' } } }, 'p')).toEqual([]);
  expect(schemaIssues('object', 'p')).toEqual([
    { path: 'p', message: 'a JSON Schema is an object', code: 'invalid_schema' },
  ]);
  const bad = schemaIssues({ type: 'object', properties: { a: { type: 'strnig' }, b: { minLength: -1 } } }, 'p');
  expect(bad.map((i) => i.path)).toEqual(['p.properties.a.type', 'p.properties.b.minLength']);
  // Array positions in brackets, keys after a dot, and a key that is no plain name quoted: one place each.
  const nested = schemaIssues(
    { anyOf: [{ type: 'string' }, { type: 'strnig' }], properties: { '0': { type: 'nope' }, 'a b': { minimum: 'x' } } },
    'p',
  );
  expect(nested.map((i) => i.path)).toEqual([
    'p.properties["0"].type',
    'p.properties["a b"].minimum',
    'p.anyOf[1].type',
  ]);
  expect(
    strictSubsetIssues(
      { type: 'object', additionalProperties: false, required: [], anyOf: [{ type: 'object' }] },
      's',
    ).map((i) => i.path),
  ).toEqual(['s.anyOf[0]']);
  expect(schemaIssues({ $ref: '#/$defs/missing' }, 'p')[0]).toMatchObject({
    path: 'p',
    code: 'invalid_schema',
    message: expect.stringMatching(/missing/),
  });
});

test('the strict subset: every object closed and every property required, at any depth', () => {
  const strict = {
    type: 'object',
    additionalProperties: false,
    required: ['a', 'list'],
    properties: {
      a: { type: 'string' },
      list: {
        type: 'array',
        items: { type: 'object', additionalProperties: false, required: ['x'], properties: { x: { type: 'number' } } },
      },
    },
  };
  expect(strictSubsetIssues(strict, 's')).toEqual([]);
  const loose = {
    type: 'object',
    properties: {
      a: { type: 'string' },
      list: { type: 'array', items: { type: 'object', properties: { x: { type: 'number' } } } },
    },
    required: ['a'],
    $defs: { d: { type: 'object', additionalProperties: false, properties: { y: {} } } },
  };
  expect(strictSubsetIssues(loose, 's').map((i) => `${i.path}: ${i.message}`)).toEqual([
    's: with strict: true every object needs "additionalProperties": false',
    's: with strict: true every property is required; not in "required": list',
    's.properties.list.items: with strict: true every object needs "additionalProperties": false',
    's.properties.list.items: with strict: true every property is required; not in "required": x',
    's.$defs.d: with strict: true every property is required; not in "required": y',
  ]);
});

test('an answer is checked against its schema, each problem on one line', () => {
  const schema = {
    type: 'object',
    additionalProperties: false,
    required: ['score'],
    properties: { score: { type: 'integer', maximum: 5 }, tag: { enum: ['a', 'b'] } },
  };
  expect(validationErrors(schema, { score: 3, tag: 'a' })).toEqual([]);
  expect(validationErrors(schema, { score: 9, tag: 'c', extra: 1 })).toEqual([
    '(the root): unexpected property "extra"',
    '/score: must be <= 5',
    '/tag: must be one of ["a","b"]',
  ]);
  expect(validationErrors(schema, [])).toEqual(['(the root): must be object']);
});
