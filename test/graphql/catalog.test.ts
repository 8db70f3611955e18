import { decodeGlobalID } from '@pothos/plugin-relay';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRecords } from '../../src/db/repositories/records-seed.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const PROVIDER_FIELDS = `... on Provider { id name kind baseUrl hasApiKey settings } ... on Error { __typename message } ... on ValidationError { issues { path message } }`;

describe.each(TEST_DATABASES)('catalogue mutations on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(() => t.stop());

  const createProvider = (input: Record<string, unknown>) =>
    t.gql(`mutation($input: CreateProviderInput!) { createProvider(input: $input) { __typename ${PROVIDER_FIELDS} } }`, { input });

  describe('providers', () => {
    it('should create a provider and expose only whether it has a key', async () => {
      const result = await createProvider({ name: 'openai', kind: 'OPENAI', baseUrl: 'https://api.example.test/v1', apiKey: 'sk-test-1', settings: { timeoutMs: 30000 } });
      expect(result.errors).toBeUndefined();
      expect(result.data.createProvider).toMatchObject({
        __typename: 'Provider',
        name: 'openai',
        kind: 'OPENAI',
        baseUrl: 'https://api.example.test/v1',
        hasApiKey: true,
        settings: { timeoutMs: 30000 },
      });
    });

    it('should refuse invalid input with a typed ValidationError naming the fields', async () => {
      const result = await createProvider({ name: '  ', kind: 'OPENAI', baseUrl: 'ftp://x' });
      expect(result.data.createProvider.__typename).toBe('ValidationError');
      const paths = result.data.createProvider.issues.map((issue: { path: string[] }) => issue.path.join('.'));
      expect(paths).toEqual(expect.arrayContaining(['name', 'baseUrl']));
    });

    it('should refuse credentials in the base URL so they cannot become readable', async () => {
      const result = await createProvider({ name: 'creds', kind: 'OPENAI', baseUrl: 'https://user:hunter2-canary@api.example.test' });
      expect(result.data.createProvider.__typename).toBe('ValidationError');
      expect(JSON.stringify(result)).not.toContain('hunter2-canary');
    });

    it('should answer a duplicate name with a ConflictError', async () => {
      const result = await createProvider({ name: 'openai', kind: 'OPENAI' });
      expect(result.data.createProvider).toMatchObject({ __typename: 'ConflictError', message: expect.stringContaining('already exists') });
    });

    it('should reject an unknown kind at the GraphQL layer', async () => {
      const result = await createProvider({ name: 'x', kind: 'NOPE' });
      expect(result.errors?.[0].message).toContain('NOPE');
    });

    it('should update fields, keep the key when absent and remove it on explicit null', async () => {
      const created = await createProvider({ name: 'anthropic', kind: 'ANTHROPIC', apiKey: 'sk-ant-1' });
      const id = created.data.createProvider.id;
      const update = (input: Record<string, unknown>) =>
        t.gql(`mutation($id: ID!, $input: UpdateProviderInput!) { updateProvider(id: $id, input: $input) { __typename ${PROVIDER_FIELDS} } }`, { id, input });
      expect((await update({ name: 'anthropic-2' })).data.updateProvider).toMatchObject({ name: 'anthropic-2', hasApiKey: true });
      expect((await update({ apiKey: null })).data.updateProvider).toMatchObject({ hasApiKey: false });
      expect((await update({ apiKey: 'sk-ant-2', baseUrl: 'http://127.0.0.1:9999' })).data.updateProvider).toMatchObject({
        hasApiKey: true,
        baseUrl: 'http://127.0.0.1:9999',
      });
      expect((await update({ baseUrl: null })).data.updateProvider.baseUrl).toBeNull();
    });

    it('should answer an unknown provider id with a NotFoundError', async () => {
      const { data } = await t.gql(`{ viewer { id } }`);
      const missing = Buffer.from('Provider:00000000-0000-4000-8000-000000000000').toString('base64');
      const result = await t.gql(`mutation($id: ID!) { updateProvider(id: $id, input: { name: "x" }) { __typename } deleteProvider(id: $id) { __typename } }`, { id: missing });
      expect(result.data).toEqual({ updateProvider: { __typename: 'NotFoundError' }, deleteProvider: { __typename: 'NotFoundError' } });
      const wrongType = await t.gql(`mutation($id: ID!) { deleteProvider(id: $id) { __typename } }`, { id: data.viewer.id });
      expect(wrongType.errors?.[0].message).toMatch(/Provider/);
    });
  });

  describe('models, skills, configurations', () => {
    let providerId: string;
    let modelId: string;
    let skillIds: string[];
    let configurationId: string;

    beforeAll(async () => {
      providerId = (await createProvider({ name: 'scripted', kind: 'SCRIPTED' })).data.createProvider.id;
    });

    it('should create a priced model of a provider', async () => {
      const result = await t.gql(
        `mutation($input: CreateModelInput!) { createModel(input: $input) { __typename ... on Model { id name providerModelId inputPricePerMTok outputPricePerMTok maxTokens provider { name } } } }`,
        { input: { providerId, name: 'gpt', providerModelId: 'gpt-4o-2024-08-06', inputPricePerMTok: 2.5, outputPricePerMTok: 10, maxTokens: 4096 } },
      );
      expect(result.data.createModel).toMatchObject({
        __typename: 'Model',
        name: 'gpt',
        providerModelId: 'gpt-4o-2024-08-06',
        inputPricePerMTok: 2.5,
        outputPricePerMTok: 10,
        maxTokens: 4096,
        provider: { name: 'scripted' },
      });
      modelId = result.data.createModel.id;
    });

    it('should refuse a model of an unknown provider and negative prices', async () => {
      const missing = await t.gql(`mutation { createModel(input: { providerId: "bm9wZQ==", name: "m2", providerModelId: "x" }) { __typename } }`);
      expect(missing.data.createModel.__typename).toBe('NotFoundError');
      const negative = await t.gql(
        `mutation($p: ID!) { createModel(input: { providerId: $p, name: "m3", providerModelId: "x", inputPricePerMTok: -1 }) { __typename ... on ValidationError { issues { path } } } }`,
        { p: providerId },
      );
      expect(negative.data.createModel).toEqual({ __typename: 'ValidationError', issues: [{ path: ['inputPricePerMTok'] }] });
    });

    it('should create skills with and without a tool opinion', async () => {
      const create = (input: Record<string, unknown>) =>
        t.gql(`mutation($input: CreateSkillInput!) { createSkill(input: $input) { __typename ... on Skill { id name allowedTools trustLevel enabled } } }`, { input });
      const open = await create({ name: 'writer', body: 'Write well.' });
      const strict = await create({ name: 'reader', body: 'Read only.', allowedTools: ['read_records', 'read_records'], trustLevel: 3 });
      expect(open.data.createSkill).toMatchObject({ allowedTools: null, trustLevel: 0, enabled: true });
      expect(strict.data.createSkill).toMatchObject({ allowedTools: ['read_records'], trustLevel: 3 });
      skillIds = [open.data.createSkill.id, strict.data.createSkill.id];
      const none = await create({ name: 'none', body: 'x', allowedTools: [] });
      expect(none.data.createSkill.allowedTools).toEqual([]);
      const bad = await create({ name: 'bad', body: 'x', trustLevel: 101 });
      expect(bad.data.createSkill.__typename).toBe('ValidationError');
    });

    it('should update and delete a skill', async () => {
      const created = await t.gql(`mutation { createSkill(input: { name: "temp", body: "b" }) { ... on Skill { id } } }`);
      const id = created.data.createSkill.id;
      const updated = await t.gql(`mutation($id: ID!) { updateSkill(id: $id, input: { enabled: false, allowedTools: ["describe_tables"] }) { ... on Skill { enabled allowedTools } } }`, { id });
      expect(updated.data.updateSkill).toEqual({ enabled: false, allowedTools: ['describe_tables'] });
      const cleared = await t.gql(`mutation($id: ID!) { updateSkill(id: $id, input: { allowedTools: null }) { ... on Skill { allowedTools } } }`, { id });
      expect(cleared.data.updateSkill.allowedTools).toBeNull();
      const deleted = await t.gql(`mutation($id: ID!) { deleteSkill(id: $id) { __typename ... on Deleted { id } } }`, { id });
      expect(deleted.data.deleteSkill).toEqual({ __typename: 'Deleted', id });
      const again = await t.gql(`mutation($id: ID!) { deleteSkill(id: $id) { __typename } }`, { id });
      expect(again.data.deleteSkill.__typename).toBe('NotFoundError');
    });

    it('should create a configuration with the documented defaults', async () => {
      const result = await t.gql(
        `mutation($input: CreateConfigurationInput!) { createConfiguration(input: $input) { __typename ... on Configuration {
          id name maxIterations privacyLevel trustFloor quarantineToolOutput allowedToolGroups temperature systemPrompt
          model { name } skills { name } } } }`,
        { input: { name: 'support', modelId, skillIds, allowedToolGroups: ['content', 'structure'] } },
      );
      expect(result.data.createConfiguration).toMatchObject({
        __typename: 'Configuration',
        name: 'support',
        maxIterations: 5,
        privacyLevel: 'METADATA',
        trustFloor: 0,
        quarantineToolOutput: false,
        allowedToolGroups: ['content', 'structure'],
        temperature: null,
        systemPrompt: '',
        model: { name: 'gpt' },
        skills: [{ name: 'writer' }, { name: 'reader' }],
      });
      configurationId = result.data.createConfiguration.id;
    });

    it('should refuse a configuration with an unknown model or skill, or out-of-range values', async () => {
      const unknownSkill = Buffer.from('Skill:00000000-0000-4000-8000-000000000000').toString('base64');
      const result = await t.gql(
        `mutation($m: ID!, $s: ID!) {
          a: createConfiguration(input: { name: "a", modelId: "bm9wZQ==" }) { __typename }
          b: createConfiguration(input: { name: "b", modelId: $m, skillIds: [$s] }) { __typename ... on NotFoundError { id } }
          c: createConfiguration(input: { name: "c", modelId: $m, maxIterations: 0, temperature: 3 }) { __typename ... on ValidationError { issues { path } } }
        }`,
        { m: modelId, s: unknownSkill },
      );
      expect(result.data.a.__typename).toBe('NotFoundError');
      expect(result.data.b.__typename).toBe('NotFoundError');
      expect(result.data.c.issues.map((issue: { path: string[] }) => issue.path[0]).sort()).toEqual(['maxIterations', 'temperature']);
    });

    it('should update a configuration, replacing skills in order', async () => {
      const result = await t.gql(
        `mutation($id: ID!, $skills: [ID!]) { updateConfiguration(id: $id, input: { maxIterations: 8, privacyLevel: FULL, skillIds: $skills, temperature: 0.2 }) {
          ... on Configuration { maxIterations privacyLevel temperature skills { name } } } }`,
        { id: configurationId, skills: [skillIds[1]] },
      );
      expect(result.data.updateConfiguration).toEqual({ maxIterations: 8, privacyLevel: 'FULL', temperature: 0.2, skills: [{ name: 'reader' }] });
    });

    it('should let a user read configurations and models but not providers', async () => {
      const user = await t.gql(`mutation { createUser(input: { name: "reader-user" }) { ... on CreateUserPayload { token } } }`);
      const token = user.data.createUser.token;
      const result = await t.gql(`{ configurations { name model { name provider { name } } } models { name } }`, {}, token);
      expect(result.errors).toBeUndefined();
      expect(result.data.configurations[0]).toEqual({ name: 'support', model: { name: 'gpt', provider: null } });
      const denied = await t.gql(`mutation { createSkill(input: { name: "u", body: "b" }) { __typename } }`, {}, token);
      expect(denied.errors?.[0].extensions.code).toBe('FORBIDDEN');
    });

    it('should delete a configuration with its budgets, leaving other budgets alone', async () => {
      const model = await t.gql(`{ models { id } }`);
      const created = await t.gql(`mutation($m: ID!) { createConfiguration(input: { name: "budgeted", modelId: $m }) { ... on Configuration { id } } }`, { m: model.data.models[0].id });
      const doomed = created.data.createConfiguration.id;
      const SET = `mutation($s: ID!) { setBudget(input: { subjectId: $s, period: DAILY, maxRequests: 5 }) { __typename } }`;
      expect((await t.gql(SET, { s: doomed })).data.setBudget.__typename).toBe('Budget');
      expect((await t.gql(SET, { s: configurationId })).data.setBudget.__typename).toBe('Budget');
      const subjects = async () => (await t.app.services.db.selectFrom('budgets').select('subject_id').where('scope', '=', 'CONFIGURATION').execute()).map((row) => row.subject_id);
      expect(await t.gql(`mutation($c: ID!) { deleteConfiguration(id: $c) { __typename } }`, { c: doomed })).toEqual({ data: { deleteConfiguration: { __typename: 'Deleted' } } });
      const left = await subjects();
      expect(left).not.toContain(decodeGlobalID(doomed).id);
      expect(left).toContain(decodeGlobalID(configurationId).id);
    });

    it('should refuse to delete a model or provider still in use, then delete in order', async () => {
      const modelInUse = await t.gql(`mutation($id: ID!) { deleteModel(id: $id) { __typename ... on Error { message } } }`, { id: modelId });
      expect(modelInUse.data.deleteModel.__typename).toBe('ConflictError');
      const providerInUse = await t.gql(`mutation($id: ID!) { deleteProvider(id: $id) { __typename } }`, { id: providerId });
      expect(providerInUse.data.deleteProvider.__typename).toBe('ConflictError');
      const steps = await t.gql(
        `mutation($c: ID!, $m: ID!, $p: ID!) {
          c: deleteConfiguration(id: $c) { __typename }
          m: deleteModel(id: $m) { __typename }
          p: deleteProvider(id: $p) { __typename }
        }`,
        { c: configurationId, m: modelId, p: providerId },
      );
      expect(steps.data).toEqual({ c: { __typename: 'Deleted' }, m: { __typename: 'Deleted' }, p: { __typename: 'Deleted' } });
    });
  });

  describe('users, grants and budgets', () => {
    let userId: string;

    it('should create a user whose token works once shown, and refuse a duplicate name', async () => {
      const result = await t.gql(`mutation { createUser(input: { name: "bob", isAdmin: false }) { __typename ... on CreateUserPayload { token user { id name isAdmin } } } }`);
      expect(result.data.createUser.user).toMatchObject({ name: 'bob', isAdmin: false });
      userId = result.data.createUser.user.id;
      const viewer = await t.gql('{ viewer { name } }', {}, result.data.createUser.token);
      expect(viewer.data.viewer.name).toBe('bob');
      const duplicate = await t.gql(`mutation { createUser(input: { name: "bob" }) { __typename } }`);
      expect(duplicate.data.createUser.__typename).toBe('ConflictError');
      const empty = await t.gql(`mutation { createUser(input: { name: "" }) { __typename } }`);
      expect(empty.data.createUser.__typename).toBe('ValidationError');
    });

    it('should grant and revoke tables', async () => {
      await seedRecords(t.app.services.db); // a grant names a table that exists
      const granted = await t.gql(
        `mutation($id: ID!) { grantTable(userId: $id, table: "customers") { ... on User { tableGrants { table mode } } } w: grantTable(userId: $id, table: "orders", mode: WRITE) { ... on User { tableGrants { table mode } } } }`,
        { id: userId },
      );
      expect(granted.data.w.tableGrants).toEqual([
        { table: 'customers', mode: 'READ' },
        { table: 'orders', mode: 'WRITE' },
      ]);
      const revoked = await t.gql(`mutation($id: ID!) { revokeTable(userId: $id, table: "orders") { ... on User { tableGrants { table } } } }`, { id: userId });
      expect(revoked.data.revokeTable.tableGrants).toEqual([{ table: 'customers' }]);
      const bad = await t.gql(`mutation($id: ID!) { grantTable(userId: $id, table: "x; drop table users") { __typename } }`, { id: userId });
      expect(bad.data.grantTable.__typename).toBe('ValidationError');
      const missing = Buffer.from('User:00000000-0000-4000-8000-000000000000').toString('base64');
      expect((await t.gql(`mutation($id: ID!) { grantTable(userId: $id, table: "t") { __typename } }`, { id: missing })).data.grantTable.__typename).toBe('NotFoundError');
    });

    it('should set and replace a budget of a user, and refuse other subjects', async () => {
      const set = (input: Record<string, unknown>) =>
        t.gql(`mutation($input: SetBudgetInput!) { setBudget(input: $input) { __typename ... on Budget { scope subjectId period maxRequests maxTokens maxCost } } }`, { input });
      expect((await set({ subjectId: userId, period: 'DAILY', maxRequests: 100, maxCost: 1.5 })).data.setBudget).toEqual({
        __typename: 'Budget',
        scope: 'USER',
        subjectId: userId,
        period: 'DAILY',
        maxRequests: 100,
        maxTokens: 0,
        maxCost: 1.5,
      });
      await set({ subjectId: userId, period: 'DAILY', maxTokens: 5000 });
      const budgets = await t.gql('{ budgets { period maxRequests maxTokens } }');
      expect(budgets.data.budgets).toEqual([{ period: 'DAILY', maxRequests: 0, maxTokens: 5000 }]);
      expect((await set({ subjectId: 'bm9wZQ==', period: 'MONTHLY' })).data.setBudget.__typename).toBe('ValidationError');
      expect((await set({ subjectId: userId, period: 'MONTHLY', maxCost: -1 })).data.setBudget.__typename).toBe('ValidationError');
    });
  });

  describe('tool switches', () => {
    it('should switch a group off and on, and reset it', async () => {
      const off = await t.gql(`mutation { setToolGroupEnabled(name: "system", enabled: false) { name enabled overridden tools { name enabled groupEnabled toolEnabled } } }`);
      expect(off.data.setToolGroupEnabled).toMatchObject({ name: 'system', enabled: false, overridden: true });
      for (const tool of off.data.setToolGroupEnabled.tools) expect(tool).toMatchObject({ enabled: false, groupEnabled: false });
      const reset = await t.gql(`mutation { resetToolGroup(name: "system") { enabled overridden } }`);
      expect(reset.data.resetToolGroup).toEqual({ enabled: true, overridden: false });
    });

    it('should accept a group nobody installed yet (it covers tools installed later)', async () => {
      const result = await t.gql(`mutation { setToolGroupEnabled(name: "future-plugins", enabled: false) { name enabled tools { name } } }`);
      expect(result.data.setToolGroupEnabled).toEqual({ name: 'future-plugins', enabled: false, tools: [] });
      const groups = await t.gql('{ toolGroups { name enabled } }');
      expect(groups.data.toolGroups).toContainEqual({ name: 'future-plugins', enabled: false });
    });

    it('should never re-enable a tool inside a disabled group', async () => {
      await t.gql(`mutation { setToolGroupEnabled(name: "content", enabled: false) { name } }`);
      const result = await t.gql(`mutation { setToolEnabled(name: "read_records", enabled: true) { name enabled toolEnabled groupEnabled overridden } }`);
      expect(result.data.setToolEnabled).toEqual({ name: 'read_records', enabled: false, toolEnabled: true, groupEnabled: false, overridden: true });
      const reset = await t.gql(`mutation { resetTool(name: "read_records") { overridden toolEnabled } resetToolGroup(name: "content") { enabled } }`);
      expect(reset.data).toEqual({ resetTool: { overridden: false, toolEnabled: true }, resetToolGroup: { enabled: true } });
    });

    it('should answer an unknown tool with NOT_FOUND', async () => {
      const result = await t.gql(`mutation { setToolEnabled(name: "no_such_tool", enabled: true) { name } }`);
      expect(result.errors?.[0]).toMatchObject({ message: 'Tool "no_such_tool" not found.', extensions: { code: 'NOT_FOUND' } });
    });

    it('should list every tool with its JSON Schema parameters', async () => {
      const result = await t.gql('{ tools { name group parameters enabledByDefault requiresAdmin enabled } }');
      const readRecords = result.data.tools.find((tool: { name: string }) => tool.name === 'read_records');
      expect(readRecords).toMatchObject({ group: 'content', enabledByDefault: true, requiresAdmin: false, enabled: true });
      expect(readRecords.parameters).toMatchObject({ type: 'object', properties: expect.objectContaining({ table: expect.any(Object) }) });
      const raw = result.data.tools.find((tool: { name: string }) => tool.name === 'get_env_raw');
      expect(raw).toMatchObject({ enabledByDefault: false, requiresAdmin: true, enabled: false });
    });
  });
});
