import { describe, expect, it } from 'vitest';
import { type RunBusEvent } from '../../src/runtime/events.ts';
import { createRunEventBus } from '../../src/runtime/local-bus.ts';
import { PUSH, queuedStream, type Outlet, type PushConsumer } from '../../src/services/queued-stream.ts';

/**
 * services/queued-stream.ts pushed (`PUSH`) rather than read, as graphql/plugins/pushed-delivery.ts
 * does for the run streams over websockets: the replay, then each bus event as the handler turns
 * it into stream events, in order, with the bus paused while the handler reads storage or the
 * consumer is busy; its end and its release told once.
 */

const finished = (finalContent: string) => ({ type: 'finished' as const, runId: 'r1', finalContent, run: null });
const contentOf = (event: RunBusEvent<null>) => (event.type === 'finished' ? event.finalContent : event.type);

/** A consumer that records what it gets; `busy` is switched by the test. */
function recorder() {
  const seen: string[] = [];
  let busy = false;
  const consumer: PushConsumer<string> = {
    event: (event) => void seen.push(event),
    end: (failure) => void seen.push(failure === null ? 'end' : `failed: ${(failure as Error).message}`),
    busy: () => busy,
  };
  return { seen, consumer, setBusy: (value: boolean) => (busy = value) };
}

describe('a queued stream pushed to its consumer', () => {
  it('should push the replay, then each bus event in order, end when the handler ends it, and release once, as ended by itself', async () => {
    const bus = createRunEventBus<null>();
    const released: boolean[] = [];
    const events = bus.subscribe('r1');
    const stream = queuedStream<string, RunBusEvent<null>>(
      (out) => out.push('replayed'),
      {
        events,
        handle: (event, out) => {
          out.push(contentOf(event)!);
          if (contentOf(event) === 'last') out.end();
        },
      },
      // As the run streams release: unsubscribed from the bus.
      (endedEarly) => {
        released.push(endedEarly);
        void events.return?.();
      },
    );
    const { seen, consumer } = recorder();
    stream[PUSH](consumer);
    bus.publish(finished('one'));
    bus.publish(finished('last'));
    bus.publish(finished('after the end'));
    await expect.poll(() => seen).toEqual(['replayed', 'one', 'last', 'end']);
    expect(released).toEqual([false]);
    expect(bus.subscriberCount()).toBe(0);
  });

  it('should keep the order when the handler reads storage first: the bus waits, its events come after what the read put out', async () => {
    const bus = createRunEventBus<null>();
    let finishRead: () => void = () => undefined;
    const stream = queuedStream<string, RunBusEvent<null>>(null, {
      events: bus.subscribe('r1'),
      handle: (event, out: Outlet<string>) => {
        if (contentOf(event) !== 'needs a read') return out.push(contentOf(event)!);
        return new Promise<void>((resolve) => (finishRead = resolve)).then(() => out.push('read from storage'));
      },
    }, () => undefined);
    const { seen, consumer } = recorder();
    stream[PUSH](consumer);
    bus.publish(finished('needs a read'));
    bus.publish(finished('published during the read'));
    expect(seen).toEqual([]);
    expect(bus.deepestQueue()).toBe(1);
    finishRead();
    await expect.poll(() => seen).toEqual(['read from storage', 'published during the read']);
  });

  it('should take nothing from the bus while its consumer is busy, then what was queued once resumed', () => {
    const bus = createRunEventBus<null>();
    const stream = queuedStream<string, RunBusEvent<null>>(null, { events: bus.subscribe('r1'), handle: (event, out) => out.push(contentOf(event)!) }, () => undefined);
    const { seen, consumer, setBusy } = recorder();
    const resume = stream[PUSH](consumer);
    setBusy(true);
    bus.publish(finished('taken, then busy'));
    bus.publish(finished('queued'));
    expect(seen).toEqual(['taken, then busy']);
    expect(bus.deepestQueue()).toBe(1);
    setBusy(false);
    resume();
    expect(seen).toEqual(['taken, then busy', 'queued']);
  });

  it('should end with the failure of a handler and release once, as ended early', async () => {
    const bus = createRunEventBus<null>();
    const released: boolean[] = [];
    const stream = queuedStream<string, RunBusEvent<null>>(
      null,
      {
        events: bus.subscribe('r1'),
        handle: () => {
          throw new Error('the handler failed');
        },
      },
      (endedEarly) => void released.push(endedEarly),
    );
    const { seen, consumer } = recorder();
    stream[PUSH](consumer);
    bus.publish(finished('boom'));
    await expect.poll(() => seen).toEqual(['failed: the handler failed']);
    expect(released).toEqual([true]);
    await stream.return(undefined);
    expect(released).toEqual([true]);
  });
});
