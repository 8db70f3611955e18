import { type GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { codeOf, isClientError } from '../errors.ts';

/**
 * Where a client's mistakes are written: the server's logger fits it. Declared here, where it is
 * used, because the GraphQL door does not import the logger (docs/architecture.md, the import rule).
 */
export interface ClientErrorLog {
  debug(fields: Record<string, unknown>, message: string): void;
}

/**
 * A client's own mistakes (a bad document, input over a limit, a missing right, an unknown id) are
 * logged at debug: they are not the server's fault, and at error they would bury the faults that
 * are. Unexpected errors are logged at error by maskError, with their detail.
 */
export function useClientErrorLog(log: ClientErrorLog): Plugin {
  const logAll = (errors: readonly unknown[] | undefined) => {
    for (const error of errors ?? []) {
      if (isClientError(error)) log.debug({ code: codeOf(error as GraphQLError), error: (error as GraphQLError).message }, 'client error');
    }
  };
  const inResult = ({ result }: { result: unknown }) => {
    if (!isAsyncIterable(result)) logAll((result as { errors?: readonly unknown[] }).errors);
  };
  return {
    onParse: () => ({ result }) => {
      if (result instanceof Error) logAll([result]);
    },
    onValidate: () => ({ result }) => logAll(result),
    onExecute: () => ({ onExecuteDone: inResult }),
    onSubscribe: () => ({ onSubscribeResult: inResult }),
  };
}
