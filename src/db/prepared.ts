import { CompiledQuery, type Compilable } from 'kysely';
import type { Db } from './database.ts';

const MARK = '\u0000prepared:';

/**
 * A hot query written with the query builder but compiled ONCE per database handle, then run with
 * new values: building and compiling a query costs the server more CPU than PostgreSQL spends on
 * a statement like these, and they run several times per agent run.
 *
 * `build` is called once with a placeholder string for each argument (so the query's SHAPE must
 * not depend on the values: no branching on them); every run swaps the placeholders among the
 * compiled parameters for the real values. A placeholder the compiler did not turn into a
 * parameter is a programming error, reported at the first call.
 */
export function prepared<Args extends object, Row>(
  keys: readonly (keyof Args & string)[],
  build: (db: Db, args: Args) => Compilable<Row>,
): (db: Db, args: Args) => Promise<Row[]> {
  const compiledFor = new WeakMap<Db, CompiledQuery<Row>>();
  const compile = (db: Db): CompiledQuery<Row> => {
    const placeholders = Object.fromEntries(keys.map((key) => [key, `${MARK}${key}`])) as Args;
    const compiled = build(db, placeholders).compile();
    const missing = keys.filter((key) => !compiled.parameters.includes(`${MARK}${key}`));
    if (missing.length > 0) throw new Error(`prepared query: ${missing.join(', ')} did not become parameters`);
    compiledFor.set(db, compiled);
    return compiled;
  };
  return async (db, args) => {
    const compiled = compiledFor.get(db) ?? compile(db);
    const parameters = compiled.parameters.map((value) =>
      typeof value === 'string' && value.startsWith(MARK) ? (args as Record<string, unknown>)[value.slice(MARK.length)] : value,
    );
    return (await db.executeQuery(CompiledQuery.raw(compiled.sql, parameters))).rows as Row[];
  };
}
