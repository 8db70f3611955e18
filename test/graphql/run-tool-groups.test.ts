import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../gql/gql.ts';
import type { RunAgentInput } from '../gql/graphql.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import type { TestApp } from '../helpers/app.ts';
import { member } from '../helpers/documents.ts';
import { wsClient } from '../helpers/runs.ts';
import { startServedApp } from '../helpers/served-app.ts';
import { eventually } from '../protocol/raw-socket.ts';

/**
 * RunAgentInput.toolGroups: a whole group ticked for one run. What the run offers is read from its
 * stored REQUEST step (`offeredTools`), i.e. what went to the provider.
 */

const START = graphql(`
  mutation ToolGroupsStart($input: RunAgentInput!) {
    startRun(input: $input) { __typename ... on Run { id } ... on ValidationError { message issues { path message } } ... on Error { message } }
  }
`);
const OFFERED = graphql(`
  query ToolGroupsOffered($id: ID!) { run(id: $id) { status steps(first: 10) { edges { node { kind offeredTools } } } } }
`);
const CREATE_USER = graphql(`
  mutation ToolGroupsCreateUser($name: String!) { createUser(input: { name: $name }) { __typename ... on CreateUserPayload { token } } }
`);
const SWITCH_GROUP = graphql(`
  mutation ToolGroupsSwitch($name: String!, $enabled: Boolean!) { setToolGroupEnabled(name: $name, enabled: $enabled) { name enabled } }
`);
const RESET_GROUP = graphql(`
  mutation ToolGroupsReset($name: String!) { resetToolGroup(name: $name) { name } }
`);

const DIRECT = [{ content: 'done' }];

