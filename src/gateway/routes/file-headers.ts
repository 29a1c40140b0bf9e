// The headers of a workspace file served for download: its type from its extension (a short list
// of what an agent's workspace holds; anything else is application/octet-stream), and a
// Content-Disposition that makes browsers save it rather than show it (with nosniff beside it,
// an HTML or SVG file the agent wrote never runs in the API's origin).

const TEXT = '; charset=utf-8';

const TYPES: Record<string, string> = {
  txt: `text/plain${TEXT}`,
  log: `text/plain${TEXT}`,
  md: `text/markdown${TEXT}`,
  py: `text/x-python${TEXT}`,
  js: `text/javascript${TEXT}`,
  mjs: `text/javascript${TEXT}`,
  cjs: `text/javascript${TEXT}`,
  ts: `text/x-typescript${TEXT}`,
  tsx: `text/x-typescript${TEXT}`,
  sh: `text/x-shellscript${TEXT}`,
  css: `text/css${TEXT}`,
  csv: `text/csv${TEXT}`,
  tsv: `text/tab-separated-values${TEXT}`,
  html: `text/html${TEXT}`,
  htm: `text/html${TEXT}`,
  xml: `application/xml${TEXT}`,
  json: `application/json${TEXT}`,
  jsonl: `application/jsonl${TEXT}`,
  ipynb: `application/x-ipynb+json${TEXT}`,
  yaml: `application/yaml${TEXT}`,
  yml: `application/yaml${TEXT}`,
  sql: `application/sql${TEXT}`,
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
  tar: 'application/x-tar',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  mp4: 'video/mp4',
};

export const DEFAULT_FILE_TYPE = 'application/octet-stream';

/** The Content-Type of a file named `name` (by its extension, any case). */
export function fileContentType(name: string): string {
  const m = /\.([^./]+)$/.exec(name);
  return (m && TYPES[m[1].toLowerCase()]) ?? DEFAULT_FILE_TYPE;
}

/**
 * `attachment` with the file's name (RFC 6266): `filename` for old clients, ASCII with anything
 * else replaced, and `filename*` (RFC 8187: UTF-8, percent-encoded) for the real name.
 */
export function attachmentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
