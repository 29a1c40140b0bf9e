// Loads a page's data, again on reload() and every pollMs while the tab is visible (a live list),
// and drops answers that arrive after the page moved on (a slow page never overwrites a newer one).
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { isUnauthorized, signOut } from './api';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => Promise<void>;
}

export function useLoad<T>(load: () => Promise<T>, deps: unknown[], opts: { pollMs?: number } = {}): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++generation.current;
    try {
      const value = await load();
      if (mine !== generation.current) return;
      setData(value);
      setError(undefined);
    } catch (err) {
      if (mine !== generation.current) return;
      if (isUnauthorized(err)) {
        signOut();
        location.reload();
      }
      setError(err);
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }, deps);
  useEffect(() => {
    setLoading(true);
    void reload();
    if (!opts.pollMs) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void reload();
    }, opts.pollMs);
    return () => {
      clearInterval(timer);
      generation.current++;
    };
  }, [reload, opts.pollMs]);
  return { data, error, loading, reload };
}
