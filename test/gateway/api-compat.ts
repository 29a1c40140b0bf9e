// What a client of a released API version may rely on, as a comparison of two
// OpenAPI documents (the version's pinned one and a later one): every operation
// it used is still there, with the parameters, bodies and success answers it
// knew; a request it could send is still accepted (no field removed or newly
// required, no type, value or bound narrowed); an answer it reads still has
// every field it read, with no new type or value in it. What the versioning
// policy calls additive passes: a new operation, an optional request field, a
// new answer field, a new kind of event (a variant of a union).
type Json = Record<string, any>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

class Docs {
  constructor(
    readonly old: Json,
    readonly now: Json,
  ) {}
  /** A schema or object with its $ref (one document-local hop at a time) followed. */
  static deref(doc: Json, v: any): any {
    let at = v;
    for (let i = 0; at && typeof at.$ref === 'string' && i < 10; i++)
      at = at.$ref
        .slice(2)
        .split('/')
        .reduce((o: any, k: string) => o?.[k], doc);
    return at;
  }
}

const typesOf = (s: Json): Set<string> | undefined => {
  const t = s.type ?? (s.const !== undefined ? typeof s.const : undefined);
  if (t === undefined) return undefined;
  return new Set((Array.isArray(t) ? t : [t]).map((x: string) => (x === 'integer' ? 'number' : x)));
};
const valuesOf = (s: Json): unknown[] | undefined => (s.const !== undefined ? [s.const] : s.enum);
const variantsOf = (s: Json): Json[] | undefined => s.oneOf ?? s.anyOf;
/** What tells a union's variants apart, when one of its fields does: an event's type, an SSE frame's event. */
const kindOf = (s: Json): string | undefined => {
  const k = s.properties?.type?.const ?? s.properties?.status?.const ?? s.properties?.event?.const;
  return k === undefined ? undefined : String(k);
};
const isAny = (s: unknown) =>
  s === true ||
  (s &&
    typeof s === 'object' &&
    Object.keys(s).filter((k) => !['description', 'title', 'default'].includes(k)).length === 0);
const subset = <T>(a: Iterable<T>, b: Set<T> | T[]) =>
  [...a].every((x) => (b instanceof Set ? b.has(x) : b.some((y) => JSON.stringify(y) === JSON.stringify(x))));

/** Problems of an answer schema: what an old client reads must still come, as it knew it. */
function answerProblems(d: Docs, oldRaw: unknown, nowRaw: unknown, at: string): string[] {
  const o = Docs.deref(d.old, oldRaw);
  const n = Docs.deref(d.now, nowRaw);
  // No schema at all (a file's bytes, `*/*`): the client reads anything.
  if (o === undefined || isAny(o)) return [];
  const oldVariants = variantsOf(o);
  if (oldVariants) {
    const nowVariants = (variantsOf(n) ?? [n]).map((w) => Docs.deref(d.now, w));
    // Each kind of answer the client knew is still one, unchanged for it; new kinds may come (a new event type).
    return oldVariants.flatMap((raw, i) => {
      const v = Docs.deref(d.old, raw);
      const kind = kindOf(v);
      const same = kind === undefined ? [] : nowVariants.filter((w) => kindOf(w) === kind);
      if (same.length === 1) return answerProblems(d, v, same[0], `${at}(${kind})`);
      return nowVariants.some((w) => answerProblems(d, v, w, at).length === 0)
        ? []
        : [`${at}: variant ${kind ?? i} is gone or changed`];
    });
  }
  const out: string[] = [];
  const [ot, nt] = [typesOf(o), typesOf(n)];
  if (ot && (!nt || !subset(nt, ot))) out.push(`${at}: type ${[...(ot ?? [])]} became ${[...(nt ?? ['anything'])]}`);
  const ov = valuesOf(o);
  if (ov && !(valuesOf(n) && subset(valuesOf(n)!, ov)))
    out.push(`${at}: values ${JSON.stringify(ov)} became ${JSON.stringify(valuesOf(n) ?? 'any')}`);
  for (const [p, s] of Object.entries<Json>(o.properties ?? {})) {
    if (!n.properties || !(p in n.properties)) out.push(`${at}.${p}: removed`);
    else {
      if ((o.required ?? []).includes(p) && !(n.required ?? []).includes(p))
        out.push(`${at}.${p}: no longer always there`);
      out.push(...answerProblems(d, s, n.properties[p], `${at}.${p}`));
    }
  }
  if (o.items) out.push(...answerProblems(d, o.items, n.items ?? true, `${at}[]`));
  // An SSE frame's data: JSON of its contentSchema.
  if (o.contentSchema) out.push(...answerProblems(d, o.contentSchema, n.contentSchema ?? true, `${at}(data)`));
  return out;
}

const loosened = (o: Json, n: Json, key: string, wider: (a: number, b: number) => boolean) =>
  o[key] === undefined ? n[key] === undefined : n[key] === undefined || wider(n[key], o[key]);

