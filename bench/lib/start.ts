/**
 * One start of the server, measured from just before the spawn: the "is listening on <url>" line,
 * then the first answer to `{ __typename }` over HTTP (refused: no token is sent), and the RSS of
 * the command's whole process tree right after it (`tsx` runs the server in a child process). The
 * command is started by `children.ts` (a process group of its own, held by the janitor: it never
 * outlives the harness) and is stopped with its group and awaited before this returns, so the next
 * start finds its data directory free. It gets no preload: what is measured is the command alone.
 */
import { performance } from 'node:perf_hooks';
import { startProcess, stopChild } from './children.ts';
import { processTree, rssBytes } from './proc.ts';

export interface StartSample {
  readonly listeningMs: number;
  readonly answerMs: number;
  readonly rssMiB: number;
}

/** A start that never says it is listening is given up after this long. */
const LISTENING_TIMEOUT_MS = 120_000;

export async function measureStart(command: readonly string[], env: Record<string, string> = {}): Promise<StartSample> {
  const started = performance.now();
  const child = startProcess(command[0]!, command.slice(1), {
    env: { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => reject(new Error(`not listening within ${LISTENING_TIMEOUT_MS} ms:\n${output}${errors}`)), LISTENING_TIMEOUT_MS);
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /is listening on (\S+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`exited with ${code} before listening:\n${output}${errors}`));
      });
    });
    const listeningMs = performance.now() - started;
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    const body = await response.text();
    // Every operation needs a user (src/graphql/plugins/require-viewer.ts): without a token the
    // answer is the refusal, still the server's first GraphQL answer (parsed, context built, plugins run).
    if (!body.includes('"__typename":"Query"') && !body.includes('"UNAUTHENTICATED"')) throw new Error(`unexpected answer: ${body}`);
    const answerMs = performance.now() - started;
    const rss = processTree(child.pid!).reduce((sum, pid) => sum + (rssBytes(pid) ?? 0), 0);
    return { listeningMs, answerMs, rssMiB: rss / 1024 / 1024 };
  } finally {
    await stopChild(child);
  }
}
