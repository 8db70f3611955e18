/** Other processes read from /proc (Linux): what a process cost, not what we guess, and the process table. */
import { readdirSync, readFileSync } from 'node:fs';

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

/** CPU of several processes together (null when one cannot be read). */
export function totalCpuMs(pids: readonly number[]): number | null {
  const each = pids.map(cpuMs);
  return each.some((value) => value === null) ? null : each.reduce<number>((sum, value) => sum + value!, 0);
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

/** One line of the process table, read from /proc/<pid>/stat. */
export interface ProcessEntry {
  readonly pid: number;
  readonly ppid: number;
  /** Process group id. */
  readonly pgrp: number;
  /** R, S, D, Z (zombie: ended, not yet reaped), T, … */
  readonly state: string;
  /** When it started, in clock ticks after boot: with the pid, names one process (pids are reused). */
  readonly startTicks: number;
}

export function processEntry(pid: number): ProcessEntry | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { pid, state: fields[0]!, ppid: Number(fields[1]), pgrp: Number(fields[2]), startTicks: Number(fields[19]) };
  } catch {
    return null;
  }
}

/** Every process of the machine (of this pid namespace). */
export function processTable(): ProcessEntry[] {
  return readdirSync('/proc').flatMap((entry) => (/^\d+$/.test(entry) ? (processEntry(Number(entry)) ?? []) : []));
}

/** `root` and every descendant, from the parent ids of /proc. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of processTable()) children.set(entry.ppid, [...(children.get(entry.ppid) ?? []), entry.pid]);
  const tree = [root];
  for (let index = 0; index < tree.length; index++) tree.push(...(children.get(tree[index]!) ?? []));
  return tree;
}

/** The start of `pid` (see `ProcessEntry.startTicks`); null when no such process runs (a zombie has ended). */
export function processStartTicks(pid: number): number | null {
  const entry = processEntry(pid);
  return entry === null || entry.state === 'Z' ? null : entry.startTicks;
}

/** The processes of group `pgid` that have not ended (zombies left out). */
export const groupMembers = (pgid: number): number[] => processTable().flatMap((entry) => (entry.pgrp === pgid && entry.state !== 'Z' ? [entry.pid] : []));
