// Which process is which, as Linux's /proc tells it: the kernel's boot id, the pid namespace,
// and a process's start time, which together name one process even where pids repeat (containers).
// Knows nothing of locks; off Linux (no /proc) every answer is undefined.
import { readFileSync, statSync } from 'node:fs';

/** This process as another process could recognise it later. */
export interface LocalProcess {
  /** /proc/sys/kernel/random/boot_id: new at every boot of a kernel, the same in all its containers. */
  bootId: string;
  /** The inode of /proc/self/ns/pid: the namespace `process.pid` counts in. */
  pidNamespace: number;
  /** The inode of /proc/self/ns/net. */
  netNamespace: number;
  /** Field 22 of /proc/self/stat: clock ticks after boot. */
  startTicks: number;
}

/** What /proc/<pid>/stat says of a process: its pid there, state letter and start time. */
export interface ProcStat {
  pid: number;
  state: string;
  startTicks: number;
}

const BOOT_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Linux reports /proc times in USER_HZ, 100 on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

let local: LocalProcess | null | undefined;

/**
 * This process's identity, read once; undefined off Linux, or when /proc belongs to another pid
 * namespace than ours (its /proc/self then names another pid), so nothing it says of pids is ours.
 */
export function localProcess(): LocalProcess | undefined {
  if (local === undefined) local = readLocalProcess() ?? null;
  return local ?? undefined;
}

function readLocalProcess(): LocalProcess | undefined {
  try {
    const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stat = parseProcStat(readFileSync('/proc/self/stat', 'utf8'));
    if (!BOOT_ID_PATTERN.test(bootId) || stat === undefined || stat.pid !== process.pid) return undefined;
    return { bootId, pidNamespace: statSync('/proc/self/ns/pid').ino, netNamespace: statSync('/proc/self/ns/net').ino, startTicks: stat.startTicks };
  } catch {
    return undefined;
  }
}

/** Whether `text` has the shape of a boot id. */
export function isBootId(text: string): boolean {
  return BOOT_ID_PATTERN.test(text);
}

/**
 * Parses /proc/<pid>/stat. The command name (field 2, in parentheses) may hold spaces and
 * parentheses of its own, so the fields after it are counted from the last ')'.
 */
export function parseProcStat(text: string): ProcStat | undefined {
  const open = text.indexOf(' (');
  const close = text.lastIndexOf(')');
  if (open < 1 || close < open) return undefined;
  const pidText = text.slice(0, open);
  // Fields 3 onwards: the state is field 3, the start time field 22.
  const fields = text.slice(close + 1).trim().split(/\s+/);
  const state = fields[0];
  const startText = fields[22 - 3];
  if (!/^[1-9][0-9]{0,9}$/.test(pidText) || state === undefined || !/^[A-Za-z]$/.test(state) || startText === undefined || !/^[0-9]{1,19}$/.test(startText)) return undefined;
  const startTicks = Number(startText);
  return Number.isSafeInteger(startTicks) ? { pid: Number(pidText), state, startTicks } : undefined;
}

/**
 * What /proc says of `pid` in our pid namespace: undefined when it shows no such process (none,
 * or one /proc hides from us: mounted with hidepid). Call only when `localProcess()` is defined.
 */
export function procStatOf(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** When a process that started `startTicks` after boot started, as an ISO time to the second; undefined when /proc/stat has no boot time. */
export function startedAt(startTicks: number): string | undefined {
  try {
    const btime = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1];
    if (btime === undefined) return undefined;
    const ms = Number(btime) * 1000 + Math.floor((startTicks * 1000) / TICKS_PER_SECOND);
    return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  } catch {
    return undefined;
  }
}
