import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { textOf } from '../helpers/documents.ts';
import { RUN_AGENT, sseEvents } from '../helpers/runs.ts';
import { openaiWire } from '../fixtures/wires/openai.ts';
import type { FakeServer } from '../fixtures/wires/fake-server.ts';

const CANARY = 'sk-proj-CANARY-7f3a9c1e5b2d4f60a8e7';
const SECOND_CANARY = 'sk-ant-CANARY-second-41d2b9';
const HEADER_CANARY = 'gw-HEADERCANARY-5d81c0e2a9';
const ROTATED_HEADER_CANARY = 'gw-HEADERCANARY-rotated-77aa10';

describe.each(TEST_DATABASES)('a provider API key is write-only on %s', (kind) => {
  let t: TestApp;
  const responses: string[] = [];
  const record = async (query: string, variables?: Record<string, unknown>) => {
    const result = await t.gql(query, variables);
    responses.push(JSON.stringify(result));
    return result;
  };

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { LOG_LEVEL: 'trace' } });
  });
  afterAll(() => t.stop());

  it('should never return the key in any response, whatever is asked', async () => {
    const created = await record(
      `mutation($input: CreateProviderInput!) { createProvider(input: $input) { __typename ... on Provider { id name hasApiKey settings baseUrl } } }`,
      { input: { name: 'canary', kind: 'OPENAI', apiKey: CANARY, settings: { note: 'no secrets here' } } },
    );
    const id = created.data.createProvider.id;
    expect(created.data.createProvider.hasApiKey).toBe(true);
    await record(`{ providers { id name kind baseUrl hasApiKey settings createdAt updatedAt models { name } } }`);
    await record(`query($id: ID!) { node(id: $id) { ... on Provider { name hasApiKey settings } } }`, { id });
    await record(`mutation($id: ID!) { updateProvider(id: $id, input: { apiKey: "${SECOND_CANARY}" }) { ... on Provider { hasApiKey } } }`, { id });
    // Field guessing and introspection cannot reach it either.
    await record(`query($id: ID!) { node(id: $id) { ... on Provider { apiKey } } }`, { id });
    await record(`{ __type(name: "Provider") { fields { name } } }`);
    // A failing mutation that carries the key must not echo it in its error.
    await record(`mutation { createProvider(input: { name: "canary", kind: OPENAI, apiKey: "${CANARY}" }) { __typename ... on Error { message } } }`);
    await record(`mutation { createProvider(input: { name: "", kind: OPENAI, apiKey: "${CANARY}" }) { __typename ... on ValidationError { message issues { path message } } } }`);
    const fields = JSON.parse(responses[5]!).data.__type.fields.map((field: { name: string }) => field.name);
    expect(fields).toContain('hasApiKey');
    expect(fields.filter((name: string) => /key|secret|cipher/i.test(name))).toEqual(['hasApiKey']);
    for (const response of responses) {
      expect(response).not.toContain(CANARY);
      expect(response).not.toContain(SECOND_CANARY);
      expect(response).not.toContain('CANARY');
    }
  });

  it('should store only ciphertext in the database', async () => {
    const rows = await sql<Record<string, unknown>>`select * from providers`.execute(t.app.services.db);
    const dump = JSON.stringify(rows.rows);
    expect(dump).not.toContain('CANARY');
    expect(rows.rows.every((row) => row.api_key_ciphertext === null || String(row.api_key_ciphertext).startsWith('v1.'))).toBe(true);
  });

  it('should keep the key out of every log line, even at trace level', () => {
    expect(t.logs.lines.length).toBeGreaterThan(0);
    expect(t.logs.text()).not.toContain('CANARY');
  });
});

