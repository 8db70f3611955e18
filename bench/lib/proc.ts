/** CPU and memory of another process, read from /proc (Linux): what a process cost, not what we guess. */
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ; 100 on every mainstream Linux). */
const CLOCK_TICKS = 100;

/** utime + stime of `pid` in milliseconds (resolution 10 ms); null when it cannot be read. */
export function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces; fields are counted after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** `cpuMs` of each pid that can be read, by pid. */
export function cpuMsByPid(pids: readonly number[]): Map<number, number> {
  return new Map(
    pids.flatMap((pid) => {
      const value = cpuMs(pid);
      return value === null ? [] : [[pid, value] as [number, number]];
    }),
  );
}

function statusKb(pid: number, field: string): number | null {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/** Current resident set, in bytes. */
export const rssBytes = (pid: number): number | null => (statusKb(pid, 'VmRSS') ?? Number.NaN) * 1024 || null;
/** Peak resident set over the process's life so far, in bytes. */
export const peakRssBytes = (pid: number): number | null => (statusKb(pid, 'VmHWM') ?? Number.NaN) * 1024 || null;
