import { DomainError } from '../errors.ts';
import type { PendingCallPreview } from './approval.ts';
import type { ToolCall } from './llm.ts';
import type { StoredStep } from './stored-step.ts';
import type { PricedUsage } from './usage.ts';

/** What a run has done so far (its row holds these only once it is parked or settled). */
export interface RunProgress {
  /** LLM steps so far (the settled row's count leaves out a synthesis call). */
  readonly iterations: number;
  readonly usage: PricedUsage;
}

/**
 * Why another process continues a run: its owner's lease lapsed (a crash, a pause), its owner
 * handed it over while stopping (a deploy), or the restarted process of an embedded database
 * picked up the runs of the one before.
 */
export const RESUME_REASONS = ['LEASE_EXPIRED', 'HANDED_OVER', 'RESTARTED'] as const;
export type ResumeReason = (typeof RESUME_REASONS)[number];

/**
 * What happens to a run, as it happens. Published only after the matching row is written. `Run` is
 * the stored run row (the service layer's type; the runtime only passes it along): the events that
 * change it carry it, so no reader has to load it again.
 */
export type RunBusEvent<Run = unknown> = RunBusEventDraft<Run> & {
  /**
   * When the event was published on the bus (epoch ms, the publishing instance's clock): stamped by
   * the bus that first received it (createRunEventBus's `publish`), kept unchanged by every
   * instance it reaches over Redis; readers measure their lag from it.
   */
  readonly publishedAt: number;
};

/**
 * An event as its publisher hands it to the bus. The bus stamps `publishedAt` itself, not each of
 * the dozen publishers: one clock reading, taken as late as possible, before any subscriber sees
 * the event (all of them share the one stamped object).
 */
export type RunBusEventDraft<Run = unknown> =
  | { readonly type: 'started'; readonly runId: string; /** The run as created (RUNNING). */ readonly run: Run }
  | {
      readonly type: 'step';
      readonly runId: string;
      readonly sequence: number;
      /** The run's state version while this step ran (the row's, as of the last park, claim or start). */
      readonly stateVersion: number;
      /** Totals up to and including this step. */
      readonly progress: RunProgress;
      /** Verbatim: for admins' live stream. */
      readonly full: StoredStep;
      /** At the run's privacy level, exactly as stored: for everyone else. */
      readonly filtered: StoredStep;
    }
  | {
      readonly type: 'suspended';
      readonly runId: string;
      /** Every call of the waiting turn (none has run) and the previews of its write calls. */
      readonly calls: readonly ToolCall[];
      readonly previews: readonly PendingCallPreview[];
      readonly digest: string;
      /** The run as parked (WAITING_FOR_APPROVAL). */
      readonly run: Run;
    }
  | {
      readonly type: 'decided';
      readonly runId: string;
      /** The turn that was decided. */
      readonly digest: string;
      readonly approved: boolean;
      readonly decidedBy: { readonly id: string; readonly name: string };
      /** The run as claimed for the decision (RUNNING again). */
      readonly run: Run;
    }
  | {
      readonly type: 'resumed';
      readonly runId: string;
      /** The sequence the continued run's next step takes: every step before it is stored. */
      readonly fromSequence: number;
      readonly reason: ResumeReason;
      /** The run as claimed (RUNNING, a new lease epoch, one more resume). */
      readonly run: Run;
    }
  | {
      readonly type: 'finished';
      readonly runId: string;
      /** The live final answer, which the initiator always receives even when it is not stored. */
      readonly finalContent: string | null;
      /**
       * The run as settled; null when this process's settlement did not produce the current row
       * (settled elsewhere, its write failed, or the incomplete-audit flag was stored after it):
       * readers load it then.
       */
      readonly run: Run | null;
    };

/**
 * Typed per-run topics. `subscribe` registers at once (not on first read), so a subscriber taken
 * before a run starts misses nothing. The in-process implementation serves one process; the Redis
 * one (src/cluster/bus.ts) implements the same interface for several instances.
 */
export interface RunEventBus<Run = unknown> {
  /** Stamps the event's `publishedAt` (now) and delivers it. */
  publish(event: RunBusEventDraft<Run>): void;
  /**
   * Events of one run from now on; `return()` unsubscribes. `drivenHere`: the caller is about to
   * drive this run in this process, so its events never depend on another instance.
   */
  subscribe(runId: string, options?: { readonly drivenHere?: boolean }): AsyncIterableIterator<RunBusEvent<Run>>;
  /**
   * The list-level topic: events of every run from now on (only the given types, when listed), in
   * publication order per run; same registration and overflow rules as `subscribe`. The live list
   * feeds read it; a distributed bus serves it from one shared channel.
   */
  subscribeAll(options?: { readonly types?: readonly RunBusEvent['type'][] }): AsyncIterableIterator<RunBusEvent<Run>>;
  /**
   * Delivers an event to this process's subscribers only, keeping its `publishedAt`: one published
   * by another instance, or the end of a run read from storage because its own event never came
   * (its process died between storing the end and publishing it).
   */
  deliver(event: RunBusEvent<Run>): void;
  /** The runs with a watcher in this process (per-run subscriptions; the list feeds not counted). */
  watchedRuns(): string[];
  /** Open subscriptions (for tests and metrics). */
  subscriberCount(): number;
  /**
   * Events waiting, unread, in the fullest subscriber queue of this process: how far its slowest
   * reader lags behind the bus (metrics; a reader cut off at `subscriberBuffer` no longer counts).
   */
  deepestQueue(): number;
}

/**
 * A subscriber that falls this many events behind is cut off (its iteration throws) rather than
 * letting memory grow without bound; it can resume with `runEvents`, which replays from storage.
 */
export const SUBSCRIBER_BUFFER = 10_000;

/**
 * A subscriber fell too far behind and was cut off. A domain error (code `SUBSCRIBER_OVERFLOW`):
 * its message is ours, says what happened and what to do next, and reaches the client unmasked.
 */
export class SubscriberOverflowError extends DomainError {
  override readonly name = 'SubscriberOverflowError';
}

/**
 * The bus lost the live feed of other instances (a distributed bus whose connection dropped): a
 * subscriber that depends on it is told so (code `EVENT_BUS_UNAVAILABLE`) rather than left waiting.
 */
export class EventBusUnavailableError extends DomainError {
  override readonly name = 'EventBusUnavailableError';
}
