import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Context } from '../context.ts';
import type { UserRevocations } from '../services/user-revocations.ts';

/** graphql-ws's `Forbidden`: the close code of a socket whose user lost access. */
export const FORBIDDEN_CLOSE_CODE = 4403;
export const FORBIDDEN_CLOSE_REASON = 'Forbidden';

/** The part of a websocket the registry uses. */
export interface ClosableSocket {
  close(code: number, reason: string): void;
  once(event: 'close', listener: () => void): unknown;
}

/**
 * The open sessions of each user in this process, ended when the user loses access: graphql-ws
 * sockets are closed with 4403 (every operation on them ends), subscriptions over HTTP (SSE) end
 * as if completed. A stream that ends early this way releases what it holds; a `runAgent` stream
 * cancels its run, as on any disconnect.
 *
 * A session is authenticated before it is registered. A revocation published in between would
 * miss it, so each registration brings the `mark()` taken before authenticating, and a user
 * revoked since that mark is refused instead of registered.
 */
export interface UserSessions {
  /** Read BEFORE authenticating a session. */
  mark(): number;
  /** Registers an authenticated socket until it closes; false (not registered) if the user was revoked since `mark`. */
  addSocket(userId: string, socket: ClosableSocket, mark: number): boolean;
  /** Ends the HTTP subscription streams of revoked users (websocket operations end with their socket). */
  plugin(): Plugin<Context>;
  /** Open sockets and streams of a user (for tests). */
  count(userId: string): number;
  /** Stops listening to revocations. */
  dispose(): void;
}

export function createUserSessions(revocations: UserRevocations): UserSessions {
  /** Counts revocations; `revokedAt` keeps, per user, the count at their latest (one number per user ever revoked). */
  let revocationCount = 0;
  const revokedAt = new Map<string, number>();
  const sockets = new Map<string, Set<ClosableSocket>>();
  const streams = new Map<string, Set<() => void>>();
  /** The mark of each HTTP request, taken before its context (and viewer) is built. */
  const requestMarks = new WeakMap<object, number>();

  const revokedSince = (userId: string, mark: number) => (revokedAt.get(userId) ?? 0) > mark;

  function add<T>(map: Map<string, Set<T>>, userId: string, item: T): () => void {
    let set = map.get(userId);
    if (!set) map.set(userId, (set = new Set()));
    set.add(item);
    return () => {
      set.delete(item);
      if (set.size === 0 && map.get(userId) === set) map.delete(userId);
    };
  }

  const stopListening = revocations.subscribe(({ userId }) => {
    revokedAt.set(userId, ++revocationCount);
    for (const socket of [...(sockets.get(userId) ?? [])]) socket.close(FORBIDDEN_CLOSE_CODE, FORBIDDEN_CLOSE_REASON);
    for (const end of [...(streams.get(userId) ?? [])]) end();
  });

  /**
   * `source`, ending early when `end` is called (a pending `next` resolves as done at once, and
   * `source` is returned). `release` runs once, however the stream ended: by itself, by `end`, by
   * the client's `return`, or by an error.
   */
  function endable<T>(source: AsyncIterable<T>, release: () => void): { stream: AsyncIterableIterator<T>; end(): void } {
    const iterator = source[Symbol.asyncIterator]();
    const DONE: IteratorResult<T> = { done: true, value: undefined };
    let ended = false;
    let resolveEnded!: (result: IteratorResult<T>) => void;
    const endedSignal = new Promise<IteratorResult<T>>((resolve) => (resolveEnded = resolve));
    const finish = async (returnSource: boolean) => {
      if (ended) return;
      ended = true;
      release();
      resolveEnded(DONE);
      if (returnSource) await iterator.return?.();
    };
    const stream: AsyncIterableIterator<T> = {
      next: async () => {
        if (ended) return DONE;
        try {
          const result = await Promise.race([iterator.next(), endedSignal]);
          if (result.done) await finish(false);
          return result;
        } catch (error) {
          await finish(false);
          throw error;
        }
      },
      return: async () => {
        await finish(true);
        return DONE;
      },
      [Symbol.asyncIterator]: () => stream,
    };
    // Ending is best effort past this point: the client has nothing left to receive either way.
    return { stream, end: () => void finish(true).catch(() => undefined) };
  }

  return {
    mark: () => revocationCount,

    addSocket(userId, socket, mark) {
      if (revokedSince(userId, mark)) return false;
      const remove = add(sockets, userId, socket);
      socket.once('close', remove);
      return true;
    },

    plugin: () => ({
      onRequest({ request }) {
        requestMarks.set(request, revocationCount);
      },
      onSubscribe({ args }) {
        const { viewer } = args.contextValue;
        const request = (args.contextValue as { request?: object }).request;
        // Websocket operations carry no request: their socket is the session.
        if (!viewer || !request) return;
        const mark = requestMarks.get(request) ?? 0;
        return {
          onSubscribeResult({ result, setResult }) {
            if (!isAsyncIterable(result)) return;
            let removeStream = () => {};
            const { stream, end } = endable(result, () => removeStream());
            if (revokedSince(viewer.id, mark)) {
              end();
            } else {
              removeStream = add(streams, viewer.id, end);
            }
            setResult(stream);
          },
        };
      },
    }),

    count: (userId) => (sockets.get(userId)?.size ?? 0) + (streams.get(userId)?.size ?? 0),

    dispose: stopListening,
  };
}
