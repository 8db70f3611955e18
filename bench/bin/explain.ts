/**
 * `npm run bench:explain` (node --import tsx bench/bin/explain.ts): are the dashboard's hot queries
 * served by indexes at scale? Issue 14 asks for no sequential scan at 100 000 runs and 1 000 000
 * usage rows.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:explain
 *
 * It creates a scratch database `airlock_explain_<pid>` on that server (dropped at the end, also on
 * failure), migrates it, seeds it in SQL (generate_series: 50 users, 20 configurations over 4
 * models, 100 000 runs over a year with every status and termination reason, 1 000 000 usage rows
 * over the same year, both inserted in time order as a live system writes them), VACUUM ANALYZEs,
 * then prints `EXPLAIN (ANALYZE, BUFFERS)` of the statements the app really sends: the repository
 * functions' queries (`listRunsQuery`, `countRunsQuery`, `usageSummaryQuery`, `usageSince`),
 * compiled by Kysely with the parameters the resolvers give them. It ends with a table (query,
 * indexes used, execution time) and exits 1 when any plan holds a `Seq Scan` on runs or
 * usage_records. Not part of `npm test`.
 */
import { CompiledQuery, sql } from 'kysely';
import pg from 'pg';
import { createDb, type DbHandle } from '../../src/db/create-db.ts';
import type { Db } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { countRunsQuery, listRunsQuery, type RunFilter, type RunKey } from '../../src/db/repositories/run-list.ts';
import { usageSince, usageSummaryQuery, type UsageDimension } from '../../src/db/repositories/usage.ts';
import { NO_RUN_FILTER } from '../../src/services/run-filter.ts';
import { MAX_USAGE_GROUPS } from '../../src/services/usage-summary.ts';

const RUNS = 100_000;
const USAGE_ROWS = 1_000_000;
const USERS = 50;
const CONFIGURATIONS = 20;
const MODELS = 4;
/** What `runs(first: 20)` asks the database for: one more row than the page, to know if there is a next one. */
const PAGE = 21;
const DAY_MS = 86_400_000;

const progress = (text: string) => process.stderr.write(`[explain] ${text}\n`);

function serverUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) {
    process.stderr.write('DATABASE_URL is not set: give the URL of a PostgreSQL server where a scratch database may be created, e.g.\n');
    process.stderr.write('  DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:explain\n');
    process.exit(2);
  }
  return url;
}

async function onServer<T>(url: string, action: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await action(client);
  } finally {
    await client.end();
  }
}

