import { describe, expect, it } from 'vitest';
import { createTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { startTestApp } from '../helpers/app.ts';

describe.each(TEST_DATABASES)('state across a restart on %s', (kind) => {
  it('should keep group and tool switches, and read stored API keys, after restarting on the same data', async () => {
    const database = await createTestDatabase(kind, { persistent: true });
    const masterKey = Buffer.alloc(32, 3).toString('base64');
    const first = await startTestApp(kind, { database, keepDatabase: true, env: { AIRLOCK_MASTER_KEY: masterKey } });
    try {
      await first.gql(`mutation {
        a: setToolGroupEnabled(name: "system", enabled: false) { name }
        b: setToolEnabled(name: "get_env_raw", enabled: true) { name }
        c: setToolEnabled(name: "describe_tables", enabled: false) { name }
        d: createProvider(input: { name: "p", kind: OPENAI, apiKey: "sk-restart-key-123" }) { __typename }
      }`);
    } finally {
      await first.stop();
    }
    const second = await startTestApp(kind, { database, env: { AIRLOCK_MASTER_KEY: masterKey } });
    try {
      const result = await second.gql(`{ toolGroups { name enabled overridden } tools { name enabled toolEnabled overridden } }`);
      expect(result.data.toolGroups).toContainEqual({ name: 'system', enabled: false, overridden: true });
      const tools = new Map(result.data.tools.map((tool: { name: string }) => [tool.name, tool]));
      expect(tools.get('get_env_raw')).toEqual({ name: 'get_env_raw', enabled: false, toolEnabled: true, overridden: true });
      expect(tools.get('describe_tables')).toEqual({ name: 'describe_tables', enabled: false, toolEnabled: false, overridden: true });
      expect(tools.get('read_records')).toMatchObject({ enabled: true, overridden: false });
      const [row] = await second.app.services.db.selectFrom('providers').selectAll().execute();
      expect(second.app.services.secrets.open(row!.api_key_ciphertext!, `provider:${row!.id}:api_key`)).toBe('sk-restart-key-123');
    } finally {
      await second.stop();
    }
  });
});