describe.each(TEST_DATABASES)('RunAgentInput.toolGroups on %s', (kind) => {
  let t: TestApp;
  let url: string;
  let scoped: string;
  let open: string;
  let userToken: string;

  beforeAll(async () => {
    ({ t, url, configurations: { scoped, open } } = await startServedApp(kind, {
      scoped: { replies: DIRECT, allowedToolGroups: ['content', 'structure', 'configuration'] },
      open: { replies: DIRECT },
    }));
    userToken = member((await t.gql(CREATE_USER, { name: 'ticker' })).data?.createUser, 'CreateUserPayload').token;
  });
  afterAll(() => t.stop());

  const rawId = (globalId: string) => Buffer.from(globalId, 'base64').toString('utf8').split(':')[1]!;

  /** Starts a detached run, waits for its end, and returns the tools its first REQUEST offered (sorted) and its stored selection. */
  async function offered(input: RunAgentInput, token = t.adminToken): Promise<{ offered: string[] | null; stored: unknown }> {
    const run = member((await t.gql(START, { input }, token)).data?.startRun, 'Run');
    const settled = await eventually(() => t.gql(OFFERED, { id: run.id }, token), (result) => result.data?.run?.status === 'COMPLETED');
    const request = settled.data!.run!.steps.edges.map((edge) => edge.node).find((step) => step.kind === 'REQUEST')!;
    const row = await t.app.services.db.selectFrom('runs').select('tool_selection').where('id', '=', rawId(run.id)).executeTakeFirstOrThrow();
    return { offered: request.offeredTools ? [...request.offeredTools].sort() : null, stored: row.tool_selection };
  }

  it("should offer exactly (tools ∪ the ticked groups' tools) ∩ the configuration's groups, and store the expanded selection", async () => {
    const systemTools = t.app.services.registry.all().filter((tool) => tool.group === 'system').map((tool) => tool.name);
    expect(systemTools.length).toBeGreaterThan(0);
    const result = await offered({ configurationId: scoped, prompt: 'tick', tools: ['read_records'], toolGroups: ['structure', 'system'] });
    expect(result.offered).toEqual(['describe_tables', 'read_records']);
    expect(result.stored).toEqual(['read_records', 'describe_tables', ...systemTools]);
  });

  it('should offer a ticked group alone when no tools are named, and nothing of an empty selection', async () => {
    expect((await offered({ configurationId: open, prompt: 'groups only', toolGroups: ['structure', 'configuration'] })).offered).toEqual([
      'describe_tables',
      'list_configurations',
    ]);
    expect(await offered({ configurationId: open, prompt: 'nothing', tools: [], toolGroups: [] })).toEqual({ offered: null, stored: [] });
  });

  it('should keep a group switched off globally refused even when it is ticked', async () => {
    expect((await t.gql(SWITCH_GROUP, { name: 'structure', enabled: false })).data?.setToolGroupEnabled.enabled).toBe(false);
    try {
      expect((await offered({ configurationId: open, prompt: 'ticked but off', toolGroups: ['structure', 'content'] })).offered).toEqual(['read_records']);
    } finally {
      await t.gql(RESET_GROUP, { name: 'structure' });
    }
  });

  it('should not offer the admin-only tools of a group a non-admin ticks', async () => {
    expect((await offered({ configurationId: open, prompt: 'admin group', toolGroups: ['system', 'content'] }, userToken)).offered).toEqual(['read_records']);
  });

  it('should refuse an unknown group and an unregistered tool by path with a ValidationError, starting nothing', async () => {
    const before = await t.app.services.db.selectFrom('runs').select('id').execute();
    const answer = (await t.gql(START, { input: { configurationId: open, prompt: 'typo', tools: ['read_records', 'no_such_tool'], toolGroups: ['content', 'no-such-group'] } }))
      .data?.startRun;
    expect(member(answer, 'ValidationError').issues).toEqual([
      { path: ['tools', '1'], message: 'names no registered tool; query runnableTools(configurationId) for the names you may select' },
      { path: ['toolGroups', '1'], message: 'names no tool group; query runnableTools(configurationId) for the groups you may select' },
    ]);
    const tooMany = (await t.gql(START, { input: { configurationId: open, prompt: 'many', toolGroups: Array.from({ length: 51 }, () => 'content') } })).data?.startRun;
    expect(member(tooMany, 'ValidationError').issues).toEqual([{ path: ['toolGroups'], message: 'must list at most 50 groups' }]);
    expect(await t.app.services.db.selectFrom('runs').select('id').execute()).toHaveLength(before.length);
  });

  it('should take toolGroups on runAgent too, and refuse an unknown group there with BAD_USER_INPUT', async () => {
    const client = wsClient(url, t.adminToken);
    const run = (input: RunAgentInput) =>
      new Promise<{ offered: (string[] | null)[]; errors: unknown[] }>((resolve, reject) => {
        const offeredTools: (string[] | null)[] = [];
        const errors: unknown[] = [];
        client.subscribe(
          { query: `subscription($input: RunAgentInput!) { runAgent(input: $input) { __typename ... on RunStepEvent { step { kind offeredTools } } } }`, variables: { input } },
          {
            next: (result) => {
              if (result.errors) errors.push(...result.errors);
              const event = (result.data as { runAgent?: { __typename: string; step?: { kind: string; offeredTools: string[] | null } } } | undefined)?.runAgent;
              if (event?.step?.kind === 'REQUEST') offeredTools.push(event.step.offeredTools);
            },
            error: (error) => (Array.isArray(error) ? resolve({ offered: offeredTools, errors: [...errors, ...error] }) : reject(error)),
            complete: () => resolve({ offered: offeredTools, errors }),
          },
        );
      });
    try {
      expect(await run({ configurationId: scoped, prompt: 'attached', toolGroups: ['structure', 'accounts'] })).toEqual({ offered: [['describe_tables']], errors: [] });
      const refused = await run({ configurationId: scoped, prompt: 'attached typo', toolGroups: ['structur'] });
      expect(refused.offered).toEqual([]);
      expect(refused.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }) })]);
    } finally {
      await client.dispose();
    }
  });
});
