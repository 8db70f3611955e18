import { createHash, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type DbKind } from '../../src/db/create-db.ts';
import { seedRecords } from '../../src/db/repositories/records-seed.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, TEST_DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { textOf } from '../helpers/documents.ts';
import { RUN_AGENT, RUN_EVENTS, sseEvents } from '../helpers/runs.ts';
import { anthropicWire } from '../fixtures/wires/anthropic.ts';
import type { FakeServer, NeutralReply, Scripted } from '../fixtures/wires/fake-server.ts';
import { openaiWire } from '../fixtures/wires/openai.ts';
import { THROWN_CANARY } from '../fixtures/tool-modules/probes.ts';
import { RawSocket, type WireMessage } from '../protocol/raw-socket.ts';

/**
 * Canary secrets: unique values planted where secrets live (a provider API key, the database
 * password, a secret-named environment variable, a credential in a thrown tool error). A full
 * scenario, failures included, runs over every transport; then every output is searched.
 */

const PROBES = fileURLToPath(new URL('../fixtures/tool-modules/probes.ts', import.meta.url));
/** The password part of the probe tool's thrown connection string. */
const THROWN_PASSWORD = new URL(THROWN_CANARY).password;

const RUN_FIELDS = `id status terminationReason truncated iterations prompt finalContent errorMessage privacyLevel auditIncomplete
  usage { promptTokens completionTokens totalTokens estimatedCost } createdAt finishedAt
  configuration { id name } user { id name }
  steps(first: 30) { edges { node { sequence kind round durationMs content thinking messagesSent offeredTools requestedToolCalls
    finishReason toolCallId toolName toolArguments toolResult toolIsError contentRedacted contentLength toolResultLength
    toolArtifactsCount toolArtifactTypes requestedToolNames messagesSentCount usage { promptTokens completionTokens cost }
    artifacts { __typename ... on TableArtifact { label columns rows } ... on TextArtifact { label text } ... on UnknownArtifact { type label data } } } } }`;

