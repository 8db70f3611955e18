/**
 * CPU profile of the Airlock server under workload 1 (c = 8, K = 3):
 *
 *   node --import tsx bench/bin/profile-server.ts [postgres|pglite] [runs]
 *
 * Starts the fake provider and an Airlock server with `--cpu-prof`, runs the batch over graphql-ws,
 * stops the server (which writes the profile) and prints self time grouped by package and by the
 * hottest functions. The .cpuprofile file stays in a temporary directory for Chrome DevTools.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BatchResult } from './agent-driver.ts';
import { startAirlock, type DbKind } from '../lib/airlock.ts';
import { REPO_ROOT, startDriver, startServer, stopAllChildren } from '../lib/children.ts';
import { renderTable } from '../lib/stats.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const kind = (process.argv[2] ?? 'postgres') as DbKind;
const runs = Number(process.argv[3] ?? '200');
const dir = mkdtempSync(path.join(tmpdir(), 'airlock-profile-'));
try {
  const fake = await startServer('bench/bin/fake-openai.ts', {}, /listening (\d+)/);
  const fakeBaseUrl = `http://127.0.0.1:${fake.ready[1]}/v1`;
  const airlock = await startAirlock(kind, { fakeBaseUrl, k: 3, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
  const driver = await startDriver('bench/bin/agent-driver.ts');
  const request = { type: 'batch', variant: 'airlock', runs, concurrency: 8, k: 3, fakeBaseUrl, airlock: { wsUrl: airlock.wsUrl, token: airlock.userToken, configurationId: airlock.configurationId } };
  await driver.request<BatchResult>({ ...request, runs: 600 });
  const result = await driver.request<BatchResult>(request);
  console.log(`${runs} runs at c=8 on ${kind}: ${(result.wallMs / result.steps).toFixed(2)} wall ms/step`);
  await driver.stop();
  await airlock.stop();
  await fake.stop();

  // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread (1 is tsx's loader).
  const file = readdirSync(dir).find((name) => /\.\d+\.0\.\d+\.cpuprofile$/.test(name));
  if (!file) throw new Error('the server wrote no profile');
  const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Profile;
  const selfMs = new Map<number, number>();
  profile.samples.forEach((id, index) => selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0) / 1000));
  const total = [...selfMs.values()].reduce((sum, value) => sum + value, 0);
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const ms = selfMs.get(node.id) ?? 0;
    if (ms === 0) continue;
    const url = node.callFrame.url.replace(`file://${REPO_ROOT}/`, '');
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? (url.startsWith('src/') ? `src/${url.split('/')[1]}` : url === '' ? `(${node.callFrame.functionName || 'native'})` : url.startsWith('node:') ? 'node internals' : url);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + ms);
    const name = `${node.callFrame.functionName || '(anonymous)'} ${url ? `${url.split('/').slice(-2).join('/')}:${node.callFrame.lineNumber + 1}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms);
  }
  const top = (map: Map<string, number>, count: number) =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, count).map(([name, ms]) => [name, ms.toFixed(0), `${((ms / total) * 100).toFixed(1)} %`]);
  console.log(`\nself time by package (total ${total.toFixed(0)} ms, incl. start-up and warm-up)`);
  console.log(renderTable(['package', 'ms', 'share'], top(byPackage, 20)));
  console.log('\nhottest functions (self time)');
  console.log(renderTable(['function', 'ms', 'share'], top(byFunction, 25)));
  console.log(`\nprofile: ${path.join(dir, file)}`);
} finally {
  await stopAllChildren();
}
