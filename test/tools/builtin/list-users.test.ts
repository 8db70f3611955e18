import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_ACTOR_ERROR, NOT_ADMIN_ERROR } from '../../../src/tools/builtin/actor-guard.ts';
import { listUsersRawTool, listUsersTool } from '../../../src/tools/builtin/list-users.ts';
import type { ToolData } from '../../../src/tools/data.ts';
import type { Actor } from '../../../src/tools/tool.ts';
import { openMigratedDb, TEST_DATABASES } from '../../helpers/databases.ts';
import { insertActor, invoke, TOKEN_HASH_CANARY, toolContext, toolDataOver, untouchableData } from './helpers.ts';

describe.each(TEST_DATABASES)('list_users and list_users_raw (%s)', (kind) => {
  let dispose: () => Promise<void>;
  let data: ToolData;
  let admin: Actor;
  let member: Actor;

  beforeAll(async () => {
    const opened = await openMigratedDb(kind);
    dispose = opened.dispose;
    admin = await insertActor(opened.handle.db, 'root', true);
    member = await insertActor(opened.handle.db, 'member', false);
    data = toolDataOver(opened.handle.db, kind);
  });

  afterAll(async () => {
    await dispose();
  });

  it('should list users without token hashes', async () => {
    const result = await invoke(listUsersTool, {}, toolContext(data, admin));
    expect(result.isError).toBe(false);
    expect(result.content).toMatch(/^2 users, oldest first:\n- root: admin, id [0-9a-f-]{36}, created \d{4}-/);
    expect(result.content).toContain(`- member: user, id ${member.id}`);
    expect(result.content).not.toContain(TOKEN_HASH_CANARY);
    expect(JSON.stringify(result.artifacts)).not.toContain(TOKEN_HASH_CANARY);
    expect(JSON.stringify(await data.users.list())).not.toContain(TOKEN_HASH_CANARY);
  });

  it('should list full rows in raw mode, still without token hashes', async () => {
    const result = await invoke(listUsersRawTool, {}, toolContext(data, admin));
    expect(result.isError).toBe(false);
    const rows = result.content
      .split('\n')
      .slice(1)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    // `token_rotated_at` is dropped with every credential-like column name, harmless as it is.
    expect(rows.map((row) => Object.keys(row).sort())).toEqual([
      ['active', 'created_at', 'id', 'is_admin', 'name'],
      ['active', 'created_at', 'id', 'is_admin', 'name'],
    ]);
    expect(rows[0]).toMatchObject({ id: admin.id, name: 'root', is_admin: true });
    expect(result.content).not.toContain(TOKEN_HASH_CANARY);
    expect(result.content).not.toContain('token_hash');
    expect(JSON.stringify(await data.users.listRaw())).not.toContain(TOKEN_HASH_CANARY);
  });

  it('should drop any credential-like column a future row may carry', async () => {
    const leaky: ToolData = {
      ...data,
      users: {
        list: data.users.list,
        listRaw: async () => [{ id: 'u1', name: 'x', token_hash: 'h-canary', session_token: 's-canary', recovery_code_hash: 'r-canary' }],
      },
    };
    const result = await invoke(listUsersRawTool, {}, toolContext(leaky, admin));
    expect(result.content).toContain('"id":"u1"');
    expect(result.content).not.toMatch(/canary/);
  });

  it('should refuse non-admins and missing users, reading nothing', async () => {
    for (const tool of [listUsersTool, listUsersRawTool]) {
      const { data: untouchable, touched } = untouchableData();
      expect((await invoke(tool, {}, toolContext(untouchable, member))).content).toBe(NOT_ADMIN_ERROR);
      expect((await invoke(tool, {}, toolContext(untouchable, null))).content).toBe(NO_ACTOR_ERROR);
      expect(touched).toEqual([]);
    }
  });
});
