// Sign-in with an API key: checked with one call (GET /sessions answers 401 for a wrong key),
// then kept in the tab's sessionStorage and sent only as the Bearer header.
import { useState } from 'preact/hooks';
import { api, signIn, signOut } from '../lib/api';
import { ErrorBox } from '../components/error-box';
import { useAction } from '../lib/use-action';

export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const { busy, error, run } = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    signIn(key.trim());
    const checked = await run(() => api().sessions.list({ limit: 1 }));
    if (checked) onSignedIn();
    else signOut();
  };
  return (
    <main id="main" class="sign-in">
      <h1>Agent console</h1>
      <form onSubmit={submit}>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autocomplete="current-password"
          required
          value={key}
          onInput={(e) => setKey((e.target as HTMLInputElement).value)}
        />
        <p class="hint">
          The key is kept in this tab only and sent as the Authorization header. <code>npm start</code> creates{' '}
          <code>dev-key</code>.
        </p>
        <button type="submit" disabled={busy || !key.trim()}>
          Sign in
        </button>
      </form>
      <ErrorBox error={error} />
    </main>
  );
}
