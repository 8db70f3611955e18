import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { RawSocket } from './raw-socket.ts';

/**
 * Hostile documents against the query limits (graphql-armor and the query cost in src/server.ts)
 * on BOTH transports, in development and in production. The limits are decided before anything
 * reads the database: PGlite only.
 */

/** configurations → model → provider → models → provider → … : 12 levels, inside every other limit. */
const DEEP = `{ configurations { model { ${'provider { models { '.repeat(5)}name${' } }'.repeat(5)} } } }`;

const ABUSES = [
  { limit: 'depth', query: DEEP, exposed: /^Syntax Error: Query depth limit of 10 exceeded, found \d+\.$/ },
  {
    limit: 'aliases',
    query: `{ ${Array.from({ length: 16 }, (_, index) => `a${index}: viewer { name }`).join(' ')} }`,
    exposed: /^Syntax Error: Aliases limit of 15 exceeded, found 16\.$/,
  },
  { limit: 'tokens', query: `{ viewer { ${'name '.repeat(2_100)}} }`, exposed: /^Syntax Error: Token limit of 2000 exceeded\.$/ },
  { limit: 'directives', query: `{ viewer { name ${'@include(if: true) '.repeat(21)}} }`, exposed: /^Syntax Error: Directives limit of 20 exceeded, found 21\.$/ },
] as const;

/** The fields a dashboard lists per step (docs/dashboard.md's StoredSteps). */
const STEP_FIELDS = 'sequence kind content contentRedacted contentLength toolName toolResultLength';
const aliased = (count: number, selection: string) => Array.from({ length: count }, (_, index) => `a${index}: ${selection}`).join(' ');

/**
 * Documents over the query cost (src/graphql/plugins/query-cost.ts): 20 runs × 50 steps read 1 000 step rows
 * whether the page sizes are written, left to their defaults, passed as variables or hidden in
 * fragments.
 */
const COSTLY: readonly { what: string; query: string; variables?: Record<string, unknown> }[] = [
  { what: 'runs × steps with written page sizes', query: `{ runs(first: 20) { edges { node { steps(first: 50) { edges { node { ${STEP_FIELDS} } } } } } } }` },
  { what: 'runs × steps with default page sizes', query: `{ runs { edges { node { steps { edges { node { ${STEP_FIELDS} } } } } } } }` },
  { what: 'runs × steps of one field each', query: '{ runs { edges { node { steps { edges { node { messagesSent } } } } } } }' },
  { what: '15 aliases of runs × steps', query: `{ ${aliased(15, 'runs { edges { node { steps { edges { node { messagesSent } } } } } }')} }` },
  {
    what: 'page sizes in variables',
    query: `query($runs: Int, $steps: Int) { runs(first: $runs) { edges { node { steps(first: $steps) { edges { node { ${STEP_FIELDS} } } } } } } }`,
    variables: { runs: 20, steps: 50 },
  },
  {
    what: 'nodes(ids) of 20 runs × 30 steps',
    query: `query($ids: [ID!]!) { nodes(ids: $ids) { ... on Run { steps(first: 30) { edges { node { ${STEP_FIELDS} } } } } } }`,
    variables: { ids: Array.from({ length: 20 }, (_, index) => Buffer.from(`Run:00000000-0000-4000-8000-${String(index).padStart(12, '0')}`).toString('base64')) },
  },
  {
    what: 'fragments and inline fragments',
    query: `query { runs { edges { node { ...Steps } } } } fragment Steps on Run { steps { edges { node { ... on RunStep { ${STEP_FIELDS} } } } } }`,
  },
];

/** A page size out of its bounds, refused with the argument, the field and the next step. */
const PAGE_SIZES: readonly { what: string; query: string; variables?: Record<string, unknown>; message: string }[] = [
  { what: 'runs(first: 101)', query: '{ runs(first: 101) { edges { cursor } } }', message: 'first must be at most 100 (Query.runs): ask for fewer items and page on with after: pageInfo.endCursor.' },
  { what: 'runs(first: 5000)', query: '{ runs(first: 5000) { edges { node { id status } } } }', message: 'first must be at most 100 (Query.runs): ask for fewer items and page on with after: pageInfo.endCursor.' },
  {
    what: 'runs(last: 101)',
    query: '{ runs(last: 101, before: "x") { edges { cursor } } }',
    message: 'last must be at most 100 (Query.runs): ask for fewer items and page on with before: pageInfo.startCursor.',
  },
  { what: 'runs(first: -1)', query: '{ runs(first: -1) { edges { cursor } } }', message: 'first must be at least 0 (Query.runs).' },
  {
    what: 'steps(first: 101) in a variable',
    query: 'query($n: Int) { runs(first: 1) { edges { node { steps(first: $n) { edges { cursor } } } } } }',
    variables: { n: 101 },
    message: 'first must be at most 100 (Run.steps): ask for fewer items and page on with after: pageInfo.endCursor.',
  },
];

