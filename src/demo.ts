import { parseArgs } from 'node:util';
import { createRuntime } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { listConfigurations } from './db/repositories/configurations.ts';
import type { RunStep } from './runtime/loop.ts';
import { executeRun } from './services/agent-runs.ts';
import { authenticate } from './services/users.ts';
import { seedDemoCatalogue } from './services/demo-catalogue.ts';

// `npm run demo -- "<prompt>" [--configuration NAME] [--token TOKEN] [--scripted]`: runs one agent
// loop from the command line and prints each step as it happens. It acts as the admin unless a
// user's token is given. `--scripted` first creates a SCRIPTED demo configuration (no network).
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

let runtime;
try {
  runtime = await createRuntime(loadConfig());
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
}
const { services } = runtime;
try {
  if (values.scripted) await seedDemoCatalogue(services);
  const configurations = await listConfigurations(services.db);
  const configuration = values.configuration ? configurations.find((row) => row.name === values.configuration) : configurations[0];
  if (!configuration) {
    console.error(
      values.configuration
        ? `No configuration named "${values.configuration}". Known: ${configurations.map((row) => row.name).join(', ') || 'none'}.`
        : 'No configuration exists yet: create one through the API (see README), or pass --scripted for a demo one.',
    );
    process.exitCode = 1;
  } else {
    const actor = values.token
      ? await authenticate(services.db, values.token)
      : { id: (await services.db.selectFrom('users').select('id').where('is_admin', '=', true).executeTakeFirstOrThrow()).id, name: 'admin', isAdmin: true };
    if (!actor) throw new Error('That token belongs to no user.');
    console.log(`Running "${configuration.name}" as ${actor.name}…`);
    const { runId, outcome } = await executeRun(services, {
      configurationId: configuration.id,
      prompt,
      actor,
      signal: AbortSignal.timeout(10 * 60_000),
      onStep: (step) => console.log(describeStep(step)),
    });
    if (outcome.status === 'WAITING_FOR_APPROVAL') console.log('\nThe run proposes a write and waits for approval; approve it through the API (approveRun).');
    console.log(`\nRun ${runId}: ${outcome.status} (${outcome.terminationReason})${outcome.truncated ? ', truncated' : ''}, ${outcome.iterations} iteration(s)`);
    console.log(`Usage: ${outcome.usage.promptTokens} prompt + ${outcome.usage.completionTokens} completion tokens, cost ${outcome.usage.cost.toFixed(6)}`);
    if (outcome.errorMessage) console.log(`Error: ${outcome.errorMessage}`);
    console.log(`\n${outcome.finalContent ?? '(no final answer)'}`);
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
} finally {
  await runtime.close();
}

function describeStep(step: RunStep): string {
  switch (step.kind) {
    case 'REQUEST':
      return `→ round ${step.round}: asking the model (${step.messagesSent.length} messages; tools: ${step.offeredTools?.join(', ') || 'none'})`;
    case 'LLM': {
      const calls = step.requestedToolCalls.map((call) => `${call.name}(${JSON.stringify(call.arguments)})`).join(', ');
      return `← round ${step.round}: ${calls ? `calls ${calls}` : JSON.stringify(step.content.slice(0, 200))} [${step.usage.promptTokens}+${step.usage.completionTokens} tokens, ${Math.round(step.durationMs)} ms]`;
    }
    case 'APPROVAL':
      return `  ✋ ${step.approverName} ${step.approved ? 'approved' : 'denied'} the pending turn`;
    case 'TOOL':
      return `  ⚙ ${step.toolName}${step.toolIsError ? ' (error)' : ''}: ${JSON.stringify(step.toolResult.slice(0, 200))}${step.artifacts.length ? ` + ${step.artifacts.length} artifact(s)` : ''}`;
  }
}
