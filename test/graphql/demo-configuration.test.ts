import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../gql/gql.ts';
import { DEMO_CONFIGURATION } from '../../src/services/demo-catalogue.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { member } from '../helpers/documents.ts';
import { eventually } from '../protocol/raw-socket.ts';

/** createDemoConfiguration: the console's one-click path from an empty database to a first run. */

const CREATE_DEMO = graphql(`
  mutation DemoCreate {
    createDemoConfiguration {
      __typename
      ... on Configuration { id name privacyLevel allowedToolGroups model { name providerModelId provider { name kind hasApiKey } } }
      ... on Error { message }
    }
  }
`);
const DEMO_CREATE_USER = graphql(`
  mutation DemoCreateUser { createUser(input: { name: "demo-viewer" }) { __typename ... on CreateUserPayload { token } } }
`);
const DEMO_CREATE_PROVIDER = graphql(`
  mutation DemoCreateProvider($name: String!) { createProvider(input: { name: $name, kind: OPENAI }) { __typename ... on Provider { id } } }
`);
const DEMO_DELETE_PROVIDER = graphql(`
  mutation DemoDeleteProvider($id: ID!) { deleteProvider(id: $id) { __typename } }
`);
const DEMO_CATALOGUE = graphql(`
  query DemoCatalogue { configurations { id name } providers { name } models { name } }
`);
const DEMO_START_RUN = graphql(`
  mutation DemoStartRun($input: RunAgentInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }
`);
const DEMO_RUN = graphql(`
  query DemoRun($id: ID!) { run(id: $id) { status finalContent steps { edges { node { kind toolName toolIsError } } } } }
`);

describe.each(TEST_DATABASES)('createDemoConfiguration on %s', (kind) => {
  let t: TestApp;
  let userToken: string;
  beforeAll(async () => {
    t = await startTestApp(kind);
    userToken = member((await t.gql(DEMO_CREATE_USER)).data?.createUser, 'CreateUserPayload').token;
  });
  afterAll(() => t?.stop());

  it('should refuse a non-admin and create nothing', async () => {
    const result = await t.gql(CREATE_DEMO, {}, userToken);
    expect(result.data?.createDemoConfiguration ?? null).toBeNull();
    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const catalogue = await t.gql(DEMO_CATALOGUE);
    expect(catalogue.data?.configurations).toEqual([]);
  });

  it('should answer a ConflictError, not a half demo, when a provider already has the demo name', async () => {
    const provider = member((await t.gql(DEMO_CREATE_PROVIDER, { name: DEMO_CONFIGURATION })).data?.createProvider, 'Provider');
    const result = await t.gql(CREATE_DEMO);
    expect(member(result.data?.createDemoConfiguration, 'ConflictError').message).toMatch(/delete or rename it/);
    expect((await t.gql(DEMO_CATALOGUE)).data?.configurations).toEqual([]);
    expect((await t.gql(DEMO_DELETE_PROVIDER, { id: provider.id })).data?.deleteProvider.__typename).toBe('Deleted');
  });

  it('should create an offline SCRIPTED provider, a free model and a REDACTED configuration limited to the content and structure groups, once under concurrent calls', async () => {
    const results = await Promise.all([t.gql(CREATE_DEMO), t.gql(CREATE_DEMO), t.gql(CREATE_DEMO)]);
    const [configuration, ...others] = results.map((result) => member(result.data?.createDemoConfiguration, 'Configuration'));
    expect(others.map((row) => row.id)).toEqual([configuration!.id, configuration!.id]);
    expect(configuration).toMatchObject({
      name: DEMO_CONFIGURATION,
      allowedToolGroups: ['content', 'structure'],
      model: { providerModelId: 'scripted', provider: { kind: 'SCRIPTED', hasApiKey: false } },
    });
    const catalogue = (await t.gql(DEMO_CATALOGUE)).data!;
    expect(catalogue.configurations.map((row) => row.name)).toEqual([DEMO_CONFIGURATION]);
    expect(catalogue.providers.map((row) => row.name)).toEqual([DEMO_CONFIGURATION]);
    expect(catalogue.models.map((row) => row.name)).toEqual([DEMO_CONFIGURATION]);
  });

  it('should be idempotent: a later call returns the same configuration, stored at REDACTED, and creates nothing more', async () => {
    const first = member((await t.gql(CREATE_DEMO)).data?.createDemoConfiguration, 'Configuration');
    const again = member((await t.gql(CREATE_DEMO)).data?.createDemoConfiguration, 'Configuration');
    expect(again).toEqual(first);
    expect(again.privacyLevel).toBe('REDACTED');
    const catalogue = (await t.gql(DEMO_CATALOGUE)).data!;
    expect([catalogue.configurations.length, catalogue.providers.length, catalogue.models.length]).toEqual([1, 1, 1]);
  });

  it('should run offline to its answer, calling describe_tables and read_records on the seeded records, content readable back', async () => {
    const configuration = member((await t.gql(CREATE_DEMO)).data?.createDemoConfiguration, 'Configuration');
    const started = await t.gql(DEMO_START_RUN, { input: { configurationId: configuration.id, prompt: 'Who are our first customers?', toolGroups: ['content', 'structure'] } });
    const run = member(started.data?.startRun, 'Run');
    const finished = await eventually(
      async () => (await t.gql(DEMO_RUN, { id: run.id })).data?.run,
      (value) => value?.status === 'COMPLETED',
    );
    expect(finished?.finalContent).toMatch(/first three customers/);
    const tools = finished!.steps.edges.map((edge) => edge.node).filter((step) => step.kind === 'TOOL');
    expect(tools.map((step) => [step.toolName, step.toolIsError])).toEqual([
      ['describe_tables', false],
      ['read_records', false],
    ]);
  });
});
