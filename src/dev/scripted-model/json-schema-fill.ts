// Builds a value that satisfies a JSON Schema, for structured-output replies and
// for tool arguments the script did not spell out. It covers the subset OpenAI
// structured outputs allow (type, properties, required, items, enum, const,
// anyOf/oneOf/allOf, $ref into $defs/definitions, length and range bounds).

type Schema = Record<string, any>;

export interface FillOptions {
  /** Text used for plain string values (truncated/padded to fit length bounds). */
  text: string;
}

const MAX_DEPTH = 12;

const FORMATS: Record<string, string> = {
  'date-time': '2024-01-01T00:00:00Z',
  date: '2024-01-01',
  time: '00:00:00',
  duration: 'PT1M',
  email: 'user@example.com',
  hostname: 'example.com',
  ipv4: '127.0.0.1',
  ipv6: '::1',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
};

function resolveRef(root: Schema, ref: string): Schema {
  if (!ref.startsWith('#')) return {};
  const parts = ref
    .slice(1)
    .split('/')
    .filter(Boolean)
    .map((p) => decodeURIComponent(p).replace(/~1/g, '/').replace(/~0/g, '~'));
  let cur: any = root;
  for (const p of parts) cur = cur?.[p];
  return cur && typeof cur === 'object' ? cur : {};
}

function fillString(s: Schema, opts: FillOptions): string {
  let v = typeof s.format === 'string' && FORMATS[s.format] ? FORMATS[s.format] : opts.text || 'scripted';
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
  if (v.length > max) v = v.slice(0, max);
  if (v.length < min) v = v.padEnd(min, '.');
  return v;
}

function fillNumber(s: Schema, integer: boolean): number {
  let v = 0;
  if (typeof s.minimum === 'number') v = Math.max(v, s.minimum);
  if (typeof s.exclusiveMinimum === 'number') v = Math.max(v, s.exclusiveMinimum + (integer ? 1 : 0.5));
  if (typeof s.maximum === 'number' && v > s.maximum) v = s.maximum;
  if (typeof s.exclusiveMaximum === 'number' && v >= s.exclusiveMaximum) v = s.exclusiveMaximum - (integer ? 1 : 0.5);
  if (typeof s.multipleOf === 'number' && s.multipleOf > 0) v = Math.ceil(v / s.multipleOf) * s.multipleOf;
  return integer ? Math.ceil(v) : v;
}

function pickType(s: Schema): string | undefined {
  if (Array.isArray(s.type)) return s.type.find((t: string) => t !== 'null') ?? s.type[0];
  if (typeof s.type === 'string') return s.type;
  if (s.properties) return 'object';
  if (s.items) return 'array';
  return undefined;
}

function fill(s: Schema, root: Schema, opts: FillOptions, depth: number): unknown {
  if (!s || typeof s !== 'object' || depth > MAX_DEPTH) return null;
  if (typeof s.$ref === 'string')
    return fill({ ...resolveRef(root, s.$ref), ...omit(s, '$ref') }, root, opts, depth + 1);
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  const branches = s.anyOf ?? s.oneOf;
  if (Array.isArray(branches) && branches.length > 0) {
    // Prefer a branch that yields content over the `null` alternative of a nullable field.
    const branch = branches.find((b: Schema) => b?.type !== 'null') ?? branches[0];
    return fill({ ...omit(s, 'anyOf', 'oneOf'), ...branch }, root, opts, depth + 1);
  }
  if (Array.isArray(s.allOf)) {
    const merged = s.allOf.reduce(
      (acc: Schema, part: Schema) => {
        const p = typeof part?.$ref === 'string' ? resolveRef(root, part.$ref) : part;
        return {
          ...acc,
          ...p,
          properties: { ...acc.properties, ...p?.properties },
          required: [...(acc.required ?? []), ...(p?.required ?? [])],
        };
      },
      omit(s, 'allOf'),
    );
    return fill(merged, root, opts, depth + 1);
  }
  switch (pickType(s)) {
    case 'string':
      return fillString(s, opts);
    case 'integer':
      return fillNumber(s, true);
    case 'number':
      return fillNumber(s, false);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      const min = typeof s.minItems === 'number' ? s.minItems : 1;
      const count = Math.min(Math.max(min, 1), typeof s.maxItems === 'number' ? s.maxItems : Infinity);
      const tuple: Schema[] | undefined = Array.isArray(s.prefixItems) ? s.prefixItems : undefined;
      return Array.from({ length: count }, (_, i) => fill(tuple?.[i] ?? s.items ?? {}, root, opts, depth + 1));
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      const props: Record<string, Schema> = s.properties ?? {};
      // Every declared property is filled, not just the required ones: strict
      // mode requires them all, and extra declared fields are always valid.
      for (const [key, sub] of Object.entries(props)) out[key] = fill(sub, root, opts, depth + 1);
      for (const key of Array.isArray(s.required) ? s.required : [])
        if (!(key in out)) out[key] = opts.text || 'scripted';
      return out;
    }
    default:
      return opts.text || 'scripted';
  }
}

function omit(s: Schema, ...keys: string[]): Schema {
  const out = { ...s };
  for (const k of keys) delete out[k];
  return out;
}

/** A value satisfying `schema`; identical inputs give identical values. */
export function fillSchema(schema: unknown, opts: FillOptions): unknown {
  const root = schema && typeof schema === 'object' ? (schema as Schema) : {};
  return fill(root, root, opts, 0);
}
