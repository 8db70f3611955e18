import { isAsyncIterable, type Plugin } from 'graphql-yoga';

const SUGGESTION = /Did you mean [^?]*\?/g;

/**
 * "Did you mean …?" names parts of the schema. Armor's filter only knows the `Did you mean "x"?` form
 * of validation errors; enum values (`Did you mean the enum value "X"?`) and variable values, which
 * are coerced at execution, need this one. Messages are changed in place, as armor does.
 */
export function useHiddenSuggestions(): Plugin {
  const hide = (error: { message: string }) => {
    if (error.message.includes('Did you mean')) error.message = error.message.replace(SUGGESTION, '[Suggestion hidden]');
  };
  // Variables are coerced before anything streams: their errors come as a single result.
  const inResult = ({ result }: { result: unknown }) => {
    if (!isAsyncIterable(result)) (result as { errors?: readonly { message: string }[] }).errors?.forEach(hide);
  };
  return {
    onValidate: () => ({ result }) => result.forEach(hide),
    onExecute: () => ({ onExecuteDone: inResult }),
    onSubscribe: () => ({ onSubscribeResult: inResult }),
  };
}
