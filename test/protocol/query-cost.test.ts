import {
  getNamedType,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  isUnionType,
  parse,
  typeFromAST,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRecords } from '../../src/db/repositories/records-seed.ts';
import { pageSizeOf, QUERY_COST, queryCostOf } from '../../src/graphql/plugins/query-cost.ts';
import { buildSchema } from '../../src/graphql/schema.ts';
import { DOCUMENTS, fencedBlocks } from '../docs/markdown.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { scriptedConfiguration, wsClient } from '../helpers/runs.ts';
import { RawSocket } from './raw-socket.ts';

/**
 * The query cost (src/graphql/plugins/query-cost.ts) is calibrated on what dashboards ask for: the
 * documented operations (README and docs/) and a page of steps with every field and the artifacts union must pass
 * and be answered; the abusive documents are refused in query-abuse.test.ts.
 */

/** Every ```graphql block of the README and of docs/. */
const README_OPERATIONS = DOCUMENTS.flatMap((file) => fencedBlocks(file, 'graphql')).map((block) => block.source);

function readmeOperation(name: string): string {
  const found = README_OPERATIONS.filter((source) => new RegExp(`^(query|subscription|mutation) ${name}\\b`, 'm').test(source));
  expect(found, `the documentation shows the ${name} operation`).toHaveLength(1);
  return found[0]!;
}

/** A value for every required variable, so that an operation can be costed without running it. */
function placeholderFor(schema: GraphQLSchema, type: GraphQLInputType): unknown {
  if (isNonNullType(type)) return placeholderFor(schema, type.ofType);
  if (isListType(type)) return [placeholderFor(schema, type.ofType)];
  if (isEnumType(type)) return type.getValues()[0]!.value;
  if (isInputObjectType(type)) {
    const value: Record<string, unknown> = {};
    for (const field of Object.values(type.getFields())) if (isNonNullType(field.type)) value[field.name] = placeholderFor(schema, field.type);
    return value;
  }
  return { Int: 1, Float: 1, Boolean: true, DateTime: '2026-01-01T00:00:00Z', JSON: {} }[type.name] ?? 'x';
}

function placeholders(schema: GraphQLSchema, source: string): Record<string, unknown> {
  const operation = parse(source).definitions.find((definition) => definition.kind === 'OperationDefinition') as OperationDefinitionNode;
  return Object.fromEntries(
    (operation.variableDefinitions ?? []).map((definition) => [definition.variable.name.value, placeholderFor(schema, typeFromAST(schema, definition.type as never) as GraphQLInputType)]),
  );
}

/**
 * Every field of a type that takes no required argument and pages nothing: leaves, then objects
 * and unions `depth` levels down (a union as `__typename` and one inline fragment per member).
 */
function everyField(schema: GraphQLSchema, typeName: string, depth: number): string {
  const type = schema.getType(typeName)!;
  if (isUnionType(type)) return `__typename ${type.getTypes().map((member) => `... on ${member.name} { ${everyField(schema, member.name, depth)} }`).join(' ')}`;
  if (!isObjectType(type)) throw new Error(`${typeName} is not an object type`);
  return Object.values(type.getFields())
    .filter((field) => !pageSizeOf(field) && !field.args.some((arg) => isNonNullType(arg.type)))
    .flatMap((field) => {
      const named = getNamedType(field.type);
      if (isLeafType(named)) return [field.name];
      return depth > 0 && isCompositeType(named) ? [`${field.name} { ${everyField(schema, named.name, depth - 1)} }`] : [];
    })
    .join(' ');
}

const stepsPage = (schema: GraphQLSchema, first: number) => `query StepsPage($id: ID!) {
  run(id: $id) {
    ${everyField(schema, 'Run', 1)}
    steps(first: ${first}) { edges { cursor node { ${everyField(schema, 'RunStep', 1)} } } pageInfo { hasNextPage endCursor } }
  }
}`;

