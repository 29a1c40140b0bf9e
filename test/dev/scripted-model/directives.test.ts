// Unit tests for the directive parser, the schema filler and the tokenizer.
import { countTokens, fillSchema, parseDirectives, tokenize } from '../../../src/dev/scripted-model';
import { ChatRequestSchema, plainChatRequest } from '../../../src/dev/scripted-model/request';

describe('scripted model: directive syntax', () => {
  test('names, bare flags, quoted strings and JSON values', () => {
    const p = parseDirectives(
      'before [[tool name=lookup args={"q":"x y","deep":[[1]]} turn=2]] mid [[say text="a ]] b"]] [[think]] after',
    );
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
    const schema = {
      $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } }, required: ['next'] } },
      $ref: '#/$defs/node',
    };
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

  test('countTokens agrees with tokenize, for every UTF-16 code unit as a separator', () => {
    for (const s of [
      '',
      ' ',
      '  ',
      'a',
      'a ',
      ' a',
      'abcdef',
      'abcdefg',
      'abcdefghijklm  x ',
      '\n\tx\r\n',
      'ünïcødé 你好世界 😀😀😀😀',
    ]) {
      expect(countTokens(s)).toBe(tokenize(s).length);
    }
    const mismatches: number[] = [];
    for (let c = 0; c <= 0xffff; c++) {
      const s = `ab${String.fromCharCode(c)}cd${String.fromCharCode(c)}`;
      if (countTokens(s) !== tokenize(s).length) mismatches.push(c);
    }
    expect(mismatches).toEqual([]);
  });
});

describe('scripted model: request validation fast path', () => {
  const msgs = [{ role: 'user', content: 'hi' }];
  const call = { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } };
  const tool = { type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object' } } };

  test('what it accepts, zod accepts too, and both give the same request', () => {
    const valid: unknown[] = [
      { messages: msgs },
      { model: 'm', messages: msgs, stream: true, stream_options: { include_usage: true }, extra: { anything: 1 } },
      {
        model: 'm',
        messages: [
          ...msgs,
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: 'c1', content: 'ok' },
        ],
        tools: [tool],
        tool_choice: 'auto',
      },
      {
        model: 'm',
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'x' }], name: 'u' },
          { role: 'assistant', content: '', reasoning_content: 'r' },
        ],
      },
      {
        model: 'm',
        messages: msgs,
        response_format: { type: 'json_schema', json_schema: { name: 'n', schema: {}, strict: true } },
        max_tokens: 5,
        max_completion_tokens: null,
      },
      {
        model: 'm',
        messages: [{ role: 'assistant', tool_calls: null }],
        stream: null,
        tools: null,
        response_format: null,
      },
    ];
    for (const body of valid) {
      const plain = plainChatRequest(body);
      expect(plain).toBeDefined();
      expect(plain).toEqual(ChatRequestSchema.parse(body));
    }
  });

  test('anything doubtful is left to zod', () => {
    const doubtful: unknown[] = [
      null,
      [],
      {},
      { messages: [] },
      { model: 3, messages: msgs },
      { messages: [{ role: 'wizard', content: 'x' }] },
      { messages: [{ role: 'user', content: 5 }] },
      { messages: [{ role: 'assistant', tool_calls: [{ function: { arguments: '{}' } }] }] },
      { messages: [{ role: 'assistant', tool_calls: {} }] },
      { messages: msgs, stream: 'yes' },
      { messages: msgs, tools: [{ type: 'function' }] },
      { messages: msgs, max_tokens: 0 },
      { messages: msgs, max_tokens: 1.5 },
      { messages: msgs, response_format: { json_schema: {} } },
      { messages: msgs, stream_options: { include_usage: 'no' } },
    ];
    for (const body of doubtful) {
      expect(plainChatRequest(body)).toBeUndefined();
    }
  });
});
