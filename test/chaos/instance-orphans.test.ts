import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/instances.ts';

/** Alive and not a zombie (a zombie's parent, init here, has not reaped it yet). */
const running = (pid: number) => existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));

/**
 * A server a test started must not outlive the test process: a test run killed with SIGKILL (a
 * timeout, an impatient operator) left its `node dist/src/main.js` servers re-parented to init,
 * holding ports and CPU for the next run. test/helpers/instances.ts gives each an IPC channel,
 * which the kernel closes when the test process ends, and preloads the bench's exit-with-parent.
 */
describe('servers started by a test process', () => {
  it('should stop when the test process is killed with SIGKILL', async () => {
    const parent = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/instance-parent.ts'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    parent.stdout!.on('data', (chunk) => (output += chunk));
    const pid = await eventually(async () => Number(/instance (\d+)/.exec(output)?.[1] ?? 0), (found) => found > 0, 'the server of the test process to start', 120_000);
    expect(running(pid)).toBe(true);
    const exited = once(parent, 'exit');
    parent.kill('SIGKILL');
    await exited;
    await eventually(async () => running(pid), (alive) => !alive, 'the orphaned server to stop', 60_000);
  }, 240_000);
});
