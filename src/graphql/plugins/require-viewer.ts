import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../../context.ts';

/** The error of an operation sent without a valid token (the same words as a field's own refusal). */
export const authenticationRequired = () =>
  new GraphQLError('Authentication required: send "Authorization: Bearer <token>".', { extensions: { code: 'UNAUTHENTICATED', http: { status: 200 } } });

/**
 * Every operation needs a user. The schema's auth scopes guard every field, but not the meta fields
 * (`__typename`, `__schema`, `__type`), so an anonymous `{ __typename }` would answer data; this
 * refuses any operation without a viewer before it executes, over every transport.
 */
export function useRequireViewer(): Plugin<Context> {
  const refuse = (contextValue: unknown, stop: (result: { errors: GraphQLError[] }) => void) => {
    if ((contextValue as Context).viewer === null) stop({ errors: [authenticationRequired()] });
  };
  return {
    onExecute: ({ args, setResultAndStopExecution }) => refuse(args.contextValue, setResultAndStopExecution),
    onSubscribe: ({ args, setResultAndStopExecution }) => refuse(args.contextValue, setResultAndStopExecution),
  };
}
