// The API's dated versions (docs/api.md, "Versions"). A version is the shapes of the
// requests and answers it was released with; a request picks one with the
// API-Version header, else gets its deployment's (API_VERSION). A change that
// would alter a released shape (a field removed, renamed or retyped, a status,
// an event or an enum value changed) comes as a new version, appended here with
// the changes it makes; additive changes (an optional request field, an answer
// field, an event type, an endpoint) come to every version. The shapes of each
// released version are pinned in openapi/versions/<name>.json, which a test
// holds the service to.

export interface ApiVersion {
  /** The date it was released (UTC): its name in API-Version. */
  name: string;
  /** What it changed from the version before it. */
  changes: string;
}

export const API_VERSIONS = [
  {
    name: '2026-11-28',
    changes: 'The first dated version: the API as openapi/openapi.json describes it on that date.',
  },
  {
    name: '2026-11-29',
    changes:
      'Approval gates: a task is input_required while a tool call of it waits for a decision (2026-11-28 reads it as running).',
  },
] as const satisfies readonly ApiVersion[];

export type ApiVersionName = (typeof API_VERSIONS)[number]['name'];

/** The request header that picks a version, and the answer header that says which one answered. */
export const API_VERSION_HEADER = 'API-Version';

export const VERSION_NAMES: readonly string[] = API_VERSIONS.map((v) => v.name);

/** The newest version: what a deployment answers unless it pins another. */
export const LATEST_VERSION: ApiVersionName = API_VERSIONS[API_VERSIONS.length - 1].name;

export const isApiVersion = (name: string): name is ApiVersionName => VERSION_NAMES.includes(name);

/**
 * Task statuses newer than some versions: a client of an earlier version reads each as the status
 * it stands for there (a task that waits for a decision is, to it, still running).
 */
const NEWER_STATUSES: Readonly<Record<string, { since: ApiVersionName; readAs: string }>> = {
  input_required: { since: '2026-11-29', readAs: 'running' },
};

/** Fields that hold what users and tools wrote (their own `status` keys are theirs): never rewritten. */
const USER_DATA: ReadonlySet<string> = new Set(['metadata', 'input', 'output', 'final_output', 'content']);

/** Versions are dates: an earlier one sorts first. */
const before = (a: string, b: string) => a < b;

/** Whether `version` knows the task status `status` (a newer one is read as another there). */
export function knowsStatus(version: ApiVersionName, status: string): boolean {
  const newer = NEWER_STATUSES[status];
  return !newer || !before(version, newer.since);
}

/**
 * A copy of a JSON value with each object field's value as `field` gives it (undefined: the
 * field's value walked in turn).
 */
function mapFields(v: unknown, field: (key: string, value: unknown) => unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => mapFields(x, field));
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, field(k, x) ?? mapFields(x, field)]));
}

/** An answer's body as `version` shapes it: every `status` it does not know, read as the one it stands for. */
export function answerIn(version: ApiVersionName, body: unknown): unknown {
  if (version === LATEST_VERSION || body === null || typeof body !== 'object') return body;
  return mapFields(body, (k, x) => {
    if (USER_DATA.has(k)) return x;
    const newer = k === 'status' && typeof x === 'string' ? NEWER_STATUSES[x] : undefined;
    return newer && before(version, newer.since) ? newer.readAs : undefined;
  });
}

/** Today's OpenAPI document as `version` describes it: no status value newer than the version. */
export function documentIn<T>(version: ApiVersionName, doc: T): T {
  const unknown = new Set(Object.keys(NEWER_STATUSES).filter((s) => before(version, NEWER_STATUSES[s].since)));
  if (!unknown.size) return doc;
  return mapFields(doc, (k, x) =>
    k === 'enum' && Array.isArray(x) ? x.filter((e) => !unknown.has(e as string)) : undefined,
  ) as T;
}