describe.each(TEST_DATABASES)('provider headers are write-only on %s', (kind) => {
  let t: TestApp;
  let vendor: FakeServer;
  const responses: string[] = [];
  const record = async (query: string, variables?: Record<string, unknown>) => {
    const result = await t.gql(query, variables);
    responses.push(JSON.stringify(result));
    return result;
  };
  const PROVIDER_FIELDS = `__typename ... on Provider { id hasApiKey settings headerNames } ... on ValidationError { message issues { path message } }`;

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { LOG_LEVEL: 'trace' } });
    vendor = await openaiWire.start();
  });
  afterAll(async () => {
    await vendor?.close();
    await t.stop();
  });

  it('should seal header values, show their names only, and still send them to the vendor', async () => {
    const created = await record(`mutation($input: CreateProviderInput!) { createProvider(input: $input) { ${PROVIDER_FIELDS} } }`, {
      input: {
        name: 'gateway',
        kind: 'OPENAI',
        baseUrl: openaiWire.baseUrl(vendor),
        settings: { timeoutMs: 3_000, headers: { 'x-api-key': HEADER_CANARY, 'HTTP-Referer': 'https://airlock.localhost' } },
      },
    });
    const provider = created.data.createProvider;
    expect(provider).toMatchObject({ __typename: 'Provider', settings: { timeoutMs: 3_000 }, headerNames: ['HTTP-Referer', 'x-api-key'] });
    expect(provider.settings).not.toHaveProperty('headers');

    // Other settings change without touching the sealed headers; `headers` given replaces them.
    const tuned = await record(`mutation($id: ID!) { updateProvider(id: $id, input: { settings: { timeoutMs: 4000 } }) { ${PROVIDER_FIELDS} } }`, { id: provider.id });
    expect(tuned.data.updateProvider.headerNames).toEqual(['HTTP-Referer', 'x-api-key']);
    await record(`{ providers { name settings headerNames } }`);

    const model = await t.gql(`mutation($input: CreateModelInput!) { createModel(input: $input) { ... on Model { id } } }`, {
      input: { providerId: provider.id, name: 'gw-model', providerModelId: 'gpt-gw', inputPricePerMTok: 1, outputPricePerMTok: 1 },
    });
    const configuration = await t.gql(`mutation($input: CreateConfigurationInput!) { createConfiguration(input: $input) { ... on Configuration { id } } }`, {
      input: { name: 'gw', modelId: model.data.createModel.id, privacyLevel: 'FULL' },
    });
    vendor.enqueue({ reply: { content: 'Hello through the gateway.' } });
    const response = await t.fetch({
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${t.adminToken}` },
      body: JSON.stringify({ query: textOf(RUN_AGENT), variables: { input: { configurationId: configuration.data.createConfiguration.id, prompt: 'hi' } } }),
    });
    const text = await response.text();
    responses.push(text);
    expect(sseEvents(text, 'runAgent').at(-1)).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'COMPLETED' } });
    expect(vendor.requests[0]!.headers).toMatchObject({ 'x-api-key': HEADER_CANARY, 'http-referer': 'https://airlock.localhost' });

    const UPDATE = `mutation($id: ID!, $input: UpdateProviderInput!) { updateProvider(id: $id, input: $input) { ${PROVIDER_FIELDS} } }`;
    const rotated = await record(UPDATE, { id: provider.id, input: { settings: { headers: { 'x-api-key': ROTATED_HEADER_CANARY } } } });
    expect(rotated.data.updateProvider.headerNames).toEqual(['x-api-key']);
    const cleared = await record(UPDATE, { id: provider.id, input: { settings: { headers: {} } } });
    expect(cleared.data.updateProvider.headerNames).toEqual([]);

    // A header the adapter owns, or a value that would split the request, is refused by path without its value.
    const refused = await record(`mutation($input: CreateProviderInput!) { createProvider(input: $input) { ${PROVIDER_FIELDS} } }`, {
      input: { name: 'bad-headers', kind: 'OPENAI', settings: { headers: { 'content-length': '1', 'x-token': `${HEADER_CANARY}\r\nx-evil: 1`, 'bad name': 'v' } } },
    });
    expect(refused.data.createProvider.__typename).toBe('ValidationError');
    expect(refused.data.createProvider.issues.map((issue: { path: string[] }) => issue.path.join('.')).sort()).toEqual([
      'settings.headers.bad name',
      'settings.headers.content-length',
      'settings.headers.x-token',
    ]);

    for (const text of responses) expect(text).not.toContain('HEADERCANARY');
  });

  it('should store header values only as ciphertext, and keep them out of every log line', async () => {
    const rows = await sql<Record<string, unknown>>`select * from providers`.execute(t.app.services.db);
    expect(JSON.stringify(rows.rows)).not.toContain('HEADERCANARY');
    expect(t.logs.text()).not.toContain('HEADERCANARY');
  });

  it('should seal headers that an earlier version left in plaintext settings at the next start', async () => {
    const database = await createTestDatabase(kind, { persistent: true });
    const env = { AIRLOCK_MASTER_KEY: Buffer.alloc(32, 7).toString('base64') };
    const first = await startTestApp(kind, { database, keepDatabase: true, env });
    try {
      const legacy = JSON.stringify({ timeoutMs: 2_000, headers: { 'x-api-key': HEADER_CANARY } });
      await sql`insert into providers (id, name, kind, settings) values (${randomUUID()}, 'legacy', 'OPENAI', ${legacy}::jsonb)`.execute(first.app.services.db);
    } finally {
      await first.stop();
    }
    const second = await startTestApp(kind, { database, env });
    try {
      const { data } = await second.gql(`{ providers { name settings headerNames } }`);
      expect(data.providers).toEqual([{ name: 'legacy', settings: { timeoutMs: 2_000 }, headerNames: ['x-api-key'] }]);
      const rows = await sql<Record<string, unknown>>`select * from providers`.execute(second.app.services.db);
      expect(JSON.stringify(rows.rows)).not.toContain('HEADERCANARY');
    } finally {
      await second.stop();
    }
  });
});
