/**
 * Start-up time and memory of one way of starting the server:
 *
 *   node --import tsx bench/bin/startup.ts [runs] -- <command …>
 *   node --import tsx bench/bin/startup.ts 5 -- node --conditions=airlock-dist dist/src/main.js
 *
 * Each run spawns the command with PORT=0 (and the caller's environment: AIRLOCK_DATA_DIR=memory://
 * or DATABASE_URL + AIRLOCK_MASTER_KEY choose the database) and measures, from just before the spawn:
 * the "is listening on <url>" line, then the first answer to `{ __typename }` over HTTP. RSS is summed
 * over the command's whole process tree (`tsx` runs the server in a child process) right after that
 * answer. Prints min / median / max; quote the median.
 */
import { runHarness } from '../lib/harness.ts';
import { measureStart, type StartSample } from '../lib/start.ts';
import { fmt, median } from '../lib/stats.ts';

const separator = process.argv.indexOf('--');
const runs = Number(process.argv[2] !== '--' ? process.argv[2] : 5) || 5;
const command = process.argv.slice(separator + 1);
if (separator < 0 || command.length === 0) {
  console.error('usage: node --import tsx bench/bin/startup.ts [runs] -- <command …>');
  process.exit(2);
}

await runHarness(async () => {
  const samples: StartSample[] = [];
  for (let run = 0; run < runs; run++) samples.push(await measureStart(command));
  const row = (label: string, values: number[], unit: string) =>
    `${label.padEnd(22)} ${fmt(median(values))} ${unit}  (min ${fmt(Math.min(...values))}, max ${fmt(Math.max(...values))})`;
  console.log(`${command.join(' ')} — ${runs} runs`);
  console.log(row('listening line', samples.map((s) => s.listeningMs), 'ms'));
  console.log(row('first GraphQL answer', samples.map((s) => s.answerMs), 'ms'));
  console.log(row('RSS after start', samples.map((s) => s.rssMiB), 'MiB'));
});