/** Problems of a request schema: whatever an old client could send must still be accepted. */
function requestProblems(d: Docs, oldRaw: unknown, nowRaw: unknown, at: string): string[] {
  const o = Docs.deref(d.old, oldRaw);
  const n = Docs.deref(d.now, nowRaw);
  if (isAny(n)) return [];
  const oldVariants = variantsOf(o);
  if (oldVariants) return oldVariants.flatMap((v, i) => requestProblems(d, v, n, `${at}(variant ${i})`));
  const nowVariants = variantsOf(n);
  if (nowVariants)
    return nowVariants.some((w) => requestProblems(d, o, w, at).length === 0)
      ? []
      : [`${at}: no longer accepted as it was`];
  const out: string[] = [];
  const [ot, nt] = [typesOf(o), typesOf(n)];
  if (nt && (!ot || !subset(ot, nt))) out.push(`${at}: type ${[...(ot ?? ['anything'])]} narrowed to ${[...nt]}`);
  const nv = valuesOf(n);
  if (nv && !(valuesOf(o) && subset(valuesOf(o)!, nv)))
    out.push(`${at}: values ${JSON.stringify(valuesOf(o) ?? 'any')} narrowed to ${JSON.stringify(nv)}`);
  for (const [key, wider] of [
    ['minimum', (a: number, b: number) => a <= b],
    ['minLength', (a: number, b: number) => a <= b],
    ['minItems', (a: number, b: number) => a <= b],
    ['maximum', (a: number, b: number) => a >= b],
    ['maxLength', (a: number, b: number) => a >= b],
    ['maxItems', (a: number, b: number) => a >= b],
  ] as const) {
    if (!loosened(o, n, key, wider)) out.push(`${at}: ${key} ${o[key] ?? 'none'} became ${n[key]}`);
  }
  if (n.pattern !== undefined && n.pattern !== o.pattern)
    out.push(`${at}: pattern ${o.pattern ?? 'none'} became ${n.pattern}`);
  for (const p of n.required ?? []) if (!(o.required ?? []).includes(p)) out.push(`${at}.${p}: newly required`);
  for (const [p, s] of Object.entries<Json>(o.properties ?? {})) {
    if (!n.properties || !(p in n.properties)) {
      if (n.additionalProperties === false) out.push(`${at}.${p}: no longer accepted`);
    } else out.push(...requestProblems(d, s, n.properties[p], `${at}.${p}`));
  }
  if (o.items) out.push(...requestProblems(d, o.items, n.items ?? true, `${at}[]`));
  return out;
}

/** One operation of the old document against the same one now. */
function operationProblems(d: Docs, label: string, o: Json, n: Json): string[] {
  const out: string[] = [];
  const params = (op: Json, doc: Json) =>
    new Map<string, Json>(
      (op.parameters ?? []).map((p: Json) => Docs.deref(doc, p)).map((p: Json) => [`${p.in}:${p.name}`, p]),
    );
  const [op, np] = [params(o, d.old), params(n, d.now)];
  for (const [key, p] of op) {
    const q = np.get(key);
    if (!q) out.push(`${label} ${key}: removed`);
    else {
      if (q.required && !p.required) out.push(`${label} ${key}: newly required`);
      out.push(...requestProblems(d, p.schema, q.schema, `${label} ${key}`));
    }
  }
  for (const [key, q] of np) if (!op.has(key) && q.required) out.push(`${label} ${key}: a new required parameter`);
  const [ob, nb] = [Docs.deref(d.old, o.requestBody), Docs.deref(d.now, n.requestBody)];
  if (ob) {
    if (!nb) out.push(`${label} body: removed`);
    else {
      if (nb.required && !ob.required) out.push(`${label} body: newly required`);
      for (const [type, m] of Object.entries<Json>(ob.content ?? {})) {
        if (!nb.content?.[type]) out.push(`${label} body ${type}: no longer taken`);
        else out.push(...requestProblems(d, m.schema, nb.content[type].schema, `${label} body ${type}`));
      }
    }
  } else if (nb?.required) out.push(`${label} body: newly required`);
  for (const [status, r] of Object.entries<Json>(o.responses ?? {})) {
    if (!/^2/.test(status)) continue; // errors share one Error shape, compared with the schemas
    const nr = Docs.deref(d.now, n.responses?.[status]);
    if (!nr) out.push(`${label} ${status}: no longer answered`);
    else
      for (const [type, m] of Object.entries<Json>(Docs.deref(d.old, r).content ?? {})) {
        if (!nr.content?.[type]) out.push(`${label} ${status} ${type}: no longer answered`);
        else out.push(...answerProblems(d, m.schema, nr.content[type].schema, `${label} ${status} ${type}`));
      }
  }
  return out;
}

/** Everything in `now` that would break a client of the version `old` pins; [] when nothing does. */
export function compatibilityProblems(old: Json, now: Json): string[] {
  const d = new Docs(old, now);
  const out: string[] = [];
  for (const [path, item] of Object.entries<Json>(old.paths)) {
    for (const method of METHODS.filter((m) => item[m])) {
      const label = `${method.toUpperCase()} ${path}`;
      if (!now.paths[path]?.[method]) out.push(`${label}: removed`);
      else out.push(...operationProblems(d, label, item[method], now.paths[path][method]));
    }
  }
  out.push(...answerProblems(d, old.components.schemas.Error, now.components.schemas.Error, 'Error'));
  return out;
}
