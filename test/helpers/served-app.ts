import type { DbKind } from '../../src/db/create-db.ts';
import { startTestApp, type TestApp } from './app.ts';
import { scriptedConfiguration, type ScriptedOptions } from './runs.ts';

/** A test app listening on a real port, with the scripted configurations a suite runs against. */
export interface ServedApp<Name extends string> {
  readonly t: TestApp;
  /** `http://127.0.0.1:<port>/graphql`. */
  readonly url: string;
  /** The same endpoint for graphql-ws. */
  readonly wsUrl: string;
  /** Each configuration's global id, by the name it was asked for under. */
  readonly configurations: Record<Name, string>;
}

/**
 * Starts a full app on a private database of `kind`, starts its server, and creates one SCRIPTED
 * configuration per entry (in order; each named after its key). `t.stop()` disposes of all of it.
 */
export async function startServedApp<Name extends string = never>(
  kind: DbKind,
  configurations: Record<Name, ScriptedOptions> = {} as Record<Name, ScriptedOptions>,
): Promise<ServedApp<Name>> {
  const t = await startTestApp(kind);
  try {
    const { url } = await t.app.server.start();
    const ids = {} as Record<Name, string>;
    for (const [name, options] of Object.entries(configurations) as [Name, ScriptedOptions][]) {
      ids[name] = await scriptedConfiguration(t, name, options);
    }
    return { t, url, wsUrl: url.replace('http://', 'ws://'), configurations: ids };
  } catch (error) {
    await t.stop();
    throw error;
  }
}