async function timed<T>(label: string, action: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await action();
  progress(`${label}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return result;
}

/** Users, models and configurations, then runs and usage rows in time order over the last year. */
async function seed(db: Db): Promise<void> {
  await sql`insert into users (id, name, token_hash) select gen_random_uuid(), 'user-' || i, md5(i::text) || md5(i::text) from generate_series(1, ${USERS}) i`.execute(db);
  await sql`insert into providers (id, name, kind, settings) values (gen_random_uuid(), 'explain', 'SCRIPTED', '{}')`.execute(db);
  await sql`insert into models (id, provider_id, name, provider_model_id, input_price_per_mtok, output_price_per_mtok)
    select gen_random_uuid(), (select id from providers), 'model-' || i, 'm' || i, i, 2 * i from generate_series(1, ${MODELS}) i`.execute(db);
  await sql`insert into configurations (id, name, model_id, allowed_tool_groups)
    select gen_random_uuid(), 'configuration-' || i, (select array_agg(id order by name) from models)[1 + i % ${MODELS}], '[]'
    from generate_series(1, ${CONFIGURATIONS}) i`.execute(db);
  await timed(`${RUNS} runs`, () =>
    sql`
      with users_ as (select array_agg(id order by name) ids from users),
           configurations_ as (select array_agg(id order by name) ids from configurations),
           shaped as (
             select i,
               case when i % 100 = 0 then 'RUNNING' when i % 100 = 1 then 'WAITING_FOR_APPROVAL' when i % 100 < 10 then 'FAILED'
                    when i % 100 < 15 then 'CANCELLED' else 'COMPLETED' end as status,
               now() - interval '365 days' + (interval '365 days' * i / ${RUNS}) as created_at
             from generate_series(1, ${RUNS}) i)
      insert into runs (id, configuration_id, user_id, status, termination_reason, iterations, prompt, privacy_level,
                        prompt_tokens, completion_tokens, estimated_cost, created_at, finished_at, heartbeat_at)
      select gen_random_uuid(), configurations_.ids[1 + (i * 7) % ${CONFIGURATIONS}], users_.ids[1 + (i * 13) % ${USERS}], status,
        case status
          when 'COMPLETED' then (array['COMPLETED', 'COMPLETED', 'COMPLETED', 'MAX_ITERATIONS', 'BUDGET_EXHAUSTED'])[1 + i % 5]
          when 'FAILED' then (array['PROVIDER_FAILED', 'PROVIDER_FAILED', 'INTERRUPTED'])[1 + i % 3]
          when 'CANCELLED' then (array['CANCELLED', 'APPROVAL_DENIED'])[1 + i % 2]
        end,
        1 + i % 5, 'prompt ' || i, 'METADATA', 100 + i % 900, 50 + i % 400, (i % 1000) / 100000.0, created_at,
        case when status in ('RUNNING', 'WAITING_FOR_APPROVAL') then null else created_at + interval '20 seconds' end, created_at
      from shaped, users_, configurations_`.execute(db),
  );
  await timed(`${USAGE_ROWS} usage rows`, () =>
    sql`
      with users_ as (select array_agg(id order by name) ids from users),
           configurations_ as (select array_agg(id order by name) ids, array_agg(model_id order by name) models from configurations)
      insert into usage_records (id, user_id, configuration_id, run_id, model_id, prompt_tokens, completion_tokens, cost, created_at)
      select gen_random_uuid(), users_.ids[1 + (i * 13) % ${USERS}], configurations_.ids[1 + (i * 7) % ${CONFIGURATIONS}], null,
        configurations_.models[1 + (i * 7) % ${CONFIGURATIONS}], 100 + i % 900, 50 + i % 400, (i % 1000) / 1000000.0,
        now() - interval '365 days' + (interval '365 days' * i / ${USAGE_ROWS})
      from generate_series(1, ${USAGE_ROWS}) i, users_, configurations_`.execute(db),
  );
  await timed('VACUUM ANALYZE', async () => {
    await sql`vacuum analyze runs`.execute(db);
    await sql`vacuum analyze usage_records`.execute(db);
    await sql`analyze`.execute(db);
  });
}

interface Explained {
  readonly label: string;
  readonly plan: string;
  readonly indexes: string[];
  readonly seqScans: string[];
  readonly executionMs: number;
}

async function explain(db: Db, label: string, query: { compile(): CompiledQuery }): Promise<Explained> {
  const compiled = query.compile();
  const result = await db.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain (analyze, buffers) ${compiled.sql}`, [...compiled.parameters]));
  const plan = result.rows.map((row) => row['QUERY PLAN']).join('\n');
  const indexes = [...new Set([...plan.matchAll(/(Index Only Scan|Index Scan|Bitmap Index Scan)(?: Backward)? (?:using |on )(\w+)/g)].map((match) => `${match[2]} (${match[1]}${match[0].includes('Backward') ? ' Backward' : ''})`))];
  const seqScans = [...plan.matchAll(/Seq Scan on (runs|usage_records)\b/g)].map((match) => match[1]!);
  const executionMs = Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN);
  process.stdout.write(`\n=== ${label}\n${compiled.sql}\n${plan}\n`);
  return { label, plan, indexes, seqScans, executionMs };
}

async function ids(db: Db, table: 'users' | 'configurations' | 'models'): Promise<string[]> {
  return (await db.selectFrom(table).select('id').orderBy('name').execute()).map((row) => row.id);
}

