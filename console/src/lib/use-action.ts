// An action a person starts from a page (sign in, run, approve, cancel...): busy while it runs,
// then its error if it failed, shown by the page (ErrorBox). One pattern for every form.
import { useState } from 'preact/hooks';

export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  /** Runs `what`; its value, or undefined when it failed (the error is kept). */
  const run = async <T>(what: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await what();
    } catch (err) {
      setError(err);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}
