import { ForbiddenError, NotFoundError, RunLimitError, ValidationError } from '../../errors.ts';
import { builder } from '../builder.ts';
import { decodeIdFor } from '../../global-id.ts';
import { RunRef } from './runs.ts';

/** What starts a run, attached (runAgent) or detached (startRun). */
export const RunAgentInput = builder.inputType('RunAgentInput', {
  fields: (t) => ({
    configurationId: t.id({ required: true }),
    prompt: t.string({ required: true }),
    tools: t.stringList({
      description:
        "The run's own tool selection (at most 200 names), with every tool of `toolGroups` added; intersected with the global switches, the configuration's allowed groups and its skills' lists. An unregistered name is refused (ValidationError). Omit both lists to select nothing of the run's own.",
    }),
    toolGroups: t.stringList({
      description:
        'Whole groups ticked for this run (at most 50 names): their tools, as registered when the run starts, join `tools`. A group switched off or outside the configuration stays refused. An unknown group is refused (ValidationError); runnableTools(configurationId) lists the groups.',
    }),
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
    resolve: (_root, { input }, context) => context.runHost.startDetached(context.viewer!, runInputOf(input)),
  }),
}));
