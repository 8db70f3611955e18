import { createHash } from 'node:crypto';
import { type RawBuilder, sql } from 'kysely';
import { seedRecords } from '../../src/db/repositories/records-seed.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../gql/gql.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { member, textOf } from '../helpers/documents.ts';
import { RUN_AGENT, scriptedConfiguration, sseEvents } from '../helpers/runs.ts';

/** The token lifecycle over HTTP and SSE: rotate, deactivate, demote, delete (issue 13). */

const CREATE_USER = graphql(`
  mutation LifecycleCreateUser($name: String!, $isAdmin: Boolean) {
    createUser(input: { name: $name, isAdmin: $isAdmin }) { __typename ... on CreateUserPayload { token user { id name } } ... on Error { message } }
  }
`);
const ROTATE = graphql(`
  mutation LifecycleRotate($userId: ID!) {
    rotateToken(userId: $userId) { __typename ... on CreateUserPayload { token user { id name tokenRotatedAt } } ... on Error { message } }
  }
`);
const SET_ACTIVE = graphql(`
  mutation LifecycleSetActive($userId: ID!, $active: Boolean!) {
    setUserActive(userId: $userId, active: $active) { __typename ... on User { id active isAdmin } ... on Error { message } }
  }
`);
const SET_ADMIN = graphql(`
  mutation LifecycleSetAdmin($userId: ID!, $isAdmin: Boolean!) {
    setAdmin(userId: $userId, isAdmin: $isAdmin) { __typename ... on User { id active isAdmin } ... on Error { message } }
  }
`);
const DELETE = graphql(`
  mutation LifecycleDelete($userId: ID!, $runs: DeleteUserRuns, $reassignTo: ID) {
    deleteUser(userId: $userId, runs: $runs, reassignTo: $reassignTo) {
      __typename
      ... on DeleteUserPayload { id reassignedRuns purgedRuns }
      ... on ValidationError { message issues { path message } }
      ... on Error { message }
    }
  }
`);
const VIEWER = graphql(`
  query LifecycleViewer { viewer { id name active isAdmin } }
`);
const USERS = graphql(`
  query LifecycleUsers { users { id name active isAdmin tokenRotatedAt } }
`);
const RUN_OWNER = graphql(`
  query LifecycleRunOwner($id: ID!) { run(id: $id) { id user { name } } }
`);
const SET_BUDGET = graphql(`
  mutation LifecycleSetBudget($subjectId: ID!) { setBudget(input: { subjectId: $subjectId, period: DAILY, maxRequests: 100 }) { __typename } }
`);
const GRANT = graphql(`
  mutation LifecycleGrant($userId: ID!) { grantTable(userId: $userId, table: "customers") { __typename } }
`);

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');
const rawId = (globalId: string) => Buffer.from(globalId, 'base64').toString('utf8').split(':').slice(1).join(':');

