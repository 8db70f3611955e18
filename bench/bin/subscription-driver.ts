/**
 * Holds many graphql-ws clients for the memory workload (and churns subscriptions), in its own
 * process so that the server under test is measured alone. One client (one socket) per open
 * subscription, as a dashboard tab would have.
 */
import type { Client } from 'graphql-ws';
import { serveDriver } from '../lib/children.ts';
import { connectGraphqlWs, inPool } from '../lib/ws-client.ts';
import { BENCH_PROMPT } from '../lib/agent-tool.ts';

const RUN_AGENT = `subscription($input: RunAgentInput!) { runAgent(input: $input) { __typename ... on RunStartedEvent { run { id status } } } }`;
const RUN_EVENTS = `subscription($runId: ID!) { runEvents(runId: $runId) { __typename ... on RunStepEvent { step { sequence kind } } } }`;

/** Subscribes; resolves once the first event arrived, with the function that completes it. */
function subscribeUntilFirst(client: Client, query: string, variables: Record<string, unknown>): Promise<{ first: any; stop: () => void }> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const stop = client.subscribe(
      { query, variables },
      {
        next: (result) => {
          if (settled) return;
          settled = true;
          if (result.errors) return reject(new Error(JSON.stringify(result.errors)));
          resolve({ first: result.data, stop });
        },
        error: (error) => {
          if (!settled) reject(error instanceof Error ? error : new Error(JSON.stringify(error)));
          settled = true;
        },
        complete: () => {
          if (!settled) reject(new Error('the subscription completed before its first event'));
          settled = true;
        },
      },
    );
  });
}

let initiator: Client | null = null;
const held: Client[] = [];

serveDriver(async (message: { type: string; wsUrl: string; token: string; runId: string; configurationId: string; count: number; cycles: number; connections: number }) => {
  switch (message.type) {
    case 'start-waiting-run': {
      // The initiator stays subscribed: leaving runAgent would cancel the run.
      initiator = await connectGraphqlWs(message.wsUrl, message.token);
      const { first } = await subscribeUntilFirst(initiator, RUN_AGENT, { input: { configurationId: message.configurationId, prompt: BENCH_PROMPT } });
      return { runId: first.runAgent.run.id as string };
    }
    case 'open': {
      const opened = await inPool(message.count, 50, async () => {
        const client = await connectGraphqlWs(message.wsUrl, message.token);
        await subscribeUntilFirst(client, RUN_EVENTS, { runId: message.runId });
        return client;
      });
      held.push(...opened);
      return { open: held.length };
    }
    case 'close-all': {
      await Promise.all(held.splice(0).map((client) => client.dispose()));
      return { open: 0 };
    }
    case 'churn': {
      const clients = await Promise.all(Array.from({ length: message.connections }, () => connectGraphqlWs(message.wsUrl, message.token)));
      let done = 0;
      try {
        await Promise.all(
          clients.map(async (client) => {
            while (done < message.cycles) {
              done += 1;
              const { stop } = await subscribeUntilFirst(client, RUN_EVENTS, { runId: message.runId });
              stop();
            }
          }),
        );
      } finally {
        await Promise.all(clients.map((client) => client.dispose()));
      }
      return { cycles: done };
    }
    case 'stop-waiting-run': {
      await initiator?.dispose();
      initiator = null;
      return {};
    }
    default:
      throw new Error(`unknown request ${message.type}`);
  }
});
