/**
 * The benchmark's private PostgreSQL databases, `airlock_bench_<random>` on the bench server. Each is
 * held by the janitor (`janitor.ts`) from before it is created until it is dropped, and carries its
 * creator in its comment (host, boot, pid and that pid's start time), so that a later bench start
 * can drop a database whose creator is gone (`dropLeftoverDatabases`) and leave alone one that a
 * bench still running uses.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import pg from 'pg';
import { type Held, janitorHolds, janitorReleases } from './janitor.ts';
import { processStartTicks } from './proc.ts';

/** The PostgreSQL server the benchmark may create databases on. */
export const BENCH_POSTGRES_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export async function withBenchAdmin<T>(action: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL, connectionTimeoutMillis: 3_000 });
  await client.connect();
  try {
    return await action(client);
  } finally {
    await client.end();
  }
}

/** Who created a database: a process of one boot of one machine. */
export interface Creator {
  readonly host: string;
  /** The kernel's boot id: after a reboot no creator of an earlier boot runs. */
  readonly boot: string;
  readonly pid: number;
  readonly startTicks: number | null;
}

const COMMENT_PREFIX = 'airlock bench, created by ';
const thisBoot = (): string => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();

export const creatorOf = (pid: number): Creator => ({ host: hostname(), boot: thisBoot(), pid, startTicks: processStartTicks(pid) });
export const creatorComment = (creator: Creator): string => `${COMMENT_PREFIX}${JSON.stringify(creator)}`;

function creatorIn(comment: string | null): Creator | null {
  if (!comment?.startsWith(COMMENT_PREFIX)) return null;
  try {
    return JSON.parse(comment.slice(COMMENT_PREFIX.length)) as Creator;
  } catch {
    return null;
  }
}

/** True when the creator runs no more; null when that cannot be told from here (another machine). */
function creatorGone(creator: Creator): boolean | null {
  if (creator.host !== hostname() || creator.startTicks === null) return null;
  if (creator.boot !== thisBoot()) return true;
  const now = processStartTicks(creator.pid);
  return now === null || now !== creator.startTicks;
}

export interface PrivateDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/** Created and not dropped yet, by name. */
const created = new Map<string, Extract<Held, { kind: 'database' }>>();

async function dropDatabase(name: string): Promise<void> {
  await withBenchAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  const held = created.get(name);
  created.delete(name);
  if (held) janitorReleases(held);
}

/** A new empty database on the bench PostgreSQL server; `drop` removes it (forcing connections off). */
export async function createPrivateDatabase(): Promise<PrivateDatabase> {
  const name = `airlock_bench_${randomBytes(6).toString('hex')}`;
  // Held before it exists: a harness killed during the CREATE leaves nothing either.
  const held = { kind: 'database', name, adminUrl: BENCH_POSTGRES_URL } as const;
  janitorHolds(held);
  created.set(name, held);
  try {
    await withBenchAdmin(async (client) => {
      await client.query(`CREATE DATABASE ${name}`);
      await client.query(`COMMENT ON DATABASE ${name} IS ${client.escapeLiteral(creatorComment(creatorOf(process.pid)))}`);
    });
  } catch (error) {
    await dropDatabase(name).catch(() => undefined);
    throw error;
  }
  const url = new URL(BENCH_POSTGRES_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), name, drop: () => dropDatabase(name) };
}

/** The names of the private databases created and not dropped yet. */
export const privateDatabasesLeft = (): string[] => [...created.keys()];

/** Drops every private database still there (the harness's exit paths, after its children stopped); `say` tells each. */
export async function dropAllPrivateDatabases(say: (line: string) => void = () => undefined): Promise<void> {
  await Promise.all(
    [...created.keys()].map(async (name) => {
      say(`dropping database ${name}`);
      await dropDatabase(name).catch((error: unknown) => say(`could not drop ${name} (the janitor tries again): ${error instanceof Error ? error.message : String(error)}`));
    }),
  );
}

/**
 * At a bench start: drops the `airlock_bench_*` databases an earlier bench left whose creator is
 * gone (a bench whose janitor could not finish either, e.g. the machine went down). Those made by a
 * bench still running, on another machine, or without a creator (before the comment existed) stay,
 * and are named. `say` tells each.
 */
export async function dropLeftoverDatabases(say: (line: string) => void): Promise<void> {
  const { rows } = await withBenchAdmin((client) =>
    client.query<{ name: string; comment: string | null }>(
      `select datname as name, shobj_description(oid, 'pg_database') as comment from pg_database where datname like 'airlock\\_bench\\_%' order by datname`,
    ),
  );
  const kept: string[] = [];
  for (const { name, comment } of rows) {
    const creator = creatorIn(comment);
    const gone = creator === null ? null : creatorGone(creator);
    if (!gone) {
      if (gone === null) kept.push(name);
      continue;
    }
    say(`dropping database ${name}, left by an earlier bench (pid ${creator!.pid}, which runs no more)`);
    await withBenchAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
  if (kept.length > 0) say(`left ${kept.join(', ')}: created on another machine or by a bench that did not record its creator (drop by hand if nothing uses them)`);
}
