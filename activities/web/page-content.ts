// What the model reads of a fetched response: an HTML page's main content as markdown (or plain
// text, or its source), a PDF's text, JSON and other text as they are. Anything else (images,
// archives...) is binary, which the caller saves to a file rather than put before the model.
// The Content-Type header decides; without one (or with application/octet-stream) the bytes do.
import { bomEncoding, decodeBody, isUtf8, mediaTypeOf } from './charset';
import { htmlContent, htmlTitle } from './html-markdown';
import { UnreadablePdfError, pdfText } from './pdf-text';

export type PageFormat = 'markdown' | 'text' | 'raw';

export interface PageInput {
  /** The response body (may be cut short: see `truncated`). */
  bytes: Uint8Array;
  /** The Content-Type header as received. */
  contentType: string | undefined;
  /** The final URL (after redirects): relative links resolve against it. */
  url: string;
  /** markdown (the default): readable main content; text: the same as plain text; raw: the decoded source. */
  format: PageFormat;
  /** The body was cut at the byte cap. */
  truncated?: boolean;
}

export type PageContent =
  | { kind: 'html'; title?: string; text: string; charset: string }
  | { kind: 'pdf'; title?: string; text: string; pages: number }
  | { kind: 'json' | 'text'; text: string; charset: string }
  /** The caller saves it to a file. */
  | { kind: 'binary'; mediaType: string; extension: string };

/** A page that cannot be read (a broken PDF...): the message is for the model, and names the problem. */
export class PageContentError extends Error {
  override readonly name = 'PageContentError';
}

type Kind = PageContent['kind'];

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const PDF_TYPES = new Set(['application/pdf', 'application/x-pdf']);
/** Types that say nothing about the content: the bytes are looked at instead. */
const UNTYPED = new Set(['application/octet-stream', 'binary/octet-stream', 'application/unknown']);
/** application/ types that are text all the same (scripts, configuration, queries). */
const TEXT_APPLICATION_TYPES = new Set([
  'application/xml',
  'application/javascript',
  'application/x-javascript',
  'application/ecmascript',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/sql',
  'application/graphql',
  'application/x-sh',
  'application/x-ndjson',
  'application/jsonl',
  'application/x-tex',
  'application/x-httpd-php',
]);

/** What the model reads of the response `input`; throws PageContentError for a page that cannot be read. */
export async function pageContent(input: PageInput): Promise<PageContent> {
  const { bytes, contentType } = input;
  const mediaType = mediaTypeOf(contentType);
  const kind = mediaType && !UNTYPED.has(mediaType) ? kindOfType(mediaType) : sniffKind(bytes, mediaType);
  switch (kind) {
    case 'html':
      return readHtml(input);
    case 'pdf':
      return readPdf(input);
    case 'json':
    case 'text':
      return { kind, ...decodeBody(bytes, contentType) };
    case 'binary':
      return binary(bytes, mediaType);
  }
}

/** The kind of content a (known, non-generic) media type announces. */
export function kindOfType(mediaType: string): Kind {
  if (HTML_TYPES.has(mediaType)) return 'html';
  if (PDF_TYPES.has(mediaType)) return 'pdf';
  if (mediaType === 'application/json' || mediaType.endsWith('+json')) return 'json';
  if (mediaType.startsWith('text/') || mediaType.endsWith('+xml') || TEXT_APPLICATION_TYPES.has(mediaType))
    return 'text';
  return 'binary';
}

/**
 * The kind of content `bytes` hold, for a response without a usable type: HTML by its opening
 * tag, a PDF by its signature, JSON that parses, text that is valid UTF-8 without NUL bytes. An
 * application/octet-stream response is only a PDF or binary: a server that labels HTML so means
 * it to be downloaded.
 */