/** A private PostgreSQL database owned by a role whose password is a canary; the app connects as that role. */
async function databaseWithCanaryPassword(password: string): Promise<TestDatabase> {
  const base = new URL(process.env.TEST_DATABASE_URL!);
  const name = `airlock_canary_${randomBytes(5).toString('hex')}`;
  const admin = async (statements: string[]) => {
    const client = new pg.Client({ connectionString: base.toString() });
    await client.connect();
    try {
      for (const statement of statements) await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin([`CREATE ROLE ${name} LOGIN PASSWORD '${password}'`, `CREATE DATABASE ${name} OWNER ${name}`]);
  const url = new URL(base);
  url.username = name;
  url.password = password;
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  return {
    kind: 'postgres',
    dataDir: null,
    databaseUrl,
    open: () => createDb({ databaseUrl, dataDir: 'memory://', poolSize: 5 }),
    drop: () => admin([`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`, `DROP ROLE IF EXISTS ${name}`]),
  };
}

/** Every row of every table (the encrypted key column aside), as one searchable text. */
async function dumpEveryTable(t: TestApp): Promise<{ text: string; tables: string[] }> {
  const db = t.app.services.db;
  const tables = await sql<{ table_schema: string; table_name: string }>`
    select table_schema, table_name from information_schema.tables
    where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`.execute(db);
  const parts: string[] = [];
  const names: string[] = [];
  for (const { table_schema: schema, table_name: table } of tables.rows) {
    names.push(`${schema}.${table}`);
    const rows = await sql<Record<string, unknown>>`select * from ${sql.table(`${schema}.${table}`)}`.execute(db);
    for (const row of rows.rows) {
      if (table === 'providers') delete row.api_key_ciphertext;
      parts.push(JSON.stringify(row, (_key, value) => (value instanceof Uint8Array ? Buffer.from(value).toString('latin1') : value)));
    }
  }
  return { text: parts.join('\n'), tables: names };
}

describe.each(TEST_DATABASES)('canary secrets on %s', (kind: DbKind) => {
  const tag = randomBytes(6).toString('hex');
  const canaries = {
    providerKey: `canary-key-${tag}-provider`,
    databasePassword: `canary-pw-${tag}-database`,
    environment: `canary-env-${tag}-payment`,
    thrownError: THROWN_PASSWORD,
  };
  const saved = { payment: process.env.PAYMENT_API_KEY, databaseUrl: process.env.DATABASE_URL };

  let t: TestApp;
  let url: string;
  let openai: FakeServer;
  let anthropic: FakeServer;
  let userToken: string;
  const configurations: Record<'openai' | 'anthropic', string> = { openai: '', anthropic: '' };
  /** Every GraphQL response body and SSE stream the scenario received, verbatim. */
  const bodies: string[] = [];
  const sockets: RawSocket[] = [];
  /** The finished run of each scenario step, by prompt. */
  const runs: Record<string, { id: string; status: string }> = {};

  async function gql(query: string, variables: Record<string, unknown> = {}, token = t.adminToken): Promise<any> {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    const text = await response.text();
    bodies.push(text);
    return JSON.parse(text);
  }

  async function socket(token = t.adminToken): Promise<RawSocket> {
    const opened = await RawSocket.open(url, token);
    sockets.push(opened);
    return opened;
  }

  /** One runAgent over graphql-ws; returns the finished run. */
  async function runOverWs(configurationId: string, prompt: string, token = t.adminToken): Promise<any> {
    const ws = await socket(token);
    const id = `run-${Object.keys(runs).length}`;
    ws.subscribe(id, RUN_AGENT, { input: { configurationId, prompt } });
    const messages = await ws.operation(id);
    expect(messages.at(-1)!.type, JSON.stringify(messages.at(-1))).toBe("complete");
    const finished = messages.map((message: WireMessage) => message.payload?.data?.runAgent).filter(Boolean).at(-1);
    runs[prompt] = finished.run;
    return finished.run;
  }

  /** One runAgent over server-sent events; returns the finished run. */
  async function runOverSse(configurationId: string, prompt: string, token = t.adminToken): Promise<any> {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: textOf(RUN_AGENT), variables: { input: { configurationId, prompt } } }),
    });
    const text = await response.text();
    bodies.push(text);
    expect(text).toContain('event: complete');
    const events = sseEvents(text, 'runAgent');
    const finished = events.at(-1);
    runs[prompt] = finished.run;
    return finished.run;
  }

  /** Scripts the fake vendor: a NeutralReply is answered as a completion, anything else as scripted. */
  const enqueue = (server: FakeServer, ...items: (NeutralReply | Scripted)[]) =>
    server.enqueue(...items.map((item): Scripted => ('status' in item || 'raw' in item || 'hang' in item || 'reply' in item ? item : { reply: item })));

  beforeAll(async () => {
    let database: TestDatabase;
    if (kind === 'postgres') {
      database = await databaseWithCanaryPassword(canaries.databasePassword);
      process.env.DATABASE_URL = database.databaseUrl!;
    } else {
      database = await createTestDatabase(kind);
      // No password to plant in an embedded database: the variable alone still reaches get_env.
      process.env.DATABASE_URL = `postgres://svc:${canaries.databasePassword}@db.internal:5432/airlock`;
    }
    process.env.PAYMENT_API_KEY = canaries.environment;
    t = await startTestApp(kind, { database, env: { AIRLOCK_TOOL_MODULES: PROBES } });
    url = (await t.app.server.start()).url;
    await seedRecords(t.app.services.db);
    openai = await openaiWire.start();
    anthropic = await anthropicWire.start();

    userToken = (await gql(`mutation { createUser(input: { name: "canary-user" }) { ... on CreateUserPayload { token } } }`)).data.createUser.token;
    const wires = [
      { name: 'openai' as const, kind: 'OPENAI', baseUrl: openaiWire.baseUrl(openai), apiKey: canaries.providerKey },
      { name: 'anthropic' as const, kind: 'ANTHROPIC', baseUrl: anthropicWire.baseUrl(anthropic), apiKey: `other-key-${tag}-anthropic` },
    ];
    for (const wire of wires) {
      const provider = await gql(
        `mutation($input: CreateProviderInput!) { createProvider(input: $input) { __typename ... on Provider { id name kind baseUrl hasApiKey settings } ... on Error { message } } }`,
        { input: { name: `p-${wire.name}`, kind: wire.kind, baseUrl: wire.baseUrl, apiKey: wire.apiKey, settings: { timeoutMs: 3_000 } } },
      );
      expect(provider.data.createProvider).toMatchObject({ __typename: 'Provider', hasApiKey: true });
      const model = await gql(`mutation($input: CreateModelInput!) { createModel(input: $input) { ... on Model { id } } }`, {
        input: { providerId: provider.data.createProvider.id, name: `m-${wire.name}`, providerModelId: `vendor-${wire.name}`, inputPricePerMTok: 1, outputPricePerMTok: 2 },
      });
      const configuration = await gql(`mutation($input: CreateConfigurationInput!) { createConfiguration(input: $input) { ... on Configuration { id } ... on Error { message } } }`, {
        // FULL: the most a stored copy can hold; a canary must not be there to begin with.
        input: { name: `c-${wire.name}`, modelId: model.data.createModel.id, privacyLevel: 'FULL', maxIterations: 8 },
      });
      configurations[wire.name] = configuration.data.createConfiguration.id;
    }
  });

  afterAll(async () => {
    for (const open of sockets) await open.close();
    await openai?.close();
    await anthropic?.close();
    await t?.stop();
    for (const [name, value] of [['PAYMENT_API_KEY', saved.payment], ['DATABASE_URL', saved.databaseUrl]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('should run the scenario: tools that touch every secret, provider failures, two wires, every transport', async () => {
    // 1. Over graphql-ws as admin: the environment, the users, a throwing tool, the server log.
    enqueue(
      openai,
      { toolCalls: [{ name: 'get_env', arguments: {} }, { name: 'list_users', arguments: {} }] },
      { toolCalls: [{ name: 'probe_throw', arguments: {} }] },
      { toolCalls: [{ name: 'fetch_logs', arguments: { limit: 200 } }, { name: 'get_runtime_info', arguments: {} }, { name: 'list_configurations', arguments: {} }] },
      { content: 'All done.' },
    );
    expect(await runOverWs(configurations.openai, 'tour of the secrets')).toMatchObject({ status: 'COMPLETED', terminationReason: 'COMPLETED' });
    const tour = openai.requests.map((request) => openaiWire.read(request));
    const toolResults = tour.at(-1)!.toolResults.map((result) => result.content);
    expect(toolResults.find((content) => content.includes('PAYMENT_API_KEY='))).toContain('PAYMENT_API_KEY=***redacted***');
    expect(toolResults.find((content) => content.includes('DATABASE_URL='))).toContain('DATABASE_URL=***redacted***');
    expect(toolResults).toContain('Error: tool "probe_throw" failed.');
    // The thrown error did reach the server log, and fetch_logs handed the model that very line.
    const logs = toolResults.find((content) => content.includes('most recent log line'))!;
    expect(logs).toContain('"tool execution failed" [error detail omitted] tool="probe_throw"');
    // The exception's text stays in the server log: fetch_logs shows that it failed, not why.
    expect(logs).not.toContain('could not connect');

    // 2. Over SSE: the provider fails with a 500 whose body echoes the key (as some vendors do).
    enqueue(openai, { toolCalls: [{ name: 'get_env', arguments: { prefix: 'PAYMENT' } }] }, {
      status: 500,
      body: JSON.stringify({ error: { message: `Incorrect API key provided: ${canaries.providerKey}`, type: 'server_error' } }),
    });
    expect(await runOverSse(configurations.openai, 'provider 500 over SSE')).toMatchObject({ status: 'FAILED', terminationReason: 'PROVIDER_FAILED' });

    // 3. Over graphql-ws: rate limited, then a garbage body carrying the key.
    enqueue(openai, { status: 429, body: `{"error":{"message":"Rate limit reached for key ${canaries.providerKey}"}}` });
    expect(await runOverWs(configurations.openai, 'rate limited')).toMatchObject({ status: 'FAILED', terminationReason: 'PROVIDER_FAILED' });
    enqueue(openai, { raw: `<html>upstream said ${canaries.providerKey}` });
    expect(await runOverWs(configurations.openai, 'garbage body')).toMatchObject({ status: 'FAILED', terminationReason: 'PROVIDER_FAILED' });

    // 4. A non-admin whose model reaches for admin tools (refused) over SSE.
    enqueue(openai, { toolCalls: [{ name: 'get_env', arguments: {} }, { name: 'list_users', arguments: {} }] }, { content: 'Could not.' });
    expect(await runOverSse(configurations.openai, 'non-admin reaches', userToken)).toMatchObject({ status: 'COMPLETED' });

    // 5. The second provider, on another wire, doing the same tour.
    enqueue(
      anthropic,
      { toolCalls: [{ name: 'get_env', arguments: {} }, { name: 'fetch_logs', arguments: { limit: 200 } }] },
      { toolCalls: [{ name: 'probe_throw', arguments: {} }] },
      { content: 'Other wire done.' },
    );
    expect(await runOverWs(configurations.anthropic, 'second provider')).toMatchObject({ status: 'COMPLETED' });

    // 6. Replays, reads and failing mutations that hold a canary in their input.
    const replay = await socket();
    for (const [index, prompt] of ['tour of the secrets', 'provider 500 over SSE'].entries()) {
      replay.subscribe(`replay-${index}`, RUN_EVENTS, { runId: runs[prompt]!.id });
      const replayed = await replay.operation(`replay-${index}`);
      expect(replayed.at(-1)!.type, JSON.stringify(replayed.at(-1))).toBe('complete');
    }
    const RUN = `query($id: ID!) { run(id: $id) { ${RUN_FIELDS} } }`;
    for (const run of Object.values(runs)) {
      const read = await gql(RUN, { id: run.id });
      expect(read.errors).toBeUndefined();
      expect(read.data.run.steps.edges.length).toBeGreaterThan(0);
      await gql(RUN, { id: run.id }, userToken);
    }
    await gql(`{ runs(first: 50) { edges { node { id status errorMessage finalContent prompt } } } }`);
    await gql(`{ providers { id name kind baseUrl hasApiKey settings models { id name } } configurations { id name systemPrompt } tools { name parameters } }`);
    await gql(`{ pendingApprovals { run { id } } viewer { name } }`);
    const tooLong = await gql(`mutation($input: CreateProviderInput!) { createProvider(input: $input) { __typename ... on ValidationError { message issues { path message } } ... on Error { message } } }`, {
      input: { name: 'too-long', kind: 'OPENAI', apiKey: `${canaries.providerKey}${'x'.repeat(5_000)}` },
    });
    expect(tooLong.data.createProvider.__typename).toBe('ValidationError');
    const duplicate = await gql(`mutation($input: CreateProviderInput!) { createProvider(input: $input) { __typename ... on Error { message } } }`, {
      input: { name: 'p-openai', kind: 'OPENAI', apiKey: canaries.providerKey },
    });
    expect(duplicate.data.createProvider.__typename).toBe('ConflictError');
    const badUrl = await gql(`mutation($input: CreateProviderInput!) { createProvider(input: $input) { __typename ... on Error { message } } }`, {
      input: { name: 'with-credentials', kind: 'OPENAI', baseUrl: `https://svc:${canaries.providerKey}@api.example.com/v1` },
    });
    expect(badUrl.data.createProvider.__typename).toBe('ValidationError');
    const wsRead = await socket();
    wsRead.subscribe('read-runs', RUN, { id: runs['tour of the secrets']!.id });
    const read = await wsRead.operation('read-runs');
    expect(read.at(-1)!.type, JSON.stringify(read.at(-1)).slice(0, 500)).toBe('complete');

    // The secrets' neighbourhoods did travel: what the canaries were replaced with is everywhere.
    const frames = sockets.flatMap((open) => open.frames).join('\n');
    expect(frames).toContain('PAYMENT_API_KEY=***redacted***');
    // fetch_logs showed the failed tool's line, its error detail left in the server log.
    expect(frames).toContain('[error detail omitted] tool=');
    expect(bodies.join('\n')).toContain('PAYMENT_API_KEY=***redacted***');
    expect(t.logs.text()).toMatch(/Incorrect API key provided: \*\*\*redacted\*\*\*/);
  }, 60_000);

  describe.each(Object.keys(canaries) as (keyof typeof canaries)[])('the %s canary', (name) => {
    const canary = () => canaries[name];

    it('should appear in no GraphQL response body, SSE stream or websocket frame', () => {
      expect(bodies.length).toBeGreaterThan(10);
      for (const body of bodies) expect(body).not.toContain(canary());
      const frames = sockets.flatMap((open) => open.frames);
      expect(frames.length).toBeGreaterThan(20);
      for (const frame of frames) expect(frame).not.toContain(canary());
    });

    it('should appear in no log line', () => {
      expect(t.logs.lines.length).toBeGreaterThan(0);
      expect(t.logs.lines.filter((line) => line.includes(canary()))).toEqual([]);
      // A thrown error still reaches the server log, where it belongs (DESIGN §4), its credential masked.
      if (name === 'thrownError') expect(t.logs.text()).toContain(`could not connect to ${THROWN_CANARY.replace(canary(), '***')}`);
    });

    it('should appear in no request to the other provider, and in no request body to its own', () => {
      expect(anthropic.requests.length).toBe(3);
      for (const request of anthropic.requests) {
        expect(request.raw).not.toContain(canary());
        expect(JSON.stringify(request.headers)).not.toContain(canary());
      }
      expect(openai.requests.length).toBeGreaterThanOrEqual(8);
      for (const request of openai.requests) {
        expect(request.raw).not.toContain(canary());
        const headers = { ...request.headers };
        // The one place the key belongs: its own provider's authorization header.
        if (name === 'providerKey') expect(headers.authorization).toBe(`Bearer ${canary()}`);
        delete headers.authorization;
        expect(JSON.stringify(headers)).not.toContain(canary());
      }
    });

    it('should appear in no stored row of any table (the encrypted key column aside)', async () => {
      const dump = await dumpEveryTable(t);
      expect(dump.tables).toEqual(expect.arrayContaining(['public.runs', 'public.run_steps', 'public.providers', 'public.users']));
      expect(dump.text).toContain('tour of the secrets');
      expect(dump.text).not.toContain(canary());
    });
  });
});

describe.each(TEST_DATABASES)('token canaries on %s', (kind: DbKind) => {
  const CREATE_USER = `mutation($name: String!, $isAdmin: Boolean) { createUser(input: { name: $name, isAdmin: $isAdmin }) { ... on CreateUserPayload { token user { id } } } }`;
  const ROTATE = `mutation($userId: ID!) { rotateToken(userId: $userId) { ... on CreateUserPayload { token } } }`;
  const SET_ACTIVE = `mutation($userId: ID!, $active: Boolean!) { setUserActive(userId: $userId, active: $active) { __typename } }`;
  const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

  let t: TestApp;
  /** Every token the service ever handed out here, with whether it still works. */
  const tokens: { token: string; current: boolean }[] = [];

  beforeAll(async () => {
    // Debug: the refused tokens below are logged as client errors, so the log has lines to search.
    t = await startTestApp(kind, { env: { LOG_LEVEL: 'debug' } });
    tokens.push({ token: t.adminToken, current: true });
    const created = (await t.gql(CREATE_USER, { name: 'canary-holder' })).data.createUser;
    const admin = (await t.gql(CREATE_USER, { name: 'canary-admin', isAdmin: true })).data.createUser;
    let token = created.token as string;
    for (let rotation = 0; rotation < 3; rotation += 1) {
      tokens.push({ token, current: false });
      token = (await t.gql(ROTATE, { userId: created.user.id })).data.rotateToken.token;
    }
    tokens.push({ token, current: true });
    // An admin rotating their own token, and a deactivation and reactivation on the way.
    const ownRotation = (await t.gql(ROTATE, { userId: admin.user.id }, admin.token)).data.rotateToken.token as string;
    tokens.push({ token: admin.token, current: false }, { token: ownRotation, current: true });
    await t.gql(SET_ACTIVE, { userId: created.user.id, active: false });
    await t.gql(SET_ACTIVE, { userId: created.user.id, active: true });
    for (const { token: each, current } of tokens) {
      expect((await t.gql('{ viewer { name } }', {}, each)).data?.viewer ? 'works' : 'refused').toBe(current ? 'works' : 'refused');
    }
  });
  afterAll(() => t?.stop());

  it('should store no token anywhere in the database, old or new: only the digest of each current token', async () => {
    const dump = await dumpEveryTable(t);
    expect(dump.tables).toEqual(expect.arrayContaining(['public.users', 'public.runs', 'public.usage_records']));
    expect(tokens.length).toBe(7);
    for (const { token, current } of tokens) {
      expect(dump.text).not.toContain(token);
      // Nor the random part alone (a token is `alk_` + base64url).
      expect(dump.text).not.toContain(token.replace(/^alk_/, ''));
      if (current) expect(dump.text).toContain(digest(token));
      // A replaced digest is gone, not kept beside the new one.
      else expect(dump.text).not.toContain(digest(token));
    }
  });

  it('should write no token to the log', () => {
    expect(t.logs.lines.length).toBeGreaterThan(0);
    for (const { token } of tokens) expect(t.logs.text()).not.toContain(token);
  });
});
