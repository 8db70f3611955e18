import { randomUUID } from 'node:crypto';
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findSkillIdsOfConfigurations } from '../../../src/db/repositories/configurations.ts';
import { findModelsByIds } from '../../../src/db/repositories/models.ts';
import { findProvidersByIds } from '../../../src/db/repositories/providers.ts';
import { loadRunSetup } from '../../../src/db/repositories/run-setup.ts';
import { loadToolState } from '../../../src/db/repositories/tool-state.ts';
import { findBudgetsOf } from '../../../src/db/repositories/usage.ts';
import { setBudget } from '../../../src/services/budgets.ts';
import { createConfiguration } from '../../../src/services/configurations.ts';
import { createModel } from '../../../src/services/models.ts';
import { createProvider } from '../../../src/services/providers.ts';
import { createSkill } from '../../../src/services/skills.ts';
import { setToolEnabled, setToolGroupEnabled } from '../../../src/services/tool-catalog.ts';
import { createUser } from '../../../src/services/users.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { TEST_DATABASES } from '../../helpers/databases.ts';

describe.each(TEST_DATABASES)('a run’s setup read in one statement on %s', (kind) => {
  let t: TestApp;
  let configurationId: string;
  let userId: string;

  beforeAll(async () => {
    t = await startTestApp(kind);
    const { services } = t.app;
    const { db } = services;
    const provider = await createProvider(
      { db, secrets: services.secrets, onSecret: (value) => services.scrubber.add(value) },
      { name: 'setup-provider', kind: 'OPENAI', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-setup-0123456789', settings: { timeoutMs: 1234 } },
    );
    const model = await createModel(db, { providerId: provider.id, name: 'setup-model', providerModelId: 'vendor-x', inputPricePerMTok: 1.5, outputPricePerMTok: 2.5, maxTokens: 999 });
    const first = await createSkill(db, { name: 'setup-b', body: 'B' });
    const second = await createSkill(db, { name: 'setup-a', body: 'A' });
    configurationId = (await createConfiguration(db, { name: 'setup', modelId: model.id, skillIds: [first.id, second.id] })).id;
    userId = (await createUser(db, { name: 'setup-user' })).user.id;
    const other = (await createUser(db, { name: 'someone-else' })).user.id;
    await setBudget(db, { scope: 'USER', id: userId }, { period: 'DAILY', maxRequests: 5 });
    await setBudget(db, { scope: 'USER', id: other }, { period: 'DAILY', maxRequests: 7 });
    await setBudget(db, { scope: 'CONFIGURATION', id: configurationId }, { period: 'MONTHLY', maxCost: 3 });
    await setToolGroupEnabled(db, services.registry, 'system', true);
    await setToolEnabled(db, services.registry, 'read_records', false);
  });
  afterAll(() => t.stop());

  it('should return exactly what the separate reads return, in one statement', async () => {
    const { db } = t.app.services;
    let statements = 0;
    // One result per statement executed (transformQuery also sees the nested builders).
    const counting: KyselyPlugin = { transformQuery: (args) => args.node, transformResult: async (args) => ((statements += 1), args.result) };
    const setup = await loadRunSetup(db.withPlugin(counting), configurationId, userId);
    expect(statements).toBe(1);

    const [model] = await findModelsByIds(db, [setup!.configuration.model_id]);
    const [provider] = await findProvidersByIds(db, [model!.provider_id]);
    expect(setup!.configuration.id).toBe(configurationId);
    expect(setup!.model).toEqual(model);
    expect(setup!.provider).toEqual(provider);
    expect(setup!.model!.created_at).toBeInstanceOf(Date);
    expect(setup!.skillIds).toEqual((await findSkillIdsOfConfigurations(db, [configurationId])).get(configurationId));
    expect(setup!.toolState).toEqual(await loadToolState(db));
    const byId = (rows: readonly { id: string }[]) => [...rows].sort((a, b) => a.id.localeCompare(b.id));
    expect(byId(setup!.budgets)).toEqual(byId(await findBudgetsOf(db, userId, configurationId)));
    expect(setup!.budgets.map((budget) => budget.max_requests || budget.max_cost).sort()).toEqual([3, 5]);
  });

  it('should leave out user budgets for a run without a user, and find nothing for an unknown or malformed id', async () => {
    const { db } = t.app.services;
    expect((await loadRunSetup(db, configurationId, null))!.budgets.map((budget) => budget.scope)).toEqual(['CONFIGURATION']);
    expect(await loadRunSetup(db, randomUUID(), userId)).toBeUndefined();
    expect(await loadRunSetup(db, 'not-a-uuid', userId)).toBeUndefined();
  });
});
