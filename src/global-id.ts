/**
 * The ids clients see: base64 of `Typename:id`, the Relay format. The GraphQL schema encodes and
 * decodes with these (graphql/ids.ts hands them to the relay plugin) and so does `/mcp`, which names
 * a configuration as the API gives it; neither entry point imports the other, and this room imports
 * nothing.
 */

/** Strict, padded base64: anything else is not an id we gave out. */
const BASE64 = /^(?:[\d+/A-Za-z]{4})*(?:[\d+/A-Za-z]{2}==|[\d+/A-Za-z]{3}=)?$/;
const TYPENAME = /^[A-Z_a-z]\w*$/;

export interface GlobalId {
  readonly typename: string;
  readonly id: string;
}

export function encodeGlobalId(typename: string, id: string | number | bigint): string {
  return Buffer.from(`${typename}:${id}`).toString('base64');
}

/** The type and id a global id names, or null when it is not one (an id may itself hold colons). */
export function decodeGlobalId(globalId: string): GlobalId | null {
  if (!BASE64.test(globalId)) return null;
  const decoded = Buffer.from(globalId, 'base64').toString();
  const colon = decoded.indexOf(':');
  const typename = decoded.slice(0, colon);
  const id = decoded.slice(colon + 1);
  if (colon < 0 || !TYPENAME.test(typename) || id === '' || id.startsWith(':')) return null;
  return { typename, id };
}

/**
 * Decodes a global id nested in an input object, where Pothos cannot decode it for us. A
 * malformed id or one of another type decodes to a value no row has, so the service answers
 * NotFound instead of the request failing.
 */
export function decodeIdFor(typename: string, globalId: string | number): string {
  const decoded = decodeGlobalId(String(globalId));
  return decoded?.typename === typename ? decoded.id : String(globalId);
}