const TABLE_THEN_ANSWER = [
  { content: 'Looking.', toolCalls: [{ name: 'read_records', arguments: { table: 'customers', limit: 2 } }] },
  { content: 'Two customers.' },
];

describe('the cost of what the README documents', () => {
  const schema = buildSchema();

  it('should find the dashboard operations in the README', () => {
    for (const name of ['CompletedRuns', 'StoredSteps', 'RunWithArtifacts']) expect(readmeOperation(name)).toContain(name);
  });

  it('should keep every operation of the README within the query cost', () => {
    expect(README_OPERATIONS.length).toBeGreaterThan(5);
    const over = README_OPERATIONS.map((source) => ({ source: source.split('\n')[0], cost: queryCostOf(schema, parse(source), null, placeholders(schema, source)) })).filter(
      ({ cost }) => cost > QUERY_COST.maxCost,
    );
    expect(over).toEqual([]);
  });

  it('should fit a page of 50 and of 100 steps with every field and the artifacts union, and refuse 20 runs of 50 such steps', () => {
    for (const first of [50, 100]) expect(queryCostOf(schema, parse(stepsPage(schema, first)), null, { id: 'x' })).toBeLessThanOrEqual(QUERY_COST.maxCost);
    expect(stepsPage(schema, 50)).toContain('artifacts { __typename ... on TableArtifact { columns label rows } ... on TextArtifact { label text }');
    const runsOfSteps = `{ runs(first: 20) { edges { node { steps(first: 50) { edges { node { ${everyField(schema, 'RunStep', 1)} } } } } } } }`;
    expect(queryCostOf(schema, parse(runsOfSteps))).toBeGreaterThan(QUERY_COST.maxCost);
  });

  it('should count a page size left to its default like the same page size written out', () => {
    const written = '{ runs(first: 20) { edges { node { steps(first: 50) { edges { node { sequence } } } } } } }';
    const defaulted = '{ runs { edges { node { steps { edges { node { sequence } } } } } } }';
    expect(queryCostOf(schema, parse(defaulted))).toBe(queryCostOf(schema, parse(written)));
    expect(queryCostOf(schema, parse('query($n: Int) { runs(first: $n) { edges { cursor } } }'), null, { n: 100 })).toBe(
      queryCostOf(schema, parse('{ runs(first: 100) { edges { cursor } } }')),
    );
  });

  it('should count usageSummary by the groups its arguments allow: one total, the days of its range by DAY, at most 500 otherwise', () => {
    const summary = 'query($from: DateTime!, $to: DateTime!, $groupBy: [UsageGroupBy!]!) { usageSummary(from: $from, to: $to, groupBy: $groupBy) { day requests cost } }';
    const cost = (groupBy: string[], from = '2026-03-01T00:00:00Z', to = '2026-04-01T00:00:00Z') => queryCostOf(schema, parse(summary), null, { from, to, groupBy });
    expect(cost([])).toBe(1 + 1 * 3);
    expect(cost(['DAY'])).toBe(1 + 31 * 3);
    expect(cost(['DAY'], '2026-03-01T12:00:00Z', '2026-03-02T00:00:00.001Z')).toBe(1 + 2 * 3);
    expect(cost(['DAY', 'USER'])).toBe(1 + 500 * 3);
    expect(cost(['CONFIGURATION'])).toBe(1 + 500 * 3);
    expect(cost(['DAY'], '2026-04-01T00:00:00Z', '2026-03-01T00:00:00Z')).toBe(1 + 500 * 3);
    const everything = `{ usageSummary(from: "2026-01-01T00:00:00Z", to: "2027-01-01T00:00:00Z", groupBy: [USER, CONFIGURATION, MODEL, DAY]) {
      user { id name } configuration { id name } model { id name } day requests promptTokens completionTokens cost } }`;
    expect(queryCostOf(schema, parse(everything))).toBeLessThanOrEqual(QUERY_COST.maxCost);
  });

  it('should declare the page sizes of every connection in the schema, none above 100', () => {
    const paged = Object.values(schema.getTypeMap())
      .filter(isObjectType)
      .flatMap((type) => Object.values(type.getFields()).map((field) => ({ coordinate: `${type.name}.${field.name}`, size: pageSizeOf(field) })))
      .filter(({ size }) => size !== null);
    expect(paged.map(({ coordinate }) => coordinate).sort()).toEqual(expect.arrayContaining(['Query.runs', 'Run.steps']));
    for (const { size } of paged) expect(size!.maxSize).toBeLessThanOrEqual(100);
  });
});

