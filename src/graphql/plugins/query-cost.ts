import {
  getNamedType,
  getNullableType,
  getOperationAST,
  GraphQLError,
  isLeafType,
  isListType,
  type DocumentNode,
  type GraphQLField,
  type GraphQLSchema,
} from 'graphql';
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import type { Plugin } from 'graphql-yoga';

/**
 * What one operation may ask for, counted before anything runs (on HTTP, SSE and graphql-ws alike,
 * with variables, fragments, aliases and `@skip`/`@include` applied):
 *
 * - a leaf field (scalar, enum, JSON, or a list of them) costs 1;
 * - an object field costs 1 + its selection;
 * - a connection costs 1 + page × (ROW_COST + its selection), where page is `first` or `last`
 *   (at least 1), or the connection's default page size when neither is given: an absent `first`
 *   is never free;
 * - a list of objects an argument enumerates (`nodes(ids: [...])`) costs 1 + that many × its
 *   selection; a list that declares its size from its arguments (`listSizeExtensions`) costs
 *   1 + that size × its selection; any other list of objects 1 + ASSUMED_LIST_SIZE × its selection;
 * - a feed (a subscription that lists rows: `feedExtensions`) costs what its snapshot can send,
 *   like a connection of that many rows: 1 + snapshot rows × (ROW_COST + its selection). Each
 *   later event runs the selection once, which costs less. So `runUpdates { run { X } }` costs
 *   about what `runs(first: 100) { edges { node { X } } }` costs, and is refused where it is.
 *
 * ROW_COST is the database row behind each connection item: a step is read whole whatever fields
 * are selected, so a thousand rows cost a thousand reads even for one field each.
 */
export const QUERY_COST = {
  /**
   * The largest cost an operation may have: a page of 100 steps with every field (about 10 000)
   * fits, as does a page of 100 runs; 20 runs with 50 steps each (about 23 000 with one field) does not.
   */
  maxCost: 12_000,
  rowCost: 20,
  assumedListSize: 10,
} as const;

/** The page sizes of a connection: declared once, read by its resolver and by the cost rule. */
export interface PageSize {
  /** Items served when neither `first` nor `last` is given. */
  readonly defaultSize: number;
  /** The largest `first` or `last` accepted; above it the operation is refused. */
  readonly maxSize: number;
}

/** Pothos's own defaults, for a connection that declares none. */
const UNDECLARED_PAGE_SIZE: PageSize = { defaultSize: 20, maxSize: 100 };

const PAGE_SIZE_EXTENSION = 'airlockPageSize';

/** Field `extensions` that declare a connection's page sizes: `t.connection({ extensions: pageSizeExtensions(SIZE), … })`. */
export function pageSizeExtensions(size: PageSize): Record<string, unknown> {
  return { [PAGE_SIZE_EXTENSION]: size };
}

const LIST_SIZE_EXTENSION = 'airlockListSize';

/**
 * Field `extensions` of a list of objects that says, from the field's arguments (variables
 * applied), how many items it can hold at most: `t.field({ type: [X], extensions: listSizeExtensions((args) => …) })`.
 */
export function listSizeExtensions(size: (args: Record<string, unknown>) => number): Record<string, unknown> {
  return { [LIST_SIZE_EXTENSION]: size };
}

/** A subscription that lists rows: the rows it sends at once when it starts, then one event per change. */
export interface FeedSize {
  /** The most events its snapshot sends (each runs the whole selection). */
  readonly snapshotSize: number;
  /** Whether an event (the field's resolved value) belongs to the snapshot: the response-size limit bounds the snapshot's bytes as one response. */
  readonly inSnapshot: (event: unknown) => boolean;
}

const FEED_SIZE_EXTENSION = 'airlockFeedSize';

/** Field `extensions` of a subscription that lists rows: `t.field({ extensions: feedExtensions({ snapshotSize, inSnapshot }), … })`. */
export function feedExtensions(size: FeedSize): Record<string, unknown> {
  return { [FEED_SIZE_EXTENSION]: size };
}

/** The snapshot of a feed; null for any other field. */
export function feedSizeOf(field: { readonly extensions?: Readonly<Record<string, unknown>> | null }): FeedSize | null {
  return (field.extensions?.[FEED_SIZE_EXTENSION] as FeedSize | undefined) ?? null;
}

/** The page sizes of a field that takes `first` or `last`; null for a field that pages nothing. */
export function pageSizeOf(field: GraphQLField<unknown, unknown>): PageSize | null {
  const declared = field.extensions?.[PAGE_SIZE_EXTENSION] as PageSize | undefined;
  if (declared) return declared;
  return field.args.some((arg) => arg.name === 'first' || arg.name === 'last') ? UNDECLARED_PAGE_SIZE : null;
}

