import './style.css';
import 'uplot/dist/uPlot.min.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { clearSession, createSession, storedToken, storeToken } from './api.js';
import { VIEWER } from './documents.js';
import { html } from './html.js';
import { RunsPage } from './runs.js';
import { InspectorPage } from './inspector.js';
import { PlaygroundPage } from './playground.js';
import { ApprovalsPage } from './approvals.js';
import { AdminPage } from './admin.js';

function useHash() {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onChange = () => setHash(location.hash);
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return hash;
}

function SignIn({ message, onSignIn }) {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = (event) => {
    event.preventDefault();
    if (token.trim() === '') return;
    setBusy(true);
    onSignIn(token.trim()).finally(() => setBusy(false));
  };
  return html`
    <main id="main" class="signin">
      <h1>Airlock console</h1>
      <form onSubmit=${submit}>
        <p>Paste your Airlock token. It is kept in this tab only (session storage) and sent over the websocket, never in a URL.</p>
        <label for="token">API token</label>
        <input id="token" type="password" autocomplete="off" value=${token} onInput=${(e) => setToken(e.currentTarget.value)} />
        <button type="submit" disabled=${busy}>Sign in</button>
        ${message ? html`<p role="alert" class="error" id="signin-error">${message}</p>` : null}
      </form>
      <p><a href="/graphql">Open GraphiQL</a></p>
    </main>
  `;
}

const NAV = [
  ['#/runs', 'Runs'],
  ['#/playground', 'Playground'],
  ['#/approvals', 'Approvals'],
  ['#/admin', 'Admin', true],
];

function Shell({ viewer, route, onSignOut, children }) {
  return html`
    <header class="top">
      <a class="skip" href="#main" onClick=${(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>Skip to content</a>
      <strong class="brand">Airlock</strong>
      <nav aria-label="Console">
        <ul>
          ${NAV.filter(([, , adminOnly]) => !adminOnly || viewer.isAdmin).map(
            ([href, label]) => html`<li><a href=${href} aria-current=${route.startsWith(href) ? 'page' : undefined}>${label}</a></li>`,
          )}
          <li><a href="/graphql">GraphiQL</a></li>
        </ul>
      </nav>
      <span class="who">Signed in as <span id="viewer-name">${viewer.name}</span>${viewer.isAdmin ? ' (admin)' : ''}</span>
      <button type="button" onClick=${onSignOut}>Sign out</button>
    </header>
    <main id="main" tabindex="-1">${children}</main>
  `;
}

function App() {
  const hash = useHash();
  const [state, setState] = useState(() => ({ session: null, viewer: null, message: null, checking: storedToken() !== null }));

  const signOut = (message = null) => {
    setState((current) => {
      current.session?.dispose();
      return { session: null, viewer: null, message, checking: false };
    });
    clearSession();
  };

  const signIn = async (token) => {
    const session = createSession(token, (message) => signOut(message));
    try {
      const data = await session.request(VIEWER);
      if (!data.viewer) throw new Error('The server refused this token. Paste a current token to sign in again.');
      storeToken(token);
      setState({ session, viewer: data.viewer, message: null, checking: false });
      if (location.hash === '' || location.hash === '#/') location.hash = '#/runs';
    } catch (error) {
      session.dispose();
      clearSession();
      setState({ session: null, viewer: null, message: error.message, checking: false });
    }
  };

  useEffect(() => {
    const token = storedToken();
    if (token) void signIn(token);
  }, []);

  if (state.checking) return html`<main id="main"><p role="status">Signing in…</p></main>`;
  if (!state.session) return html`<${SignIn} message=${state.message} onSignIn=${signIn} />`;

  const route = hash || '#/runs';
  const props = { session: state.session, viewer: state.viewer };
  let page;
  const runMatch = /^#\/runs\/([^/]+)$/.exec(route);
  if (runMatch) page = html`<${InspectorPage} key=${runMatch[1]} runId=${decodeURIComponent(runMatch[1])} ...${props} />`;
  else if (route.startsWith('#/playground')) page = html`<${PlaygroundPage} ...${props} />`;
  else if (route.startsWith('#/approvals')) page = html`<${ApprovalsPage} ...${props} />`;
  else if (route.startsWith('#/admin') && state.viewer.isAdmin) page = html`<${AdminPage} ...${props} />`;
  else page = html`<${RunsPage} ...${props} />`;
  return html`<${Shell} viewer=${state.viewer} route=${route} onSignOut=${() => signOut()}>${page}</${Shell}>`;
}

render(html`<${App} />`, document.getElementById('root'));
