import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { LogCollector, startTestApp, type TestApp } from '../helpers/app.ts';

describe.each(TEST_DATABASES)('authentication and authorisation on %s', (kind) => {
  let t: TestApp;
  let userToken: string;
  beforeAll(async () => {
    t = await startTestApp(kind);
    const created = await t.gql(`mutation { createUser(input: { name: "alice" }) { ... on CreateUserPayload { token } } }`);
    userToken = created.data.createUser.token;
  });
  afterAll(() => t.stop());

  it('should answer an anonymous request with UNAUTHENTICATED and no data', async () => {
    const result = await t.gql('{ viewer { name } }', {}, null);
    expect(result.data?.viewer ?? null).toBeNull();
    expect(result.errors?.[0]).toMatchObject({
      message: expect.stringContaining('Authentication required'),
      extensions: { code: 'UNAUTHENTICATED' },
    });
  });

  it.each([
    ['{ __typename }'],
    ['{ __schema { queryType { name } } }'],
    ['{ __type(name: "Run") { name } }'],
    ['query Named { __typename }'],
    ['mutation { __typename }'],
  ])('should refuse an anonymous %s with UNAUTHENTICATED and no data (meta fields have no auth scope of their own)', async (query) => {
    const result = await t.gql(query, {}, null);
    expect(result.data ?? null).toBeNull();
    expect(result.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }) })]);
    expect((await t.gql(query, {}, 'not-a-real-token')).errors?.[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('should still answer { __typename } for a user', async () => {
    expect((await t.gql('{ __typename }', {}, userToken)).data).toEqual({ __typename: 'Query' });
  });

  it('should treat an unknown token like no token', async () => {
    const result = await t.gql('{ configurations { name } }', {}, 'not-a-real-token');
    expect(result.errors?.[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('should accept the scheme in any case and reject other schemes', async () => {
    const lower = await t.fetch({
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `bearer ${t.adminToken}` },
      body: JSON.stringify({ query: '{ viewer { name } }' }),
    });
    expect((await lower.json()).data.viewer.name).toBe('admin');
    const basic = await t.fetch({
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${t.adminToken}` },
      body: JSON.stringify({ query: '{ viewer { name } }' }),
    });
    expect((await basic.json()).errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('should show the admin to itself', async () => {
    expect((await t.gql('{ viewer { name isAdmin } }')).data).toEqual({ viewer: { name: 'admin', isAdmin: true } });
  });

  it('should let a user read their own viewer and the configurations', async () => {
    const result = await t.gql('{ viewer { name isAdmin } configurations { name } tools { name } }', {}, userToken);
    expect(result.errors).toBeUndefined();
    expect(result.data.viewer).toEqual({ name: 'alice', isAdmin: false });
  });

  it('should answer FORBIDDEN when a user calls an admin query or mutation', async () => {
    const query = await t.gql('{ providers { name } }', {}, userToken);
    expect(query.errors?.[0].extensions.code).toBe('FORBIDDEN');
    const mutation = await t.gql('mutation { setToolGroupEnabled(name: "system", enabled: false) { name } }', {}, userToken);
    expect(mutation.errors?.[0].extensions.code).toBe('FORBIDDEN');
    expect(mutation.data).toBeNull();
    const state = await t.gql('{ toolGroups { name overridden } }');
    expect(state.data.toolGroups.filter((group: { overridden: boolean }) => group.overridden)).toEqual([]);
  });

  it('should not let a user read another user through node()', async () => {
    const admin = await t.gql('{ viewer { id } }');
    const result = await t.gql('query($id: ID!) { node(id: $id) { id ... on User { name } } }', { id: admin.data.viewer.id }, userToken);
    expect(result.errors?.[0].extensions.code).toBe('FORBIDDEN');
    const own = await t.gql('{ viewer { id } }', {}, userToken);
    const self = await t.gql('query($id: ID!) { node(id: $id) { ... on User { name } } }', { id: own.data.viewer.id }, userToken);
    expect(self.data.node).toEqual({ name: 'alice' });
  });

  it('should never store a token in the clear', async () => {
    const rows = await t.app.services.db.selectFrom('users').select(['name', 'token_hash']).execute();
    for (const row of rows) {
      expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(row.token_hash).not.toBe(userToken);
    }
    expect(t.logs.text()).not.toContain(userToken);
    expect(t.logs.text()).not.toContain(t.adminToken);
  });
});

describe('admin bootstrap', () => {
  it('should create an admin with a generated token on an empty database, only once', async () => {
    const config = loadConfig({ AIRLOCK_DATA_DIR: 'memory://', LOG_LEVEL: 'silent', PORT: '0' });
    const app = await createApp(config, { logDestination: new LogCollector() });
    try {
      expect(app.admin.kind).toBe('generated');
      if (app.admin.kind !== 'generated') return;
      const response = await app.server.yoga.fetch('http://localhost/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${app.admin.token}` },
        body: JSON.stringify({ query: '{ viewer { name isAdmin } }' }),
      });
      expect((await response.json()).data.viewer).toEqual({ name: 'admin', isAdmin: true });
    } finally {
      await app.stop();
    }
  });

  it.each(TEST_DATABASES)('should rotate the admin to a newly configured AIRLOCK_ADMIN_TOKEN on %s', async (kind) => {
    const first = await startTestApp(kind, { database: await createTestDatabase(kind, { persistent: true }), keepDatabase: true });
    await first.stop();
    const second = await startTestApp(kind, { database: first.database });
    try {
      expect(second.adminToken).not.toBe(first.adminToken);
      expect((await second.gql('{ viewer { name isAdmin } }')).data.viewer).toEqual({ name: 'admin', isAdmin: true });
      expect((await second.gql('{ viewer { name } }', {}, first.adminToken)).errors?.[0].extensions.code).toBe('UNAUTHENTICATED');
      expect(second.app.admin.kind).toBe('configured');
    } finally {
      await second.stop();
    }
  });

  it.each(TEST_DATABASES)('should restore a deactivated, demoted holder of AIRLOCK_ADMIN_TOKEN to an active admin at start on %s', async (kind) => {
    const first = await startTestApp(kind, { database: await createTestDatabase(kind, { persistent: true }), keepDatabase: true });
    // The API keeps the last active admin; an operator editing the database (or another admin) may not.
    await first.app.services.db.updateTable('users').set({ active: false, is_admin: false }).where('name', '=', 'admin').execute();
    expect((await first.gql('{ viewer { name } }')).errors?.[0].extensions.code).toBe('UNAUTHENTICATED');
    await first.stop();
    const second = await startTestApp(kind, { database: first.database, env: { AIRLOCK_ADMIN_TOKEN: first.adminToken } });
    try {
      expect((await second.gql('{ viewer { name isAdmin active } }')).data.viewer).toEqual({ name: 'admin', isAdmin: true, active: true });
    } finally {
      await second.stop();
    }
  });
});

