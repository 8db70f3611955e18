import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { RawSocket } from './raw-socket.ts';

/**
 * A client's own mistakes are logged at debug, never at error: at error they would bury the
 * server's faults (issue 13, item 9). An unexpected failure stays at error, logged once.
 */

/** A well-formed global id of a run that does not exist. */
const UNKNOWN_RUN = Buffer.from('Run:00000000-0000-4000-8000-000000000000').toString('base64');

interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly error?: string;
  readonly code?: string;
}

const CLIENT_ERRORS: readonly { what: string; query: string; variables?: Record<string, unknown>; asUser?: boolean; message: RegExp }[] = [
  { what: 'a syntax error', query: '{ viewer { ', message: /^Syntax Error: Expected Name/ },
  { what: 'a validation error', query: '{ viewr { name } }', message: /^Cannot query field "viewr" on type "Query"/ },
  { what: 'a variable that was not provided', query: 'query($id: ID!) { run(id: $id) { id } }', variables: {}, message: /^Variable "\$id" of required type "ID!" was not provided\.$/ },
  { what: 'a malformed id', query: '{ run(id: "nope") { id } }', message: /^Invalid global ID: nope$/ },
  { what: 'a domain ValidationError (a cursor of another list)', query: '{ runs(after: "eHg") { edges { cursor } } }', message: /^Invalid input: after: is not a cursor of this list$/ },
  { what: 'a page size over the cap', query: '{ runs(first: 101) { edges { cursor } } }', message: /^first must be at most 100 \(Query\.runs\)/ },
  { what: 'a query over the cost limit', query: '{ runs { edges { node { steps { edges { node { messagesSent } } } } } } }', message: /^Query cost limit exceeded/ },
  { what: 'a missing right (FORBIDDEN)', query: '{ budgets { period } }', asUser: true, message: /^Forbidden: this field needs an admin\.$/ },
];

const parsed = (t: TestApp, from: number): LogLine[] => t.logs.lines.slice(from).map((line) => JSON.parse(line) as LogLine);

describe.each(TEST_DATABASES)('log levels of client errors on %s', (kind) => {
  let t: TestApp;
  let url: string;
  let userToken: string;

  beforeAll(async () => {
    t = await startTestApp(kind, { env: { LOG_LEVEL: 'debug' } });
    url = (await t.app.server.start()).url;
    const created = await t.gql('mutation { createUser(input: { name: "carol" }) { ... on CreateUserPayload { token } } }');
    userToken = created.data.createUser.token;
  });
  afterAll(async () => {
    await t.stop();
  });

  it.each(CLIENT_ERRORS)('should log $what at debug, not at error, on HTTP and graphql-ws', async ({ query, variables, asUser, message }) => {
    const token = asUser ? userToken : t.adminToken;
    const socket = await RawSocket.open(url, token);
    try {
      const from = t.logs.lines.length;
      const overHttp = await t.gql(query, variables, token);
      expect(overHttp.errors?.[0]?.message).toMatch(message);
      socket.subscribe('op', query, variables);
      const frame = await socket.next((entry) => entry.id === 'op' && (entry.type === 'error' || entry.type === 'next'));
      const overWs = frame.type === 'error' ? frame.payload : frame.payload.errors;
      expect(overWs[0].message).toMatch(message);

      const lines = parsed(t, from);
      expect(lines.filter((line) => line.level >= 50)).toEqual([]);
      const debug = lines.filter((line) => line.level === 20 && line.msg === 'client error' && message.test(line.error ?? ''));
      expect(debug.length).toBeGreaterThanOrEqual(2);
    } finally {
      await socket.close();
    }
  });

  it('should log a NotFound of a subscription (runEvents of an unknown run) at debug, over server-sent events', async () => {
    const from = t.logs.lines.length;
    const response = await t.fetch({
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${t.adminToken}` },
      body: JSON.stringify({ query: 'subscription($id: ID!) { runEvents(runId: $id) { __typename } }', variables: { id: UNKNOWN_RUN } }),
    });
    const body = await response.text();
    expect(body).toContain('NOT_FOUND');
    const lines = parsed(t, from);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    expect(lines.some((line) => line.level === 20 && line.code === 'NOT_FOUND')).toBe(true);
  });

  it('should log an unexpected failure at error, once, with its detail', async () => {
    const original = t.app.services.db.selectFrom;
    (t.app.services.db as any).selectFrom = () => {
      throw new Error('boom: internal detail');
    };
    try {
      const from = t.logs.lines.length;
      const result = await t.gql('{ providers { name } }');
      expect(result.errors?.[0].message).toBe('Unexpected error.');
      const errors = parsed(t, from).filter((line) => line.level >= 50);
      expect(errors).toHaveLength(1);
      expect(errors[0]!.msg).toBe('unexpected error while resolving a GraphQL operation');
      expect(JSON.stringify(errors[0])).toContain('boom: internal detail');
    } finally {
      (t.app.services.db as any).selectFrom = original;
    }
  });
});
