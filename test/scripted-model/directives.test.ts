// Unit tests for the directive parser, the schema filler and the tokenizer.
import { countTokens, fillSchema, parseDirectives, tokenize } from '../../src/scripted-model';

describe('scripted model: directive syntax', () => {
  test('names, bare flags, quoted strings and JSON values', () => {
    const p = parseDirectives('before [[tool name=lookup args={"q":"x y","deep":[[1]]} turn=2]] mid [[say text="a ]] b"]] [[think]] after');
    expect(p.directives).toEqual([
      { name: 'tool', params: { name: 'lookup', args: '{"q":"x y","deep":[[1]]}', turn: '2' } },
      { name: 'say', params: { text: 'a ]] b' } },
      { name: 'think', params: {} },
    ]);
    expect(p.text).toBe('before mid after');
  });

  test('unknown, malformed or unclosed directives stay in the text', () => {
    expect(parseDirectives('[[wiki link]] and [[tool name=x').directives).toEqual([]);
    expect(parseDirectives('[[wiki link]] and [[tool name=x').text).toBe('[[wiki link]] and [[tool name=x');
    expect(parseDirectives('[[ SLOW  Delay=5 ]]').directives).toEqual([{ name: 'slow', params: { delay: '5' } }]);
    expect(parseDirectives("[[say text='single']]").directives[0].params.text).toBe('single');
    expect(parseDirectives('[[tool parallel name=a]]').directives[0].params).toEqual({ parallel: 'true', name: 'a' });
  });
});

describe('scripted model: schema filler', () => {
  test('enums, consts, bounds and arrays', () => {
    const v = fillSchema(
      {
        type: 'object',
        properties: {
          e: { enum: ['b', 'a'] },
          c: { const: 7 },
          n: { type: 'number', minimum: 2.5 },
          m: { type: 'integer', minimum: 1, multipleOf: 5 },
          s: { type: 'string', maxLength: 3 },
          a: { type: 'array', items: { type: 'boolean' }, minItems: 3 },
          u: { type: ['null', 'string'] },
        },
      },
      { text: 'hello' },
    );
    expect(v).toEqual({ e: 'b', c: 7, n: 2.5, m: 5, s: 'hel', a: [true, true, true], u: 'hello' });
  });

  test('recursive schemas stop at a depth limit instead of looping', () => {
    const schema = { $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } }, required: ['next'] } }, $ref: '#/$defs/node' };
    expect(() => JSON.stringify(fillSchema(schema, { text: '' }))).not.toThrow();
  });
});

describe('scripted model: tokenizer', () => {
  test('tokens concatenate back to the input; long words split into pieces', () => {
    for (const s of ['', 'a', ' lead and trail ', 'supercalifragilistic word', 'line\nbreak\n\n', 'ünïcødé 你好世界']) {
      expect(tokenize(s).join('')).toBe(s);
    }
    expect(tokenize('You said: hello')).toEqual(['You', ' said:', ' hello']);
    expect(countTokens('abcdefghijkl')).toBe(2);
  });
});
