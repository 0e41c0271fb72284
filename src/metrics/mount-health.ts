// /healthz's answer: healthy while the mount is in the mount table as this daemon's and a probe
// through it (a child process, with a deadline) answers. One check runs at a time and its
// result stands for a second, so no scraping storm can start a child per request; a result up
// to a few seconds old is answered at once while the next check runs, so no asker waits on it.
import { MOUNT_TYPE, type MountTableEntry } from '../fuse/index.js';
import type { MountProbe } from './mount-probe.js';

/** `notes`: what a healthy mount still wants a person to know (a server that needs a sign-in), one line each. */
export type HealthReport = { healthy: true; notes?: string[] } | { healthy: false; reason: string };

export interface MountHealthOptions {
  mountpoint: string;
  /** The topmost mount at the mountpoint now (fuse/mount-table findMount), read from the table, never the mount. */
  findMount: () => Promise<Pick<MountTableEntry, 'fsType' | 'connection'> | undefined>;
  probe: MountProbe;
  /** The probe's own deadline, for the reason's words; a probe that outlives it by a second more is given up here too. */
  probeTimeoutMs: number;
  /** How long one result stands (default 1 s). */
  cacheMs?: number;
  /** How old a result may be and still be answered at once, while a new check runs (default 5 s); an older one is not answered. */
  maxAgeMs?: number;
  now?: () => number;
}

const DEFAULT_CACHE_MS = 1_000;
const DEFAULT_MAX_AGE_MS = 5_000;
/** A probe that has not resolved this long after its own deadline is taken as not answering. */
const PROBE_GRACE_MS = 1_000;

type Phase = { kind: 'starting' } | { kind: 'mounted'; connection: string | undefined } | { kind: 'stopping' };

export class MountHealth {
  private phase: Phase = { kind: 'starting' };
  private last: { atMs: number; report: HealthReport } | undefined;
  private running: Promise<HealthReport> | undefined;
  private readonly now: () => number;

  constructor(private readonly options: MountHealthOptions) {
    this.now = options.now ?? (() => performance.now());
  }

  /** The mount is ready; `entry` is its row in the mount table then (its FUSE connection tells it from a later mount). */
  mounted(entry: Pick<MountTableEntry, 'connection'> | undefined): void {
    this.phase = { kind: 'mounted', connection: entry?.connection };
    this.last = undefined;
  }

  /** The daemon is unmounting: unhealthy from now on, without probing. */
  stopping(): void {
    this.phase = { kind: 'stopping' };
    this.last = undefined;
  }

  /**
   * The current answer: the last one while it stands; past that a check starts (unless one runs),
   * and the last one is still answered at once while it is younger than maxAgeMs, else the check's.
   */
  check(): Promise<HealthReport> {
    if (this.phase.kind === 'starting') return Promise.resolve({ healthy: false, reason: `starting: ${this.options.mountpoint} is not mounted yet` });
    if (this.phase.kind === 'stopping') return Promise.resolve({ healthy: false, reason: `stopping: unmounting ${this.options.mountpoint}` });
    const last = this.last;
    const ageMs = last ? this.now() - last.atMs : Infinity;
    if (last && ageMs < (this.options.cacheMs ?? DEFAULT_CACHE_MS)) return Promise.resolve(last.report);
    const fresh = this.start(this.phase.connection);
    return last && ageMs < (this.options.maxAgeMs ?? DEFAULT_MAX_AGE_MS) ? Promise.resolve(last.report) : fresh;
  }

  /** The check in progress, or a new one: never two at once. */
  private start(connection: string | undefined): Promise<HealthReport> {
    this.running ??= this.checkNow(connection)
      .catch((error: unknown): HealthReport => ({ healthy: false, reason: `the health check failed: ${error instanceof Error ? error.message : String(error)}` }))
      .then((report) => {
        this.running = undefined;
        // A check that ended after a stop says nothing about the present.
        if (this.phase.kind === 'mounted') this.last = { atMs: this.now(), report };
        return report;
      });
    return this.running;
  }

  private async checkNow(ours: string | undefined): Promise<HealthReport> {
    const { mountpoint } = this.options;
    const entry = await this.options.findMount();
    if (entry === undefined) return { healthy: false, reason: `mount ${mountpoint} is gone (detached)` };
    if (entry.fsType !== MOUNT_TYPE) return { healthy: false, reason: `mount ${mountpoint} is gone: ${entry.fsType} is mounted there now` };
    if (ours !== undefined && entry.connection !== ours) {
      return { healthy: false, reason: `mount ${mountpoint} is gone: another skills-mount mount is there now (FUSE connection ${entry.connection}, this daemon's was ${ours})` };
    }
    const outcome = await this.probeWithin();
    if (outcome.kind === 'ok') return { healthy: true };
    if (outcome.kind === 'timeout') return { healthy: false, reason: `probe through the mount did not answer within ${seconds(this.options.probeTimeoutMs)}` };
    return { healthy: false, reason: `probe through the mount failed: ${outcome.message}` };
  }

  private probeWithin(): ReturnType<MountProbe> {
    let timer: NodeJS.Timeout | undefined;
    const givenUp = new Promise<{ kind: 'timeout' }>((resolve) => {
      timer = setTimeout(() => resolve({ kind: 'timeout' }), this.options.probeTimeoutMs + PROBE_GRACE_MS);
      timer.unref();
    });
    return Promise.race([this.options.probe(), givenUp]).finally(() => clearTimeout(timer));
  }
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}
