import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decodeGlobalID } from '@pothos/plugin-relay';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { deploymentEnv, oneToN, startInstance, type Instance } from '../helpers/instances.ts';
import { TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.ts';
import { scriptedConfiguration } from '../helpers/runs.ts';
import { connectMcp, MCP_RUNS, textOf } from './helpers.ts';
import { attachMcp } from './instances.ts';

/** A built-in every admin may call, which answers with the configurations' names. */
const TOOL = 'list_configurations';

const baseOf = (instance: Instance) => instance.url.replace(/\/graphql$/, '');

/** The session's run and its steps, as `instance` reads them from the database. */
async function sessionRun(instance: Instance, sessionId: string) {
  const listed = await instance.gql(MCP_RUNS, { filter: { kind: 'MCP' } });
  const run = listed.data!.runs.edges.map((edge) => edge.node).find((node) => decodeGlobalID(node.id).id === sessionId);
  if (!run) throw new Error(`no run for the session ${sessionId}`);
  return { status: run.status, steps: run.steps.edges.map((edge) => [edge.node.sequence, edge.node.toolName]) };
}

/**
 * Issue 27: a session outlives the death of the process that opened it (`kill -9`, no goodbye).
 * Real server processes, as an operator runs them.
 */
describe.skipIf(!TEST_REDIS_URL || !process.env.TEST_DATABASE_URL)('an MCP session after its instance was killed (two processes on PostgreSQL and Redis)', () => {
  let database: TestDatabase;
  let a: Instance | undefined;
  let b: Instance | undefined;
  afterAll(async () => {
    await Promise.all([a?.stop('SIGKILL'), b?.stop()]);
    await database?.drop();
  });

  it('should answer on B with the session opened on A after A was killed, its steps going on 1..n', async () => {
    database = await createTestDatabase('postgres');
    const deployment = deploymentEnv({ DATABASE_URL: database.databaseUrl!, REDIS_URL: TEST_REDIS_URL!, AIRLOCK_REDIS_PREFIX: uniquePrefix('mcp-crash') });
    [a, b] = await Promise.all([startInstance(deployment.env), startInstance(deployment.env)]);
    await scriptedConfiguration(a, 'tools', { replies: [], privacyLevel: 'FULL' });
    const onA = await connectMcp(baseOf(a), deployment.adminToken, 'tools');
    const sessionId = onA.transport.sessionId!;
    expect(textOf(await onA.client.callTool({ name: TOOL, arguments: {} }))).toContain('tools');
    await a.stop('SIGKILL');
    await onA.client.close();

    const onB = await attachMcp(baseOf(b), deployment.adminToken, sessionId, onA.transport.protocolVersion);
    expect((await onB.client.listTools()).tools.map((tool) => tool.name)).toContain(TOOL);
    expect(textOf(await onB.client.callTool({ name: TOOL, arguments: {} }))).toContain('tools');
    expect(await sessionRun(b, sessionId)).toEqual({ status: 'RUNNING', steps: oneToN(2).map((sequence) => [sequence, TOOL]) });
    await onB.transport.terminateSession();
    await onB.client.close();
    expect((await sessionRun(b, sessionId)).status).toBe('COMPLETED');
  }, 120_000);
});

/** On the embedded database one process runs at a time: the session is served by the restarted one. */
describe('an MCP session after its process was killed and started again (PGlite)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'airlock-mcp-crash-'));
  let instance: Instance | undefined;
  afterAll(async () => {
    await instance?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('should answer in the restarted process with the session opened before the kill', async () => {
    const deployment = deploymentEnv({ AIRLOCK_DATA_DIR: dataDir });
    instance = await startInstance(deployment.env);
    await scriptedConfiguration(instance, 'tools', { replies: [], privacyLevel: 'FULL' });
    const before = await connectMcp(baseOf(instance), deployment.adminToken, 'tools');
    const sessionId = before.transport.sessionId!;
    expect(textOf(await before.client.callTool({ name: TOOL, arguments: {} }))).toContain('tools');
    await instance.stop('SIGKILL');
    await before.client.close();

    instance = await startInstance(deployment.env);
    const after = await attachMcp(baseOf(instance), deployment.adminToken, sessionId, before.transport.protocolVersion);
    expect(textOf(await after.client.callTool({ name: TOOL, arguments: {} }))).toContain('tools');
    expect(await sessionRun(instance, sessionId)).toEqual({ status: 'RUNNING', steps: oneToN(2).map((sequence) => [sequence, TOOL]) });
    await after.transport.terminateSession();
    await after.client.close();
  }, 120_000);
});
