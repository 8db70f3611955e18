/**
 * The load scenario's correctness checks: every run's live steps against its stored steps (read back
 * over GraphQL), the idle subscriptions against their waiting runs, and the server's own log. Each
 * problem found is counted and the first few are noted as examples.
 */
import type { ChildProcess } from 'node:child_process';
import type { RunRecord } from '../../bin/load-driver.ts';
import type { AirlockUnderTest } from '../../lib/airlock.ts';

/** Adds one example line to the report (the first few only). */
export type Note = (text: string) => void;

/**
 * A full page means more steps than expected. The server costs `nodes(ids)` by the ids given and
 * each step page by its `first`: RUNS_PER_READ × STEPS_PAGE steps must stay within its cost limit.
 */
const STEPS_PAGE = 40;
const RUNS_PER_READ = 10;
const STEPS_QUERY = `query($ids: [ID!]!) { nodes(ids: $ids) { ... on Run {
  id status auditIncomplete steps(first: ${STEPS_PAGE}) { edges { node { sequence kind } } }
} } }`;

export interface StoredRun {
  readonly id: string;
  readonly status: string;
  readonly auditIncomplete: boolean;
  readonly steps: { readonly sequence: number; readonly kind: string }[];
}

/** What the watcher reports of an idle subscription once its run was cancelled (`finish-idle`). */
export interface IdleWatch {
  readonly runIndex: number;
  readonly steps: number[];
  readonly finished: string | null;
  readonly completed: boolean;
  readonly error: string | null;
  readonly socketClosed: boolean;
}

/** Warnings and errors the server logs (pino JSON lines on stdout), counted from now on. */
export function watchServerLog(child: ChildProcess): { warn: number; error: number; examples: string[] } {
  const serverLog = { warn: 0, error: 0, examples: [] as string[] };
  child.stdout!.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      const level = Number(/"level":(\d+)/.exec(line)?.[1] ?? 0);
      if (level >= 50) serverLog.error += 1;
      else if (level >= 40) serverLog.warn += 1;
      if (level >= 40 && serverLog.examples.length < 5) serverLog.examples.push(line.slice(0, 500));
    }
  });
  return serverLog;
}

/** The K-round script as stored: REQUEST, LLM, TOOL per round, then REQUEST, LLM. */
function expectedSteps(k: number): string[] {
  const kinds = [...Array.from({ length: k }, () => ['REQUEST', 'LLM', 'TOOL']).flat(), 'REQUEST', 'LLM'];
  return kinds.map((kind, index) => `${index + 1}:${kind}`);
}

export async function readStoredRuns(airlock: AirlockUnderTest, ids: readonly string[], onBatch?: (done: number) => void): Promise<Map<string, StoredRun>> {
  const stored = new Map<string, StoredRun>();
  const batches: string[][] = [];
  for (let index = 0; index < ids.length; index += RUNS_PER_READ) batches.push(ids.slice(index, index + RUNS_PER_READ));
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < batches.length) {
        const batch = batches[next++]!;
        const data = await airlock.gql<{ nodes: (null | { id: string; status: string; auditIncomplete: boolean; steps: { edges: { node: { sequence: number; kind: string } }[] } })[] }>(
          STEPS_QUERY,
          { ids: batch },
        );
        for (const node of data.nodes) {
          if (!node) continue;
          if (node.steps.edges.length >= STEPS_PAGE) throw new Error(`run ${node.id} has ${STEPS_PAGE} steps or more`);
          stored.set(node.id, { id: node.id, status: node.status, auditIncomplete: node.auditIncomplete, steps: node.steps.edges.map((edge) => edge.node) });
        }
        onBatch?.(stored.size);
      }
    }),
  );
  return stored;
}

/**
 * Every run against its stored row: an error or a run not COMPLETED with its audit whole; steps
 * received twice or after a higher one; lost steps (stored but not streamed, streamed but not stored,
 * or a hole in the stored 1..max); a stored list other than the K-round script.
 */
export function verifyRuns(runs: readonly RunRecord[], stored: ReadonlyMap<string, StoredRun>, k: number, note: Note) {
  const expected = expectedSteps(k).join(',');
  let runErrors = 0;
  let unexpectedSteps = 0;
  let lost = 0;
  let duplicates = 0;
  let outOfOrder = 0;
  let storedSteps = 0;
  let streamedSteps = 0;
  for (const run of runs) {
    streamedSteps += run.steps.length;
    const row = run.id ? stored.get(run.id) : undefined;
    if (run.error !== null || !row || row.status !== 'COMPLETED' || row.auditIncomplete) {
      runErrors += 1;
      note(`run ${run.id ?? '(not started)'}: ${run.error ?? (row ? `stored as ${row.status}${row.auditIncomplete ? ', audit incomplete' : ''}` : 'not found in storage')}`);
    }
    // Duplicates and order, as received.
    const seen = new Set<number>();
    let last = 0;
    for (const step of run.steps) {
      const sequence = Number(step.split(':')[0]);
      if (seen.has(sequence)) {
        duplicates += 1;
        continue;
      }
      seen.add(sequence);
      if (sequence < last) outOfOrder += 1;
      last = Math.max(last, sequence);
    }
    if (!row) continue;
    storedSteps += row.steps.length;
    // Lost: stored but not streamed, streamed but not stored, or a hole in the stored 1..max.
    const storedKeys = new Set(row.steps.map((step) => `${step.sequence}:${step.kind}`));
    const streamedKeys = new Set(run.steps);
    const holes = row.steps.length === 0 ? 0 : Math.max(...row.steps.map((step) => step.sequence)) - new Set(row.steps.map((step) => step.sequence)).size;
    const notStreamed = [...storedKeys].filter((key) => !streamedKeys.has(key)).length;
    const notStored = [...streamedKeys].filter((key) => !storedKeys.has(key)).length;
    if (notStreamed + notStored + holes > 0) note(`run ${run.id}: ${notStreamed} stored steps not streamed, ${notStored} streamed steps not stored, ${holes} holes`);
    lost += notStreamed + notStored + holes;
    if ([...storedKeys].join(',') !== expected) {
      unexpectedSteps += 1;
      note(`run ${run.id}: stored steps ${[...storedKeys].join(',')} instead of ${expected}`);
    }
  }
  return { runErrors, unexpectedSteps, lost, duplicates, outOfOrder, storedSteps, streamedSteps };
}

/** Idle subscriptions: open and error-free through the load, then their run's steps and its end (CANCELLED). */
export function verifyIdle(watches: readonly IdleWatch[], waitingStored: ReadonlyMap<string, StoredRun>, waitingRunIds: readonly string[], note: Note) {
  let idleErrors = 0;
  let endedCleanly = 0;
  for (const watch of watches) {
    const runStored = waitingStored.get(waitingRunIds[watch.runIndex]!);
    const storedSequences = runStored?.steps.map((step) => step.sequence).join(',');
    const ok = watch.error === null && !watch.socketClosed && watch.completed && watch.finished === 'CANCELLED' && runStored?.status === 'CANCELLED' && watch.steps.join(',') === storedSequences;
    if (ok) endedCleanly += 1;
    else {
      idleErrors += 1;
      note(`idle subscription on waiting run ${watch.runIndex}: error ${watch.error}, socket closed ${watch.socketClosed}, completed ${watch.completed}, finished ${watch.finished}, steps [${watch.steps}] vs stored [${storedSequences}] (${runStored?.status})`);
    }
  }
  return { idleErrors, endedCleanly };
}