export function sniffKind(bytes: Uint8Array, mediaType?: string): Kind {
  if (startsWith(bytes, '%PDF-')) return 'pdf';
  if (mediaType) return 'binary';
  const head = leadingText(bytes);
  if (/^<(?:!doctype\s+html|html|head|body|title|meta|script|!--|p|div|h1|table)[\s>/]/i.test(head)) return 'html';
  if (!bomEncoding(bytes) && (bytes.includes(0) || !isUtf8(bytes))) return 'binary';
  if (/^[{[]/.test(head) && isJson(bytes)) return 'json';
  return 'text';
}

async function readHtml(input: PageInput): Promise<PageContent> {
  const { text: source, charset } = decodeBody(input.bytes, input.contentType, { html: true });
  if (input.format === 'raw') return { kind: 'html', title: await htmlTitle(source), text: source, charset };
  try {
    const { title, text } = await htmlContent(source, input.url, input.format);
    return { kind: 'html', title, text, charset };
  } catch (err) {
    throw new PageContentError(
      `The HTML page could not be converted to ${input.format} (${messageOf(err)}). Fetch it again with format "raw" to read its source.`,
    );
  }
}

async function readPdf(input: PageInput): Promise<PageContent> {
  try {
    const { title, text, pages } = await pdfText(input.bytes);
    return { kind: 'pdf', ...(title ? { title } : {}), text, pages };
  } catch (err) {
    if (!(err instanceof UnreadablePdfError)) throw err;
    if (err.encrypted) throw new PageContentError('The PDF could not be read: it is protected by a password.');
    const why = input.truncated
      ? 'the response was cut at the size cap, so the file is incomplete (a PDF keeps its index at its end, and cannot be read in part)'
      : 'the file is damaged, or is not a PDF';
    throw new PageContentError(`The PDF could not be read: ${why}. pdf.js said: ${messageOf(err)}.`);
  }
}

/** File extensions of the binary types met on the web (the caller names the saved file with it). */
const EXTENSIONS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/pjpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/avif': 'avif',
  'image/bmp': 'bmp',
  'image/tiff': 'tiff',
  'image/x-icon': 'ico',
  'image/vnd.microsoft.icon': 'ico',
  'image/heic': 'heic',
  'application/zip': 'zip',
  'application/x-zip-compressed': 'zip',
  'application/gzip': 'gz',
  'application/x-gzip': 'gz',
  'application/x-tar': 'tar',
  'application/x-bzip2': 'bz2',
  'application/x-xz': 'xz',
  'application/zstd': 'zst',
  'application/x-7z-compressed': '7z',
  'application/vnd.rar': 'rar',
  'application/x-rar-compressed': 'rar',
  'application/msword': 'doc',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.ms-powerpoint': 'ppt',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
  'application/vnd.oasis.opendocument.text': 'odt',
  'application/vnd.oasis.opendocument.spreadsheet': 'ods',
  'application/rtf': 'rtf',
  'application/epub+zip': 'epub',
  'application/wasm': 'wasm',
  'application/vnd.sqlite3': 'sqlite',
  'application/x-sqlite3': 'sqlite',
  'application/vnd.apache.parquet': 'parquet',
  'application/x-parquet': 'parquet',
  'application/x-protobuf': 'pb',
  'application/java-archive': 'jar',
  'application/x-msdownload': 'exe',
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/ogg': 'ogg',
  'audio/flac': 'flac',
  'audio/aac': 'aac',
  'audio/mp4': 'm4a',
  'audio/webm': 'weba',
  'video/mp4': 'mp4',
  'video/webm': 'webm',
  'video/quicktime': 'mov',
  'video/x-msvideo': 'avi',
  'video/mpeg': 'mpeg',
  'font/woff': 'woff',
  'font/woff2': 'woff2',
  'font/ttf': 'ttf',
  'font/otf': 'otf',
};

/** Signatures of common binary formats, for a response whose type says nothing. */
const SIGNATURES: ReadonlyArray<[mediaType: string, test: (b: Uint8Array) => boolean]> = [
  ['image/png', (b) => startsWith(b, '\x89PNG\r\n\x1a\n')],
  ['image/jpeg', (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
  ['image/gif', (b) => startsWith(b, 'GIF87a') || startsWith(b, 'GIF89a')],
  ['image/webp', (b) => startsWith(b, 'RIFF') && latin1(b.subarray(8, 12)) === 'WEBP'],
  ['application/zip', (b) => startsWith(b, 'PK\x03\x04')],
  ['application/gzip', (b) => b[0] === 0x1f && b[1] === 0x8b],
];

function binary(bytes: Uint8Array, mediaType: string | undefined): PageContent {
  const typed = mediaType && !UNTYPED.has(mediaType) ? mediaType : undefined;
  const found = typed ?? SIGNATURES.find(([, test]) => test(bytes))?.[0] ?? 'application/octet-stream';
  return { kind: 'binary', mediaType: found, extension: extensionOf(found) };
}

/** A file extension for `mediaType`: a known one, else a plain media subtype (`image/jxl` → jxl), else bin. */
export function extensionOf(mediaType: string): string {
  const known = EXTENSIONS[mediaType];
  if (known) return known;
  const subtype = /^(?:image|audio|video|font)\/(?:x-)?([a-z0-9]{2,5})$/.exec(mediaType)?.[1];
  return subtype ?? 'bin';
}

function startsWith(bytes: Uint8Array, signature: string): boolean {
  return latin1(bytes.subarray(0, signature.length)) === signature;
}

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

/** The first characters of `bytes` after a byte order mark and whitespace (ASCII only is looked at). */
function leadingText(bytes: Uint8Array): string {
  const skip = bomEncoding(bytes) === 'utf-8' ? 3 : 0;
  return latin1(bytes.subarray(skip, skip + 512)).trimStart();
}

function isJson(bytes: Uint8Array): boolean {
  try {
    JSON.parse(new TextDecoder().decode(bytes));
    return true;
  } catch {
    return false;
  }
}

function messageOf(err: unknown): string {
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message ? message.replace(/\.$/, '') : String(err);
}
