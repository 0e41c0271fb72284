// The daemon's read-only view of the approvals file: `skills-mount approve` and `revoke` write
// it from another process, so it is read again whenever it changed on disk (checked with one
// lstat, at most every CHECK_INTERVAL_MS, and at once when a watch of its directory sees a
// change). A file that cannot be read grants nothing: the approved view then shows no skill,
// and the reason is logged once and reported.
import { watch as watchDirectory, type FSWatcher } from 'node:fs';
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import type { Log } from '../log.js';
import { errorCode, errorMessage } from '../private-files.js';
import { ApprovalIndex } from './approval-index.js';
import { ApprovalStore, type Approval } from './approval-store.js';

/** Often enough that an approval shows within a blink; rarely enough that a busy reader costs no syscall per operation. */
const CHECK_INTERVAL_MS = 100;
/** A write is a burst of events (create, write, rename): read the file once it settles. */
const WATCH_SETTLE_MS = 20;

/**
 * What the approved view reads its approvals from: a person's approvals file (ApprovalLedger), or a
 * project's lockfile, whose versions stay live when a server moves on (`keepsVersions`).
 */
export interface ApprovalsSource {
  /** The file the approvals come from. */
  readonly file: string;
  /** Why it grants nothing now, if it cannot be read. */
  readonly problem: string | undefined;
  /** Counts the changes: memos of what the approvals imply key on it. */
  readonly version: number;
  /** True while changes are reported as they happen (the kernel may hold the view for long). */
  readonly watched: boolean;
  /** True for a lock: an approval holds for its own files whatever the server serves now, and is never revoked. */
  readonly keepsVersions: boolean;
  onChange(listener: () => void): void;
  refresh(force?: boolean): Promise<void>;
  approval(label: string, skillUri: string): Approval | undefined;
  approvalsOf(label: string): Iterable<Approval>;
  all(): Approval[];
  /** Records that a later entry revoked `approval` (a person's approvals only). */
  revoke(approval: Approval, revokedAt: string): void;
  /** A locked SKILL.md's bytes kept on this machine (verified by the caller), for when the server moved on. */
  keptSkillText?(digest: string): Promise<Buffer | undefined>;
  /** Keeps a locked SKILL.md's verified bytes for later. */
  keepSkillText?(digest: string, bytes: Buffer): Promise<void>;
}

export class ApprovalLedger implements ApprovalsSource {
  readonly keepsVersions = false;

  private index = ApprovalIndex.EMPTY;
  private stamp: string | undefined;
  private checkedAtMs = Number.NEGATIVE_INFINITY;
  private checking: Promise<void> | undefined;
  private changes = 0;
  private unreadable: string | undefined;
  /** Revocations being written, by label NUL URI NUL approvedAt: each is written once. */
  private readonly revoking = new Set<string>();
  /** The writes of those still under way. */
  private readonly writes = new Set<Promise<void>>();
  private readonly listeners: Array<() => void> = [];
  /** The watch of the file's directory, and that directory's identity (dev:ino) when it began. */
  private watcher: { handle: FSWatcher; directory: string } | undefined;
  private watchWanted = false;
  private settling: NodeJS.Timeout | undefined;

  private constructor(
    /** The approvals file. */
    readonly file: string,
    private readonly log: Log,
    private readonly now: () => number,
  ) {}

  /** Reads the file now; never throws (an unreadable file grants nothing and is logged). */
  static async open(file: string, log: Log, now: () => number = Date.now): Promise<ApprovalLedger> {
    const ledger = new ApprovalLedger(file, log, now);
    await ledger.refresh(true);
    return ledger;
  }

  /** Called whenever what the approvals grant changed (a new file read, or the file became unreadable). */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  /** Counts the times the approvals changed: memos of what the approvals imply key on it. */
  get version(): number {
    return this.changes;
  }

  /** Why the file grants nothing now, if it cannot be read. */
  get problem(): string | undefined {
    return this.unreadable;
  }

  /**
   * Watches the file's directory, so that a change written by another process is read and
   * reported (onChange) within WATCH_SETTLE_MS, without waiting for an access. While the watch
   * holds (`watched`), what the approvals grant may be held by the kernel for long. A directory
   * that cannot be watched (missing until the first approval, no inotify) leaves `watched`
   * false; each refresh tries again. Stopped by `close`.
   */
  async watch(): Promise<void> {
    this.watchWanted = true;
    await this.startWatch();
  }

  /** True while a watch of the file's directory reports its changes. */
  get watched(): boolean {
    return this.watcher !== undefined;
  }

  /** Stops the watch (the daemon's shutdown). */
  close(): void {
    this.watchWanted = false;
    clearTimeout(this.settling);
    this.stopWatch();
  }

  /** Reads the file again if it changed since it was last read. Concurrent callers share one check. */
  refresh(force = false): Promise<void> {
    if (!force && this.now() - this.checkedAtMs < CHECK_INTERVAL_MS) return Promise.resolve();
    if (this.watchWanted && this.watcher === undefined) void this.startWatch();
    this.checking ??= this.check().finally(() => {
      this.checkedAtMs = this.now();
      this.checking = undefined;
    });
    return this.checking;
  }

  approval(label: string, skillUri: string): Approval | undefined {
    return this.index.approval(label, skillUri);
  }

