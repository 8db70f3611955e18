import { decodeGlobalID, encodeGlobalID } from '@pothos/plugin-relay';
import { describe, expect, it } from 'vitest';
import { decodeGlobalId, decodeIdFor, encodeGlobalId } from '../src/global-id.ts';

/** Ids our API gave out before global-id.ts existed were Pothos's: both must read them alike. */
const WELL_FORMED = [
  ['Run', 'run_01HZX4'],
  ['Configuration', '7f1c2d3e-0000-4000-8000-000000000000'],
  ['User', 'a:b:c'],
  ['McpServer', 'trailing:'],
  ['_Odd9', 'é ünïcode'],
] as const;

const MALFORMED = ['nope', '', 'UnVu', encodeGlobalID('Run', 'x').slice(0, -1), b64('Run:'), b64(':x'), b64('Run::x'), b64('9Run:x'), b64('Ru n:x'), b64('no colon')];

function b64(text: string): string {
  return Buffer.from(text).toString('base64');
}

describe('global ids', () => {
  it('should write the ids Pothos writes and read them back', () => {
    for (const [typename, id] of WELL_FORMED) {
      const globalId = encodeGlobalId(typename, id);
      expect(globalId).toBe(encodeGlobalID(typename, id));
      expect(decodeGlobalId(globalId)).toEqual({ typename, id });
      expect(decodeGlobalId(globalId)).toEqual(decodeGlobalID(globalId));
    }
  });

  it('should refuse what Pothos refuses', () => {
    for (const globalId of MALFORMED) {
      expect(decodeGlobalId(globalId), globalId).toBeNull();
      expect(() => decodeGlobalID(globalId), globalId).toThrow();
    }
  });

  it('should decode a nested id of the expected type only', () => {
    expect(decodeIdFor('Run', encodeGlobalId('Run', 'r1'))).toBe('r1');
    // Another type's id or a malformed one stays as given: no row has it, so the service answers NotFound.
    expect(decodeIdFor('Run', encodeGlobalId('User', 'r1'))).toBe(encodeGlobalId('User', 'r1'));
    expect(decodeIdFor('Configuration', 'support-bot')).toBe('support-bot');
    expect(decodeIdFor('Run', 42)).toBe('42');
  });
});
