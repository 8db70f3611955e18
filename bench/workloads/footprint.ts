/**
 * Footprint of `npm start` (issue 19): time to the "is listening" line and RSS of the whole process
 * tree right after the first GraphQL answer, for four ways of starting — a first start on a fresh
 * embedded data directory, a restart on that same directory, `AIRLOCK_DATA_DIR=memory://`, and
 * PostgreSQL — each the median of `repetitions` starts, interleaved (one of each per round).
 * The command is what `npm start` runs (package.json's `start`), so every process it makes is counted.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { installedClusterTemplate } from '../../src/db/create-db.ts';
import { postgresAvailable } from '../lib/airlock.ts';
import { createPrivateDatabase } from '../lib/private-databases.ts';
import { REPO_ROOT } from '../lib/children.ts';
import { atHarnessEnd } from '../lib/harness.ts';
import { progress, progressDone } from '../lib/progress.ts';
import { measureStart, type StartSample } from '../lib/start.ts';
import { fmt, median, ratio, renderTable } from '../lib/stats.ts';

type Variant = 'first' | 'firstWithoutTemplate' | 'restart' | 'memory' | 'postgres';
const LABEL: Record<Variant, string> = {
  first: 'first start, embedded (fresh data directory)',
  firstWithoutTemplate: 'first start without the template npm ci prepares',
  restart: 'restart, embedded (same data directory)',
  memory: 'embedded, AIRLOCK_DATA_DIR=memory://',
  postgres: 'PostgreSQL (DATABASE_URL)',
};

export interface FootprintResult {
  readonly samples: Record<Variant, readonly StartSample[]>;
  readonly median: Record<Variant, { readonly listeningMs: number; readonly rssMiB: number } | null>;
  readonly table: string;
}

/** Exactly what `npm start` runs (package.json), without npm's own process. */
const START_SCRIPT: string = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).scripts.start;
const NPM_START = START_SCRIPT.split(' ').map((word) => (word === 'node' ? process.execPath : word));

export async function runFootprint(options: { readonly repetitions: number }): Promise<FootprintResult> {
  const samples: Record<Variant, StartSample[]> = { first: [], firstWithoutTemplate: [], restart: [], memory: [], postgres: [] };
  const template = installedClusterTemplate();
  const templateAside = `${template}.bench-aside`;
  const putTemplateBack = () => {
    if (existsSync(templateAside) && !existsSync(template)) renameSync(templateAside, template);
  };
  // A bench killed during a start without the template left it aside: every later start would lack it.
  putTemplateBack();
  const database = (await postgresAvailable()) ? await createPrivateDatabase() : null;
  const masterKey = randomBytes(32).toString('base64');
  const directories: string[] = [];
  const removeDirectories = () => {
    for (const directory of directories) rmSync(directory, { recursive: true, force: true });
  };
  const unlessRemoved = atHarnessEnd(removeDirectories);
  try {
    for (let round = 0; round < options.repetitions; round++) {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'airlock-footprint-'));
      directories.push(dataDir);
      const step = (variant: Variant) => progress(`[footprint] round ${round + 1}/${options.repetitions}: ${LABEL[variant]}`);
      step('first');
      samples.first.push(await measureStart(NPM_START, { AIRLOCK_DATA_DIR: dataDir, DATABASE_URL: '' }));
      if (existsSync(template)) {
        // As after `npm ci --ignore-scripts`: the start runs initdb (in a child process) itself.
        step('firstWithoutTemplate');
        const bare = mkdtempSync(path.join(tmpdir(), 'airlock-footprint-'));
        directories.push(bare);
        const unless = atHarnessEnd(putTemplateBack);
        renameSync(template, templateAside);
        try {
          samples.firstWithoutTemplate.push(await measureStart(NPM_START, { AIRLOCK_DATA_DIR: bare, DATABASE_URL: '' }));
        } finally {
          renameSync(templateAside, template);
          unless();
        }
      }
      step('restart');
      samples.restart.push(await measureStart(NPM_START, { AIRLOCK_DATA_DIR: dataDir, DATABASE_URL: '' }));
      step('memory');
      samples.memory.push(await measureStart(NPM_START, { AIRLOCK_DATA_DIR: 'memory://', DATABASE_URL: '' }));
      if (database) {
        step('postgres');
        samples.postgres.push(await measureStart(NPM_START, { DATABASE_URL: database.url, AIRLOCK_MASTER_KEY: masterKey }));
      }
      rmSync(dataDir, { recursive: true, force: true });
    }
  } finally {
    progressDone();
    removeDirectories();
    unlessRemoved();
    await database?.drop();
  }
  const medianOf = (variant: Variant) =>
    samples[variant].length === 0
      ? null
      : { listeningMs: median(samples[variant].map((sample) => sample.listeningMs)), rssMiB: median(samples[variant].map((sample) => sample.rssMiB)) };
  const medians = {
    first: medianOf('first'),
    firstWithoutTemplate: medianOf('firstWithoutTemplate'),
    restart: medianOf('restart'),
    memory: medianOf('memory'),
    postgres: medianOf('postgres'),
  };
  const rows = (Object.keys(LABEL) as Variant[]).map((variant) => {
    const figure = medians[variant];
    const spread = samples[variant].map((sample) => sample.listeningMs);
    return [
      LABEL[variant],
      figure ? fmt(figure.listeningMs / 1000, 2) : '—',
      spread.length ? `${fmt(Math.min(...spread) / 1000, 2)}–${fmt(Math.max(...spread) / 1000, 2)}` : '—',
      figure ? fmt(figure.rssMiB, 0) : '—',
      figure && medians.postgres ? `${fmt(ratio(figure.rssMiB, medians.postgres.rssMiB) ?? Number.NaN, 2)}×` : '—',
    ];
  });
  const table = [
    `\`npm start\` (${START_SCRIPT}), ${options.repetitions} rounds of each, interleaved; medians; RSS summed over the process tree after the first answer`,
    renderTable(['start', 'to listening s', 'min–max s', 'RSS MiB', 'RSS × PostgreSQL'], rows),
  ].join('\n');
  return { samples, median: medians, table };
}

/** Issue 19's footprint targets. */
export function footprintTargets(result: FootprintResult): { target: string; figure: string; met: boolean | null }[] {
  const { first, restart, memory, postgres } = result.median;
  return [
    {
      target: 'first start on the embedded database ≤ 4 s and ≤ 400 MB RSS',
      figure: first ? `${fmt(first.listeningMs / 1000, 2)} s, ${fmt(first.rssMiB, 0)} MiB` : 'not measured',
      met: first ? first.listeningMs <= 4_000 && first.rssMiB * 1.048576 <= 400 : null,
    },
    { target: 'restart on the same data ≤ 3 s', figure: restart ? `${fmt(restart.listeningMs / 1000, 2)} s` : 'not measured', met: restart ? restart.listeningMs <= 3_000 : null },
    {
      target: 'idle RSS of the embedded default ≤ 1.5 × the PostgreSQL mode',
      figure:
        first && restart && memory && postgres
          ? `first start ${fmt(first.rssMiB, 0)} MiB, restart ${fmt(restart.rssMiB, 0)} MiB, memory:// ${fmt(memory.rssMiB, 0)} MiB vs PostgreSQL ${fmt(postgres.rssMiB, 0)} MiB`
          : 'not measured',
      met: first && restart && postgres ? Math.max(first.rssMiB, restart.rssMiB) <= 1.5 * postgres.rssMiB : null,
    },
  ];
}
