/**
 * A CPU profile of a window of a process's life, not its whole life: preloaded with
 * `--import ./bench/lib/window-profile.ts` and `BENCH_WINDOW_PROFILE=<file>`, the process starts
 * V8's sampling profiler at its first SIGUSR2 and writes the profile to the file (a
 * `.cpuprofile`, for Chrome DevTools or `lib/profile.ts`) at its second. The fan-out workload sends
 * them at the release of the runs and after the last receipt, so the profile holds the deliveries
 * and nothing of the start-up, the ramp or the replays.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

const file = process.env.BENCH_WINDOW_PROFILE;
if (file) {
  const session = new Session();
  session.connect();
  let running = false;
  process.on('SIGUSR2', () => {
    const toggle = running
      ? session.post('Profiler.stop').then(({ profile }) => writeFileSync(file, JSON.stringify(profile)))
      : session.post('Profiler.enable').then(() => session.post('Profiler.setSamplingInterval', { interval: 200 })).then(() => session.post('Profiler.start'));
    running = !running;
    toggle.catch((error: unknown) => console.error(`window profile: ${String(error)}`));
  });
}
