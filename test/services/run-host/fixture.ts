import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, RunRow } from '../../../src/db/database.ts';
import { createSecretBox } from '../../../src/db/secret-box.ts';
import { createToolData } from '../../../src/db/repositories/tool-data.ts';
import { findRunsByIds, insertRun } from '../../../src/db/repositories/runs.ts';
import { createRunWriter } from '../../../src/db/run-batch-writer.ts';
import { createLogger, LogRing, SecretScrubber } from '../../../src/logger.ts';
import { createLocalBroadcast } from '../../../src/runtime/broadcast.ts';
import { type RunBusEvent } from '../../../src/runtime/events.ts';
import { createRunEventBus } from '../../../src/runtime/local-bus.ts';
import type { PrivacyLevel } from '../../../src/runtime/privacy.ts';
import type { RunCancellation } from '../../../src/services/run-host/cancellation.ts';
import type { RunHostDeps } from '../../../src/services/run-host/run-host.ts';
import { createConfiguration } from '../../../src/services/configurations.ts';
import { createModel } from '../../../src/services/models.ts';
import { createProvider } from '../../../src/services/providers.ts';
import { createUser, toActor } from '../../../src/services/users.ts';
import type { ScriptedSettings } from '../../../src/providers/scripted.ts';
import type { Actor } from '../../../src/tools/tool.ts';
import { createRegistry } from '../../../src/tools/registry.ts';
import { LogCollector } from '../../helpers/app.ts';
import { openMigratedDb } from '../../helpers/databases.ts';

/**
 * What the unit tests of the run host's parts share: one in-memory PGlite database per test file,
 * the services a run host is built from (no tools, a local bus and broadcast, logs collected), a
 * SCRIPTED configuration (no network), and runs stored as another process left them.
 */

export interface HostFixture {
  readonly db: Db;
  readonly services: RunHostDeps & { readonly bus: ReturnType<typeof createRunEventBus<RunRow>> };
  readonly logs: LogCollector;
  /** Every event the bus carried, in order. */
  readonly published: RunBusEvent<RunRow>[];
  /** Every cancellation broadcast. */
  readonly broadcast: RunCancellation[];
  dispose(): Promise<void>;
}

export async function openHostFixture(): Promise<HostFixture> {
  const opened = await openMigratedDb('pglite');
  const db = opened.handle.db;
  const logs = new LogCollector();
  const scrubber = new SecretScrubber();
  const bus = createRunEventBus<RunRow>();
  const published: RunBusEvent<RunRow>[] = [];
  const publish = bus.publish.bind(bus);
  bus.publish = (draft) => {
    const event = publish(draft);
    published.push(event);
    return event;
  };
  const cancellations = createLocalBroadcast<RunCancellation>((error) => {
    throw error;
  });
  const broadcast: RunCancellation[] = [];
  cancellations.subscribe((message) => void broadcast.push(message));
  const writer = createRunWriter(db);
  const services = {
    db,
    registry: createRegistry([]),
    toolData: createToolData({ db, dbKind: 'pglite', environment: {}, recentLogs: () => [], startedAt: new Date() }),
    secrets: createSecretBox(randomBytes(32)),
    scrubber,
    logger: createLogger({ level: 'info', scrubber, ring: new LogRing(), destination: logs }),
    writer,
    config: { toolTimeoutMs: 5_000 },
    bus,
    cancellations,
  };
  return {
    db,
    services,
    logs,
    published,
    broadcast,
    dispose: () => opened.dispose(),
  };
}

/** A user and a configuration whose SCRIPTED provider answers `settings` (default: "done." at once). */
export async function seedScripted(
  fixture: HostFixture,
  options: { readonly settings?: ScriptedSettings; readonly privacyLevel?: PrivacyLevel; readonly isAdmin?: boolean } = {},
): Promise<{ configurationId: string; actor: Actor }> {
  const { db, services } = fixture;
  const tag = randomUUID().slice(0, 8);
  const provider = await createProvider(
    { db, secrets: services.secrets, onSecret: (value) => services.scrubber.add(value) },
    { name: `scripted-${tag}`, kind: 'SCRIPTED', settings: options.settings ?? { replies: [{ content: 'done.' }] } },
  );
  const model = await createModel(db, { providerId: provider.id, name: `model-${tag}`, providerModelId: 'scripted', inputPricePerMTok: 0, outputPricePerMTok: 0 });
  const configuration = await createConfiguration(db, { name: `configuration-${tag}`, modelId: model.id, privacyLevel: options.privacyLevel ?? 'FULL' });
  const { user } = await createUser(db, { name: `user-${tag}`, isAdmin: options.isAdmin ?? false });
  return { configurationId: configuration.id, actor: toActor(user) };
}

/** A RUNNING agent run whose process holds a lease (epoch 1), as a start stores it. */
export function leasedRun(
  db: Db,
  run: { readonly owner?: string | null; readonly checkpoint?: string | null; readonly userId?: string | null; readonly configurationId?: string | null; readonly id?: string } = {},
): Promise<RunRow> {
  return insertRun(db, {
    id: run.id ?? randomUUID(),
    configuration_id: run.configurationId ?? null,
    user_id: run.userId ?? null,
    status: 'RUNNING',
    prompt: null,
    privacy_level: 'FULL',
    tool_selection: null,
    ...(run.owner === null ? {} : { lease: { owner: run.owner ?? 'instance-gone', ms: 15_000, checkpoint: run.checkpoint ?? null } }),
  });
}

/** Lets the runs' leases lapse now. */
export const lapse = (db: Db, runIds: readonly string[]) =>
  db.updateTable('runs').set({ lease_expires_at: sql<Date>`now() - interval '1 second'` }).where('id', 'in', runIds).execute();

/** Moves a run's lease on to another process (what its claim does). */
export const moveOn = (db: Db, runId: string) =>
  db.updateTable('runs').set({ lease_epoch: sql<number>`lease_epoch + 1`, lease_owner: 'instance-b' }).where('id', '=', runId).execute();

export const runOf = async (db: Db, runId: string): Promise<RunRow> => (await findRunsByIds(db, [runId]))[0]!;

/** Polls `check` until it holds (a deadline, never a fixed wait). */
export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
