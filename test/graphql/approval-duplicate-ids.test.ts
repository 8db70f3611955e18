import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRecords } from '../../src/db/repositories/records-seed.ts';
import { turnDigest } from '../../src/runtime/approval.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { collect, lastEvent, RUN_AGENT, vendorConfiguration, wsClient } from '../helpers/runs.ts';
import { openaiWire } from '../fixtures/wires/openai.ts';
import type { FakeServer } from '../fixtures/wires/fake-server.ts';

/**
 * An OpenAI-compatible server that passes model-chosen ids through can send one id twice in a
 * turn. Each call must still be previewed, checked and digested as itself: a harmless rename of a
 * customer must not lend its preview, or its approver check, to a change of an order.
 */
const RENAME_CUSTOMER = { id: 'call_X', name: 'update_record', arguments: { table: 'customers', key: { column: 'id', value: '12' }, changes: { name: 'Harmless Twelve' } } };
const REFUND_ORDER = { id: 'call_X', name: 'update_record', arguments: { table: 'orders', key: { column: 'id', value: '13' }, changes: { status: 'refunded' } } };

const PENDING = `{ pendingApprovals { turnDigest pendingCalls { id name preview } } }`;
const APPROVE = `mutation($id: ID!, $digest: String!) {
  approveRun(id: $id, turnDigest: $digest, approved: true) { __typename ... on Error { message } ... on Run { id } }
}`;
const SETTLED = `query($id: ID!) {
  run(id: $id) { status steps(first: 50) { edges { node { kind toolCallId toolName toolIsError toolResult } } } }
}`;

describe.each(TEST_DATABASES)('a turn that repeats a tool-call id on %s', (kind) => {
  let t: TestApp;
  let url: string;
  let vendor: FakeServer;
  let alice: { id: string; token: string };
  let configurationId: string;

  const cell = async (table: string, column: string, id: number) =>
    ((await t.app.services.db
      .selectFrom(`records.${table}` as never)
      .select(column as never)
      .where('id' as never, '=', id as never)
      .executeTakeFirstOrThrow()) as Record<string, unknown>)[column];

  beforeAll(async () => {
    t = await startTestApp(kind);
    url = (await t.app.server.start()).url;
    await seedRecords(t.app.services.db);
    vendor = await openaiWire.start();
    await t.gql(`mutation { setToolEnabled(name: "update_record", enabled: true) { enabled } }`);
    const created = (await t.gql(`mutation { createUser(input: { name: "alice" }) { ... on CreateUserPayload { token user { id } } } }`)).data.createUser;
    alice = { id: created.user.id, token: created.token };
    // Alice may write customers, not orders.
    await t.gql(`mutation($id: ID!) { grantTable(userId: $id, table: "customers", mode: WRITE) { __typename } }`, { id: alice.id });
    configurationId = await vendorConfiguration(t, 'editor', openaiWire.baseUrl(vendor), { privacyLevel: 'FULL', allowedToolGroups: ['editing', 'structure'] });
  });
  afterAll(async () => {
    await vendor?.close();
    await t?.stop();
  });

  it('should preview, check and digest every call by its place in the turn, and run each once', async () => {
    vendor.enqueue({ reply: { toolCalls: [RENAME_CUSTOMER, REFUND_ORDER] } }, { reply: { content: 'Both done.' } });
    const client = wsClient(url, alice.token);
    const events = await collect(client, RUN_AGENT, { input: { configurationId, prompt: 'Tidy up customer 12 and order 13' } }).finally(() => client.dispose());
    const suspended = lastEvent(events, 'RunSuspendedEvent');

    // Ids are unique within the turn, and each call shows its own preview.
    const ids = suspended.pendingCalls.map((call) => call.id);
    expect(new Set(ids).size).toBe(2);
    expect(ids[0]).toBe('call_X');
    expect(suspended.pendingCalls[0]!.preview).toContain('Harmless Twelve');
    expect(suspended.pendingCalls[1]!.preview).not.toContain('Harmless Twelve');
    expect(suspended.pendingCalls[1]!.preview).toMatch(/orders|not allowed|unavailable/i);
    const queued = (await t.gql(PENDING, {}, alice.token)).data.pendingApprovals;
    expect(queued).toEqual([{ turnDigest: suspended.turnDigest, pendingCalls: suspended.pendingCalls.map(({ id, name, preview }) => ({ id, name, preview })) }]);

    // The digest covers both calls: it is not the digest of either one alone.
    const calls = [RENAME_CUSTOMER, REFUND_ORDER].map((call, index) => ({ ...call, id: ids[index]! }));
    expect(suspended.turnDigest).toBe(turnDigest(calls));
    expect(suspended.turnDigest).not.toBe(turnDigest(calls.slice(0, 1)));

    // Alice may rename the customer but not change the order, so she may not approve the turn.
    const refused = await t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest }, alice.token);
    expect(refused.data.approveRun).toEqual({ __typename: 'ForbiddenError', message: 'You may not run "update_record" on this data yourself, so you cannot approve it.' });
    expect(await cell('customers', 'name', 12)).not.toBe('Harmless Twelve');

    // An admin may approve: each call runs once, as the initiator (who may not write orders).
    const approved = await t.gql(APPROVE, { id: suspended.run.id, digest: suspended.turnDigest });
    expect(approved.data.approveRun.__typename).toBe('Run');
    let run: any;
    for (let tries = 0; tries < 300; tries++) {
      run = (await t.gql(SETTLED, { id: suspended.run.id })).data.run;
      if (run.status === 'COMPLETED') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(run.status).toBe('COMPLETED');
    const tools = run.steps.edges.map((edge: any) => edge.node).filter((step: any) => step.kind === 'TOOL');
    expect(tools.map((step: any) => [step.toolCallId, step.toolIsError])).toEqual([
      [ids[0], false],
      [ids[1], true],
    ]);
    expect(await cell('customers', 'name', 12)).toBe('Harmless Twelve');
    expect(await cell('orders', 'status', 13)).not.toBe('refunded');

    // The vendor got each result paired with the call it answers, under the ids the turn was replayed with.
    const replay = openaiWire.read(vendor.requests.at(-1)!);
    expect(replay.replayedCalls.map((call) => call.id)).toEqual(ids);
    expect(replay.toolResults.map((result) => result.callId)).toEqual(ids);
  });
});
