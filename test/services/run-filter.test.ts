import { describe, expect, it } from 'vitest';
import { ForbiddenError, ValidationError } from '../../src/errors.ts';
import { matchesRunFilter, NO_RUN_FILTER, runFilterFor } from '../../src/services/run-filter.ts';

const ADMIN = { id: 'a', name: 'admin', isAdmin: true };
const ALICE = { id: 'u1', name: 'alice', isAdmin: false };
const RUN = { configuration_id: 'c1', user_id: 'u1', kind: 'AGENT' as const, status: 'COMPLETED' as const, termination_reason: 'MAX_ITERATIONS', created_at: new Date('2026-11-30T12:00:00Z') };

describe('run filter', () => {
  it('should match everything when empty, and each field on its own', () => {
    expect(matchesRunFilter(RUN, NO_RUN_FILTER)).toBe(true);
    const only = (patch: object) => matchesRunFilter(RUN, { ...NO_RUN_FILTER, ...patch });
    expect(only({ configurationId: 'c1' })).toBe(true);
    expect(only({ configurationId: 'c2' })).toBe(false);
    expect(only({ userId: 'u2' })).toBe(false);
    expect(only({ kind: 'AGENT' })).toBe(true);
    expect(only({ kind: 'MCP' })).toBe(false);
    expect(only({ status: ['RUNNING', 'COMPLETED'] })).toBe(true);
    expect(only({ status: ['FAILED'] })).toBe(false);
    expect(only({ terminationReason: ['MAX_ITERATIONS'] })).toBe(true);
    expect(only({ terminationReason: ['COMPLETED'] })).toBe(false);
    expect(matchesRunFilter({ ...RUN, status: 'RUNNING', termination_reason: null }, { ...NO_RUN_FILTER, terminationReason: ['COMPLETED'] })).toBe(false);
    // createdFrom inclusive, createdTo exclusive.
    expect(only({ createdFrom: RUN.created_at })).toBe(true);
    expect(only({ createdTo: RUN.created_at })).toBe(false);
    expect(only({ createdFrom: new Date('2026-11-30T00:00:00Z'), createdTo: new Date('2026-12-01T00:00:00Z') })).toBe(true);
  });

  it('should keep a non-admin to their own runs and refuse naming another user; an admin may name anyone', () => {
    expect(runFilterFor(ALICE, {}).userId).toBe('u1');
    expect(runFilterFor(ALICE, { userId: 'u1' }).userId).toBe('u1');
    expect(() => runFilterFor(ALICE, { userId: 'u2' })).toThrow(ForbiddenError);
    expect(runFilterFor(ADMIN, null).userId).toBeNull();
    expect(runFilterFor(ADMIN, { userId: 'u2', status: ['RUNNING', 'RUNNING'] })).toMatchObject({ userId: 'u2', status: ['RUNNING'] });
  });

  it('should refuse an empty or reversed date range and unknown statuses by path', () => {
    const when = new Date('2026-11-30T00:00:00Z');
    expect(() => runFilterFor(ADMIN, { createdFrom: when, createdTo: when })).toThrow(ValidationError);
    try {
      runFilterFor(ADMIN, { status: ['DONE'] });
      expect.unreachable();
    } catch (error) {
      expect((error as ValidationError).issues[0]!.path).toEqual(['status', '0']);
    }
  });
});
