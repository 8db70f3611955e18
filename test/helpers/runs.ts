import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import type { TestApp } from './app.ts';

/** Every field a dashboard reads from a run event. */
export const RUN_EVENT_FIELDS = `
  __typename
  ... on RunStartedEvent { run { id status } }
  ... on RunStepEvent { runId step { sequence kind round content toolName toolResult toolIsError toolArguments contentRedacted
      contentLength toolResultLength toolArtifactsCount toolArtifactTypes requestedToolNames messagesSentCount
      artifacts { __typename ... on TableArtifact { label columns rows } ... on TextArtifact { label text } ... on UnknownArtifact { type label data } } } }
  ... on RunSuspendedEvent { run { id status } turnDigest pendingCalls { id name arguments preview } }
  ... on RunFinishedEvent { run { id status terminationReason truncated iterations finalContent errorMessage usage { promptTokens completionTokens totalTokens estimatedCost } } }
`;

export const RUN_AGENT = `subscription($input: RunAgentInput!) { runAgent(input: $input) { ${RUN_EVENT_FIELDS} } }`;
export const RUN_EVENTS = `subscription($runId: ID!) { runEvents(runId: $runId) { ${RUN_EVENT_FIELDS} } }`;

export function wsClient(url: string, token: string): Client {
  return createClient({ url: url.replace('http://', 'ws://'), webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${token}` }, retryAttempts: 0 });
}

/** Subscribes and collects every event until the server completes the subscription. */
export function collect(client: Client, query: string, variables: Record<string, unknown>, onEvent?: (event: any) => void): Promise<any[]> {
  return new Promise((resolve, reject) => {
    const events: any[] = [];
    client.subscribe(
      { query, variables },
      {
        next: (result) => {
          if (result.errors) return reject(new Error(JSON.stringify(result.errors)));
          const event = (result.data as any)[Object.keys(result.data as object)[0]!];
          events.push(event);
          onEvent?.(event);
        },
        error: (error) => reject(error instanceof Error ? error : new Error(JSON.stringify(error))),
        complete: () => resolve(events),
      },
    );
  });
}

/** A SCRIPTED provider + model + configuration; returns the configuration's global id. */
export async function scriptedConfiguration(
  t: TestApp,
  name: string,
  options: { replies: unknown[]; finalReply?: unknown; delayMs?: number; privacyLevel?: string; maxIterations?: number; allowedToolGroups?: string[] },
): Promise<string> {
  const provider = await t.gql(`mutation($input: CreateProviderInput!) { createProvider(input: $input) { __typename ... on Provider { id } ... on Error { message } } }`, {
    input: { name: `p-${name}`, kind: 'SCRIPTED', settings: { replies: options.replies, finalReply: options.finalReply, delayMs: options.delayMs ?? 0 } },
  });
  const model = await t.gql(`mutation($input: CreateModelInput!) { createModel(input: $input) { ... on Model { id } } }`, {
    input: { providerId: provider.data.createProvider.id, name: `m-${name}`, providerModelId: 'scripted', inputPricePerMTok: 1, outputPricePerMTok: 2 },
  });
  const configuration = await t.gql(`mutation($input: CreateConfigurationInput!) { createConfiguration(input: $input) { __typename ... on Configuration { id } ... on Error { message } } }`, {
    input: {
      name,
      modelId: model.data.createModel.id,
      privacyLevel: options.privacyLevel ?? 'METADATA',
      maxIterations: options.maxIterations ?? 5,
      allowedToolGroups: options.allowedToolGroups ?? [],
    },
  });
  return configuration.data.createConfiguration.id;
}

/** The `data` payloads of a server-sent-events body, as the given root field's values. */
export function sseEvents(text: string, field: string): any[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line.length > 6)
    .map((line) => JSON.parse(line.slice(6)))
    .filter((payload) => payload.data)
    .map((payload) => payload.data[field]);
}
