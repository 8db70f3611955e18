/**
 * The bench's janitor (`lib/janitor.ts` starts it: `node --import tsx bench/bin/janitor.ts <harness pid>`).
 * It reads what the harness holds, one JSON line per change, on its stdin. When stdin closes, the
 * harness has ended: normally it let go of everything first, and the janitor just exits; otherwise
 * (SIGKILL, a crash, an exit that skipped the clean-up) it stops every process group still held
 * (SIGTERM, then SIGKILL) and then drops every database still held, a line on stderr for each.
 */
import { createInterface } from 'node:readline';
import pg from 'pg';
import type { Held } from '../lib/janitor.ts';
import { processStartTicks } from '../lib/proc.ts';
import { stopGroup } from '../lib/process-groups.ts';

const harnessPid = process.argv[2];
const groups = new Map<number, Extract<Held, { kind: 'group' }>>();
const databases = new Map<string, Extract<Held, { kind: 'database' }>>();

// stderr may be a pipe whose reader ended with the harness: nothing said must stop the clean-up.
process.stderr.on('error', () => undefined);
const say = (line: string): void => void process.stderr.write(`[bench janitor] ${line}\n`);

function apply(line: string): void {
  let message: { op: 'hold' | 'release' } & Held;
  try {
    message = JSON.parse(line);
  } catch {
    return say(`ignored a line that is not a message: ${line.slice(0, 200)}`);
  }
  if (message.kind === 'group') {
    if (message.op === 'hold') groups.set(message.pgid, message);
    else groups.delete(message.pgid);
  } else if (message.op === 'hold') databases.set(message.name, message);
  else databases.delete(message.name);
}

async function dropDatabase({ name, adminUrl }: Extract<Held, { kind: 'database' }>): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

async function cleanUp(): Promise<void> {
  if (groups.size === 0 && databases.size === 0) return;
  say(`the harness (pid ${harnessPid}) ended without cleaning up: ${groups.size} process group(s), ${databases.size} database(s) left`);
  await Promise.all(
    [...groups.values()].map(async ({ pgid, startTicks, label }) => {
      // The leader still running under another start time: the pid was reused, the group is not ours.
      const leader = processStartTicks(pgid);
      if (leader !== null && startTicks !== null && leader !== startTicks) return;
      say(`stopping ${label} (process group ${pgid})`);
      if (!(await stopGroup(pgid))) say(`process group ${pgid} outlived SIGKILL`);
    }),
  );
  for (const database of databases.values()) {
    say(`dropping database ${database.name}`);
    await dropDatabase(database).catch((error: unknown) => say(`could not drop ${database.name}: ${error instanceof Error ? error.message : String(error)}`));
  }
  say('done');
}

createInterface({ input: process.stdin })
  .on('line', apply)
  .on('close', () => void cleanUp().finally(() => process.exit(0)));
