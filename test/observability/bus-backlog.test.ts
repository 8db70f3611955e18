import { describe, expect, it } from 'vitest';
import { createRunEventBus } from '../../src/runtime/local-bus.ts';
import { createMetrics } from '../../src/observability/metrics.ts';

const finished = (runId: string) => ({ type: 'finished' as const, runId, finalContent: null, run: null });

describe('the event bus backlog (how far the slowest reader lags)', () => {
  it('should report the fullest subscriber queue, shrinking as it is read and gone once it is closed', async () => {
    const bus = createRunEventBus<null>({ subscriberBuffer: 100 });
    expect(bus.deepestQueue()).toBe(0);
    const slow = bus.subscribe('r1');
    const list = bus.subscribeAll();
    for (let index = 0; index < 3; index += 1) bus.publish(finished('r1'));
    bus.publish(finished('r2'));
    expect(bus.deepestQueue()).toBe(4); // the list reader has every run's events
    for (let index = 0; index < 4; index += 1) await list.next();
    expect(bus.deepestQueue()).toBe(3);
    await slow.next();
    expect(bus.deepestQueue()).toBe(2);
    await slow.return!();
    expect(bus.deepestQueue()).toBe(0);
  });

  it('should export the backlog and the subscriber count as gauges at scrape time', async () => {
    const bus = createRunEventBus<null>();
    const metrics = createMetrics({ approvalsWaiting: async () => 0, bus });
    const reader = bus.subscribe('r1');
    bus.publish(finished('r1'));
    bus.publish(finished('r1'));
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^airlock_event_bus_backlog_max 2$/m);
    expect(text).toMatch(/^airlock_event_bus_subscribers 1$/m);
    await reader.return!();
    expect(await metrics.registry.metrics()).toMatch(/^airlock_event_bus_backlog_max 0$/m);
  });
});
