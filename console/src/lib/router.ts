// Hash routes (`#/tasks/task_1`): the gateway serves one page at /console, so a reload or a
// shared link needs nothing of the server, and no route ever reaches it with a key in the URL.
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { page: 'tasks'; query: URLSearchParams }
  | { page: 'task'; id: string }
  | { page: 'sessions' }
  | { page: 'session'; id: string }
  | { page: 'schedules' }
  | { page: 'datastores' }
  | { page: 'datastore'; id: string }
  | { page: 'playground' };

export function parseRoute(hash: string): Route {
  const [path, qs = ''] = hash.replace(/^#/, '').split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  switch (parts[0]) {
    case 'tasks':
      return parts[1] ? { page: 'task', id: parts[1] } : { page: 'tasks', query: new URLSearchParams(qs) };
    case 'sessions':
      return parts[1] ? { page: 'session', id: parts[1] } : { page: 'sessions' };
    case 'schedules':
      return { page: 'schedules' };
    case 'datastores':
      return parts[1] ? { page: 'datastore', id: parts[1] } : { page: 'datastores' };
    case 'playground':
      return { page: 'playground' };
    default:
      return { page: 'tasks', query: new URLSearchParams(qs) };
  }
}

/** The href of a page, for links. */
export function href(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join('/')}`;
}

export function navigate(to: string): void {
  location.hash = to.replace(/^#/, '');
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
