import type { Db } from '../db/database.ts';
import { listConfigurations } from '../db/repositories/configurations.ts';
import { seedRecords } from '../db/repositories/records-seed.ts';
import { createConfiguration } from './configurations.ts';
import { createModel } from './models.ts';
import { createProvider, type ProviderDeps } from './providers.ts';

export const DEMO_CONFIGURATION = 'demo-scripted';

/**
 * A network-free demo: the `records` sample data, a SCRIPTED provider that looks at the tables,
 * reads customers and answers, a free model, and a configuration offering the content and
 * structure groups. Idempotent: an existing demo configuration is left as it is.
 */
/** What seeding reads and writes: the database, and the key box a provider is created with. */
export interface DemoCatalogueDeps {
  readonly db: Db;
  readonly secrets: ProviderDeps['secrets'];
  readonly scrubber: { add(value: string): void };
}

export async function seedDemoCatalogue(services: DemoCatalogueDeps): Promise<void> {
  if ((await listConfigurations(services.db)).some((row) => row.name === DEMO_CONFIGURATION)) return;
  await seedRecords(services.db);
  const provider = await createProvider(
    { db: services.db, secrets: services.secrets, onSecret: (value) => services.scrubber.add(value) },
    {
      name: DEMO_CONFIGURATION,
      kind: 'SCRIPTED',
      settings: {
        replies: [
          { content: 'Let me look at the tables first.', toolCalls: [{ name: 'describe_tables', arguments: {} }] },
          { content: '', toolCalls: [{ name: 'read_records', arguments: { table: 'customers', limit: 3 } }] },
          { content: 'Here are the first three customers; their password hashes are masked by the tool.' },
        ],
      },
    },
  );
  const model = await createModel(services.db, { providerId: provider.id, name: DEMO_CONFIGURATION, providerModelId: 'scripted' });
  await createConfiguration(services.db, {
    name: DEMO_CONFIGURATION,
    modelId: model.id,
    systemPrompt: 'You answer questions about the operator records using the tools.',
    allowedToolGroups: ['content', 'structure'],
  });
}
