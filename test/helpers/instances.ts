import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { GqlResponse, InProcessGql } from './app.ts';
import type { Client } from 'graphql-ws';
import { textOf, type TypedDocumentNode } from './documents.ts';
import { SERVER_MAIN } from './server-build.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Stops the server when this process goes away (the bench's own preload, in plain JavaScript). */
const EXIT_WITH_PARENT = './bench/lib/exit-with-parent.mjs';

/** A real server process (the compiled `src/main.ts`, as `npm start` runs it), as an operator runs one instance of several. */
export interface Instance {
  /** The GraphQL endpoint (http://…/graphql; `wsClient` turns it into ws://). */
  readonly url: string;
  readonly child: ChildProcess;
  /** GraphQL over HTTP to this instance, as the admin unless another token is given. */
  readonly gql: InProcessGql;
  /** Everything the process printed so far (its JSON log lines). */
  output(): string;
  /** Log messages (`msg`) printed so far. */
  messages(): string[];
  /** SIGTERM (graceful) or SIGKILL (a crash); waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** The environment every instance of one deployment shares (the same admin token and master key). */
export function deploymentEnv(extra: Record<string, string>): { env: Record<string, string>; adminToken: string } {
  const adminToken = `instances-admin-${randomBytes(12).toString('hex')}`;
  return {
    adminToken,
    env: {
      AIRLOCK_ADMIN_TOKEN: adminToken,
      AIRLOCK_MASTER_KEY: randomBytes(32).toString('base64'),
      AIRLOCK_MAX_RUNNING_RUNS_PER_USER: '0',
      ...extra,
    },
  };
}

export async function startInstance(env: Record<string, string>): Promise<Instance> {
  // With an IPC channel the kernel closes when this process ends, SIGKILL included: the preload
  // then stops the server, which would otherwise outlive a killed test run (re-parented to init).
  const child = spawn(process.execPath, ['--import', EXIT_WITH_PARENT, SERVER_MAIN], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  child.channel?.unref();
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const deadline = Date.now() + 60_000;
  while (!/listening on (http\S+)/.test(output)) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`the instance did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const url = /listening on (http\S+)/.exec(output)![1]!;
  const gql = async (document: TypedDocumentNode<any, any> | string, variables?: Record<string, unknown>, token: string | null = env.AIRLOCK_ADMIN_TOKEN ?? null) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query: textOf(document), variables }),
    });
    return (await response.json()) as GqlResponse<any>;
  };
  return {
    url,
    child,
    gql: gql as InProcessGql,
    output: () => output,
    messages: () =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => (JSON.parse(line) as { msg?: string }).msg ?? ''),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill(signal);
      await exited;
    },
  };
}

/** A subscription followed in the background: its events so far, and how it ended. */
export interface Followed<T> {
  readonly events: T[];
  /** Resolves when the server completes or fails the subscription: null, or the error it sent. */
  readonly ended: Promise<unknown>;
  /** Waits until `predicate` holds for the events so far. */
  until(predicate: (events: T[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  stop(): void;
}

export function follow<T>(client: Client, document: TypedDocumentNode<any, any>, variables: Record<string, unknown>, pick: (data: any) => T): Followed<T> {
  const events: T[] = [];
  let stop = () => undefined as void;
  const ended = new Promise<unknown>((resolve) => {
    stop = client.subscribe(
      { query: textOf(document), variables },
      {
        next: (result) => (result.errors ? resolve(result.errors) : events.push(pick(result.data))),
        error: (error) => resolve(error ?? 'error'),
        complete: () => resolve(null),
      },
    );
  });
  let done = false;
  void ended.then(() => (done = true));
  return {
    events,
    ended,
    stop: () => stop(),
    async until(predicate, what, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(events)) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(events).slice(0, 2_000)}`);
        if (done && !predicate(events)) throw new Error(`the subscription ended before ${what}: ${JSON.stringify(await ended)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}

/** Polls until `read` returns a value `accept` takes. */
export async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value).slice(0, 1_000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** SCRIPTED replies that call `describe_tables` for `rounds` rounds (a run that keeps going). */
export const toolRounds = (rounds: number, content = 'thinking') =>
  Array.from({ length: rounds }, (_, index) => ({ content: `${content} ${index + 1}`, toolCalls: [{ name: 'describe_tables', arguments: {} }] }));

/** 1, 2, …, count: the sequences of a run's steps, each once and in order. */
export const oneToN = (count: number) => Array.from({ length: count }, (_, index) => index + 1);
