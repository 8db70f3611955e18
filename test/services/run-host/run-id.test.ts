import { describe, expect, it } from 'vitest';
import { newRunId } from '../../../src/services/run-host/run-id.ts';

describe('newRunId', () => {
  it('should mint a random (version 4) UUID, a new one every time', () => {
    const ids = Array.from({ length: 1_000 }, () => newRunId());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
