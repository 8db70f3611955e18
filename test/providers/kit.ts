import type { ProviderKind } from '../../src/db/database.ts';
import type { LlmProvider } from '../../src/runtime/llm.ts';
import type { FakeServer, RecordedRequest } from '../fixtures/wires/fake-server.ts';

/**
 * One wire under test: how to start its fake vendor, build the adapter against it, and read a
 * recorded request back into neutral terms. `conformance.test.ts` runs the SAME scenarios against
 * every fixture.
 */
export interface WireFixture {
  readonly name: string;
  /** The provider kind a provider row names for this wire. */
  readonly kind: ProviderKind;
  /** The base URL a provider row stores to reach this fake. */
  baseUrl(server: FakeServer): string;
  start(): Promise<FakeServer>;
  /** The adapter pointed at the fake (base URL, a test key, a short timeout for the timeout scenario). */
  adapter(server: FakeServer, options: { apiKey: string; timeoutMs: number }): LlmProvider;
  /** What the adapter sent, in neutral terms. */
  read(request: RecordedRequest): SentRequest;
  /** Where the key travels on this wire (e.g. `authorization` header, `x-api-key`, `x-goog-api-key`). */
  keyOf(request: RecordedRequest): string | undefined;
  /** Raw JSON fragments that would mean "empty arguments sent as an array" on this wire. */
  readonly emptyArgumentsAsArray: readonly RegExp[];
}

export interface SentRequest {
  readonly model: string;
  /** `undefined` when the request carried NO tools field at all. */
  readonly toolNames: readonly string[] | undefined;
  readonly system: string | undefined;
  /** Tool results replayed to the model, in order. */
  readonly toolResults: readonly { readonly callId: string | undefined; readonly content: string; readonly isError: boolean | undefined }[];
  /** Tool calls replayed in assistant turns, in order. */
  readonly replayedCalls: readonly { readonly id: string | undefined; readonly name: string; readonly arguments: unknown }[];
  /** The text of every user turn, in order. */
  readonly userTexts: readonly string[];
}
