// The daemon's read-only view of the approvals file: `skills-mount approve` and `revoke` write
// it from another process, so it is read again whenever it changed on disk (checked with one
// lstat, at most every CHECK_INTERVAL_MS). A file that cannot be read grants nothing: the
// approved view then shows no skill, and the reason is logged once and reported.
import { lstat } from 'node:fs/promises';
import type { Log } from '../log.js';
import { errorCode, errorMessage } from '../private-files.js';
import { ApprovalStore, type Approval } from './approval-store.js';

/** Often enough that an approval shows within a blink; rarely enough that a busy reader costs no syscall per operation. */
const CHECK_INTERVAL_MS = 100;

export class ApprovalLedger {
  private byLabel = new Map<string, Map<string, Approval>>();
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

  /** Reads the file again if it changed since it was last read. Concurrent callers share one check. */
  refresh(force = false): Promise<void> {
    if (!force && this.now() - this.checkedAtMs < CHECK_INTERVAL_MS) return Promise.resolve();
    this.checking ??= this.check().finally(() => {
      this.checkedAtMs = this.now();
      this.checking = undefined;
    });
    return this.checking;
  }

  approval(label: string, skillUri: string): Approval | undefined {
    return this.byLabel.get(label)?.get(skillUri);
  }

  /** The approvals of one server label. */
  approvalsOf(label: string): Iterable<Approval> {
    return this.byLabel.get(label)?.values() ?? [];
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
      const byLabel = new Map<string, Map<string, Approval>>();
      for (const approval of store.list()) {
        let ofLabel = byLabel.get(approval.label);
        if (!ofLabel) byLabel.set(approval.label, (ofLabel = new Map()));
        ofLabel.set(approval.skillUri, approval);
      }
      this.byLabel = byLabel;
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
    const granted = this.byLabel.size > 0;
    this.byLabel = new Map();
    this.unreadable = reason;
    if (granted) this.changed();
    this.stamp = stamp;
    this.changes += 1;
    this.changed();
  }
}