async function hotQueries(db: Db): Promise<Explained[]> {
  const [user] = await ids(db, 'users');
  const [configuration] = await ids(db, 'configurations');
  const now = new Date();
  const monthAgo = new Date(now.getTime() - 30 * DAY_MS);
  const yearAgo = new Date(now.getTime() - 365 * DAY_MS);
  const filters: [string, RunFilter][] = [
    ['no filter (admin)', NO_RUN_FILTER],
    ['per user (a user\'s own list)', { ...NO_RUN_FILTER, userId: user! }],
    ['per configuration', { ...NO_RUN_FILTER, configurationId: configuration! }],
    ['per status FAILED', { ...NO_RUN_FILTER, status: ['FAILED'] }],
    ['per status RUNNING, WAITING_FOR_APPROVAL', { ...NO_RUN_FILTER, status: ['RUNNING', 'WAITING_FOR_APPROVAL'] }],
    ['per termination reason MAX_ITERATIONS', { ...NO_RUN_FILTER, terminationReason: ['MAX_ITERATIONS'] }],
    ['per created range (30 days)', { ...NO_RUN_FILTER, createdFrom: monthAgo, createdTo: now }],
    ['per user and status COMPLETED', { ...NO_RUN_FILTER, userId: user!, status: ['COMPLETED'] }],
  ];
  const results: Explained[] = [];
  for (const [name, filter] of filters) {
    results.push(await explain(db, `runs first page, ${name}`, listRunsQuery(db, { filter, after: null, before: null, limit: PAGE, inverted: false })));
    results.push(await explain(db, `runs totalCount, ${name}`, countRunsQuery(db, filter)));
  }
  // A cursor in the middle of the list: the key of the run 50 000 rows down.
  const middle = await db.selectFrom('runs').select(['created_at', 'id']).orderBy('created_at', 'desc').orderBy('id', 'desc').offset(RUNS / 2).limit(1).executeTakeFirstOrThrow();
  const key: RunKey = { id: middle.id };
  results.push(await explain(db, 'runs next page (after a cursor), no filter', listRunsQuery(db, { filter: NO_RUN_FILTER, after: key, before: null, limit: PAGE, inverted: false })));
  results.push(await explain(db, 'runs backward page (last/before a cursor), no filter', listRunsQuery(db, { filter: NO_RUN_FILTER, after: null, before: key, limit: PAGE, inverted: true })));
  results.push(await explain(db, 'runs backward page (last/before a cursor), per user', listRunsQuery(db, { filter: { ...NO_RUN_FILTER, userId: user! }, after: null, before: key, limit: PAGE, inverted: true })));

  const summaries: [string, UsageDimension[], string | null, Date][] = [
    ['by DAY, 30 days (admin)', ['DAY'], null, monthAgo],
    ['by USER, 30 days (admin)', ['USER'], null, monthAgo],
    ['by CONFIGURATION + MODEL, 30 days (admin)', ['CONFIGURATION', 'MODEL'], null, monthAgo],
    ['total, 30 days (admin)', [], null, monthAgo],
    ["a user's own, by DAY, 30 days", ['DAY'], user!, monthAgo],
    ["a user's own, by CONFIGURATION, 365 days", ['CONFIGURATION'], user!, yearAgo],
  ];
  for (const [name, groupBy, userId, from] of summaries) {
    results.push(await explain(db, `usageSummary ${name}`, usageSummaryQuery(db, { from, to: now, groupBy, userId, limit: MAX_USAGE_GROUPS + 1 })));
  }
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  results.push(await explain(db, 'Budget.spent without a counter (a user, this month)', usageSince(db, { scope: 'USER', id: user! }, monthStart)));
  results.push(await explain(db, 'Budget.spent without a counter (a configuration, this month)', usageSince(db, { scope: 'CONFIGURATION', id: configuration! }, monthStart)));
  return results;
}

function summaryTable(results: readonly Explained[]): string {
  const rows = results.map((result) => [result.label, result.seqScans.length > 0 ? `SEQ SCAN on ${result.seqScans.join(', ')}` : result.indexes.join(', ') || '(no index)', `${result.executionMs.toFixed(2)} ms`]);
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column]!.length), ['query', 'plan', 'time'][column]!.length));
  const line = (cells: string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  return [line(['query', 'plan', 'time']), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

async function main(): Promise<number> {
  const url = serverUrl();
  const name = `airlock_explain_${process.pid}`;
  const scratch = new URL(url);
  scratch.pathname = `/${name}`;
  progress(`creating the scratch database ${name}`);
  await onServer(url, (client) => client.query(`create database ${name}`));
  let handle: DbHandle | undefined;
  try {
    handle = await createDb({ databaseUrl: scratch.toString(), dataDir: 'memory://', poolSize: 2 });
    await timed('migrations', () => migrateToLatest(handle!.db));
    await seed(handle.db);
    const results = await hotQueries(handle.db);
    const seqScans = results.filter((result) => result.seqScans.length > 0);
    process.stdout.write(`\n${summaryTable(results)}\n`);
    if (seqScans.length > 0) {
      process.stdout.write(`\nFAILED: a sequential scan on runs or usage_records in: ${seqScans.map((result) => result.label).join('; ')}\n`);
      return 1;
    }
    process.stdout.write(`\nOK: ${results.length} plans, no sequential scan on runs or usage_records (${RUNS} runs, ${USAGE_ROWS} usage rows).\n`);
    return 0;
  } finally {
    await handle?.close();
    progress(`dropping ${name}`);
    await onServer(url, (client) => client.query(`drop database if exists ${name} with (force)`));
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
