// Ending a harness and everything it started. Harnesses run tools in sessions of their own (Codex's
// PTYs), which leave the process group, and orphans move to init when their parent exits; so the
// tree is read from /proc while the harness runs, and every process seen in it is ended with it.
import { readdirSync, readFileSync } from 'node:fs';

interface ProcStat {
  ppid: number;
  /** Start time in clock ticks since boot: tells a process from a later one that reuses its pid. */
  start: string;
}

function readStat(pid: number): ProcStat | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // exited meanwhile
  }
  // "pid (comm) state ppid ... starttime(22nd)": comm may hold spaces and parentheses.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(fields[1]), start: fields[19] ?? '' };
}

/** The processes descended from one root pid, remembered from every `scan()`. */
export class ProcessTree {
  readonly #seen = new Map<number, string>();

  constructor(private readonly rootPid: number) {}

  /** Adds every live descendant of the root (and of processes seen before) to the set. */
  scan(): void {
    const stats = new Map<number, ProcStat>();
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = readStat(Number(entry));
      if (stat) stats.set(Number(entry), stat);
    }
    let grew = true;
    while (grew) {
      grew = false;
      for (const [pid, stat] of stats) {
        if (this.#seen.has(pid)) continue;
        const parentStart = this.#seen.get(stat.ppid);
        if (stat.ppid === this.rootPid || (parentStart !== undefined && parentStart === stats.get(stat.ppid)?.start)) {
          this.#seen.set(pid, stat.start);
          grew = true;
        }
      }
    }
  }

  /** Sends `signal` to the root's process group, the root, and every process seen that still runs. */
  signal(signal: NodeJS.Signals): void {
    this.scan();
    send(-this.rootPid, signal);
    send(this.rootPid, signal);
    for (const [pid, start] of this.#seen) if (readStat(pid)?.start === start) send(pid, signal);
  }

  /** Whether any process seen (the root aside) still runs. */
  anyAlive(): boolean {
    for (const [pid, start] of this.#seen) if (readStat(pid)?.start === start) return true;
    return false;
  }
}

function send(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}
