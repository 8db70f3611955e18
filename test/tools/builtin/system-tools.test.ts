import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_ACTOR_ERROR, NOT_ADMIN_ERROR } from '../../../src/tools/builtin/actor-guard.ts';
import { fetchLogsTool, MAX_LOG_LINES } from '../../../src/tools/builtin/fetch-logs.ts';
import { getEnvRawTool, getEnvTool } from '../../../src/tools/builtin/get-env.ts';
import { getRuntimeInfoTool } from '../../../src/tools/builtin/get-runtime-info.ts';
import { REDACTED_VALUE } from '../../../src/redaction/masking.ts';
import { QUARANTINE_CLOSE, QUARANTINE_OPEN } from '../../../src/tools/quarantine.ts';
import type { ToolData } from '../../../src/tools/data.ts';
import type { Actor } from '../../../src/tools/tool.ts';
import { openMigratedDb, TEST_DATABASES } from '../../helpers/databases.ts';
import { invoke, toolContext, toolDataOver, untouchableData } from './helpers.ts';

const admin: Actor = { id: '00000000-0000-4000-8000-000000000001', name: 'root', isAdmin: true };
const member: Actor = { id: '00000000-0000-4000-8000-000000000002', name: 'member', isAdmin: false };

/** Every value here that contains "canary" must never be shown by get_env. */
const ENVIRONMENT = {
  OPENAI_API_KEY: 'sk-canary-openai-0123456789abcdef',
  AIRLOCK_ADMIN_TOKEN: 'canary-admin-token-0123456789',
  AIRLOCK_MASTER_KEY: 'canary-master-key',
  DATABASE_URL: 'postgres://airlock:canary-db-password@db.internal:5432/airlock',
  DB_PASS: 'canary-db-pass',
  SMTP_PASSWORD: 'canary-smtp',
  GITHUB_AUTH: 'canary-gh-auth',
  CLIENT_SECRET: 'canary-client-secret',
  AWS_SECRET_ACCESS_KEY: 'canary-aws',
  GOOGLE_APPLICATION_CREDENTIALS: '/canary/creds.json',
  SSH_PRIVATE_KEY_PATH: '/canary/id_ed25519',
  REDIS_URL: 'redis://default:canary-redis-password@cache:6379/0',
  WEBHOOK_ENDPOINT: 'https://hooks.example.com/notify?token=canary-query-token',
  MULTILINE_NOTE: 'first\nsecond',
  HOME: '/home/airlock',
  NODE_ENV: 'production',
  PORT: '4000',
  PWD: '/srv/airlock',
  KEYBOARD_LAYOUT: 'us',
  LOG_LEVEL: 'info',
  UNSET_VALUE: undefined,
};

const LOG_LINES = [
  '{"level":30,"time":1767225600000,"msg":"listening","port":4000}',
  '{"level":50,"msg":"provider call failed for https://user:canary-log-password@api.example.com/v1","provider":"OPENAI"}',
  '{"level":50,"msg":"upstream said 401","header":"Authorization: Bearer canary0bearer0token0123"}',
  '{"level":40,"msg":"key in error text: sk-proj-canary0123456789abcdefghij"}',
  '{"level":40,"msg":"retrying","attempt":2}\n',
];

