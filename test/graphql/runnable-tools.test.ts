import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql, type DocumentType } from '../gql/gql.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import type { TestApp } from '../helpers/app.ts';
import { member } from '../helpers/documents.ts';
import { startServedApp } from '../helpers/served-app.ts';
import { eventually } from '../protocol/raw-socket.ts';

/**
 * runnableTools(configurationId): per registered group, each tool offered to the viewer or the
 * first gate that refuses it — the same decision a run takes, so a UI needs no cascade of its own.
 */

const RUNNABLE_TOOLS = graphql(`
  query RunnableTools($id: ID!) {
    runnableTools(configurationId: $id) {
      name enabled offered offeredCount
      tools { name description group effect requiresAdmin offered refusedBy reason }
    }
  }
`);
const DECISIONS = graphql(`
  query RunnableToolsDecisions($id: ID!, $asUser: ID) { configuration(id: $id) { toolDecisions(asUser: $asUser) { toolName offered reason } } }
`);
const START = graphql(`
  mutation RunnableToolsStart($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }
`);
const REQUEST_STEP = graphql(`
  query RunnableToolsRequest($id: ID!) { run(id: $id) { status steps(first: 5) { edges { node { kind offeredTools } } } } }
`);
const SETUP = graphql(`
  mutation RunnableToolsSetup {
    skill: createSkill(input: { name: "ops", body: "Operate.", allowedTools: ["read_records", "describe_tables", "get_env"] }) { __typename ... on Skill { id } }
    user: createUser(input: { name: "checkbox-user" }) { __typename ... on CreateUserPayload { token user { id } } }
  }
`);
const MODEL_OF = graphql(`
  query RunnableToolsModelOf($id: ID!) { configuration(id: $id) { model { id } } }
`);
const CREATE_SKILLED = graphql(`
  mutation RunnableToolsSkilled($model: ID!, $skill: ID!) {
    createConfiguration(input: { name: "skilled", modelId: $model, skillIds: [$skill] }) { __typename ... on Configuration { id } }
  }
`);
const SWITCH_GROUP = graphql(`
  mutation RunnableToolsSwitch($name: String!, $enabled: Boolean!) { setToolGroupEnabled(name: $name, enabled: $enabled) { name } }
`);
const RESET_GROUP = graphql(`
  mutation RunnableToolsReset($name: String!) { resetToolGroup(name: $name) { name } }
`);

type Group = DocumentType<typeof RUNNABLE_TOOLS>['runnableTools'][number];

const NOT_ALLOWED_TEXT =
  "This configuration does not offer it (its allowed tool groups or its skills' tool lists); pick another configuration or ask an admin to allow it.";

