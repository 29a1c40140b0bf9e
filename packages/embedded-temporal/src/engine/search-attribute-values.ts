// Search attribute values as the real server's List returns them: as its SQL
// visibility store gives them back, decoded with the attribute's type, a
// one-element list reduced to its element, datetimes in Go's RFC 3339 form, and
// the type in each payload's metadata.
import type { Engine } from './engine';
import type { Payload } from './state';
import { IndexedValueType } from '../proto';
import { storedAttributeType, typeName } from './search-attributes';

const JSON_PLAIN = Buffer.from('json/plain');

/** Go's RFC3339Nano in UTC: no fraction when it is zero, no trailing zeros otherwise. */
function goTime(v: string): string {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?Z$/.exec(v);
  if (m) {
    const frac = (m[2] ?? '').replace(/0+$/, '');
    return `${m[1]}${frac ? `.${frac}` : ''}Z`;
  }
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? v : goTime(new Date(ms).toISOString());
}

function visibilityValue(v: unknown, type: number): unknown {
  if (type === IndexedValueType.KEYWORD_LIST) return typeof v === 'string' ? [v] : v;
  if (Array.isArray(v)) {
    if (v.length === 0) return undefined;
    if (v.length === 1) v = v[0];
    else return type === IndexedValueType.DATETIME ? v.map((x) => (typeof x === 'string' ? goTime(x) : x)) : v;
  }
  return type === IndexedValueType.DATETIME && typeof v === 'string' ? goTime(v) : v;
}

/** A run's search attributes as ListWorkflowExecutions returns them (unknown names are left out). */
export function visibilitySearchAttributes(
  eng: Engine,
  namespace: string,
  fields: Record<string, Payload> | undefined,
): Record<string, Payload> {
  const out: Record<string, Payload> = {};
  for (const [name, p] of Object.entries(fields ?? {})) {
    const type = storedAttributeType(eng, namespace, name);
    if (type === undefined || !p.data?.length) continue;
    let value: unknown;
    try {
      value = visibilityValue(JSON.parse(Buffer.from(p.data).toString('utf8')), type);
    } catch {
      continue;
    }
    if (value === undefined || value === null) continue;
    out[name] = {
      metadata: { encoding: JSON_PLAIN, type: Buffer.from(typeName(type)!) },
      data: Buffer.from(JSON.stringify(value)),
    };
  }
  return out;
}
