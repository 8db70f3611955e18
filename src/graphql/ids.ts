import { decodeGlobalID } from '@pothos/plugin-relay';

/**
 * Decodes a global id nested in an input object, where Pothos cannot decode it for us. A
 * malformed id or one of another type decodes to a value no row has, so the service answers
 * NotFound instead of the request failing.
 */
export function decodeIdFor(typename: string, globalId: string | number): string {
  try {
    const decoded = decodeGlobalID(String(globalId));
    return decoded.typename === typename ? decoded.id : String(globalId);
  } catch {
    return String(globalId);
  }
}
