import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

describe.each(TEST_DATABASES)('Configuration.toolDecisions on %s', (kind) => {
  let t: TestApp;
  let configurationId: string;
  let userId: string;
  let userToken: string;

  beforeAll(async () => {
    t = await startTestApp(kind);
    const setup = await t.gql(`mutation {
      p: createProvider(input: { name: "p", kind: SCRIPTED }) { ... on Provider { id } }
      s: createSkill(input: { name: "ops", body: "Operate.", allowedTools: ["read_records", "get_env", "get_env_raw", "list_users"] }) { ... on Skill { id } }
      u: createUser(input: { name: "carol" }) { ... on CreateUserPayload { token user { id } } }
    }`);
    userId = setup.data.u.user.id;
    userToken = setup.data.u.token;
    const model = await t.gql(`mutation($p: ID!) { createModel(input: { providerId: $p, name: "m", providerModelId: "m" }) { ... on Model { id } } }`, { p: setup.data.p.id });
    const configuration = await t.gql(
      `mutation($m: ID!, $s: ID!) { createConfiguration(input: { name: "ops", modelId: $m, skillIds: [$s], allowedToolGroups: ["content", "system"] }) { ... on Configuration { id } } }`,
      { m: model.data.createModel.id, s: setup.data.s.id },
    );
    configurationId = configuration.data.createConfiguration.id;
  });
  afterAll(() => t.stop());

  const decisions = async (asUser?: string) => {
    const result = await t.gql(
      `query($id: ID!, $asUser: ID) { configuration(id: $id) { toolDecisions(asUser: $asUser) { toolName group offered reason } } }`,
      { id: configurationId, asUser },
    );
    expect(result.errors).toBeUndefined();
    return new Map(result.data.configuration.toolDecisions.map((decision: { toolName: string }) => [decision.toolName, decision]));
  };

  it('should explain every registered tool for the admin viewer, first failing reason only', async () => {
    const byName = await decisions();
    expect(byName.get('read_records')).toEqual({ toolName: 'read_records', group: 'content', offered: true, reason: null });
    expect(byName.get('get_env')).toMatchObject({ offered: true, reason: null });
    expect(byName.get('get_env_raw')).toMatchObject({ offered: false, reason: 'TOOL_DISABLED' });
    expect(byName.get('list_users')).toMatchObject({ offered: false, reason: 'NOT_ALLOWED' });
    expect(byName.get('describe_tables')).toMatchObject({ offered: false, reason: 'NOT_ALLOWED' });
  });

  it('should explain as another user when asked', async () => {
    const byName = await decisions(userId);
    expect(byName.get('get_env')).toMatchObject({ offered: false, reason: 'REQUIRES_ADMIN' });
    expect(byName.get('read_records')).toMatchObject({ offered: true });
  });

  it('should follow the switches: a disabled group refuses its tools even with an enabling override', async () => {
    await t.gql(`mutation { setToolGroupEnabled(name: "content", enabled: false) { name } setToolEnabled(name: "read_records", enabled: true) { name } }`);
    expect((await decisions()).get('read_records')).toMatchObject({ offered: false, reason: 'TOOL_DISABLED' });
    await t.gql(`mutation { resetToolGroup(name: "content") { name } resetTool(name: "read_records") { name } }`);
    expect((await decisions()).get('read_records')).toMatchObject({ offered: true });
  });

  it('should be admin-only', async () => {
    const result = await t.gql(`query($id: ID!) { configuration(id: $id) { name toolDecisions { toolName } } }`, { id: configurationId }, userToken);
    expect(result.errors?.[0].extensions.code).toBe('FORBIDDEN');
  });

  it('should answer null, not an error, for a node id that cannot name a row', async () => {
    const bogus = Buffer.from('Configuration:not-a-uuid').toString('base64');
    const result = await t.gql(`query($id: ID!) { node(id: $id) { id } configuration(id: $id) { name } }`, { id: bogus });
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({ node: null, configuration: null });
  });
});