/** Typos that graphql-js answers with "Did you mean …": fields, arguments, types, input fields, enum values. */
const TYPOS = [
  { what: 'a field', query: '{ viewr { name } }' },
  { what: 'a nested field', query: '{ viewer { nme } }' },
  { what: 'an argument', query: '{ runs(frist: 1) { edges { cursor } } }' },
  { what: 'a type in a fragment', query: '{ viewer { ... on Usr { name } } }' },
  { what: 'an enum value literal', query: '{ runs(first: 1, status: COMPLETD) { edges { cursor } } }' },
  { what: 'a variable type', query: 'query($s: RunStatu) { runs(first: 1, status: $s) { edges { cursor } } }' },
  { what: 'an enum value in variables', query: 'query($s: RunStatus) { runs(first: 1, status: $s) { edges { cursor } } }', variables: { s: 'COMPLETD' } },
  {
    what: 'an input field',
    query: 'subscription($input: RunAgentInput!) { runAgent(input: $input) { __typename } }',
    variables: { input: { configurationId: 'x', prompt: 'p', tool: ['a'] } },
  },
] as const;

const INTROSPECTION = ['{ __schema { queryType { name } } }', '{ __type(name: "Run") { name fields { name } } }'];

async function overHttp(t: TestApp, query: string, variables?: Record<string, unknown>) {
  return t.gql(query, variables);
}

/** Runs one operation on an open socket; resolves with its errors (or data) from the raw frames. */
async function overWs(socket: RawSocket, id: string, query: string, variables?: Record<string, unknown>) {
  socket.subscribe(id, query, variables);
  const first = await socket.next((message) => message.id === id);
  if (first.type === 'error') return { errors: first.payload as { message: string }[] };
  if (first.type === 'next') {
    await socket.next((message) => message.id === id && message.type === 'complete');
    return first.payload as { data?: any; errors?: { message: string }[] };
  }
  throw new Error(`unexpected ${first.type} for ${id}`);
}

const messagesOf = (result: { errors?: readonly { message: string }[] }) => (result.errors ?? []).map((error) => error.message);

