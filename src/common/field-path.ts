// The one way the API names where a problem is, in every 4xx's message and
// details: the part of the request first (`body`, `query`, `path`, `header`),
// then each key after a dot and each array index in brackets, as a JavaScript
// reader would write it: `body.mcp_servers[0].serverUrl`, `query.cursor`,
// `path.id`. A key that is not a plain name (a JSON Schema property "a b") is
// quoted in brackets, so a path always reads back to one place.

export type PathSegment = string | number;

const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

/** `base` (a part of the request, or a path made here) followed by `segments`. */
export function fieldPath(base: string, ...segments: readonly PathSegment[]): string {
  let out = base;
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else out += PLAIN_KEY.test(s) ? `.${s}` : `[${JSON.stringify(s)}]`;
  }
  return out;
}

/**
 * The segments of a JSON Pointer (RFC 6901: /properties/a~1b/items/0) into
 * `value`, reading a segment as an array index only where `value` holds an
 * array there, so a property named "0" stays a key.
 */
export function pointerSegments(value: unknown, pointer: string): PathSegment[] {
  if (!pointer) return [];
  const out: PathSegment[] = [];
  let at = value;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(at) && /^\d+$/.test(key)) {
      out.push(Number(key));
      at = at[Number(key)];
    } else {
      out.push(key);
      at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined;
    }
  }
  return out;
}
