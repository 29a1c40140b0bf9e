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
] as const satisfies readonly ApiVersion[];

export type ApiVersionName = (typeof API_VERSIONS)[number]['name'];

/** The request header that picks a version, and the answer header that says which one answered. */
export const API_VERSION_HEADER = 'API-Version';

export const VERSION_NAMES: readonly string[] = API_VERSIONS.map((v) => v.name);

/** The newest version: what a deployment answers unless it pins another. */
export const LATEST_VERSION: ApiVersionName = API_VERSIONS[API_VERSIONS.length - 1].name;

export const isApiVersion = (name: string): name is ApiVersionName => VERSION_NAMES.includes(name);
