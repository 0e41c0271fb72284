// A project's lockfile as the mount's approved view reads it (`skills-mount MNT --lock FILE`): the
// locked versions, judged against the mount's configuration and the policy, re-read when the file is
// replaced (a `git pull`, `update`) and reported at once, so the kernel is told. A lockfile that
// cannot be used keeps the last good set and says why. Locked versions stay live: nothing revokes
// them, and their SKILL.md texts are kept on this machine for when the server moves on.
import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { ApprovalIndex } from '../approvals/approval-index.js';
import type { ApprovalsSource } from '../approvals/approval-ledger.js';
import type { Approval } from '../approvals/approval-store.js';
import type { Log } from '../log.js';
import type { LockedApprovals } from './locked-approvals.js';
import { keepSkillText, keptSkillText } from './skill-texts.js';

/** A change is read once the writer's rename has settled. */
const SETTLE_MS = 50;
/** Without a watch, the file is looked at again on access at most this often. */
const CHECK_INTERVAL_MS = 100;

export class LockLedger implements ApprovalsSource {
  readonly keepsVersions = true;
  private index = ApprovalIndex.EMPTY;
  private changes = 0;
  private unusable: string | undefined;
  private stamp = '';
  private checkedAtMs = Number.NEGATIVE_INFINITY;
  private checking: Promise<void> | undefined;
  private watcher: FSWatcher | undefined;
  private settling: NodeJS.Timeout | undefined;
  private readonly listeners: Array<() => void> = [];

  private constructor(
    readonly file: string,
    private readonly read: () => Promise<LockedApprovals>,
    private readonly texts: string,
    private readonly log: Log,
  ) {}

  /** Reads the lockfile now; a file that cannot be used grants nothing until it can, and is logged. */
  static async open(file: string, read: () => Promise<LockedApprovals>, texts: string, log: Log): Promise<LockLedger> {
    const ledger = new LockLedger(file, read, texts, log);
    await ledger.refresh(true);
    return ledger;
  }

  get problem(): string | undefined {
    return this.unusable;
  }

  get version(): number {
    return this.changes;
  }

  get watched(): boolean {
    return this.watcher !== undefined;
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Watches the lockfile's folder: a replaced lockfile is read and reported within SETTLE_MS. */
  watch(): void {
    if (this.watcher !== undefined) return;
    try {
      this.watcher = watch(path.dirname(this.file), { persistent: false }, (_event, name) => {
        if (name !== path.basename(this.file)) return;
        clearTimeout(this.settling);
        this.settling = setTimeout(() => void this.refresh(true), SETTLE_MS);
      });
      this.watcher.on('error', () => this.stopWatch());
    } catch (error) {
      this.log(`lock ${this.file}: its folder cannot be watched (${(error as Error).message}); changes are seen on access`);
    }
  }

  close(): void {
    clearTimeout(this.settling);
    this.stopWatch();
  }

  /** Reads the file again if it changed since it was last read. Concurrent callers share one read. */
  refresh(force = false): Promise<void> {
    if (!force && Date.now() - this.checkedAtMs < CHECK_INTERVAL_MS) return Promise.resolve();
    this.checking ??= this.check(force).finally(() => {
      this.checkedAtMs = Date.now();
      this.checking = undefined;
    });
    return this.checking;
  }

  approval(label: string, skillUri: string): Approval | undefined {
    return this.index.approval(label, skillUri);
  }

  approvalsOf(label: string): Iterable<Approval> {
    return this.index.approvalsOf(label);
  }

  all(): Approval[] {
    return this.index.all();
  }

  /** A lock binds its version: a server that moves on revokes nothing. */
  revoke(): void {}

  keptSkillText(digest: string): Promise<Buffer | undefined> {
    return keptSkillText(this.texts, digest);
  }

  async keepSkillText(digest: string, bytes: Buffer): Promise<void> {
    await keepSkillText(this.texts, digest, bytes).catch((error: unknown) => this.log(`lock ${this.file}: cannot keep the SKILL.md ${digest} (${(error as Error).message})`));
  }

  private async check(force: boolean): Promise<void> {
    const stamp = await stat(this.file).then(
      (stats) => `${stats.ino}:${stats.size}:${stats.mtimeMs}`,
      () => 'absent',
    );
    if (!force && stamp === this.stamp) return;
    this.stamp = stamp;
    const reading = await this.read();
    for (const problem of reading.problems) this.log(`lock: ${problem}`);
    if (reading.approvals === undefined) {
      this.unusable = reading.problems.join('; ');
      return;
    }
    this.unusable = undefined;
    const next = new ApprovalIndex(reading.approvals);
    if (sameApprovals(this.index, next)) return;
    this.index = next;
    this.changes += 1;
    for (const listener of this.listeners) listener();
  }

  private stopWatch(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }
}

/** Whether two indexes hold the same versions with the same grants (a re-read that changed nothing is not reported). */
function sameApprovals(a: ApprovalIndex, b: ApprovalIndex): boolean {
  const flat = (index: ApprovalIndex) =>
    JSON.stringify(index.all().map((approval) => [approval.label, approval.skillUri, approval.resourcesDigest, approval.allowedToolsApproved, approval.execApproved]).sort());
  return flat(a) === flat(b);
}
