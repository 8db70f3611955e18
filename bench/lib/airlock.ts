/**
 * An Airlock server in its own process (`node --import tsx src/main.ts`), on PGlite (in memory)
 * or on a private PostgreSQL database (`private-databases.ts`) dropped afterwards, set up
 * over its public GraphQL API with an OPENAI provider pointing at the fake server.
 */
import { randomBytes } from 'node:crypto';
import { BENCH_SYSTEM_PROMPT, BENCH_TOOL_GROUP } from './agent-tool.ts';
import { startServer, type ServerProcess } from './children.ts';
import { createPrivateDatabase, withBenchAdmin } from './private-databases.ts';

export type DbKind = 'postgres' | 'pglite';

/** True when the PostgreSQL server answers. */
export async function postgresAvailable(): Promise<boolean> {
  try {
    await withBenchAdmin((client) => client.query('select 1'));
    return true;
  } catch {
    return false;
  }
}

/** PostgreSQL backends serving `databaseName` (none for null), for the database's share of the CPU. */
export async function backendPids(databaseName: string | null): Promise<number[]> {
  if (!databaseName) return [];
  return withBenchAdmin(async (client) => {
    const { rows } = await client.query<{ pid: number }>(
      `select pid from pg_stat_activity where datname = $1 and backend_type = 'client backend'`,
      [databaseName],
    );
    return rows.map((row) => row.pid);
  });
}

export interface AirlockUnderTest {
  readonly kind: DbKind;
  /** The private PostgreSQL database (null on PGlite). */
  readonly databaseName: string | null;
  readonly server: ServerProcess;
  /** The environment the server was started with (another instance of the deployment reuses it). */
  readonly env: Readonly<Record<string, string>>;
  readonly httpUrl: string;
  readonly wsUrl: string;
  readonly adminToken: string;
  /** A non-admin user: sees the privacy-filtered live stream, as most dashboards do. */
  readonly userToken: string;
  readonly userId: string;
  readonly configurationId: string;
  gql<T = any>(query: string, variables?: Record<string, unknown>, token?: string): Promise<T>;
  stop(): Promise<void>;
}

export async function startAirlock(
  kind: DbKind,
  options: { fakeBaseUrl: string; k: number; env?: Record<string, string>; nodeArgs?: readonly string[] },
): Promise<AirlockUnderTest> {
  const database = kind === 'postgres' ? await createPrivateDatabase() : null;
  const adminToken = `bench-admin-${randomBytes(12).toString('hex')}`;
  const env: Record<string, string> = {
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    AIRLOCK_ADMIN_TOKEN: adminToken,
    AIRLOCK_MASTER_KEY: randomBytes(32).toString('base64'),
    AIRLOCK_TOOL_MODULES: './bench/bin/bench-tool.ts',
    // One user drives every concurrent run of a workload: the cap stays on (its check is part
    // of what a start costs) but above any workload's concurrency.
    AIRLOCK_MAX_RUNNING_RUNS_PER_USER: '100000',
    ...(database ? { DATABASE_URL: database.url } : { DATABASE_URL: '', AIRLOCK_DATA_DIR: 'memory://' }),
    ...options.env,
  };
  let server: ServerProcess;
  try {
    server = await startServer('src/main.ts', env, LISTENING, { nodeArgs: options.nodeArgs ?? [] });
  } catch (error) {
    await database?.drop();
    throw error;
  }
  const httpUrl = server.ready[1]!;
  const gql = async <T>(query: string, variables: Record<string, unknown> = {}, token = adminToken): Promise<T> => {
    const body = JSON.stringify({ query, variables });
    const response = await fetch(httpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), authorization: `Bearer ${token}` },
      body,
    });
    const json = (await response.json()) as { data?: T; errors?: unknown[] };
    if (json.errors) throw new Error(`GraphQL errors: ${JSON.stringify(json.errors)}`);
    return json.data!;
  };
  const stop = async () => {
    await server.stop();
    await database?.drop();
  };
  try {
    const setup = await configure(gql, options.fakeBaseUrl, options.k);
    return { kind, databaseName: database?.name ?? null, server, env, httpUrl, wsUrl: httpUrl.replace(/^http/, 'ws'), adminToken, gql, stop, ...setup };
  } catch (error) {
    await stop();
    throw error;
  }
}

const LISTENING = /Airlock is listening on (http:\/\/\S+)/;

/**
 * Another instance of the same deployment (same database, admin token, master key and Redis): the
 * set-up of `first` is shared; `stop` stops this server only.
 */
