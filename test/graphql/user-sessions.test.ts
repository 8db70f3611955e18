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
});