describe.each(TEST_DATABASES)('system tools (%s)', (kind) => {
  let dispose: () => Promise<void>;
  let data: ToolData;
  const askedFor: number[] = [];

  beforeAll(async () => {
    const opened = await openMigratedDb(kind);
    dispose = opened.dispose;
    data = toolDataOver(opened.handle.db, kind, {
      environment: Object.freeze({ ...ENVIRONMENT }),
      recentLogs: (limit) => {
        askedFor.push(limit);
        return LOG_LINES.slice(-limit);
      },
    });
  });

  afterAll(async () => {
    await dispose();
  });

  const asAdmin = () => toolContext(data, admin);

  it('get_env should redact secret-named variables and passwords in URLs', async () => {
    const result = await invoke(getEnvTool, {}, asAdmin());
    expect(result.isError).toBe(false);
    expect(result.content).not.toContain('canary');
    const lines = new Map(
      result.content
        .split('\n')
        .slice(1)
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    for (const name of [
      'OPENAI_API_KEY',
      'AIRLOCK_ADMIN_TOKEN',
      'AIRLOCK_MASTER_KEY',
      'DATABASE_URL',
      'DB_PASS',
      'SMTP_PASSWORD',
      'GITHUB_AUTH',
      'CLIENT_SECRET',
      'AWS_SECRET_ACCESS_KEY',
      'GOOGLE_APPLICATION_CREDENTIALS',
      'SSH_PRIVATE_KEY_PATH',
    ]) {
      expect(lines.get(name), name).toBe(REDACTED_VALUE);
    }
    expect(lines.get('REDIS_URL')).toBe('redis://default:***@cache:6379/0');
    expect(lines.get('WEBHOOK_ENDPOINT')).toBe('https://hooks.example.com/notify?token=***');
    expect(lines.get('HOME')).toBe('/home/airlock');
    expect(lines.get('PWD')).toBe('/srv/airlock');
    expect(lines.get('KEYBOARD_LAYOUT')).toBe('us');
    expect(lines.get('MULTILINE_NOTE')).toBe('first\\nsecond');
    expect(lines.has('UNSET_VALUE')).toBe(false);
    expect([...lines.keys()]).toEqual([...lines.keys()].sort());
  });

  it('get_env should filter by a case-insensitive name prefix', async () => {
    const result = await invoke(getEnvTool, { prefix: 'airlock_' }, asAdmin());
    expect(result.content).toBe(
      [
        '2 environment variables starting with "airlock_" (secret values redacted):',
        `AIRLOCK_ADMIN_TOKEN=${REDACTED_VALUE}`,
        `AIRLOCK_MASTER_KEY=${REDACTED_VALUE}`,
      ].join('\n'),
    );
    expect((await invoke(getEnvTool, { prefix: 'NOPE_' }, asAdmin())).content).toBe('No environment variables starting with "NOPE_".');
  });

  it('get_env_raw should show values verbatim', async () => {
    const result = await invoke(getEnvRawTool, {}, asAdmin());
    expect(result.content).toContain(`OPENAI_API_KEY=${ENVIRONMENT.OPENAI_API_KEY}`);
    expect(result.content).toContain(`DATABASE_URL=${ENVIRONMENT.DATABASE_URL}`);
    expect(result.content).toContain(`REDIS_URL=${ENVIRONMENT.REDIS_URL}`);
  });

  it('get_runtime_info should report node version, uptime, memory and database kind', async () => {
    const result = await invoke(getRuntimeInfoTool, {}, asAdmin());
    const lines = result.content.split('\n');
    expect(lines[0]).toBe(`node: ${process.version}`);
    expect(lines[1]).toMatch(/^uptime: (89|9\d|1\d\d) s$/);
    expect(lines[2]).toMatch(/^memory: rss \d+\.\d MiB, heap used \d+\.\d MiB$/);
    expect(lines[3]).toBe(kind === 'pglite' ? 'database: pglite (embedded)' : 'database: postgres');
    expect(data.runtimeInfo().dbKind).toBe(kind);
  });

  it('fetch_logs should return recent lines, oldest first, redacted, quoted and in the quarantine envelope', async () => {
    const result = await invoke(fetchLogsTool, {}, asAdmin());
    expect(result.content).not.toContain('canary');
    const lines = result.content.split('\n');
    expect(lines[0]).toBe(QUARANTINE_OPEN);
    expect(lines[1]).toMatch(/^5 most recent log lines, oldest first\. /);
    expect(lines.slice(2)).toEqual([
      '2026-01-01T00:00:00.000Z INFO "listening" port=4000',
      'ERROR "provider call failed for https://user:***@api.example.com/v1" provider="OPENAI"',
      // An unreviewed field (`header`) is left out altogether.
      'ERROR "upstream said 401"',
      'WARN "key in error text: ***"',
      'WARN "retrying"',
      QUARANTINE_CLOSE,
    ]);

    askedFor.length = 0;
    const two = await invoke(fetchLogsTool, { limit: 2 }, asAdmin());
    expect(askedFor).toEqual([2]);
    expect(two.content.split('\n')).toHaveLength(5);
    expect(fetchLogsTool.parameters.safeParse({ limit: MAX_LOG_LINES + 1 }).success).toBe(false);
  });

  it('should refuse non-admins and missing users, reading nothing', async () => {
    for (const tool of [getEnvTool, getEnvRawTool, getRuntimeInfoTool, fetchLogsTool]) {
      const { data: untouchable, touched } = untouchableData();
      expect((await invoke(tool, {}, toolContext(untouchable, member))).content).toBe(NOT_ADMIN_ERROR);
      expect((await invoke(tool, {}, toolContext(untouchable, null))).content).toBe(NO_ACTOR_ERROR);
      expect(touched).toEqual([]);
    }
  });
});
