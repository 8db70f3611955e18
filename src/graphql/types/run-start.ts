import { ForbiddenError, NotFoundError, RunLimitError, ValidationError } from '../../errors.ts';
import { builder } from '../builder.ts';
import { decodeIdFor } from '../ids.ts';
import { RunRef } from './runs.ts';

/** What starts a run, attached (runAgent) or detached (startRun). */
export const RunAgentInput = builder.inputType('RunAgentInput', {
  fields: (t) => ({
    configurationId: t.id({ required: true }),
    prompt: t.string({ required: true }),
    tools: t.stringList({ description: "The run's own tool selection, intersected with the configuration's allow-list." }),
  }),
});

/** The service's view of a RunAgentInput: the configuration id decoded. */
export function runInputOf(input: typeof RunAgentInput.$inferInput): Record<string, unknown> {
  return { ...input, configurationId: decodeIdFor('Configuration', input.configurationId) };
}

builder.mutationFields((t) => ({
  startRun: t.field({
    type: RunRef,
    errors: { types: [ValidationError, NotFoundError, RunLimitError, ForbiddenError] },
    description:
      'Starts the same run as runAgent, detached from this request: returns the Run at once (RUNNING) and runs to its end with no client connected. Follow it with runEvents(runId) (replay, then live); stop it with cancelRun. Counts against AIRLOCK_MAX_RUNNING_RUNS_PER_USER like any run (RunLimitError).',
    args: { input: t.arg({ type: RunAgentInput, required: true }) },
    resolve: (_root, { input }, context) => context.services.runs.startDetached(context.viewer!, runInputOf(input)),
  }),
}));