/** Names of the types connection fields return: their `edges` list is the page, counted once. */
const connectionTypesBySchema = new WeakMap<GraphQLSchema, ReadonlySet<string>>();
function connectionTypesOf(schema: GraphQLSchema): ReadonlySet<string> {
  let names = connectionTypesBySchema.get(schema);
  if (!names) {
    const found = new Set<string>();
    for (const type of Object.values(schema.getTypeMap())) {
      if (!('getFields' in type) || type.name.startsWith('__')) continue;
      for (const field of Object.values(type.getFields()) as GraphQLField<unknown, unknown>[]) {
        if ('args' in field && pageSizeOf(field)) found.add(getNamedType(field.type).name);
      }
    }
    names = found;
    connectionTypesBySchema.set(schema, names);
  }
  return names;
}

/** A page-size argument outside its bounds; the operation is refused before anything runs. */
function pageArgumentError(argument: 'first' | 'last', value: number, size: PageSize, coordinate: string, node: unknown): GraphQLError | null {
  const next = argument === 'first' ? 'after: pageInfo.endCursor' : 'before: pageInfo.startCursor';
  const message =
    value < 0
      ? `${argument} must be at least 0 (${coordinate}).`
      : value > size.maxSize
        ? `${argument} must be at most ${size.maxSize} (${coordinate}): ask for fewer items and page on with ${next}.`
        : null;
  return message === null ? null : new GraphQLError(message, { nodes: node as never, extensions: { code: 'BAD_USER_INPUT' } });
}

function estimatorFor(schema: GraphQLSchema): ComplexityEstimator {
  const connectionTypes = connectionTypesOf(schema);
  return ({ type, field, node, args, childComplexity }) => {
    // Introspection is bounded by depth and tokens; GraphiQL's own query must stay possible.
    if (field.name === '__schema' || field.name === '__type') return 0;
    if (isLeafType(getNamedType(field.type))) return 1;
    const feed = feedSizeOf(field);
    if (feed) return 1 + feed.snapshotSize * (QUERY_COST.rowCost + childComplexity);
    const page = pageSizeOf(field);
    if (page) {
      const coordinate = `${type.name}.${field.name}`;
      const sizes: number[] = [];
      for (const argument of ['first', 'last'] as const) {
        const value = args[argument] as number | null | undefined;
        if (value == null) continue;
        const error = pageArgumentError(argument, value, page, coordinate, node);
        if (error) throw error;
        sizes.push(Math.max(value, 1));
      }
      const items = sizes.length === 0 ? page.defaultSize : Math.max(...sizes);
      return 1 + items * (QUERY_COST.rowCost + childComplexity);
    }
    if (!isListType(getNullableType(field.type)) || (field.name === 'edges' && connectionTypes.has(type.name))) return 1 + childComplexity;
    const declared = field.extensions?.[LIST_SIZE_EXTENSION] as ((args: Record<string, unknown>) => number) | undefined;
    if (declared) return 1 + Math.max(declared(args), 1) * childComplexity;
    // A list an argument enumerates (`nodes(ids: [...])`) has that many items.
    const enumerated = Object.values(args).find((value): value is unknown[] => Array.isArray(value));
    return 1 + (enumerated ? enumerated.length : QUERY_COST.assumedListSize) * childComplexity;
  };
}

/**
 * The cost of the operation `operationName` picks out of `document`, with its variables. Throws a
 * GraphQLError when a page size is out of bounds or the variables do not fit the operation.
 */
export function queryCostOf(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null, variables?: Record<string, unknown> | null): number {
  const operation = getOperationAST(document, operationName);
  if (!operation) return 0; // execution reports the missing operation
  return getComplexity({
    schema,
    query: document,
    estimators: [estimatorFor(schema)],
    ...(operation.name ? { operationName: operation.name.value } : {}),
    variables: variables ?? {},
  });
}

interface QueryCostOptions {
  readonly maxCost: number;
  /** Outside production a refusal names the limit and the cost found. */
  readonly exposeLimits: boolean;
}

/**
 * Refuses, before it runs, an operation that asks for too much: `first`/`last` out of bounds, or a
 * cost above `maxCost`. It runs where variables are known (execute and subscribe, on every
 * transport), not as a validation rule: validation results are cached by document, and
 * `runs(first: $n)` costs what `$n` says.
 */
export function useQueryCost(options: QueryCostOptions): Plugin {
  const refusalOf = (args: { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null; variableValues?: unknown }) => {
    let cost: number;
    try {
      cost = queryCostOf(args.schema, args.document, args.operationName, (args.variableValues ?? null) as Record<string, unknown> | null);
    } catch (error) {
      // Bad page sizes, variables that do not fit, or a document too large to count.
      return error instanceof GraphQLError ? error : new GraphQLError('The operation could not be costed: check its variables.', { extensions: { code: 'BAD_USER_INPUT' } });
    }
    if (cost <= options.maxCost) return null;
    const detail = options.exposeLimits ? ` (limit ${options.maxCost}, found ${cost})` : '';
    return new GraphQLError(`Query cost limit exceeded${detail}: ask for fewer items (first/last) or fewer fields, and page on with the cursors.`, {
      extensions: { code: 'QUERY_TOO_COSTLY' },
    });
  };
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const refusal = refusalOf(args);
      if (refusal) setResultAndStopExecution({ errors: [refusal] });
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const refusal = refusalOf(args);
      if (refusal) setResultAndStopExecution({ errors: [refusal] });
    },
  };
}
