/**
 * Start-up time and memory of one way of starting the server:
 *
 *   node --import tsx bench/bin/startup.ts [runs] -- <command …>
 *   node --import tsx bench/bin/startup.ts 5 -- node --conditions=airlock-dist dist/src/main.js
 *
 * Each run spawns the command with PORT=0 (and the caller's environment: AIRLOCK_DATA_DIR=memory://
 * or DATABASE_URL + AIRLOCK_MASTER_KEY choose the database) and measures, from just before the spawn:
 * the "is listening on <url>" line, then the first answer to `{ __typename }` over HTTP. RSS is summed
 * over the command's whole process tree (`tsx` runs the server in a child process) right after that
 * answer. Prints min / median / max; quote the median.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { REPO_ROOT } from '../lib/children.ts';
import { rssBytes } from '../lib/proc.ts';
import { fmt, median } from '../lib/stats.ts';

const separator = process.argv.indexOf('--');
const runs = Number(process.argv[2] !== '--' ? process.argv[2] : 5) || 5;
const command = process.argv.slice(separator + 1);
if (separator < 0 || command.length === 0) {
  console.error('usage: node --import tsx bench/bin/startup.ts [runs] -- <command …>');
  process.exit(2);
}

/** `pid` and every descendant, from /proc/<pid>/stat parent ids. */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // The process ended while we looked.
    }
  }
  const tree = [root];
  for (let index = 0; index < tree.length; index++) tree.push(...(children.get(tree[index]!) ?? []));
  return tree;
}

interface Sample {
  readonly listeningMs: number;
  readonly answerMs: number;
  readonly rssMiB: number;
}

async function once(): Promise<Sample> {
  const started = performance.now();
  const child = spawn(command[0]!, command.slice(1), {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /is listening on (\S+)/.exec(output);
        if (match) resolve(match[1]!);
      });
      child.once('exit', (code) => reject(new Error(`exited with ${code} before listening:\n${output}${errors}`)));
    });
    const listeningMs = performance.now() - started;
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    const body = await response.text();
    if (!body.includes('"__typename":"Query"')) throw new Error(`unexpected answer: ${body}`);
    const answerMs = performance.now() - started;
    const rss = processTree(child.pid!).reduce((sum, pid) => sum + (rssBytes(pid) ?? 0), 0);
    return { listeningMs, answerMs, rssMiB: rss / 1024 / 1024 };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
  }
}

const samples: Sample[] = [];
for (let run = 0; run < runs; run++) samples.push(await once());
const row = (label: string, values: number[], unit: string) =>
  `${label.padEnd(22)} ${fmt(median(values))} ${unit}  (min ${fmt(Math.min(...values))}, max ${fmt(Math.max(...values))})`;
console.log(`${command.join(' ')} — ${runs} runs`);
console.log(row('listening line', samples.map((s) => s.listeningMs), 'ms'));
console.log(row('first GraphQL answer', samples.map((s) => s.answerMs), 'ms'));
console.log(row('RSS after start', samples.map((s) => s.rssMiB), 'MiB'));