export async function joinAirlock(first: AirlockUnderTest, nodeArgs: readonly string[] = []): Promise<AirlockUnderTest> {
  const server = await startServer('src/main.ts', { ...first.env }, LISTENING, { nodeArgs });
  const httpUrl = server.ready[1]!;
  return { ...first, server, httpUrl, wsUrl: httpUrl.replace(/^http/, 'ws'), stop: () => server.stop() };
}

/** Provider (OPENAI at the fake server) → model → configuration (METADATA, only the bench group) → a user. */
async function configure(
  gql: <T>(query: string, variables?: Record<string, unknown>) => Promise<T>,
  fakeBaseUrl: string,
  k: number,
): Promise<{ configurationId: string; userToken: string; userId: string }> {
  const expect = <T extends { __typename: string }>(value: T, typename: string): T => {
    if (value.__typename !== typename) throw new Error(`setup failed: ${JSON.stringify(value)}`);
    return value;
  };
  const provider = await gql<{ createProvider: { __typename: string; id: string } }>(
    `mutation($input: CreateProviderInput!) { createProvider(input: $input) { __typename ... on Provider { id } ... on Error { message } } }`,
    { input: { name: 'bench-openai', kind: 'OPENAI', baseUrl: fakeBaseUrl, apiKey: 'sk-bench-not-a-real-key' } },
  );
  const model = await gql<{ createModel: { __typename: string; id: string } }>(
    `mutation($input: CreateModelInput!) { createModel(input: $input) { __typename ... on Model { id } ... on Error { message } } }`,
    {
      input: {
        providerId: expect(provider.createProvider, 'Provider').id,
        name: 'bench-model',
        providerModelId: `bench-k${k}`,
        inputPricePerMTok: 1,
        outputPricePerMTok: 2,
      },
    },
  );
  const configuration = await gql<{ createConfiguration: { __typename: string; id: string } }>(
    `mutation($input: CreateConfigurationInput!) { createConfiguration(input: $input) { __typename ... on Configuration { id } ... on Error { message } } }`,
    {
      input: {
        name: 'bench',
        modelId: expect(model.createModel, 'Model').id,
        systemPrompt: BENCH_SYSTEM_PROMPT,
        privacyLevel: 'METADATA',
        maxIterations: Math.max(5, k + 1),
        allowedToolGroups: [BENCH_TOOL_GROUP],
      },
    },
  );
  const user = await gql<{ createUser: { __typename: string; token: string; user: { id: string } } }>(
    `mutation { createUser(input: { name: "bench-user" }) { __typename ... on CreateUserPayload { token user { id } } ... on Error { message } } }`,
  );
  const created = expect(user.createUser, 'CreateUserPayload');
  return { configurationId: expect(configuration.createConfiguration, 'Configuration').id, userToken: created.token, userId: created.user.id };
}

/**
 * A configuration whose runs wait `latencyMs` on their first provider call: a run that stays
 * RUNNING (and idle) while subscriptions are opened on it. Returns the configuration id.
 */
export async function createWaitingConfiguration(airlock: AirlockUnderTest, fakeBaseUrl: string, latencyMs: number): Promise<string> {
  const provider = await airlock.gql<{ createProvider: { id: string } }>(
    `mutation($input: CreateProviderInput!) { createProvider(input: $input) { ... on Provider { id } } }`,
    { input: { name: 'bench-openai-waiting', kind: 'OPENAI', baseUrl: fakeBaseUrl, apiKey: 'sk-bench-not-a-real-key', settings: { timeoutMs: 600_000 } } },
  );
  const model = await airlock.gql<{ createModel: { id: string } }>(
    `mutation($input: CreateModelInput!) { createModel(input: $input) { ... on Model { id } } }`,
    { input: { providerId: provider.createProvider.id, name: 'bench-model-waiting', providerModelId: `bench-k3-l${latencyMs}` } },
  );
  const configuration = await airlock.gql<{ createConfiguration: { id: string } }>(
    `mutation($input: CreateConfigurationInput!) { createConfiguration(input: $input) { ... on Configuration { id } } }`,
    { input: { name: 'bench-waiting', modelId: model.createModel.id, systemPrompt: BENCH_SYSTEM_PROMPT, privacyLevel: 'METADATA', allowedToolGroups: [BENCH_TOOL_GROUP] } },
  );
  if (!configuration.createConfiguration?.id) throw new Error('could not create the waiting configuration');
  return configuration.createConfiguration.id;
}