describe.each(TEST_DATABASES)('runnableTools on %s', (kind) => {
  let t: TestApp;
  let scoped: string;
  let skilled: string;
  let user: { token: string; user: { id: string } };

  beforeAll(async () => {
    ({ t, configurations: { scoped } } = await startServedApp(kind, {
      scoped: { replies: [{ content: 'done' }], allowedToolGroups: ['content', 'structure', 'system'] },
    }));
    const setup = await t.gql(SETUP);
    user = member(setup.data?.user, 'CreateUserPayload');
    const model = (await t.gql(MODEL_OF, { id: scoped })).data!.configuration!.model.id;
    skilled = member(
      (await t.gql(CREATE_SKILLED, { model, skill: member(setup.data?.skill, 'Skill').id })).data?.createConfiguration,
      'Configuration',
    ).id;
  });
  afterAll(() => t.stop());

  async function groups(configurationId: string, token = t.adminToken): Promise<Map<string, Group>> {
    const result = await t.gql(RUNNABLE_TOOLS, { id: configurationId }, token);
    expect(result.errors).toBeUndefined();
    return new Map(result.data!.runnableTools.map((group) => [group.name, group]));
  }
  const toolOf = (byGroup: Map<string, Group>, name: string) => [...byGroup.values()].flatMap((group) => group.tools).find((tool) => tool.name === name)!;

  it('should list every registered group with every tool, for an admin: offered, or the first refusing gate and its reason', async () => {
    const byGroup = await groups(scoped);
    expect([...byGroup.keys()]).toEqual(t.app.services.registry.groups());
    expect(byGroup.get('content')).toMatchObject({ enabled: true, offered: 'ALL', offeredCount: 1 });
    expect(toolOf(byGroup, 'read_records')).toMatchObject({ group: 'content', effect: 'READ', requiresAdmin: false, offered: true, refusedBy: null, reason: null });
    expect(toolOf(byGroup, 'get_env')).toMatchObject({ requiresAdmin: true, offered: true, refusedBy: null });
    // Off by default, in an allowed group: the switch refuses it first.
    expect(toolOf(byGroup, 'get_env_raw')).toMatchObject({
      offered: false,
      refusedBy: 'TOOL_DISABLED',
      reason: 'An admin switched this tool off (or it is off by default); ask an admin to switch it on.',
    });
    // A group the configuration does not allow.
    expect(byGroup.get('configuration')).toMatchObject({ offered: 'NONE', offeredCount: 0 });
    expect(toolOf(byGroup, 'list_configurations')).toMatchObject({ offered: false, refusedBy: 'NOT_ALLOWED', reason: NOT_ALLOWED_TEXT });
    expect(toolOf(byGroup, 'update_record')).toMatchObject({ effect: 'WRITE', offered: false, refusedBy: 'TOOL_DISABLED' });
  });

  it('should draw the mixed state: a group with only some tools offered is SOME, with its count', async () => {
    const system = (await groups(scoped)).get('system')!;
    const offered = system.tools.filter((tool) => tool.offered).map((tool) => tool.name);
    expect(offered.length).toBeGreaterThan(0);
    expect(offered.length).toBeLessThan(system.tools.length);
    expect(system).toMatchObject({ enabled: true, offered: 'SOME', offeredCount: offered.length });
  });

  it('should show admin-only tools to a non-admin as refused REQUIRES_ADMIN (not hidden), after a switch that refuses first', async () => {
    const byGroup = await groups(scoped, user.token);
    expect(toolOf(byGroup, 'get_env')).toMatchObject({ offered: false, refusedBy: 'REQUIRES_ADMIN', reason: 'Only admins may use this tool.' });
    expect(toolOf(byGroup, 'get_env_raw')).toMatchObject({ offered: false, refusedBy: 'TOOL_DISABLED' });
    expect(byGroup.get('system')).toMatchObject({ offered: 'NONE', offeredCount: 0 });
    expect(toolOf(byGroup, 'read_records')).toMatchObject({ offered: true });
  });

  it('should refuse every tool of a group switched off globally, naming the group, even with a tool override on', async () => {
    await t.gql(SWITCH_GROUP, { name: 'content', enabled: false });
    try {
      const content = (await groups(scoped)).get('content')!;
      expect(content).toMatchObject({ enabled: false, offered: 'NONE', offeredCount: 0 });
      expect(content.tools[0]).toMatchObject({
        name: 'read_records',
        refusedBy: 'TOOL_DISABLED',
        reason: 'An admin switched off its group "content"; ask an admin to switch the group on.',
      });
    } finally {
      await t.gql(RESET_GROUP, { name: 'content' });
    }
  });

  it("should follow the skills' tool lists", async () => {
    const byGroup = await groups(skilled);
    const offered = [...byGroup.values()].flatMap((group) => group.tools.filter((tool) => tool.offered).map((tool) => tool.name)).sort();
    expect(offered).toEqual(['describe_tables', 'get_env', 'read_records']);
    expect(toolOf(byGroup, 'list_configurations')).toMatchObject({ refusedBy: 'NOT_ALLOWED' });
    const asUser = await groups(skilled, user.token);
    expect(toolOf(asUser, 'get_env')).toMatchObject({ refusedBy: 'REQUIRES_ADMIN' });
  });

  it("should agree with the gate: the admin's toolDecisions for the viewer, and what a run of the viewer offers", async () => {
    for (const [configurationId, token, asUser] of [
      [scoped, t.adminToken, undefined],
      [scoped, user.token, user.user.id],
      [skilled, user.token, user.user.id],
    ] as const) {
      const listed = [...(await groups(configurationId, token)).values()].flatMap((group) => group.tools);
      const decisions = (await t.gql(DECISIONS, { id: configurationId, asUser })).data!.configuration!.toolDecisions;
      expect(listed.map((tool) => [tool.name, tool.offered, tool.refusedBy]).sort()).toEqual(
        decisions.map((decision) => [decision.toolName, decision.offered, decision.reason]).sort(),
      );
    }
    const listed = [...(await groups(scoped, user.token)).values()].flatMap((group) => group.tools);
    const run = member((await t.gql(START, { input: { configurationId: scoped, prompt: 'what is offered?' } }, user.token)).data?.startRun, 'Run');
    const settled = await eventually(() => t.gql(REQUEST_STEP, { id: run.id }, user.token), (result) => result.data?.run?.status === 'COMPLETED');
    const request = settled.data!.run!.steps.edges.find((edge) => edge.node.kind === 'REQUEST')!.node;
    expect([...(request.offeredTools ?? [])].sort()).toEqual(listed.filter((tool) => tool.offered).map((tool) => tool.name).sort());
  });

  it('should answer NOT_FOUND for an unknown configuration', async () => {
    const unknown = Buffer.from('Configuration:00000000-0000-4000-8000-000000000000').toString('base64');
    const result = await t.gql(RUNNABLE_TOOLS, { id: unknown }, user.token);
    expect(result.errors?.map((error) => [error.message, error.extensions?.code])).toEqual([['Configuration not found.', 'NOT_FOUND']]);
  });

  it('should need a user', async () => {
    const result = await t.gql(RUNNABLE_TOOLS, { id: scoped }, null);
    expect(result.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
  });
});

