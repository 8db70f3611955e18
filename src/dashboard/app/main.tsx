import './style.css';
import 'uplot/dist/uPlot.min.css';
import type { ComponentChildren } from 'preact';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { VIEWER } from './documents.ts';
import { useHash } from './hooks/use-hash.ts';
import { SessionContext, type SignedIn, type Viewer } from './hooks/use-session.ts';
import { AdminPage } from './pages/admin/index.tsx';
import { ApprovalsPage } from './pages/approvals.tsx';
import { InspectorPage } from './pages/inspector.tsx';
import { PlaygroundPage } from './pages/playground.tsx';
import { RunsPage } from './pages/runs.tsx';
import { clearSession, createSession, storedToken, storeToken } from './session.ts';
import { SignIn } from './pages/sign-in.tsx';

const NAV: readonly { href: string; label: string; adminOnly?: boolean }[] = [
  { href: '#/runs', label: 'Runs' },
  { href: '#/playground', label: 'Playground' },
  { href: '#/approvals', label: 'Approvals' },
  { href: '#/admin', label: 'Admin', adminOnly: true },
];

function Shell({ viewer, route, onSignOut, children }: { viewer: Viewer; route: string; onSignOut: () => void; children: ComponentChildren }) {
  const skip = (event: MouseEvent) => {
    event.preventDefault();
    document.getElementById('main')?.focus();
  };
  return (
    <>
      <header class="top">
        <a class="skip" href="#main" onClick={skip}>
          Skip to content
        </a>
        <strong class="brand">Airlock</strong>
        <nav aria-label="Console">
          <ul>
            {NAV.filter((item) => !item.adminOnly || viewer.isAdmin).map((item) => (
              <li key={item.href}>
                <a href={item.href} aria-current={route.startsWith(item.href) ? 'page' : undefined}>
                  {item.label}
                </a>
              </li>
            ))}
            <li>
              <a href="/graphql">GraphiQL</a>
            </li>
          </ul>
        </nav>
        <span class="who">
          Signed in as <span id="viewer-name">{viewer.name}</span>
          {viewer.isAdmin ? ' (admin)' : ''}
        </span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}

/** The page a route names; `#/runs/<id>` is the inspector of that run. */
function Page({ route, signedIn }: { route: string; signedIn: SignedIn }) {
  const runMatch = /^#\/runs\/([^/]+)$/.exec(route);
  if (runMatch?.[1]) return <InspectorPage key={runMatch[1]} runId={decodeURIComponent(runMatch[1])} />;
  if (route.startsWith('#/playground')) return <PlaygroundPage />;
  if (route.startsWith('#/approvals')) return <ApprovalsPage />;
  if (route.startsWith('#/admin') && signedIn.viewer.isAdmin) return <AdminPage />;
  return <RunsPage />;
}

interface AppState {
  readonly signedIn: SignedIn | null;
  readonly message: string | null;
  readonly checking: boolean;
}

function App() {
  const hash = useHash();
  const [state, setState] = useState<AppState>(() => ({ signedIn: null, message: null, checking: storedToken() !== null }));

  const signOut = (message: string | null = null) => {
    setState((current) => {
      current.signedIn?.session.dispose();
      return { signedIn: null, message, checking: false };
    });
    clearSession();
  };

  const signIn = async (token: string) => {
    const session = createSession(token, (message) => signOut(message));
    try {
      const data = await session.request(VIEWER);
      if (!data.viewer) throw new Error('The server refused this token. Paste a current token to sign in again.');
      storeToken(token);
      setState({ signedIn: { session, viewer: data.viewer }, message: null, checking: false });
      if (location.hash === '' || location.hash === '#/') location.hash = '#/runs';
    } catch (error) {
      session.dispose();
      clearSession();
      setState({ signedIn: null, message: (error as Error).message, checking: false });
    }
  };

  useEffect(() => {
    const token = storedToken();
    if (token) void signIn(token);
  }, []);

  if (state.checking)
    return (
      <main id="main">
        <p role="status">Signing in…</p>
      </main>
    );
  if (!state.signedIn) return <SignIn message={state.message} onSignIn={signIn} />;
  const route = hash || '#/runs';
  return (
    <SessionContext.Provider value={state.signedIn}>
      <Shell viewer={state.signedIn.viewer} route={route} onSignOut={() => signOut()}>
        <Page route={route} signedIn={state.signedIn} />
      </Shell>
    </SessionContext.Provider>
  );
}

render(<App />, document.getElementById('root')!);
