// Turns a response body into text the way a browser would: the encoding is the one the bytes or
// the server declare (WHATWG "encoding sniffing", simplified), never a guess that throws. Pages
// in the wild still come in windows-1252, Shift_JIS, GBK..., and many declare it only in a
// <meta> tag, so decoding everything as UTF-8 would hand the model mojibake.

/** How many leading bytes a <meta charset> may sit in (the WHATWG prescan's window). */
const PRESCAN_BYTES = 1024;

export interface Decoded {
  text: string;
  /** The encoding's canonical name (`utf-8`, `windows-1252`, `shift_jis`...). */
  charset: string;
}

/** The media type of a Content-Type header, lower-cased and without parameters (`text/html`), if any. */
export function mediaTypeOf(contentType: string | undefined): string | undefined {
  const essence = contentType?.split(';', 1)[0].trim().toLowerCase();
  return essence && /^[\w.+-]+\/[\w.+-]+$/.test(essence) ? essence : undefined;
}

/** The `charset` parameter of a Content-Type header, if any. */
export function charsetParam(contentType: string | undefined): string | undefined {
  const m = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType ?? '');
  const label = (m?.[1] ?? m?.[2])?.trim();
  return label || undefined;
}

/**
 * The canonical name of the encoding `label` names (per the Encoding Standard's labels:
 * `latin1` and `iso-8859-1` are windows-1252, `sjis` is shift_jis...), or undefined if this
 * runtime knows no such encoding.
 */
export function encodingFor(label: string | undefined): string | undefined {
  if (!label) return undefined;
  try {
    return new TextDecoder(label.trim()).encoding;
  } catch {
    return undefined;
  }
}

/** The encoding a byte order mark at the start of `bytes` names, if there is one. */
export function bomEncoding(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  return undefined;
}

/** The charset a <meta> tag declares in the first 1024 bytes of an HTML document, if any. */
export function metaCharset(bytes: Uint8Array): string | undefined {
  // Latin-1 maps each byte to one character, so the ASCII markup reads the same whatever the encoding.
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, PRESCAN_BYTES))
    .toString('latin1')
    .replace(/<!--[\s\S]*?(?:-->|$)/g, '');
  for (const [tag] of head.matchAll(/<meta[\s/][^>]*>?/gi)) {
    const attrs = attributesOf(tag);
    let label = attrs.get('charset');
    if (label === undefined && attrs.get('http-equiv')?.toLowerCase() === 'content-type')
      label = /charset\s*=\s*["']?([^"';\s]+)/i.exec(attrs.get('content') ?? '')?.[1];
    const encoding = encodingFor(label);
    if (!encoding) continue;
    // A page can't really be in UTF-16 if its ASCII markup was readable byte by byte (the standard's rule).
    if (encoding.startsWith('utf-16')) return 'utf-8';
    return encoding;
  }
  return undefined;
}

/** The encoding an XML declaration (`<?xml version="1.0" encoding="..."?>`) at the start names, if any. */
export function xmlEncoding(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 200)).toString('latin1');
  const label = /^<\?xml[^>]*?\sencoding\s*=\s*["']([^"']+)["']/.exec(head)?.[1];
  const encoding = encodingFor(label);
  return encoding?.startsWith('utf-16') ? 'utf-8' : encoding;
}

/** Whether `bytes` are valid UTF-8, a sequence cut at the very end (a truncated body) allowed. */
export function isUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * The text of a response body and the encoding it was read in. The order is the browsers': a
 * byte order mark (it wins even over the header, being certain), the Content-Type header's
 * charset, then, for HTML, a <meta> charset in the first 1024 bytes (for XML, its declaration),
 * else UTF-8 — or windows-1252 for bytes that are not valid UTF-8, which is what an unlabelled
 * legacy page almost always is. Never throws: an unknown label is passed over.
 */
export function decodeBody(
  bytes: Uint8Array,
  contentType: string | undefined,
  { html = false }: { html?: boolean } = {},
): Decoded {
  const charset =
    bomEncoding(bytes) ??
    encodingFor(charsetParam(contentType)) ??
    (html ? metaCharset(bytes) : xmlEncoding(bytes)) ??
    (isUtf8(bytes) ? 'utf-8' : 'windows-1252');
  return { text: decode(bytes, charset), charset };
}

/**
 * Windows-1252's characters for bytes 0x80-0x9F, where it differs from Latin-1 (the five
 * undefined bytes stand for themselves, as the Encoding Standard says).
 */
const WINDOWS_1252_C1 =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

function decode(bytes: Uint8Array, charset: string): string {
  // Node 20.18.3 and later decode windows-1252 as Latin-1 (nodejs/node#60888): curly quotes,
  // dashes and the euro sign, the very characters such pages use, would come out as control codes.
  if (charset === 'windows-1252')
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
      .toString('latin1')
      .replace(/[\u0080-\u009f]/g, (c) => WINDOWS_1252_C1[c.charCodeAt(0) - 0x80]);
  try {
    // Replacement characters for bad sequences (fatal: false): a page with one broken byte is still read.
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

/** The attributes of one start tag (`<meta charset="x" ...>`), names lower-cased. */
function attributesOf(tag: string): Map<string, string> {
  const attrs = new Map<string, string>();
  const body = tag.replace(/^<meta/i, '').replace(/\/?>$/, '');
  for (const m of body.matchAll(/([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]*)))?/g)) {
    const name = m[1].toLowerCase();
    // The first of a repeated attribute counts, as in a parser.
    if (!attrs.has(name)) attrs.set(name, (m[2] ?? m[3] ?? m[4] ?? '').trim());
  }
  return attrs;
}
