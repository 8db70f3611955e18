/**
 * One start of the server, measured from just before the spawn: the "is listening on <url>" line,
 * then the first answer to `{ __typename }` over HTTP, and the RSS of the command's whole process
 * tree right after it (`tsx` runs the server in a child process). The process is stopped (SIGTERM to
 * its group) and awaited before this returns, so the next start finds its data directory free.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { REPO_ROOT } from './children.ts';
import { rssBytes } from './proc.ts';

/** `pid` and every descendant, from /proc/<pid>/stat parent ids. */
export function processTree(root: number): number[] {
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

export interface StartSample {
  readonly listeningMs: number;
  readonly answerMs: number;
  readonly rssMiB: number;
}

export async function measureStart(command: readonly string[], env: Record<string, string> = {}): Promise<StartSample> {
  const started = performance.now();
  const child = spawn(command[0]!, command.slice(1), {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn', ...env },
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