describe.each(TEST_DATABASES)('dashboard queries answered on %s', (kind) => {
  const schema = buildSchema();
  let t: TestApp;
  let url: string;
  let configurationId: string;
  let runId: string;

  beforeAll(async () => {
    t = await startTestApp(kind);
    url = (await t.app.server.start()).url;
    await seedRecords(t.app.services.db);
    configurationId = await scriptedConfiguration(t, 'dashboard', { replies: TABLE_THEN_ANSWER, privacyLevel: 'FULL', allowedToolGroups: ['content'] });
  });
  afterAll(async () => {
    await t.stop();
  });

  it("should stream the README's RunWithArtifacts subscription over graphql-ws, artifacts included", async () => {
    const client = wsClient(url, t.adminToken);
    try {
      const results = await new Promise<any[]>((resolve, reject) => {
        const received: any[] = [];
        client.subscribe(
          { query: readmeOperation('RunWithArtifacts'), variables: { input: { configurationId, prompt: 'Who are our first customers?' } } },
          { next: (result) => received.push(result), error: reject, complete: () => resolve(received) },
        );
      });
      expect(results.flatMap((result) => result.errors ?? [])).toEqual([]);
      const events = results.map((result) => result.data.runAgent);
      const finished = events.at(-1);
      expect(finished).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'COMPLETED' } });
      runId = finished.run.id;
      const artifacts = events.flatMap((event) => event.step?.artifacts ?? []);
      expect(artifacts).toContainEqual(expect.objectContaining({ __typename: 'TableArtifact', columns: expect.any(Array) }));
    } finally {
      await client.dispose();
    }
  });

  it("should answer the README's CompletedRuns and StoredSteps on HTTP and graphql-ws", async () => {
    const socket = await RawSocket.open(url, t.adminToken);
    try {
      const expectations = [
        { name: 'CompletedRuns', variables: undefined, answered: (data: any) => data.runs.edges.map((edge: any) => edge.node.id) },
        { name: 'StoredSteps', variables: { id: runId }, answered: (data: any) => data.run.steps.edges.map((edge: any) => edge.node.kind) },
      ];
      for (const { name, variables, answered } of expectations) {
        const query = readmeOperation(name);
        const overHttp = await t.gql(query, variables);
        socket.subscribe(name, query, variables);
        const overWs = (await socket.next((message) => message.id === name && message.type === 'next')).payload;
        for (const result of [overHttp, overWs]) expect(result.errors).toBeUndefined();
        expect(answered(overHttp.data)).toEqual(name === 'CompletedRuns' ? [runId] : ['REQUEST', 'LLM', 'TOOL', 'REQUEST', 'LLM']);
        expect(overWs.data).toEqual(overHttp.data);
      }
    } finally {
      await socket.close();
    }
  });

  it('should answer a page of 50 and of 100 steps with every field and the artifacts union', async () => {
    for (const first of [50, 100]) {
      const result = await t.gql(stepsPage(schema, first), { id: runId });
      expect(result.errors).toBeUndefined();
      const steps = result.data.run.steps.edges.map((edge: any) => edge.node);
      expect(steps.map((step: any) => step.kind)).toEqual(['REQUEST', 'LLM', 'TOOL', 'REQUEST', 'LLM']);
      expect(steps[2].artifacts).toContainEqual(expect.objectContaining({ __typename: 'TableArtifact' }));
    }
  });
});
