import { useState } from 'preact/hooks';

/** The token form: the token stays in this tab (session storage) and travels over the websocket only. */
export function SignIn({ message, onSignIn }: { message: string | null; onSignIn: (token: string) => Promise<void> }) {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    if (token.trim() === '') return;
    setBusy(true);
    void onSignIn(token.trim()).finally(() => setBusy(false));
  };
  return (
    <main id="main" class="signin">
      <h1>Airlock console</h1>
      <form onSubmit={submit}>
        <p>Paste your Airlock token. It is kept in this tab only (session storage) and sent over the websocket, never in a URL.</p>
        <label for="token">API token</label>
        <input id="token" type="password" autocomplete="off" value={token} onInput={(event) => setToken(event.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {message ? (
          <p role="alert" class="error" id="signin-error">
            {message}
          </p>
        ) : null}
      </form>
      <p>
        <a href="/graphql">Open GraphiQL</a>
      </p>
    </main>
  );
}