describe.each<{ mode: string; env: Record<string, string> }>([
  { mode: 'development', env: {} },
  { mode: 'production', env: { NODE_ENV: 'production' } },
])('query abuse in $mode', ({ mode, env }) => {
  const production = mode === 'production';
  let t: TestApp;
  let url: string;
  let socket: RawSocket;

  beforeAll(async () => {
    t = await startTestApp('pglite', { env });
    url = (await t.app.server.start()).url;
    socket = await RawSocket.open(url, t.adminToken);
  });
  afterAll(async () => {
    await socket.close();
    await t.stop();
  });

  const answersNext = async (id: string) => {
    expect((await overHttp(t, '{ viewer { name } }')).data).toEqual({ viewer: { name: 'admin' } });
    expect((await overWs(socket, id, '{ viewer { name } }')).data).toEqual({ viewer: { name: 'admin' } });
  };

  it.each(ABUSES)('should refuse a document over the $limit limit on HTTP and graphql-ws, then answer the next request', async ({ limit, query, exposed }) => {
    for (const result of [await overHttp(t, query), await overWs(socket, `abuse-${limit}`, query)]) {
      expect(result.data ?? null).toBeNull();
      const [message, ...rest] = messagesOf(result);
      expect(rest).toEqual([]);
      if (production) {
        // The refusal says what, never how much: no limit, no measured value.
        expect(message).toBe('Syntax Error: Query validation error.');
      } else {
        expect(message).toMatch(exposed);
      }
    }
    await answersNext(`after-${limit}`);
  });

  it.each(COSTLY)('should refuse a document over the query cost ($what) on HTTP and graphql-ws, then answer the next request', async ({ what, query, variables }) => {
    for (const result of [await overHttp(t, query, variables), await overWs(socket, `cost-${what}`, query, variables)]) {
      expect(result.data ?? null).toBeNull();
      expect(result.errors).toHaveLength(1);
      const [error] = result.errors as { message: string; extensions?: { code?: string } }[];
      expect(error!.extensions?.code, error!.message).toBe('QUERY_TOO_COSTLY');
      if (production) {
        expect(error!.message).toBe('Query cost limit exceeded: ask for fewer items (first/last) or fewer fields, and page on with the cursors.');
      } else {
        expect(error!.message).toMatch(/^Query cost limit exceeded \(limit 12000, found \d+\): ask for fewer items \(first\/last\) or fewer fields, and page on with the cursors\.$/);
      }
    }
    await answersNext(`after-cost-${what}`);
  });

  it('should accept the same document with page sizes that fit, passed as variables', async () => {
    const { query } = COSTLY.find((entry) => entry.what === 'page sizes in variables')!;
    for (const result of [await overHttp(t, query, { runs: 2, steps: 5 }), await overWs(socket, 'cost-fits', query, { runs: 2, steps: 5 })]) {
      expect(result.errors).toBeUndefined();
      expect(result.data).toEqual({ runs: { edges: [] } });
    }
  });

  it.each(PAGE_SIZES)('should refuse $what with a BAD_USER_INPUT error on HTTP and graphql-ws', async ({ what, query, variables, message }) => {
    for (const result of [await overHttp(t, query, variables), await overWs(socket, `page-${what}`, query, variables)]) {
      expect(result.data ?? null).toBeNull();
      expect(result.errors).toMatchObject([{ message, extensions: { code: 'BAD_USER_INPUT' } }]);
    }
    await answersNext(`after-page-${what}`);
  });

  it('should refuse a page size out of bounds in a subscription over server-sent events and graphql-ws', async () => {
    const query = 'subscription($id: ID!) { runEvents(runId: $id) { ... on RunFinishedEvent { run { steps(first: 101) { edges { cursor } } } } } }';
    const variables = { id: 'UnVuOjAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMA==' };
    const message = 'first must be at most 100 (Run.steps): ask for fewer items and page on with after: pageInfo.endCursor.';
    const response = await t.fetch({
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${t.adminToken}` },
      body: JSON.stringify({ query, variables }),
    });
    const events = (await response.text())
      .split('\n')
      .filter((line) => line.startsWith('data: ') && line.length > 6)
      .map((line) => JSON.parse(line.slice(6)));
    expect(events).toMatchObject([{ errors: [{ message, extensions: { code: 'BAD_USER_INPUT' } }] }]);
    expect((await overWs(socket, 'page-subscription', query, variables)).errors).toMatchObject([{ message, extensions: { code: 'BAD_USER_INPUT' } }]);
  });

  it('should refuse a batch on HTTP and an array frame on graphql-ws, then answer the next request', async () => {
    const batch = await t.fetch({
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.adminToken}` },
      body: JSON.stringify([{ query: '{ viewer { name } }' }, { query: '{ viewer { name } }' }]),
    });
    expect(batch.status).toBeGreaterThanOrEqual(400);
    expect(batch.status).toBeLessThan(500);
    expect(JSON.stringify(await batch.json())).not.toContain('"viewer"');
    const other = await RawSocket.open(url, t.adminToken);
    other.socket.send(JSON.stringify([{ id: 'b1', type: 'subscribe', payload: { query: '{ viewer { name } }' } }]));
    expect((await other.closed).code).toBe(4400);
    expect(other.frames.slice(1)).toEqual([]);
    await answersNext('after-batch');
  });

  it.each(TYPOS)('should not suggest names for $what on HTTP or graphql-ws', async ({ what, query, ...rest }) => {
    const variables = 'variables' in rest ? (rest.variables as Record<string, unknown>) : undefined;
    for (const result of [await overHttp(t, query, variables), await overWs(socket, `typo-${what}`, query, variables)]) {
      const messages = messagesOf(result);
      expect(messages.length).toBeGreaterThan(0);
      for (const message of messages) expect(message).not.toMatch(/did you mean/i);
    }
  });

  if (production) {
    it.each(INTROSPECTION)('should refuse introspection (%s) on HTTP and graphql-ws', async (query) => {
      for (const result of [await overHttp(t, query), await overWs(socket, `introspect-${query.length}`, query)]) {
        expect(result.data ?? null).toBeNull();
        expect(messagesOf(result).join(' ')).toMatch(/introspection/i);
      }
      expect((await overHttp(t, '{ __typename viewer { __typename } }')).data).toEqual({ __typename: 'Query', viewer: { __typename: 'User' } });
    });

    it('should not serve GraphiQL to a browser', async () => {
      const response = await fetch(url, { headers: { accept: 'text/html' } });
      const body = await response.text();
      expect(response.headers.get('content-type') ?? '').not.toContain('text/html');
      expect(body).not.toMatch(/<html|graphiql/i);
    });
  } else {
    it('should answer introspection and serve GraphiQL outside production', async () => {
      expect((await overHttp(t, INTROSPECTION[0]!)).data).toEqual({ __schema: { queryType: { name: 'Query' } } });
      const response = await fetch(url, { headers: { accept: 'text/html' } });
      expect(response.headers.get('content-type')).toContain('text/html');
      expect(await response.text()).toMatch(/graphiql/i);
    });
  }
});
