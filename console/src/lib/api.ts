// The console's one way to the service: the typed client of client/ (the same one the CLI uses),
// pointed at the page's own origin with the key the person signed in with. The key lives in
// sessionStorage (gone with the tab, never in a URL) and goes out only as the Bearer header.
import { AgentClient } from '../../../client/client';
import { AgentApiError } from '../../../client/errors';

const KEY = 'agent-console.key';

let current: AgentClient | undefined;

export function signedIn(): boolean {
  return sessionStorage.getItem(KEY) !== null;
}

export function signIn(apiKey: string): void {
  sessionStorage.setItem(KEY, apiKey);
  current = undefined;
}

export function signOut(): void {
  sessionStorage.removeItem(KEY);
  current = undefined;
}

/** The client of the signed-in key. */
export function api(): AgentClient {
  const apiKey = sessionStorage.getItem(KEY);
  if (apiKey === null) throw new Error('not signed in');
  current ??= new AgentClient({ baseUrl: location.origin, apiKey, timeoutMs: 60_000 });
  return current;
}

/** The key itself, for the few calls the client does not make (a file's bytes as a Blob). */
export function apiKey(): string {
  return sessionStorage.getItem(KEY) ?? '';
}

/** What to show of a failure: the status and the API's message (which names every problem's place). */
export function describeError(err: unknown): string {
  if (err instanceof AgentApiError) return err.status ? `${err.status} ${err.type}: ${err.message}` : err.message;
  return err instanceof Error ? err.message : String(err);
}

/** A refused request's problems, each at its place (`body.workflows[0].steps`), for a form to list. */
export function errorIssues(err: unknown): { path: string; message: string }[] {
  if (!(err instanceof AgentApiError) || !Array.isArray(err.details)) return [];
  return (err.details as { path?: unknown; message?: unknown }[]).map((d) => ({
    path: String(d.path ?? ''),
    message: String(d.message ?? ''),
  }));
}

/** A 401: the key is wrong or was revoked (the shell signs out). */
export function isUnauthorized(err: unknown): boolean {
  return err instanceof AgentApiError && err.status === 401;
}
