import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { textOf } from '../helpers/documents.ts';
import { RUN_AGENT, wsClient } from '../helpers/runs.ts';
import { SERVER_MAIN } from '../helpers/server-build.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TOKEN = `crash-admin-${randomBytes(8).toString('hex')}`;

async function startServer(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [SERVER_MAIN], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', AIRLOCK_ADMIN_TOKEN: TOKEN, AIRLOCK_RUN_HEARTBEAT_MS: '200', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  const deadline = Date.now() + 45_000;
  while (!/listening on (\S+)/.test(stdout)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`server did not start: ${stdout}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, url: /listening on (\S+)/.exec(stdout)![1]! };
}

async function gql(url: string, query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as any;
}

describe.each(TEST_DATABASES)('crash settlement on %s', (kind) => {
  const children: ChildProcess[] = [];
  afterAll(() => children.forEach((child) => child.exitCode === null && child.kill('SIGKILL')));

  // Runs that are continued after a crash are the chaos suite's (test/chaos); this is the behaviour kept for AIRLOCK_RESUME_RUNS=false.
  it('should settle a run left RUNNING by a killed process as INTERRUPTED when runs are not resumed, with its stored steps intact', async () => {
    const database = await createTestDatabase(kind, { persistent: true });
    const notResumed = { AIRLOCK_RESUME_RUNS: 'false', AIRLOCK_RUN_LEASE_MS: '1000' };
    const env: Record<string, string> = database.databaseUrl
      ? { DATABASE_URL: database.databaseUrl, AIRLOCK_MASTER_KEY: randomBytes(32).toString('base64'), ...notResumed }
      : { AIRLOCK_DATA_DIR: database.dataDir!, ...notResumed };
    try {
      const first = await startServer(env);
      children.push(first.child);
      const provider = await gql(first.url, `mutation { createProvider(input: { name: "slow", kind: SCRIPTED, settings: { delayMs: 300, replies: [{ content: "", toolCalls: [{ name: "describe_tables", arguments: {} }] }] } }) { ... on Provider { id } } }`);
      const model = await gql(first.url, `mutation($p: ID!) { createModel(input: { providerId: $p, name: "slow", providerModelId: "s" }) { ... on Model { id } } }`, { p: provider.data.createProvider.id });
      const configuration = await gql(first.url, `mutation($m: ID!) { createConfiguration(input: { name: "slow", modelId: $m, maxIterations: 50, privacyLevel: FULL }) { ... on Configuration { id } } }`, { m: model.data.createModel.id });

      const client = wsClient(first.url, TOKEN);
      let runId = '';
      let steps = 0;
      await new Promise<void>((resolve, reject) => {
        client.subscribe(
          { query: textOf(RUN_AGENT), variables: { input: { configurationId: configuration.data.createConfiguration.id, prompt: 'loop forever' } } },
          {
            next: (result) => {
              const event = (result.data as any)?.runAgent;
              if (event?.__typename === 'RunStartedEvent') runId = event.run.id;
              if (event?.__typename === 'RunStepEvent' && ++steps === 4) resolve();
            },
            error: () => undefined,
            complete: () => undefined,
          },
        );
        // A deadline that only names a hang: four steps took over 20 s at load 15 (2 cores).
        setTimeout(() => reject(new Error('no steps arrived')), 90_000).unref();
      });
      const exited = once(first.child, 'exit');
      first.child.kill('SIGKILL');
      await exited;
      await Promise.resolve(client.dispose()).catch(() => undefined);

      const second = await startServer(env);
      children.push(second.child);
      let run: any;
      const deadline = Date.now() + 15_000;
      do {
        await new Promise((resolve) => setTimeout(resolve, 200));
        run = (await gql(second.url, `query($id: ID!) { run(id: $id) { status terminationReason errorMessage steps(first: 100) { edges { node { sequence } } } } }`, { id: runId })).data.run;
      } while (run.status === 'RUNNING' && Date.now() < deadline);
      expect(run).toMatchObject({ status: 'FAILED', terminationReason: 'INTERRUPTED' });
      const sequences = run.steps.edges.map((edge: any) => edge.node.sequence);
      expect(sequences.length).toBeGreaterThanOrEqual(4);
      expect(sequences).toEqual(Array.from({ length: sequences.length }, (_, index) => index + 1));
      second.child.kill('SIGTERM');
      await once(second.child, 'exit');
    } finally {
      await database.drop();
    }
  }, 240_000);
});