  /** The approvals of one server label. */
  approvalsOf(label: string): Iterable<Approval> {
    return this.index.approvalsOf(label);
  }

  /** Every approval in the file, of every label (revoked ones included). */
  all(): Approval[] {
    return this.index.all();
  }

  /**
   * Records in the file that a later entry revoked `approval` at `revokedAt`, so that it stays
   * revoked when the set comes back and after a restart. In the background; a failure is
   * logged (the approval still does not hold in this daemon: the caller saw the change).
   */
  revoke(approval: Approval, revokedAt: string): void {
    const key = `${approval.label}\0${approval.skillUri}\0${approval.approvedAt}`;
    if (approval.revokedAt !== null || this.revoking.has(key) || this.unreadable !== undefined) return;
    this.revoking.add(key);
    const write = (async () => {
      try {
        const store = await ApprovalStore.load(this.file);
        if (await store.markRevoked(approval.label, approval.skillUri, approval.approvedAt, revokedAt)) {
          this.log(`[${approval.label}] approval of ${approval.skillUri} revoked: a later entry brought another resources set; approve it again to show it in the approved view`);
        }
        await this.refresh(true);
      } catch (error) {
        this.log(`approvals file ${this.file}: cannot record that the approval of ${approval.skillUri} on ${approval.label} was revoked: ${errorMessage(error)}`);
      }
    })();
    this.writes.add(write);
    void write.finally(() => this.writes.delete(write));
  }

  /** Resolves once every revocation under way is written (or failed and was logged). */
  async idle(): Promise<void> {
    while (this.writes.size > 0) await Promise.all([...this.writes]);
  }

  private async startWatch(): Promise<void> {
    if (this.watcher !== undefined || !this.watchWanted) return;
    const directory = path.dirname(this.file);
    const identity = await directoryIdentity(directory);
    if (identity === undefined || this.watcher !== undefined || !this.watchWanted) return;
    let handle: FSWatcher;
    try {
      handle = watchDirectory(directory, { persistent: false }, () => this.changeSeen());
    } catch (error) {
      this.log(`approvals file ${this.file}: cannot watch its directory (${errorMessage(error)}); changes are read on access, and the approved view is held by the kernel for a second only`);
      return;
    }
    handle.on('error', (error) => this.watchLost(`the watch failed: ${errorMessage(error)}`));
    this.watcher = { handle, directory: identity };
    // What changed before the watch began is read now, by a check that starts after it began.
    await this.checking;
    await this.refresh(true);
  }

  private stopWatch(): void {
    this.watcher?.handle.close();
    this.watcher = undefined;
  }

  /** An event in the directory: read the file once the burst settles, and check the directory is still the one watched. */
  private changeSeen(): void {
    clearTimeout(this.settling);
    this.settling = setTimeout(() => {
      void (async () => {
        const watched = this.watcher;
        if (watched === undefined) return;
        if ((await directoryIdentity(path.dirname(this.file))) !== watched.directory) this.watchLost('its directory was replaced or removed');
        else await this.refresh(true);
      })();
    }, WATCH_SETTLE_MS);
    this.settling.unref();
  }

  /**
   * The watch no longer reports changes: whatever the kernel holds for long must be asked again
   * (onChange), and the file is read now, by a refresh that also watches the directory now at
   * that path, if there is one (until then, answers are short).
   */
  private watchLost(reason: string): void {
    if (this.watcher === undefined) return;
    this.stopWatch();
    this.log(`approvals file ${this.file}: ${reason}; watching it again`);
    this.changed();
    void this.refresh(true);
  }

  private async check(): Promise<void> {
    let stamp: string;
    try {
      const stats = await lstat(this.file, { bigint: true });
      // A write is a rename of a new file: a new inode, whatever the clock's resolution.
      stamp = `${stats.ino}:${stats.size}:${stats.mtimeNs}`;
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') return this.fail(`approvals file ${this.file}: cannot stat it: ${errorMessage(error)}`, 'unstattable');
      stamp = 'absent';
    }
    if (stamp === this.stamp) return;
    try {
      const store = await ApprovalStore.load(this.file);
      this.index = new ApprovalIndex(store.list());
      if (this.unreadable !== undefined) this.log(`approvals file ${this.file}: readable again`);
      this.unreadable = undefined;
    } catch (error) {
      return this.fail(errorMessage(error), stamp);
    }
    this.stamp = stamp;
    this.changes += 1;
    this.changed();
  }

  /** Fails closed: no approval holds while the file cannot be read. */
  private fail(reason: string, stamp: string): void {
    if (this.stamp !== stamp || this.unreadable === undefined) this.log(`${reason}; the approved view shows no skill until it can be read`);
    const granted = this.index.size > 0;
    this.index = ApprovalIndex.EMPTY;
    this.unreadable = reason;
    if (granted) this.changed();
    this.stamp = stamp;
    this.changes += 1;
    this.changed();
  }
}

/** dev:ino of a directory, or undefined when it is missing or not a directory. */
async function directoryIdentity(directory: string): Promise<string | undefined> {
  try {
    const stats = await lstat(directory, { bigint: true });
    return stats.isDirectory() ? `${stats.dev}:${stats.ino}` : undefined;
  } catch {
    return undefined;
  }
}
