import { parseArgs } from 'node:util';
import { assembleParts, type AppParts } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { DataDirLockedError } from './db/data-dir-lock.ts';
import { listConfigurations } from './db/repositories/configurations.ts';
import type { StoredStep } from './runtime/stored-step.ts';
import { seedDemoCatalogue } from './services/demo-catalogue.ts';
import { authenticate } from './services/users.ts';

// `npm run demo -- "<prompt>" [--configuration NAME] [--token TOKEN] [--scripted]`: runs one agent
// loop from the command line and prints each step as it happens. It acts as the admin unless a
// user's token is given. `--scripted` first creates a SCRIPTED demo configuration (no network).
// The run goes through the run host like `runAgent`: it is stored, listed and approvable.
const USAGE = 'Usage: npm run demo -- "<prompt>" [--configuration NAME] [--token TOKEN] [--scripted]';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { configuration: { type: 'string' }, token: { type: 'string' }, scripted: { type: 'boolean' }, help: { type: 'boolean' } },
});
const prompt = positionals.join(' ').trim();
if (values.help || prompt === '') {
  console.error(USAGE);
  process.exit(values.help ? 0 : 2);
}

let parts: AppParts;
try {
  parts = await assembleParts(loadConfig());
} catch (error) {
  console.error(error instanceof ConfigError || error instanceof DataDirLockedError ? error.message : error);
  process.exit(1);
}

try {
  await runOnce(parts);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
} finally {
  await parts.close();
}

async function runOnce({ services }: AppParts): Promise<void> {
  if (values.scripted) await seedDemoCatalogue(services);
  const configurations = await listConfigurations(services.db);
  const configuration = values.configuration ? configurations.find((row) => row.name === values.configuration) : configurations[0];
  if (!configuration) {
    throw new Error(
      values.configuration
        ? `No configuration named "${values.configuration}". Known: ${configurations.map((row) => row.name).join(', ') || 'none'}.`
        : 'No configuration exists yet: create one through the API (see README), or pass --scripted for a demo one.',
    );
  }
  const admin = await services.db.selectFrom('users').selectAll().where('is_admin', '=', true).orderBy('created_at').executeTakeFirstOrThrow();
  const actor = values.token ? await authenticate(services.db, values.token) : { id: admin.id, name: admin.name, isAdmin: true };
  if (!actor) throw new Error('That token belongs to no user.');

  console.log(`Running "${configuration.name}" as ${actor.name}…`);
  const started = await services.runHost.start(actor, { configurationId: configuration.id, prompt });
  let answer: string | null = null;
  for await (const event of started.events) {
    if (event.type === 'step') console.log(describeStep(event.full));
    if (event.type === 'suspended') {
      console.log(`\nRun ${started.run.id} waits for approval of turn ${event.digest}:`);
      for (const preview of event.previews) console.log(`  ${preview.toolName}: ${preview.preview.replaceAll('\n', '\n    ')}`);
      console.log('Decide with the approveRun mutation (docs/api.md, "Approving writes").');
      return;
    }
    if (event.type === 'finished') {
      answer = event.finalContent;
      break;
    }
  }
  const run = await services.db.selectFrom('runs').selectAll().where('id', '=', started.run.id).executeTakeFirstOrThrow();
  console.log(`\nRun ${run.id}: ${run.status} (${run.termination_reason})${run.truncated ? ', truncated' : ''}, ${run.iterations} iteration(s)`);
  console.log(`Usage: ${run.prompt_tokens} prompt + ${run.completion_tokens} completion tokens, cost ${run.estimated_cost.toFixed(6)}`);
  if (run.error_message) console.log(`Error: ${run.error_message}`);
  console.log(`\n${answer ?? '(no final answer)'}`);
}

function describeStep(step: StoredStep): string {
  const text = (value: unknown) => JSON.stringify(String(value ?? '').slice(0, 200));
  switch (step.kind) {
    case 'REQUEST':
      return `→ round ${step.round}: asking the model (${step.messagesSentCount ?? 0} messages; tools: ${step.offeredTools?.join(', ') || 'none'})`;
    case 'LLM': {
      const calls = (step.requestedToolNames ?? []).join(', ');
      const usage = `${step.usage?.promptTokens ?? 0}+${step.usage?.completionTokens ?? 0} tokens, ${Math.round(step.durationMs ?? 0)} ms`;
      return `← round ${step.round}: ${calls ? `calls ${calls}` : text(step.content)} [${usage}]`;
    }
    case 'APPROVAL':
      return `  ✋ ${step.approval?.approverName} ${step.approval?.approved ? 'approved' : 'denied'} the pending turn`;
    case 'TOOL':
      return `  ⚙ ${step.toolName}${step.toolIsError ? ' (error)' : ''}: ${text(step.toolResult)}${step.toolArtifactsCount ? ` + ${step.toolArtifactsCount} artifact(s)` : ''}`;
  }
}
