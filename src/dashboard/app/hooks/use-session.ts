// The signed-in session and its viewer, provided once by the console's shell to every page.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Session } from '../session.ts';

export interface Viewer {
  readonly id: string;
  readonly name: string;
  readonly isAdmin: boolean;
}

export interface SignedIn {
  readonly session: Session;
  readonly viewer: Viewer;
}

export const SessionContext = createContext<SignedIn | null>(null);

/** The session and viewer of the signed-in shell (pages render only inside it). */
export function useSession(): SignedIn {
  const signedIn = useContext(SessionContext);
  if (!signedIn) throw new Error('useSession() outside the signed-in shell');
  return signedIn;
}
