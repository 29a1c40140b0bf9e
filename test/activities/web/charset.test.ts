// Decoding a response body (activities/web/charset.ts) as a browser would: the header's charset,
// a byte order mark (which wins over the header), a <meta> charset within the first 1024 bytes
// of an HTML page, an XML declaration; unknown labels passed over; unlabelled bytes that are not
// UTF-8 read as windows-1252.
import { charsetParam, decodeBody, mediaTypeOf, metaCharset } from '../../../activities/web/charset';

const bytes = (...parts: Array<string | number[]>): Uint8Array =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));

describe('mediaTypeOf', () => {
  test('the type without its parameters, lower-cased', () => {
    expect(mediaTypeOf('Text/HTML; charset=UTF-8')).toBe('text/html');
    expect(mediaTypeOf(' application/ld+json ')).toBe('application/ld+json');
  });

  test('undefined for a missing or malformed header', () => {
    expect(mediaTypeOf(undefined)).toBeUndefined();
    expect(mediaTypeOf('')).toBeUndefined();
    expect(mediaTypeOf('html')).toBeUndefined();
  });
});

describe('charsetParam', () => {
  test('quoted, unquoted, among other parameters', () => {
    expect(charsetParam('text/html; charset=ISO-8859-1')).toBe('ISO-8859-1');
    expect(charsetParam('text/plain;format=flowed; Charset="utf-8"')).toBe('utf-8');
    expect(charsetParam('text/html')).toBeUndefined();
  });
});

describe('decodeBody', () => {
  test('windows-1252 from the header: curly quotes and accents', () => {
    const body = bytes([0x93], 'caf', [0xe9], [0x94]);
    expect(decodeBody(body, 'text/html; charset=windows-1252', { html: true })).toEqual({
      text: '\u201ccafé\u201d',
      charset: 'windows-1252',
    });
  });

  test('every byte 0x80-0x9F of windows-1252 (Node 20 decodes them as Latin-1, wrongly)', () => {
    const all = Uint8Array.from({ length: 32 }, (_, i) => 0x80 + i);
    expect(decodeBody(all, 'text/plain; charset=windows-1252').text).toBe(
      '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ',
    );
  });

  test('iso-8859-1 is read as windows-1252 (the Encoding Standard: 0x80-0x9F are the curly quotes)', () => {
    expect(decodeBody(bytes([0x93], 'x', [0x94]), 'text/plain; charset=iso-8859-1')).toEqual({
      text: '\u201cx\u201d',
      charset: 'windows-1252',
    });
  });

  test('a <meta charset> when the header has none', () => {
    const page = bytes(
      '<!doctype html><html><head><meta charset="windows-1252"><title>R',
      [0xe9],
      'sum',
      [0xe9],
      '</title>',
    );
    expect(decodeBody(page, 'text/html', { html: true })).toEqual({
      text: '<!doctype html><html><head><meta charset="windows-1252"><title>Résumé</title>',
      charset: 'windows-1252',
    });
  });

  test('a <meta http-equiv="Content-Type" content="...; charset=">', () => {
    const page = bytes(
      "<html><head><META HTTP-EQUIV='Content-Type' CONTENT='text/html; charset=iso-8859-1'></head><body>na",
      [0xef],
      've</body>',
    );
    const { text, charset } = decodeBody(page, undefined, { html: true });
    expect(charset).toBe('windows-1252');
    expect(text).toContain('naïve');
  });

  test('the header wins over the <meta>', () => {
    const page = Buffer.from('<meta charset="windows-1252"><p>é</p>', 'utf8');
    expect(decodeBody(page, 'text/html; charset=utf-8', { html: true })).toEqual({
      text: '<meta charset="windows-1252"><p>é</p>',
      charset: 'utf-8',
    });
  });

  test('a <meta> past the first 1024 bytes, or in a comment, does not count', () => {
    const late = bytes('<html><head>', ' '.repeat(1100), '<meta charset="shift_jis">');
    expect(metaCharset(late)).toBeUndefined();
    expect(metaCharset(bytes('<!-- <meta charset="koi8-r"> --><meta charset="euc-kr">'))).toBe('euc-kr');
  });

  test('a <meta> is looked for in HTML only', () => {
    const text = bytes('<meta charset="koi8-r"> plain text');
    expect(decodeBody(text, 'text/plain').charset).toBe('utf-8');
  });

  test('a <meta> that says UTF-16 is read as UTF-8 (its markup was readable byte by byte)', () => {
    expect(metaCharset(bytes('<meta charset="utf-16le">'))).toBe('utf-8');
  });

  test('shift_jis from the header', () => {
    // 日本語 in Shift_JIS.
    const body = bytes([0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]);
    expect(decodeBody(body, 'text/html; charset=Shift_JIS', { html: true })).toEqual({
      text: '日本語',
      charset: 'shift_jis',
    });
  });

  test('euc-kr and gbk labels', () => {
    // 한국 in EUC-KR, 中文 in GBK.
    expect(decodeBody(bytes([0xc7, 0xd1, 0xb1, 0xb9]), 'text/plain; charset=euc-kr').text).toBe('한국');
    expect(decodeBody(bytes([0xd6, 0xd0, 0xce, 0xc4]), 'text/plain; charset=gb2312')).toEqual({
      text: '中文',
      charset: 'gbk',
    });
  });

  test('a UTF-8 byte order mark wins over the header, and is not part of the text', () => {
    const body = bytes([0xef, 0xbb, 0xbf], Buffer.from('é', 'utf8').toString('latin1'));
    expect(decodeBody(body, 'text/plain; charset=windows-1252')).toEqual({ text: 'é', charset: 'utf-8' });
  });

  test('UTF-16 byte order marks', () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hé', 'utf16le')]);
    expect(decodeBody(le, undefined)).toEqual({ text: 'hé', charset: 'utf-16le' });
    const be = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('hé', 'utf16le').swap16()]);
    expect(decodeBody(be, 'text/plain')).toEqual({ text: 'hé', charset: 'utf-16be' });
  });

  test('an XML declaration names the encoding of XML', () => {
    const xml = bytes('<?xml version="1.0" encoding="ISO-8859-1"?><a>', [0xe9], '</a>');
    expect(decodeBody(xml, 'application/xml')).toEqual({
      text: '<?xml version="1.0" encoding="ISO-8859-1"?><a>é</a>',
      charset: 'windows-1252',
    });
  });

  test('an unknown label is passed over: UTF-8', () => {
    expect(decodeBody(Buffer.from('é', 'utf8'), 'text/plain; charset=no-such-thing')).toEqual({
      text: 'é',
      charset: 'utf-8',
    });
    expect(decodeBody(bytes('<meta charset="bogus">'), undefined, { html: true }).charset).toBe('utf-8');
  });

  test('no label: UTF-8, or windows-1252 for bytes that are not UTF-8', () => {
    expect(decodeBody(Buffer.from('naïve ✓', 'utf8'), 'text/plain')).toEqual({ text: 'naïve ✓', charset: 'utf-8' });
    expect(decodeBody(bytes('caf', [0xe9], ' cr', [0xe8], 'me'), 'text/html', { html: true })).toEqual({
      text: 'café crème',
      charset: 'windows-1252',
    });
  });

  test('a UTF-8 body cut inside a character is still UTF-8 (the cut shows as one replacement character)', () => {
    const cut = Buffer.from('abc ✓', 'utf8').subarray(0, 5);
    expect(decodeBody(cut, 'text/plain')).toEqual({ text: 'abc \ufffd', charset: 'utf-8' });
  });
});