describe.each(TEST_DATABASES)('the token lifecycle on %s', (kind) => {
  let t: TestApp;
  let chat: string;
  let names = 0;

  /** A new user; returns its global id and token. */
  async function newUser(prefix: string, isAdmin = false): Promise<{ id: string; token: string; name: string }> {
    const name = `${prefix}-${names++}`;
    const created = member((await t.gql(CREATE_USER, { name, isAdmin })).data?.createUser, 'CreateUserPayload');
    return { id: created.user.id, token: created.token, name };
  }

  /** One runAgent over server-sent events as `token`; returns the finished run's global id. */
  async function runOverSse(token: string): Promise<string> {
    const response = await t.fetch({
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: textOf(RUN_AGENT), variables: { input: { configurationId: chat, prompt: 'hello' } } }),
    });
    const events = sseEvents(await response.text(), 'runAgent');
    expect(events.at(-1)).toMatchObject({ __typename: 'RunFinishedEvent', run: { status: 'COMPLETED' } });
    return events.at(-1).run.id;
  }

  /** The error an unknown token gets, for comparison. */
  const unknownTokenErrors = async () => (await t.gql(VIEWER, {}, 'alk_not-a-token')).errors;

  const activeAdminCount = async () =>
    Number(
      (await t.app.services.db.selectFrom('users').select((eb) => eb.fn.countAll().as('n')).where('is_admin', '=', true).where('active', '=', true).executeTakeFirstOrThrow()).n,
    );

  beforeAll(async () => {
    t = await startTestApp(kind);
    chat = await scriptedConfiguration(t, 'chat', { replies: [{ content: 'Hello.' }] });
    await seedRecords(t.app.services.db);
  });
  afterAll(() => t.stop());

  describe('rotateToken', () => {
    it('should refuse the old token at once, accept the new one, and store only the new digest', async () => {
      const user = await newUser('rotated');
      expect((await t.gql(VIEWER, {}, user.token)).data?.viewer?.name).toBe(user.name);
      const rotated = member((await t.gql(ROTATE, { userId: user.id })).data?.rotateToken, 'CreateUserPayload');
      expect(rotated.token).toMatch(/^alk_[A-Za-z0-9_-]{43}$/);
      expect(rotated.token).not.toBe(user.token);
      expect(rotated.user.tokenRotatedAt).not.toBeNull();
      const old = await t.gql(VIEWER, {}, user.token);
      expect(old.data?.viewer ?? null).toBeNull();
      expect(old.errors).toEqual(await unknownTokenErrors());
      expect((await t.gql(VIEWER, {}, rotated.token)).data?.viewer).toMatchObject({ id: user.id, active: true });
      const row = await t.app.services.db.selectFrom('users').select('token_hash').where('id', '=', rawId(user.id)).executeTakeFirstOrThrow();
      expect(row.token_hash).toBe(digest(rotated.token));
    });

    it('should show the new token only in the rotation answer: no field of User reads a token back', async () => {
      const user = await newUser('once');
      const rotated = member((await t.gql(ROTATE, { userId: user.id })).data?.rotateToken, 'CreateUserPayload');
      const fields = (await t.gql(`{ __type(name: "User") { fields { name } } }`)).data.__type.fields.map((field: { name: string }) => field.name);
      expect(fields.filter((name: string) => /token/i.test(name))).toEqual(['tokenRotatedAt']);
      const everything = JSON.stringify((await t.gql(`{ users { id name isAdmin active createdAt tokenRotatedAt tableGrants { table } } }`)).data);
      expect(everything).toContain(user.name);
      expect(everything).not.toContain(rotated.token);
      expect(everything).not.toContain(digest(rotated.token));
    });

    it('should let an admin rotate their own token: the answer carries it, the old one is refused', async () => {
      const admin = await newUser('self-rotating-admin', true);
      const rotated = member((await t.gql(ROTATE, { userId: admin.id }, admin.token)).data?.rotateToken, 'CreateUserPayload');
      expect(rotated.user.id).toBe(admin.id);
      expect((await t.gql(VIEWER, {}, admin.token)).errors?.[0].extensions.code).toBe('UNAUTHENTICATED');
      expect((await t.gql(VIEWER, {}, rotated.token)).data?.viewer).toMatchObject({ id: admin.id, isAdmin: true });
      expect((await t.gql(DELETE, { userId: admin.id })).data?.deleteUser.__typename).toBe('DeleteUserPayload');
    });

    it('should answer NotFoundError for an unknown user', async () => {
      const unknown = Buffer.from('User:00000000-0000-4000-8000-000000000000').toString('base64');
      expect((await t.gql(ROTATE, { userId: unknown })).data?.rotateToken.__typename).toBe('NotFoundError');
    });
  });

  describe('setUserActive', () => {
    it('should refuse an inactive user on HTTP exactly like an unknown token, and accept the same token again once reactivated', async () => {
      const user = await newUser('paused');
      expect(member((await t.gql(SET_ACTIVE, { userId: user.id, active: false })).data?.setUserActive, 'User')).toMatchObject({ active: false });
      const refused = await t.gql(VIEWER, {}, user.token);
      expect(refused.data?.viewer ?? null).toBeNull();
      expect(refused.errors).toEqual(await unknownTokenErrors());
      expect(refused.errors?.[0].extensions.code).toBe('UNAUTHENTICATED');
      expect((await t.gql(USERS)).data?.users.find((row) => row.id === user.id)).toMatchObject({ active: false });

      expect(member((await t.gql(SET_ACTIVE, { userId: user.id, active: true })).data?.setUserActive, 'User')).toMatchObject({ active: true });
      expect((await t.gql(VIEWER, {}, user.token)).data?.viewer).toEqual({ id: user.id, name: user.name, active: true, isAdmin: false });
    });

    it('should refuse an inactive user on SSE: no run starts', async () => {
      const user = await newUser('sse-paused');
      await t.gql(SET_ACTIVE, { userId: user.id, active: false });
      const runsBefore = await t.app.services.db.selectFrom('runs').select('id').where('user_id', '=', rawId(user.id)).execute();
      const response = await t.fetch({
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${user.token}` },
        body: JSON.stringify({ query: textOf(RUN_AGENT), variables: { input: { configurationId: chat, prompt: 'hello' } } }),
      });
      const body = await response.text();
      expect(body).toContain('UNAUTHENTICATED');
      expect(sseEvents(body, 'runAgent')).toEqual([]);
      expect(await t.app.services.db.selectFrom('runs').select('id').where('user_id', '=', rawId(user.id)).execute()).toEqual(runsBefore);
    });
  });

  describe('the last active admin', () => {
    it('should refuse to demote, deactivate or delete the last active admin, naming what to do', async () => {
      // A second admin who is inactive does not count.
      const dormant = await newUser('dormant-admin', true);
      await t.gql(SET_ACTIVE, { userId: dormant.id, active: false });
      const self = (await t.gql(VIEWER)).data!.viewer!.id;
      for (const answer of [
        (await t.gql(SET_ADMIN, { userId: self, isAdmin: false })).data?.setAdmin,
        (await t.gql(SET_ACTIVE, { userId: self, active: false })).data?.setUserActive,
        (await t.gql(DELETE, { userId: self, runs: 'PURGE' })).data?.deleteUser,
      ]) {
        expect(answer).toEqual({ __typename: 'ConflictError', message: '"admin" is the last active admin; make another user admin first.' });
      }
      expect((await t.gql(VIEWER)).data?.viewer).toMatchObject({ isAdmin: true, active: true });
      await t.gql(DELETE, { userId: dormant.id });
    });

    it('should let an admin step down once another admin is active', async () => {
      const first = await newUser('first-admin', true);
      const second = await newUser('second-admin', true);
      expect(member((await t.gql(SET_ADMIN, { userId: first.id, isAdmin: false }, first.token)).data?.setAdmin, 'User').isAdmin).toBe(false);
      expect((await t.gql(SET_ADMIN, { userId: second.id, isAdmin: true }, first.token)).errors?.[0].extensions.code).toBe('FORBIDDEN');
      expect(member((await t.gql(SET_ACTIVE, { userId: second.id, active: false })).data?.setUserActive, 'User').active).toBe(false);
      await t.gql(DELETE, { userId: first.id });
      await t.gql(DELETE, { userId: second.id });
    });

    it('should keep one active admin when every admin demotes or deactivates another at the same moment', async () => {
      // Eight admins in a ring, each demoting (or deactivating) the next one, all at once. Taken one
      // after the other, seven succeed and the last is refused; without the lock each would count
      // the others as still there and all eight would succeed. A request whose own admin was
      // already taken away may also be refused as FORBIDDEN or UNAUTHENTICATED: fewer succeed then.
      const ring = await Promise.all(Array.from({ length: 8 }, () => newUser('ring-admin', true)));
      const bootstrap = (await t.gql(VIEWER)).data!.viewer!.id;
      // The bootstrap admin steps aside: the ring holds the only active admins.
      expect(member((await t.gql(SET_ADMIN, { userId: bootstrap, isAdmin: false }, ring[0]!.token)).data?.setAdmin, 'User').isAdmin).toBe(false);
      for (let round = 0; round < 4; round += 1) {
        expect(await activeAdminCount()).toBe(ring.length);
        const answers = await Promise.all(
          ring.map(async (actor, index) => {
            const target = ring[(index + 1) % ring.length]!;
            const result =
              (index + round) % 2 === 0
                ? await t.gql(SET_ADMIN, { userId: target.id, isAdmin: false }, actor.token)
                : await t.gql(SET_ACTIVE, { userId: target.id, active: false }, actor.token);
            return result.data ? Object.values(result.data)[0]!.__typename : result.errors![0].extensions.code;
          }),
        );
        const succeeded = answers.filter((answer) => answer === 'User').length;
        expect(answers.filter((answer) => answer === 'ConflictError').length).toBeLessThanOrEqual(1);
        expect(answers.every((answer) => ['User', 'ConflictError', 'FORBIDDEN', 'UNAUTHENTICATED'].includes(answer))).toBe(true);
        expect(succeeded).toBeGreaterThan(0);
        expect(await activeAdminCount()).toBe(ring.length - succeeded);
        expect(await activeAdminCount()).toBeGreaterThanOrEqual(1);
        // A survivor restores the ring for the next round.
        const admins = await t.app.services.db.selectFrom('users').select('id').where('is_admin', '=', true).where('active', '=', true).execute();
        const survivor = ring.find((user) => admins.some((row) => row.id === rawId(user.id)))!;
        for (const user of ring) {
          await t.gql(SET_ACTIVE, { userId: user.id, active: true }, survivor.token);
          await t.gql(SET_ADMIN, { userId: user.id, isAdmin: true }, survivor.token);
        }
      }
      // Back to the bootstrap admin alone, for the other tests.
      await t.gql(SET_ADMIN, { userId: bootstrap, isAdmin: true }, ring[0]!.token);
      for (const user of ring) expect((await t.gql(DELETE, { userId: user.id })).data?.deleteUser.__typename).toBe('DeleteUserPayload');
      expect(await activeAdminCount()).toBe(1);
    });
  });

  describe('deleteUser', () => {
    /** Rows that name a user or a run that no longer exists (the tables without a foreign key included). */
    async function orphans(): Promise<Record<string, number>> {
      const count = async (query: RawBuilder<{ n: string | number }>) => Number((await query.execute(t.app.services.db)).rows[0]!.n);
      return {
        runs: await count(sql`select count(*) as n from runs r where r.user_id is not null and not exists (select 1 from users u where u.id = r.user_id)`),
        usageUsers: await count(sql`select count(*) as n from usage_records r where r.user_id is not null and not exists (select 1 from users u where u.id = r.user_id)`),
        usageRuns: await count(sql`select count(*) as n from usage_records r where r.run_id is not null and not exists (select 1 from runs x where x.id = r.run_id)`),
        budgets: await count(sql`select count(*) as n from budgets b where b.scope = 'USER' and not exists (select 1 from users u where u.id = b.subject_id)`),
        grants: await count(sql`select count(*) as n from table_grants g where not exists (select 1 from users u where u.id = g.user_id)`),
        steps: await count(sql`select count(*) as n from run_steps s where not exists (select 1 from runs x where x.id = s.run_id)`),
      };
    }
    const NO_ORPHANS = { runs: 0, usageUsers: 0, usageRuns: 0, budgets: 0, grants: 0, steps: 0 };

    /** A user with two finished runs, a budget and a table grant. */
    async function userWithHistory(prefix: string) {
      const user = await newUser(prefix);
      const runIds = [await runOverSse(user.token), await runOverSse(user.token)];
      expect((await t.gql(SET_BUDGET, { subjectId: user.id })).data?.setBudget.__typename).toBe('Budget');
      expect((await t.gql(GRANT, { userId: user.id })).data?.grantTable.__typename).toBe('User');
      const usage = await t.app.services.db.selectFrom('usage_records').select(['id', 'cost']).where('user_id', '=', rawId(user.id)).execute();
      expect(usage.length).toBeGreaterThan(0);
      return { ...user, runIds, usage };
    }

    it('should refuse while the user owns runs, saying how to go on, and change nothing', async () => {
      const user = await userWithHistory('owner');
      const refused = (await t.gql(DELETE, { userId: user.id })).data?.deleteUser;
      expect(refused).toEqual({
        __typename: 'ConflictError',
        message: `"${user.name}" owns 2 runs; delete again with runs: REASSIGN and reassignTo (another user keeps them) or runs: PURGE (they are deleted; their usage stays counted).`,
      });
      expect((await t.gql(VIEWER, {}, user.token)).data?.viewer?.name).toBe(user.name);
      expect((await t.gql(RUN_OWNER, { id: user.runIds[0]! })).data?.run?.user?.name).toBe(user.name);
    });

    it('should reassign the runs to another user, then delete: the token is refused and nothing is orphaned', async () => {
      const user = await userWithHistory('leaver');
      const heir = await newUser('heir');
      const deleted = member((await t.gql(DELETE, { userId: user.id, runs: 'REASSIGN', reassignTo: heir.id })).data?.deleteUser, 'DeleteUserPayload');
      expect(deleted).toEqual({ __typename: 'DeleteUserPayload', id: user.id, reassignedRuns: 2, purgedRuns: 0 });
      for (const runId of user.runIds) expect((await t.gql(RUN_OWNER, { id: runId })).data?.run?.user?.name).toBe(heir.name);
      expect((await t.gql(RUN_OWNER, { id: user.runIds[0]! }, heir.token)).data?.run?.id).toBe(user.runIds[0]);
      expect((await t.gql(VIEWER, {}, user.token)).errors?.[0].extensions.code).toBe('UNAUTHENTICATED');
      // Usage keeps counting (cost history, configuration budgets) but names no one.
      const usage = await t.app.services.db.selectFrom('usage_records').select(['id', 'user_id', 'run_id']).where('id', 'in', user.usage.map((row) => row.id)).execute();
      expect(usage).toHaveLength(user.usage.length);
      for (const row of usage) expect(row.user_id).toBeNull();
      expect(await orphans()).toEqual(NO_ORPHANS);
    });

    it('should purge the runs and their steps, keep their usage counted, then delete: nothing is orphaned', async () => {
      const user = await userWithHistory('purged');
      const runIds = user.runIds.map(rawId);
      expect((await t.app.services.db.selectFrom('run_steps').select('run_id').where('run_id', 'in', runIds).execute()).length).toBeGreaterThan(0);
      const deleted = member((await t.gql(DELETE, { userId: user.id, runs: 'PURGE' })).data?.deleteUser, 'DeleteUserPayload');
      expect(deleted).toMatchObject({ id: user.id, reassignedRuns: 0, purgedRuns: 2 });
      expect(await t.app.services.db.selectFrom('runs').select('id').where('id', 'in', runIds).execute()).toEqual([]);
      expect(await t.app.services.db.selectFrom('run_steps').select('run_id').where('run_id', 'in', runIds).execute()).toEqual([]);
      const usage = await t.app.services.db.selectFrom('usage_records').select(['id', 'user_id', 'run_id', 'cost']).where('id', 'in', user.usage.map((row) => row.id)).execute();
      expect(usage.map((row) => [row.user_id, row.run_id])).toEqual(user.usage.map(() => [null, null]));
      expect(usage.reduce((sum, row) => sum + row.cost, 0)).toBeCloseTo(user.usage.reduce((sum, row) => sum + row.cost, 0));
      expect(await t.app.services.db.selectFrom('budgets').select('id').where('subject_id', '=', rawId(user.id)).execute()).toEqual([]);
      expect(await t.app.services.db.selectFrom('table_grants').select('user_id').where('user_id', '=', rawId(user.id)).execute()).toEqual([]);
      expect(await orphans()).toEqual(NO_ORPHANS);
    });

    it('should delete a user without runs with the default REFUSE', async () => {
      const user = await newUser('idle');
      expect(member((await t.gql(DELETE, { userId: user.id })).data?.deleteUser, 'DeleteUserPayload')).toMatchObject({ id: user.id, reassignedRuns: 0, purgedRuns: 0 });
      expect((await t.gql(DELETE, { userId: user.id })).data?.deleteUser.__typename).toBe('NotFoundError');
    });

    it('should refuse while a run of the user is in progress, whatever was chosen', async () => {
      const user = await newUser('busy');
      // A run another instance is driving: its row says RUNNING.
      await t.app.services.db
        .insertInto('runs')
        .values({ id: crypto.randomUUID(), configuration_id: null, user_id: rawId(user.id), status: 'RUNNING', prompt: null, privacy_level: 'METADATA' })
        .execute();
      for (const runs of ['PURGE', 'REFUSE'] as const) {
        expect((await t.gql(DELETE, { userId: user.id, runs })).data?.deleteUser).toEqual({
          __typename: 'ConflictError',
          message: `"${user.name}" has 1 run in progress; deactivate the user first (setUserActive with active: false cancels them), then delete once they have ended.`,
        });
      }
      await t.app.services.db.updateTable('runs').set({ status: 'CANCELLED' }).where('user_id', '=', rawId(user.id)).execute();
      expect((await t.gql(DELETE, { userId: user.id, runs: 'PURGE' })).data?.deleteUser.__typename).toBe('DeleteUserPayload');
    });

    it('should name the field when reassignTo is missing, superfluous or the user itself, and NotFound for an unknown heir', async () => {
      const user = await newUser('picky');
      const missing = (await t.gql(DELETE, { userId: user.id, runs: 'REASSIGN' })).data?.deleteUser;
      expect(missing).toMatchObject({ __typename: 'ValidationError', issues: [{ path: ['reassignTo'], message: expect.stringContaining('required with runs: REASSIGN') }] });
      const superfluous = (await t.gql(DELETE, { userId: user.id, runs: 'PURGE', reassignTo: user.id })).data?.deleteUser;
      expect(superfluous).toMatchObject({ __typename: 'ValidationError', issues: [{ path: ['reassignTo'], message: expect.stringContaining('only read with runs: REASSIGN') }] });
      const self = (await t.gql(DELETE, { userId: user.id, runs: 'REASSIGN', reassignTo: user.id })).data?.deleteUser;
      expect(self).toMatchObject({ __typename: 'ValidationError', issues: [{ path: ['reassignTo'] }] });
      const nobody = Buffer.from('User:00000000-0000-4000-8000-000000000000').toString('base64');
      expect((await t.gql(DELETE, { userId: user.id, runs: 'REASSIGN', reassignTo: nobody })).data?.deleteUser.__typename).toBe('NotFoundError');
      expect((await t.gql(VIEWER, {}, user.token)).data?.viewer?.name).toBe(user.name);
    });
  });

  it('should refuse every lifecycle mutation to a non-admin and change nothing', async () => {
    const caller = await newUser('plain');
    const victim = await newUser('victim');
    const attempts = [
      await t.gql(ROTATE, { userId: victim.id }, caller.token),
      await t.gql(SET_ACTIVE, { userId: victim.id, active: false }, caller.token),
      await t.gql(SET_ADMIN, { userId: caller.id, isAdmin: true }, caller.token),
      await t.gql(DELETE, { userId: victim.id }, caller.token),
      // Not even on themselves.
      await t.gql(ROTATE, { userId: caller.id }, caller.token),
    ];
    for (const attempt of attempts) {
      expect(attempt.data).toBeNull();
      expect(attempt.errors?.[0].extensions.code).toBe('FORBIDDEN');
    }
    expect((await t.gql(VIEWER, {}, victim.token)).data?.viewer).toMatchObject({ active: true });
    expect((await t.gql(VIEWER, {}, caller.token)).data?.viewer).toMatchObject({ isAdmin: false, active: true });
  });
});
