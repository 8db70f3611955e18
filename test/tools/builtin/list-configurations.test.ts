import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_ACTOR_ERROR } from '../../../src/tools/builtin/actor-guard.ts';
import { listConfigurationsTool } from '../../../src/tools/builtin/list-configurations.ts';
import type { ToolData } from '../../../src/tools/data.ts';
import type { TableArtifact } from '../../../src/tools/result.ts';
import type { Actor } from '../../../src/tools/tool.ts';
import { openMigratedDb, TEST_DATABASES } from '../../helpers/databases.ts';
import { insertActor, invoke, toolContext, toolDataOver, untouchableData } from './helpers.ts';

const CIPHERTEXT_CANARY = 'v1.canary-ciphertext-5e1d';
const SETTINGS_CANARY = 'sk-canary-settings-key-0123456789abcdef';
const PROMPT_CANARY = 'canary-system-prompt-9b7c';
const BASE_URL_CANARY = 'https://user:canary-url-password@llm.example.com/v1';

describe.each(TEST_DATABASES)('list_configurations (%s)', (kind) => {
  let dispose: () => Promise<void>;
  let data: ToolData;
  let user: Actor;

  beforeAll(async () => {
    const opened = await openMigratedDb(kind);
    dispose = opened.dispose;
    const db = opened.handle.db;
    const providerId = randomUUID();
    const modelId = randomUUID();
    await db
      .insertInto('providers')
      .values({
        id: providerId,
        name: 'openai-main',
        kind: 'OPENAI',
        base_url: BASE_URL_CANARY,
        api_key_ciphertext: CIPHERTEXT_CANARY,
        settings: JSON.stringify({ apiKey: SETTINGS_CANARY, organization: 'org-canary' }),
      })
      .execute();
    await db
      .insertInto('models')
      .values({ id: modelId, provider_id: providerId, name: 'fast', provider_model_id: 'gpt-4o-mini' })
      .execute();
    await db
      .insertInto('configurations')
      .values([
        { id: randomUUID(), name: 'support', model_id: modelId, system_prompt: PROMPT_CANARY, allowed_tool_groups: JSON.stringify(['content', 'structure']) },
        { id: randomUUID(), name: 'analyst', model_id: modelId, allowed_tool_groups: JSON.stringify([]) },
      ])
      .execute();
    user = await insertActor(db, 'someone', false);
    data = toolDataOver(db, kind);
  });

  afterAll(async () => {
    await dispose();
  });

  it('should list names, models and tool groups to any signed-in user', async () => {
    const result = await invoke(listConfigurationsTool, {}, toolContext(data, user));
    expect(result.isError).toBe(false);
    expect(result.content).toBe(
      [
        '2 configurations:',
        '- analyst: model fast (OPENAI gpt-4o-mini); tool groups: any enabled',
        '- support: model fast (OPENAI gpt-4o-mini); tool groups: content, structure',
      ].join('\n'),
    );
    expect((result.artifacts[0] as TableArtifact).data.rows).toEqual([
      ['analyst', 'fast', 'gpt-4o-mini', 'OPENAI', 'any enabled'],
      ['support', 'fast', 'gpt-4o-mini', 'OPENAI', 'content, structure'],
    ]);
  });

  it('should never show API keys, their ciphertext, provider settings, URLs or system prompts', async () => {
    const summaries = JSON.stringify(await data.configurations.list());
    const result = await invoke(listConfigurationsTool, {}, toolContext(data, user));
    for (const text of [summaries, result.content, JSON.stringify(result.artifacts)]) {
      for (const canary of [CIPHERTEXT_CANARY, SETTINGS_CANARY, PROMPT_CANARY, 'canary-url-password', 'org-canary']) {
        expect(text).not.toContain(canary);
      }
    }
  });

  it('should refuse without an acting user and read nothing', async () => {
    const { data: untouchable, touched } = untouchableData();
    const result = await invoke(listConfigurationsTool, {}, toolContext(untouchable, null));
    expect(result.content).toBe(NO_ACTOR_ERROR);
    expect(touched).toEqual([]);
  });
});
