import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const CANARY = 'sk-proj-CANARY-7f3a9c1e5b2d4f60a8e7';
const SECOND_CANARY = 'sk-ant-CANARY-second-41d2b9';

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
