import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRecords } from '../../src/db/repositories/records-seed.ts';
import { graphql } from '../gql/gql.ts';
import type { TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { member, textOf } from '../helpers/documents.ts';
import { RUN_AGENT, RUN_EVENTS, type RunEvent, wsClient } from '../helpers/runs.ts';
import { startServedApp, type ServedApp } from '../helpers/served-app.ts';
import { eventually, RawSocket } from './raw-socket.ts';

/**
 * A user who loses access loses their open sessions at once: graphql-ws sockets close with 4403,
 * SSE streams end, and a deactivated user's runs are cancelled (issue 13). Real sockets, real streams.
 */

const CREATE_USER = graphql(`
  mutation SessionsCreateUser($name: String!, $isAdmin: Boolean) {
    createUser(input: { name: $name, isAdmin: $isAdmin }) { __typename ... on CreateUserPayload { token user { id } } }
  }
`);
const ROTATE = graphql(`
  mutation SessionsRotate($userId: ID!) { rotateToken(userId: $userId) { __typename ... on CreateUserPayload { token } } }
`);
const SET_ACTIVE = graphql(`
  mutation SessionsSetActive($userId: ID!, $active: Boolean!) { setUserActive(userId: $userId, active: $active) { __typename } }
`);
const SET_ADMIN = graphql(`
  mutation SessionsSetAdmin($userId: ID!, $isAdmin: Boolean!) { setAdmin(userId: $userId, isAdmin: $isAdmin) { __typename } }
`);
const DELETE = graphql(`
  mutation SessionsDelete($userId: ID!) { deleteUser(userId: $userId) { __typename } }
`);
const RUN_STATUS = graphql(`
  query SessionsRunStatus($id: ID!) { run(id: $id) { status terminationReason } }
`);
const CANCEL = graphql(`
  mutation SessionsCancel($id: ID!) { cancelRun(id: $id) { __typename } }
`);
const GRANT_WRITE = graphql(`
  mutation SessionsGrantWrite($userId: ID!) { grantTable(userId: $userId, table: "customers", mode: WRITE) { __typename } }
`);
const ENABLE_TOOL = graphql(`
  mutation SessionsEnableTool($name: String!) { setToolEnabled(name: $name, enabled: true) { enabled } }
`);

/** 200 ms per provider call, up to 50 rounds: a run that stays RUNNING for seconds unless cancelled. */
const LOOPING = [{ content: '', toolCalls: [{ name: 'describe_tables', arguments: {} }] }];
const RENAME = { name: 'update_record', arguments: { table: 'customers', key: { column: 'id', value: '3' }, changes: { name: 'Never' } } };

/** A graphql-ws client and the code of its first close. */
interface Watched {
  readonly client: Client;
  readonly closeCode: Promise<number>;
}

/** A subscription followed as it goes: its events so far, and how it ended. */
interface Followed {
  readonly events: RunEvent[];
  readonly first: Promise<RunEvent>;
  readonly ended: Promise<'complete' | 'error'>;
}

describe.each(TEST_DATABASES)('sessions of a user who loses access on %s', (kind) => {
  let served: ServedApp<'slow' | 'writer'>;
  let t: TestApp;
  let names = 0;
  const clients: Client[] = [];
  const sockets: RawSocket[] = [];


  async function newUser(prefix: string, isAdmin = false): Promise<{ id: string; token: string }> {
    const created = member((await t.gql(CREATE_USER, { name: `${prefix}-${names++}`, isAdmin })).data?.createUser, 'CreateUserPayload');
    return { id: created.user.id, token: created.token };
  }

  function watch(token: string): Watched {
    const client = wsClient(served.url, token);
    clients.push(client);
    const closeCode = new Promise<number>((resolve) => client.on('closed', (event) => resolve((event as { code: number }).code)));
    return { client, closeCode };
  }

  function follow(client: Client, query: string, variables: Record<string, unknown>): Followed {
    const events: RunEvent[] = [];
    let firstEvent!: (event: RunEvent) => void;
    const first = new Promise<RunEvent>((resolve) => (firstEvent = resolve));
    const ended = new Promise<'complete' | 'error'>((resolve) => {
      client.subscribe(
        { query, variables },
        {
          next: (result) => {
            const event = Object.values(result.data as Record<string, RunEvent>)[0]!;
            events.push(event);
            firstEvent(event);
          },
          error: () => resolve('error'),
          complete: () => resolve('complete'),
        },
      );
    });
    return { events, first, ended };
  }

  /** Starts a slow run as `token` over graphql-ws; resolves with its id once it is running. */
  async function slowRun(watched: Watched): Promise<{ runId: string; stream: Followed }> {
    const stream = follow(watched.client, textOf(RUN_AGENT), { input: { configurationId: served.configurations.slow, prompt: 'loop' } });
    const started = await stream.first;
    return { runId: member(started, 'RunStartedEvent').run.id, stream };
  }

  const runStatus = async (runId: string) => (await t.gql(RUN_STATUS, { id: runId })).data?.run;
  const settled = (runId: string) =>
    eventually(() => runStatus(runId), (run) => run !== null && run !== undefined && !['RUNNING', 'WAITING_FOR_APPROVAL'].includes(run.status));

  beforeAll(async () => {
    served = await startServedApp(kind, {
      slow: { replies: LOOPING, delayMs: 200, maxIterations: 50, privacyLevel: 'FULL' },
      writer: { replies: [{ content: '', toolCalls: [RENAME] }, { content: 'Done.' }], allowedToolGroups: ['editing'] },
    });
    t = served.t;
    await seedRecords(t.app.services.db);
    await t.gql(ENABLE_TOOL, { name: 'update_record' });
  });
  afterAll(async () => {
    for (const client of clients) await client.dispose();
    for (const socket of sockets) await socket.close();
    await served?.t.stop();
  });

  it("should close every graphql-ws socket of a deactivated user with 4403, end their subscriptions and cancel their run; another user's socket stays", async () => {
    const user = await newUser('deactivated');
    const other = await newUser('bystander');
    const running = watch(user.token);
    const { runId, stream } = await slowRun(running);
    const watching = watch(user.token);
    const replay = follow(watching.client, textOf(RUN_EVENTS), { runId });
    await replay.first;
    const bystander = watch(other.token);
    const { runId: otherRunId, stream: otherStream } = await slowRun(bystander);

    expect((await t.gql(SET_ACTIVE, { userId: user.id, active: false })).data?.setUserActive.__typename).toBe('User');
    expect(await running.closeCode).toBe(4403);
    expect(await watching.closeCode).toBe(4403);
    expect(await stream.ended).toBe('error');
    expect(await replay.ended).toBe('error');
    expect(await settled(runId)).toEqual({ status: 'CANCELLED', terminationReason: 'CANCELLED' });

    // The other user's run and socket go on.
    const before = otherStream.events.length;
    await eventually(() => otherStream.events.length, (count) => count > before + 1);
    expect((await runStatus(otherRunId))?.status).toBe('RUNNING');
    await t.gql(CANCEL, { id: otherRunId });
    expect(await otherStream.ended).toBe('complete');

    // Refused at connect from now on; reactivated, the same token connects again.
    const refused = await RawSocket.open(served.url);
    sockets.push(refused);
    refused.send({ type: 'connection_init', payload: { authorization: `Bearer ${user.token}` } });
    expect((await refused.closed).code).toBe(4403);
    await t.gql(SET_ACTIVE, { userId: user.id, active: true });
    const back = await RawSocket.open(served.url, user.token);
    sockets.push(back);
    back.subscribe('me', '{ viewer { active } }');
    expect((await back.operation('me'))[0]).toMatchObject({ type: 'next', payload: { data: { viewer: { active: true } } } });
  });

  it('should close the sockets with 4403 when the token is rotated; the old token is refused at connect, the new one connects', async () => {
    const user = await newUser('rotated');
    const socket = await RawSocket.open(served.url, user.token);
    sockets.push(socket);
    const rotated = member((await t.gql(ROTATE, { userId: user.id })).data?.rotateToken, 'CreateUserPayload');
    expect((await socket.closed).code).toBe(4403);
    const old = await RawSocket.open(served.url);
    sockets.push(old);
    old.send({ type: 'connection_init', payload: { authorization: `Bearer ${user.token}` } });
    expect((await old.closed).code).toBe(4403);
    const fresh = await RawSocket.open(served.url, rotated.token);
    sockets.push(fresh);
    fresh.subscribe('me', '{ viewer { id } }');
    expect((await fresh.operation('me'))[0]).toMatchObject({ type: 'next', payload: { data: { viewer: { id: user.id } } } });
  });

  it('should close the sockets of a deleted user, and of a demoted admin, with 4403', async () => {
    const leaver = await newUser('deleted');
    const demoted = await newUser('demoted', true);
    const leaverSocket = await RawSocket.open(served.url, leaver.token);
    const demotedSocket = await RawSocket.open(served.url, demoted.token);
    sockets.push(leaverSocket, demotedSocket);
    expect((await t.gql(DELETE, { userId: leaver.id })).data?.deleteUser.__typename).toBe('DeleteUserPayload');
    expect((await leaverSocket.closed).code).toBe(4403);
    expect((await t.gql(SET_ADMIN, { userId: demoted.id, isAdmin: false })).data?.setAdmin.__typename).toBe('User');
    expect((await demotedSocket.closed).code).toBe(4403);
    // Demoted, not locked out: the same token connects again, as a user.
    const again = await RawSocket.open(served.url, demoted.token);
    sockets.push(again);
    again.subscribe('me', '{ viewer { isAdmin } }');
    expect((await again.operation('me'))[0]).toMatchObject({ payload: { data: { viewer: { isAdmin: false } } } });
  });

  it('should refuse the next operation of an open socket whose user was deactivated without a notification (by another instance) and close it with 4403', async () => {
    const user = await newUser('elsewhere');
    const socket = await RawSocket.open(served.url, user.token);
    sockets.push(socket);
    const rawId = Buffer.from(user.id, 'base64').toString('utf8').split(':')[1]!;
    await t.app.services.db.updateTable('users').set({ active: false }).where('id', '=', rawId).execute();
    const runsBefore = await t.app.services.db.selectFrom('runs').select('id').where('user_id', '=', rawId).execute();
    socket.subscribe('late', RUN_AGENT, { input: { configurationId: served.configurations.slow, prompt: 'loop' } });
    expect((await socket.closed).code).toBe(4403);
    expect(socket.frames.filter((frame) => frame.includes('"next"'))).toEqual([]);
    expect(await t.app.services.db.selectFrom('runs').select('id').where('user_id', '=', rawId).execute()).toEqual(runsBefore);
  });

  it('should end an open SSE stream of a user who loses access, while the run it watched goes on', async () => {
    const watcher = await newUser('sse-watcher', true);
    const owner = await newUser('sse-owner');
    const { runId } = await slowRun(watch(owner.token));
    const response = await fetch(served.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${watcher.token}` },
      body: JSON.stringify({ query: textOf(RUN_EVENTS), variables: { runId } }),
    });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('RunStepEvent')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended early: ${text}`);
      text += value;
    }
    expect((await t.gql(ROTATE, { userId: watcher.id })).data?.rotateToken.__typename).toBe('CreateUserPayload');
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    expect(text).not.toContain('RunFinishedEvent');
    expect((await runStatus(runId))?.status).toBe('RUNNING');
    await t.gql(CANCEL, { id: runId });
    await settled(runId);
  });

  it("should settle a deactivated user's run that waits for approval as CANCELLED", async () => {
    const user = await newUser('waiting');
    await t.gql(GRANT_WRITE, { userId: user.id });
    const proposing = watch(user.token);
    const stream = follow(proposing.client, textOf(RUN_AGENT), { input: { configurationId: served.configurations.writer, prompt: 'Rename customer 3' } });
    expect(await stream.ended).toBe('complete');
    const suspended = member(stream.events.at(-1), 'RunSuspendedEvent');
    expect(suspended.run.status).toBe('WAITING_FOR_APPROVAL');
    await t.gql(SET_ACTIVE, { userId: user.id, active: false });
    expect(await settled(suspended.run.id)).toEqual({ status: 'CANCELLED', terminationReason: 'CANCELLED' });
  });
});
