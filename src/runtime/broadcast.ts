/**
 * A message for every holder of something, in every instance: a user's sessions (revocations), the
 * process that drives a run (cancellations). The in-process implementation serves one instance; the
 * Redis one (src/cluster/) delivers here AND to the other instances.
 */
export interface Broadcast<Message> {
  publish(message: Message): void;
  /** Listens from now on; returns the function that stops listening. */
  subscribe(listener: (message: Message) => void): () => void;
}

/**
 * Listeners run synchronously, in subscription order; one that throws is reported to `onListenerError`
 * and does not keep the others from running (a message must reach every holder).
 */
export function createLocalBroadcast<Message>(onListenerError: (error: unknown) => void): Broadcast<Message> {
  const listeners = new Set<(message: Message) => void>();
  return {
    publish(message) {
      for (const listener of [...listeners]) {
        try {
          listener(message);
        } catch (error) {
          onListenerError(error);
        }
      }
    },
    subscribe(listener) {
      const entry = (message: Message) => listener(message);
      listeners.add(entry);
      return () => listeners.delete(entry);
    },
  };
}
