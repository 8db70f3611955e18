import { PothosValidationError } from '@pothos/core';
import { decodeGlobalId, encodeGlobalId, type GlobalId } from '../global-id.ts';

/**
 * The relay plugin's codec (builder.ts): the schema's ids are the ones `global-id.ts` writes, the
 * same that `/mcp` reads. A malformed id in an `ID` argument fails the request, as Pothos's own does.
 */
export const relayGlobalIds = {
  encodeGlobalID: (typename: string, id: string | number | bigint): string => encodeGlobalId(typename, id),
  decodeGlobalID(globalId: string): GlobalId {
    const decoded = decodeGlobalId(globalId);
    if (!decoded) throw new PothosValidationError(`Invalid global ID: ${globalId}`);
    return decoded;
  },
};
