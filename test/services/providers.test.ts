import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';

const RESULT = `__typename ... on Provider { id kind settings } ... on ValidationError { message issues { path message } }`;

describe.each(TEST_DATABASES)('provider settings on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(() => t.stop());

  const create = (input: Record<string, unknown>) =>
    t.gql(`mutation($input: CreateProviderInput!) { createProvider(input: $input) { ${RESULT} } }`, { input }).then((result) => result.data.createProvider);
  const update = (id: string, input: Record<string, unknown>) =>
    t.gql(`mutation($id: ID!, $input: UpdateProviderInput!) { updateProvider(id: $id, input: $input) { ${RESULT} } }`, { id, input }).then((result) => result.data.updateProvider);

  it('should refuse settings an HTTP adapter cannot use, by path, without echoing the values', async () => {
    const refused = await create({ name: 'bad-http', kind: 'OPENAI', settings: { timeoutMs: -1, headers: { 'x-canary': 4242 } } });
    expect(refused.__typename).toBe('ValidationError');
    expect(refused.issues.map((issue: { path: string[] }) => issue.path.join('.'))).toEqual(['settings.timeoutMs', 'settings.headers.x-canary']);
    expect(JSON.stringify(refused)).not.toContain('4242');
  });

  it('should refuse a script the SCRIPTED provider cannot play', async () => {
    const refused = await create({ name: 'bad-script', kind: 'SCRIPTED', settings: { replies: [{ toolCalls: 'describe_tables' }] } });
    expect(refused.__typename).toBe('ValidationError');
    expect(refused.issues[0].path).toEqual(['settings', 'replies', '0', 'toolCalls']);
  });

  it('should check an update against the kind that will be stored', async () => {
    const created = await create({ name: 'good', kind: 'OPENAI', settings: { timeoutMs: 5_000, headers: { 'HTTP-Referer': 'airlock' } } });
    expect(created.__typename).toBe('Provider');
    expect((await update(created.id, { settings: { timeoutMs: 'soon' } })).__typename).toBe('ValidationError');
    expect((await update(created.id, { kind: 'SCRIPTED', settings: { delayMs: -5 } })).__typename).toBe('ValidationError');
    const changed = await update(created.id, { settings: { timeoutMs: 9_000 } });
    expect(changed).toMatchObject({ __typename: 'Provider', settings: { timeoutMs: 9_000 } });
    expect((await update(created.id, { kind: 'SCRIPTED' })).__typename).toBe('Provider');
  });

  it.each([
    ['a pasted Unicode ellipsis', 'sk-canary12345…'],
    ['a trailing line break', 'sk-canary12345\n'],
    ['an inner space', 'sk-canary 12345'],
  ])('should refuse an API key with %s by its field, without echoing it, on create and update', async (_what, apiKey) => {
    const refused = await create({ name: 'bad-key', kind: 'OPENAI', apiKey });
    expect(refused.__typename).toBe('ValidationError');
    expect(refused.issues.map((issue: { path: string[] }) => issue.path.join('.'))).toEqual(['apiKey']);
    expect(JSON.stringify(refused)).not.toContain('canary12345');
    const created = await create({ name: 'good-key', kind: 'OPENAI', apiKey: 'sk-canary12345' });
    expect(created.__typename).toBe('Provider');
    const updated = await update(created.id, { apiKey });
    expect(updated.__typename).toBe('ValidationError');
    expect(updated.issues[0].path).toEqual(['apiKey']);
    await t.gql('mutation($id: ID!) { deleteProvider(id: $id) { __typename } }', { id: created.id });
  });

  it('should refuse a header value HTTP cannot carry (beyond U+00FF) by its path', async () => {
    const refused = await create({ name: 'bad-header', kind: 'OPENAI', settings: { headers: { 'x-api-key': 'gw-key…' } } });
    expect(refused.__typename).toBe('ValidationError');
    expect(refused.issues[0].path).toEqual(['settings', 'headers', 'x-api-key']);
  });
});
