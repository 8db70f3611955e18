/**
 * The fan-out driver's runs: started with `runAgent` on one initiator connection, which stays
 * subscribed to every run until it ends (leaving runAgent would cancel the run).
 */
import type { Client } from 'graphql-ws';
import { BENCH_PROMPT } from '../../lib/agent-tool.ts';
import { connectGraphqlWs } from '../../lib/ws-client.ts';

const RUN_AGENT = `subscription($input: RunAgentInput!) { runAgent(input: $input) {
  __typename
  ... on RunStartedEvent { run { id } }
  ... on RunStepEvent { step { sequence } }
  ... on RunFinishedEvent { run { id status } }
} }`;

export interface StartedRuns {
  /** In start order, once each has started. */
  readonly runIds: string[];
  /** Resolves once every run has COMPLETED (rejects otherwise); closes the initiator connection either way. */
  finish(): Promise<void>;
}

/** Starts `runs` runs on one initiator connection; resolves once each has started. */
export async function startInitiatorRuns(wsUrl: string, token: string, configurationId: string, runs: number): Promise<StartedRuns> {
  const client: Client = await connectGraphqlWs(wsUrl, token);
  const ids: Promise<string>[] = [];
  const pending: Promise<unknown>[] = [];
  for (let index = 0; index < runs; index++) {
    let resolveId!: (id: string) => void;
    let rejectId!: (error: Error) => void;
    ids.push(new Promise<string>((resolve, reject) => ((resolveId = resolve), (rejectId = reject))));
    const finished = new Promise<void>((resolve, reject) => {
      let status: string | null = null;
      client.subscribe(
        { query: RUN_AGENT, variables: { input: { configurationId, prompt: `${BENCH_PROMPT} (fan-out run ${index + 1})` } } },
        {
          next: (result) => {
            if (result.errors) return rejectId(new Error(JSON.stringify(result.errors)));
            const event = (result.data as { runAgent: { __typename: string; run?: { id: string; status: string } } }).runAgent;
            if (event.__typename === 'RunStartedEvent') resolveId(event.run!.id);
            if (event.__typename === 'RunFinishedEvent') status = event.run!.status;
          },
          error: (error) => {
            const failure = error instanceof Error ? error : new Error(JSON.stringify(error));
            rejectId(failure);
            reject(failure);
          },
          complete: () => (status === 'COMPLETED' ? resolve() : reject(new Error(`run ${index + 1} ended ${status ?? 'without a RunFinishedEvent'}`))),
        },
      );
    });
    finished.catch(() => undefined); // reported by `finish`, not as an unhandled rejection
    pending.push(finished);
  }
  return {
    runIds: await Promise.all(ids),
    finish: async () => {
      try {
        await Promise.all(pending);
      } finally {
        await client.dispose();
      }
    },
  };
}
