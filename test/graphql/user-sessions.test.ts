import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createUserSessions } from '../../src/graphql/user-sessions.ts';
import { createUserRevocations } from '../../src/services/user-revocations.ts';

/** The registry of open sessions alone (the real sockets and streams: test/protocol/user-sessions.test.ts). */

class FakeSocket extends EventEmitter {
  readonly closes: { code: number; reason: string }[] = [];
  close(code: number, reason: string): void {
    this.closes.push({ code, reason });
    this.emit('close');
  }
}

function setup() {
  const errors: unknown[] = [];
  const revocations = createUserRevocations((error) => errors.push(error));
  return { revocations, sessions: createUserSessions(revocations), errors };
}

describe('user sessions', () => {
  it("should close only the revoked user's sockets, with 4403, and forget them once closed", () => {
    const { revocations, sessions } = setup();
    const [a1, a2, b] = [new FakeSocket(), new FakeSocket(), new FakeSocket()];
    expect(sessions.addSocket('a', a1, sessions.mark())).toBe(true);
    expect(sessions.addSocket('a', a2, sessions.mark())).toBe(true);
    expect(sessions.addSocket('b', b, sessions.mark())).toBe(true);
    expect(sessions.count('a')).toBe(2);
    revocations.publish({ userId: 'a', reason: 'DEACTIVATED' });
    expect(a1.closes).toEqual([{ code: 4403, reason: 'Forbidden' }]);
    expect(a2.closes).toEqual([{ code: 4403, reason: 'Forbidden' }]);
    expect(b.closes).toEqual([]);
    expect(sessions.count('a')).toBe(0);
    b.close(1000, 'bye');
    expect(sessions.count('b')).toBe(0);
  });

  it('should refuse a socket authenticated before a revocation of its user that it did not see', () => {
    const { revocations, sessions } = setup();
    const mark = sessions.mark();
    // Authenticating… meanwhile the user's token is rotated and the revocation published.
    revocations.publish({ userId: 'a', reason: 'TOKEN_ROTATED' });
    expect(sessions.addSocket('a', new FakeSocket(), mark)).toBe(false);
    expect(sessions.count('a')).toBe(0);
    // Another user's revocation does not concern this socket; a mark taken afterwards is fine.
    expect(sessions.addSocket('b', new FakeSocket(), mark)).toBe(true);
    expect(sessions.addSocket('a', new FakeSocket(), sessions.mark())).toBe(true);
  });

  it('should stop closing sockets once disposed', () => {
    const { revocations, sessions } = setup();
    const socket = new FakeSocket();
    sessions.addSocket('a', socket, sessions.mark());
    sessions.dispose();
    revocations.publish({ userId: 'a', reason: 'DELETED' });
    expect(socket.closes).toEqual([]);
  });

  it('should reach every listener even when one throws, reporting the failure', () => {
    const { revocations, errors } = setup();
    const heard: string[] = [];
    revocations.subscribe(() => {
      throw new Error('listener broke');
    });
    revocations.subscribe(({ userId }) => heard.push(userId));
    revocations.publish({ userId: 'a', reason: 'DEMOTED' });
    expect(heard).toEqual(['a']);
    expect(errors).toEqual([expect.objectContaining({ message: 'listener broke' })]);
  });

  describe('streams over HTTP (SSE)', () => {
    /** Runs the plugin's hooks as yoga would for one subscription request of `userId`; returns the stream it set. */
    function subscribeOverHttp(sessions: ReturnType<typeof createUserSessions>, userId: string, source: AsyncIterable<unknown>, between?: () => void) {
      const plugin = sessions.plugin() as any;
      const request = new Request('http://localhost/graphql', { method: 'POST' });
      plugin.onRequest({ request });
      between?.();
      const hooks = plugin.onSubscribe({ args: { contextValue: { viewer: { id: userId, name: userId, isAdmin: false }, request } } });
      let stream: AsyncIterableIterator<unknown> | undefined;
      hooks.onSubscribeResult({ result: source, setResult: (value: AsyncIterableIterator<unknown>) => (stream = value) });
      return stream!;
    }

    /** A source that yields once, then waits for ever; records whether it was returned. */
    function endlessSource() {
      const state = { returned: false };
      const source = (async function* () {
        try {
          yield 'first';
          await new Promise(() => {});
        } finally {
          state.returned = true;
        }
      })();
      return { source, state };
    }

    it("should end the revoked user's open stream at once (a pending next resolves as done) and forget it", async () => {
      const { revocations, sessions } = setup();
      const { source } = endlessSource();
      const stream = subscribeOverHttp(sessions, 'a', source);
      expect(await stream.next()).toEqual({ done: false, value: 'first' });
      expect(sessions.count('a')).toBe(1);
      const pending = stream.next();
      revocations.publish({ userId: 'b', reason: 'DEACTIVATED' });
      revocations.publish({ userId: 'a', reason: 'DEACTIVATED' });
      expect(await pending).toEqual({ done: true, value: undefined });
      expect(sessions.count('a')).toBe(0);
    });

    it('should end at once a stream whose request was authenticated before a revocation it did not see', async () => {
      const { revocations, sessions } = setup();
      const { source } = endlessSource();
      const stream = subscribeOverHttp(sessions, 'a', source, () => revocations.publish({ userId: 'a', reason: 'TOKEN_ROTATED' }));
      expect(await stream.next()).toEqual({ done: true, value: undefined });
      expect(sessions.count('a')).toBe(0);
    });

    it('should forget a stream that ended by itself, by the client, or by an error', async () => {
      const { sessions } = setup();
      const finite = subscribeOverHttp(sessions, 'a', (async function* () { yield 1; })());
      await finite.next();
      expect(await finite.next()).toEqual({ done: true, value: undefined });
      const { source, state } = endlessSource();
      const completed = subscribeOverHttp(sessions, 'a', source);
      await completed.next();
      await completed.return!();
      expect(state.returned).toBe(true);
      const failing = subscribeOverHttp(sessions, 'a', (async function* () { throw new Error('stream broke'); })());
      await expect(failing.next()).rejects.toThrow('stream broke');
      expect(sessions.count('a')).toBe(0);
    });
  });
});

