/**
 * Many deadlines on one timer. The live runs list coalesces each subscriber's updates per run
 * (coalesce.ts): with ten thousand dashboards on a busy run, one `setTimeout` per subscriber and
 * window is ten thousand timers every 250 ms. A wheel keeps the deadlines in slots of
 * `resolutionMs` and arms one timer, for the earliest slot; a callback runs at most `resolutionMs`
 * after its deadline (never before), callbacks of one slot in the order they were scheduled.
 */
export interface TimerWheel {
  /** Runs `run` once `delayMs` have passed; returns its cancellation (harmless once it ran). */
  schedule(delayMs: number, run: () => void): () => void;
  /** Deadlines waiting (for tests and metrics). */
  readonly pending: number;
}

export interface TimerWheelOptions {
  /** Width of a slot, ms (default 10). */
  readonly resolutionMs?: number;
  /** Default `performance.now()`. */
  readonly now?: () => number;
}

export function createTimerWheel(options: TimerWheelOptions = {}): TimerWheel {
  const resolutionMs = options.resolutionMs ?? 10;
  const now = options.now ?? (() => performance.now());
  /** Slot number (deadline ÷ resolution, rounded up) → its callbacks in the order scheduled. */
  const slots = new Map<number, Set<() => void>>();
  let pending = 0;
  let armed: { slot: number; timer: NodeJS.Timeout } | null = null;

  const arm = () => {
    let earliest = Infinity;
    for (const slot of slots.keys()) if (slot < earliest) earliest = slot;
    if (armed && armed.slot === earliest) return;
    if (armed) clearTimeout(armed.timer);
    armed = null;
    if (earliest === Infinity) return;
    armed = { slot: earliest, timer: setTimeout(fire, Math.max(0, earliest * resolutionMs - now())) };
  };

  const fire = () => {
    armed = null;
    const current = now();
    // Slots whose whole width has passed, earliest first (a Map keeps insertion order, not slot order).
    const due = [...slots.keys()].filter((slot) => slot * resolutionMs <= current).sort((a, b) => a - b);
    for (const slot of due) {
      const callbacks = slots.get(slot)!;
      slots.delete(slot);
      pending -= callbacks.size;
      for (const run of callbacks) run();
    }
    arm();
  };

  return {
    schedule(delayMs, run) {
      const slot = Math.ceil((now() + Math.max(0, delayMs)) / resolutionMs);
      let callbacks = slots.get(slot);
      if (!callbacks) slots.set(slot, (callbacks = new Set()));
      // Its own function: the same callback scheduled twice is two deadlines.
      const entry = () => run();
      callbacks.add(entry);
      pending++;
      if (!armed || slot < armed.slot) arm();
      return () => {
        const waiting = slots.get(slot);
        if (!waiting?.delete(entry)) return;
        pending--;
        if (waiting.size === 0) slots.delete(slot);
      };
    },
    get pending() {
      return pending;
    },
  };
}
