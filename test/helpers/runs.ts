import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { graphql } from '../gql/gql.ts';
import type { PrivacyLevel, RunEventFieldsFragment } from '../gql/graphql.ts';
import type { TestApp } from './app.ts';
import { member, textOf, type TypedDocumentNode } from './documents.ts';

/** Every field a dashboard reads from a run event. */
export const RUN_EVENT_FIELDS = graphql(`
  fragment RunEventFields on RunEvent {
    __typename
    ... on RunStartedEvent { run { id status } }
    ... on RunResumedEvent { run { id status resumeCount } fromSequence reason }
    ... on RunStepEvent { runId step { sequence kind round content toolName toolResult toolIsError outcomeUnknown toolArguments contentRedacted
        contentLength toolResultLength toolArtifactsCount toolArtifactTypes requestedToolNames messagesSentCount
        artifacts { __typename ... on TableArtifact { label columns rows } ... on TextArtifact { label text } ... on UnknownArtifact { type label data } } } }
    ... on RunSuspendedEvent { run { id status } turnDigest pendingCalls { id name arguments preview } }
    ... on RunFinishedEvent { run { id status terminationReason truncated iterations finalContent errorMessage usage { promptTokens completionTokens totalTokens estimatedCost } } }
  }
`);

export const RUN_AGENT = graphql(`
  subscription RunAgent($input: RunAgentInput!) { runAgent(input: $input) { ...RunEventFields } }
`);
export const RUN_EVENTS = graphql(`
  subscription RunEvents($runId: ID!) { runEvents(runId: $runId) { ...RunEventFields } }
`);

/** A run event as `RUN_AGENT` and `RUN_EVENTS` deliver it. */
export type RunEvent = RunEventFieldsFragment;
/** The run event of one `__typename`. */
export type RunEventOf<N extends RunEvent['__typename']> = Extract<RunEvent, { __typename: N }>;

/** The event that ended a stream, which must be of the given kind (a stream ends finished or suspended). */
export function lastEvent<N extends RunEvent['__typename']>(events: readonly RunEvent[], typename: N): RunEventOf<N> {
  return member(events.at(-1), typename) as RunEventOf<N>;
}

/** The steps the `RunStepEvent`s carried, in order. */
export function stepsOf(events: readonly RunEvent[]): RunEventOf<'RunStepEvent'>['step'][] {
  return events.flatMap((event) => (event.__typename === 'RunStepEvent' ? [event.step] : []));
}

export function wsClient(url: string, token: string): Client {
  return createClient({ url: url.replace('http://', 'ws://'), webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${token}` }, retryAttempts: 0 });
}

/** Subscribes and collects every event until the server completes the subscription. */
export function collect<TVariables extends Record<string, unknown>>(
  client: Client,
  document: TypedDocumentNode<Record<string, RunEvent>, TVariables>,
  variables: TVariables,
  onEvent?: (event: RunEvent) => void,
): Promise<RunEvent[]> {
  return new Promise((resolve, reject) => {
    const events: RunEvent[] = [];
    client.subscribe(
      { query: textOf(document), variables },
      {
        next: (result) => {
          if (result.errors) return reject(new Error(JSON.stringify(result.errors)));
          const event = Object.values(result.data as Record<string, RunEvent>)[0]!;
          events.push(event);
          onEvent?.(event);
        },
        error: (error) => reject(error instanceof Error ? error : new Error(JSON.stringify(error))),
        complete: () => resolve(events),
      },
    );
  });
}

export const CREATE_PROVIDER = graphql(`
  mutation CreateProvider($input: CreateProviderInput!) { createProvider(input: $input) { __typename ... on Provider { id } ... on Error { message } } }
`);
export const CREATE_MODEL = graphql(`
  mutation CreateModel($input: CreateModelInput!) { createModel(input: $input) { __typename ... on Model { id } ... on Error { message } } }
`);
export const CREATE_CONFIGURATION = graphql(`
  mutation CreateConfiguration($input: CreateConfigurationInput!) {
    createConfiguration(input: $input) { __typename ... on Configuration { id } ... on Error { message } }
  }
`);

/** What a SCRIPTED configuration replies and how it is governed. */
export interface ScriptedOptions {
  readonly replies: unknown[];
  readonly finalReply?: unknown;
  /** Delay before each reply, ms (default 0). */
  readonly delayMs?: number;
  /** Default METADATA. */
  readonly privacyLevel?: PrivacyLevel;
  /** Default 5. */
  readonly maxIterations?: number;
  /** Default none. */
  readonly allowedToolGroups?: string[];
}

/** A SCRIPTED provider + model + configuration; returns the configuration's global id. */
export async function scriptedConfiguration(t: Pick<TestApp, 'gql'>, name: string, options: ScriptedOptions): Promise<string> {
  const provider = await t.gql(CREATE_PROVIDER, {
    input: { name: `p-${name}`, kind: 'SCRIPTED', settings: { replies: options.replies, finalReply: options.finalReply, delayMs: options.delayMs ?? 0 } },
  });
  const model = await t.gql(CREATE_MODEL, {
    input: { providerId: member(provider.data?.createProvider, 'Provider').id, name: `m-${name}`, providerModelId: 'scripted', inputPricePerMTok: 1, outputPricePerMTok: 2 },
  });
  const configuration = await t.gql(CREATE_CONFIGURATION, {
    input: {
      name,
      modelId: member(model.data?.createModel, 'Model').id,
      privacyLevel: options.privacyLevel ?? 'METADATA',
      maxIterations: options.maxIterations ?? 5,
      allowedToolGroups: options.allowedToolGroups ?? [],
    },
  });
  return member(configuration.data?.createConfiguration, 'Configuration').id;
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

/**
 * An OpenAI-compatible provider at `baseUrl` (a fake vendor server), a model and a configuration;
 * returns the configuration's global id. `configuration` adds to the configuration's input.
 */
export async function vendorConfiguration(
  t: TestApp,
  name: string,
  baseUrl: string,
  configuration: { privacyLevel?: PrivacyLevel; allowedToolGroups?: string[] } = {},
): Promise<string> {
  const provider = await t.gql(CREATE_PROVIDER, {
    input: { name: `p-${name}`, kind: 'OPENAI', baseUrl, apiKey: 'sk-test-vendor-0123456789' },
  });
  const model = await t.gql(CREATE_MODEL, {
    input: { providerId: member(provider.data?.createProvider, 'Provider').id, name: `m-${name}`, providerModelId: `vendor-${name}`, inputPricePerMTok: 1, outputPricePerMTok: 2 },
  });
  const created = await t.gql(CREATE_CONFIGURATION, { input: { name, modelId: member(model.data?.createModel, 'Model').id, ...configuration } });
  return member(created.data?.createConfiguration, 'Configuration').id;
}
