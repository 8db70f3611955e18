import { setTimeout as sleep } from 'node:timers/promises';
import type { ConfigurationRow } from '../db/database.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { findConfigurationByName } from '../db/repositories/configurations.ts';
import { ConflictError } from '../errors.ts';
import { DEMO_CONFIGURATION, seedDemoCatalogue, type DemoCatalogueDeps } from './demo-catalogue.ts';
import { updateConfiguration } from './configurations.ts';

/**
 * The demo a newcomer starts from in the console: the network-free catalogue of `seedDemoCatalogue`
 * (records sample data, a SCRIPTED provider, a free model, a configuration offering the content and
 * structure groups), stored at REDACTED so the run can be read back in the inspector with its
 * secrets and e-mail addresses masked (METADATA, the default, would store no content at all).
 */
export const DEMO_PRIVACY_LEVEL = 'REDACTED';

/** How long a call that lost the race waits for the concurrent call that is creating the demo. */
const CONCURRENT_CREATION_WAIT_MS = 5_000;
const POLL_MS = 50;

/**
 * Creates the demo configuration, or returns it when it exists (idempotent, also under concurrent
 * calls: the names are unique, so the call that loses the race waits for the winner's
 * configuration). A provider or model left named like the demo without its configuration (a crash
 * half way, or an operator's own rows) is a ConflictError that says what to do.
 */
export async function createDemoConfiguration(deps: DemoCatalogueDeps): Promise<ConfigurationRow> {
  const existing = await findConfigurationByName(deps.db, DEMO_CONFIGURATION);
  if (existing) return existing;
  try {
    await seedDemoCatalogue(deps);
  } catch (error) {
    if (!(error instanceof ConflictError) && !isUniqueViolation(error)) throw error;
    return waitForConcurrentCreation(deps);
  }
  const created = await findConfigurationByName(deps.db, DEMO_CONFIGURATION);
  if (!created) throw new Error('The demo catalogue was seeded but its configuration is missing.');
  return updateConfiguration(deps.db, created.id, { privacyLevel: DEMO_PRIVACY_LEVEL });
}

async function waitForConcurrentCreation(deps: DemoCatalogueDeps): Promise<ConfigurationRow> {
  const deadline = Date.now() + CONCURRENT_CREATION_WAIT_MS;
  for (;;) {
    const row = await findConfigurationByName(deps.db, DEMO_CONFIGURATION);
    if (row) return row;
    if (Date.now() >= deadline) {
      throw new ConflictError(
        `A provider or model named "${DEMO_CONFIGURATION}" exists without the demo configuration: delete or rename it (Admin), then create the demo again.`,
      );
    }
    await sleep(POLL_MS);
  }
}
