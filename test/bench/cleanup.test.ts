import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { processStartTicks, processTree } from '../../bench/lib/proc.ts';
import { creatorComment, creatorOf, dropLeftoverDatabases } from '../../bench/lib/private-databases.ts';

/**
 * Issue 30: a bench that fails leaves nothing behind. A bench-like harness (test/fixtures/bench-harness.ts,
 * made of the real bench/lib helpers) starts a server child that has a child of its own and, on
 * PostgreSQL, creates a private database; then it ends by a thrown error, an error nothing catches,
 * SIGTERM or SIGKILL. Afterwards no process of its tree (taken while it ran: pid and start time) runs,
 * and its database is gone.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DATABASE_URL = process.env.TEST_DATABASE_URL;
/** Only names a hang: every wait below is for a state. */
const DEADLINE_MS = 30_000;

async function until<T>(read: () => T | Promise<T>, accept: (value: T) => boolean, what: string): Promise<T> {
  for (const deadline = Date.now() + DEADLINE_MS; ; ) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function withAdmin<T>(action: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    return await action(client);
  } finally {
    await client.end();
  }
}

const databaseExists = (name: string) =>
  withAdmin(async (client) => (await client.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1);
const dropDatabase = (name: string) => withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));

/** Every process of `root`'s tree by pid, with its start time: a pid reused later is another process. */
function snapshotTree(root: number): Map<number, number> {
  return new Map(processTree(root).flatMap((pid) => {
    const ticks = processStartTicks(pid);
    return ticks === null ? [] : [[pid, ticks] as [number, number]];
  }));
}
const stillRunning = (tree: Map<number, number>) => [...tree].filter(([pid, ticks]) => processStartTicks(pid) === ticks).map(([pid]) => pid);
/** `pid: command line` of each that still runs (for the failure message). */
const described = (pids: number[]) =>
  pids.flatMap((pid) => {
    try {
      return [`${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()}`];
    } catch {
      return [];
    }
  });

interface Started {
  readonly server: number;
  readonly grandchild: number;
  readonly database: string | null;
}

function startHarness(how: 'throw' | 'uncaught' | 'wait') {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.BENCH_DATABASE_URL;
  if (DATABASE_URL) env.BENCH_DATABASE_URL = DATABASE_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/bench-harness.ts', how], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const started = new Promise<Started>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('{"server"')) resolve(JSON.parse(line) as Started);
    });
    child.once('exit', (code, signal) => reject(new Error(`the harness ended (${code ?? signal}) before it started its children:\n${stderr}`)));
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  return { child, started, exited, stderr: () => stderr };
}

const SCENARIOS = [
  { ends: 'main throws', how: 'throw', end: (child: ChildProcess) => child.stdin!.end('go\n'), exit: [1, null], cleaner: '[bench] stopping' },
  { ends: 'an error nothing catches is thrown', how: 'uncaught', end: (child: ChildProcess) => child.stdin!.end('go\n'), exit: [1, null], cleaner: '[bench] stopping' },
  { ends: 'SIGTERM arrives', how: 'wait', end: (child: ChildProcess) => child.kill('SIGTERM'), exit: [143, null], cleaner: '[bench] stopping' },
  { ends: 'the harness is killed with SIGKILL', how: 'wait', end: (child: ChildProcess) => child.kill('SIGKILL'), exit: [null, 'SIGKILL'], cleaner: '[bench janitor] stopping' },
] as const;

describe.concurrent('a bench harness that ends early', () => {
  it.each(SCENARIOS)('should leave no process and no private database when $ends', async ({ how, end, exit, cleaner }) => {
    const harness = startHarness(how);
    let tree = new Map<number, number>();
    let database: string | null = null;
    try {
      const started = await harness.started;
      database = started.database;
      tree = snapshotTree(harness.child.pid!);
      // The harness, its janitor, the server and the server's own child.
      expect([...tree.keys()]).toEqual(expect.arrayContaining([harness.child.pid, started.server, started.grandchild]));
      expect(tree.size).toBeGreaterThanOrEqual(4);
      if (DATABASE_URL) {
        expect(database).toMatch(/^airlock_bench_/);
        expect(await databaseExists(database!)).toBe(true);
      }

      end(harness.child);
      expect(await harness.exited).toEqual(exit);
      await until(() => described(stillRunning(tree)), (left) => left.length === 0, 'every process of the harness tree to end');
      if (database) await until(() => databaseExists(database!), (exists) => !exists, `${database} to be dropped`);
      // Whoever cleaned up said so, a line per thing.
      await until(harness.stderr, (text) => text.includes(`${cleaner} test/fixtures/bench-server-with-child.ts`), 'the clean-up lines');
      if (database) await until(harness.stderr, (text) => text.includes(`dropping database ${database}`), 'the line about the database');
    } finally {
      for (const pid of stillRunning(tree)) process.kill(pid, 'SIGKILL');
      if (database) await dropDatabase(database);
    }
  });
});

describe.runIf(DATABASE_URL)('leftover private databases', () => {
  it('should drop, at a bench start, those whose creator runs no more, and only those', async () => {
    const ended = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60_000)'], { stdio: 'ignore' });
    const endedCreator = creatorOf(ended.pid!);
    ended.kill('SIGKILL');
    await once(ended, 'exit');
    const name = () => `airlock_bench_${randomBytes(6).toString('hex')}`;
    const databases = {
      creatorGone: [name(), creatorComment(endedCreator)],
      creatorRunning: [name(), creatorComment(creatorOf(process.pid))],
      otherMachine: [name(), creatorComment({ ...endedCreator, host: `not-${endedCreator.host}` })],
      noCreator: [name(), null],
    } as const;
    try {
      await withAdmin(async (client) => {
        for (const [database, comment] of Object.values(databases)) {
          await client.query(`CREATE DATABASE ${database}`);
          if (comment) await client.query(`COMMENT ON DATABASE ${database} IS ${client.escapeLiteral(comment)}`);
        }
      });
      const lines: string[] = [];
      await dropLeftoverDatabases((line) => lines.push(line));

      // (Its line is not asserted: another bench starting now, such as this file run by another suite, may drop it first.)
      expect(await databaseExists(databases.creatorGone[0])).toBe(false);
      expect(await databaseExists(databases.creatorRunning[0])).toBe(true);
      expect(await databaseExists(databases.otherMachine[0])).toBe(true);
      expect(await databaseExists(databases.noCreator[0])).toBe(true);
      expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^left .*${databases.otherMachine[0]}.*${databases.noCreator[0]}|^left .*${databases.noCreator[0]}.*${databases.otherMachine[0]}`)));
    } finally {
      for (const [database] of Object.values(databases)) await dropDatabase(database);
    }
  });
});
