import { describe, expect, it } from 'vitest';
import { shortRunId } from '../../src/dashboard/app/format.ts';

describe('shortRunId', () => {
  it('should give the first 8 hex characters of the uuid inside a run global id', () => {
    const global = Buffer.from('Run:1A2B3C4D-0000-4000-8000-000000000000').toString('base64');
    expect(shortRunId(global)).toBe('1a2b3c4d');
  });

  it('should fall back to the first 8 characters of an id that is not a run global id', () => {
    expect(shortRunId(Buffer.from('User:1a2b3c4d-0000').toString('base64'))).toBe('VXNlcjox');
    expect(shortRunId('not base64 at all!')).toBe('not base');
  });
});
