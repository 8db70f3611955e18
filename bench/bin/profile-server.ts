/**
 * CPU profile of the Airlock server under workload 1 (c = 8, K = 3):
 *
 *   node --import tsx bench/bin/profile-server.ts [postgres|pglite] [runs]
 *
 * Starts the fake provider and an Airlock server with `--cpu-prof`, runs the batch over graphql-ws,
 * stops the server (which writes the profile) and prints self time grouped by package and by the
 * hottest functions. The .cpuprofile file stays in a temporary directory for Chrome DevTools.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BatchResult } from './agent-driver.ts';
import { startAirlock, type DbKind } from '../lib/airlock.ts';
import { startDriver, startServer } from '../lib/children.ts';
import { runHarness } from '../lib/harness.ts';
import { summariseProfile } from '../lib/profile.ts';

const kind = (process.argv[2] ?? 'postgres') as DbKind;
const runs = Number(process.argv[3] ?? '200');
const dir = mkdtempSync(path.join(tmpdir(), 'airlock-profile-'));
await runHarness(async () => {
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
  console.log(summariseProfile(path.join(dir, file)));
  console.log(`\nprofile: ${path.join(dir, file)}`);
});
