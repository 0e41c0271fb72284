// Keeps the linked skills roots current from a running process (the mount daemon, or `link
// --watch` where no FUSE is): a sync whenever the approvals, a server's skills or the linked roots
// change, one at a time, at most one waiting. Nothing happens while nothing is linked.
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { Approval } from '../approvals/approval-store.js';
import type { Log } from '../log.js';
import { errorMessage } from '../private-files.js';
import { judgesLock } from './judged-roots.js';
import { readLinkState } from './link-state.js';
import { syncLinks, type ContentSource, type RootReport, type SyncOptions } from './link-sync.js';

export interface LinkKeeperOptions {
  store: string;
  /** Every approval as the process knows it now. */
  approvals: () => readonly Approval[];
  /** A root's lockfile read anew at each sync, judged with one configuration; without it, roots under a lockfile are left as they are. */
  lockedApprovals?: SyncOptions['lockedApprovals'];
  content: ContentSource;
  log: Log;
  /** Told of each sync's reports (tests, the terminal). */
  onSynced?: (reports: RootReport[]) => void;
}

/** Changes arriving within this long are one sync: a re-listing and the revocation it causes, say. */
const SETTLE_MS = 50;

export class LinkKeeper {
  private running: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private watcher: FSWatcher | undefined;
  private readonly lockWatchers = new Map<string, FSWatcher>();
  private closed = false;

  constructor(private readonly options: LinkKeeperOptions) {}

  /** Syncs now, and watches the store for roots linked or unlinked by another process. */
  start(): void {
    this.changed();
    this.watchStore();
  }

  private watchStore(): void {
    if (this.watcher !== undefined || this.closed) return;
    try {
      // links.json is replaced by a rename: the directory's watch sees it. Our own writes come
      // back as one more sync, which finds nothing to do and writes nothing.
      this.watcher = watch(this.options.store, { persistent: false }, (_event, name) => {
        if (name === 'links.json') this.changed();
      });
      this.watcher.on('error', () => this.stopWatching());
    } catch {
      // No store yet (nothing ever linked): `link` makes it, and approvals or servers changing bring a sync.
    }
  }

  /** Something a linked entry depends on may have changed. */
  changed(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.run();
    }, SETTLE_MS);
    this.timer.unref?.();
  }

  /** Resolves once no sync is running or waiting. */
  async idle(): Promise<void> {
    while (this.running || this.timer) {
      await (this.running ?? new Promise((resolve) => setTimeout(resolve, SETTLE_MS)));
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.stopWatching();
  }

  private async run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.syncOnce().finally(() => {
      this.running = undefined;
      if (this.again && !this.closed) {
        this.again = false;
        this.changed();
      }
    });
    return this.running;
  }

  private async syncOnce(): Promise<void> {
    try {
      const state = await readLinkState(this.options.store);
      // Only the lockfiles this process judges: another project's change is not ours to follow.
      const locks = this.options.lockedApprovals;
      this.watchLockfiles(state.roots.flatMap((root) => (root.lockfile === undefined || locks === undefined || !judgesLock(root, locks.configuration) ? [] : [root.lockfile])));
      if (state.roots.length === 0) return;
      this.watchStore();
      const reports = await syncLinks({ store: this.options.store, approvals: this.options.approvals(), lockedApprovals: this.options.lockedApprovals, content: this.options.content, log: this.options.log });
      this.options.onSynced?.(reports);
    } catch (error) {
      this.options.log(`link: keeping the linked skills roots current failed: ${errorMessage(error)}`);
    }
  }

  /** A root's lockfile replaced (a git pull, update) is a change: its folder is watched while a root names it. */
  private watchLockfiles(files: readonly string[]): void {
    const wanted = new Set(files);
    for (const [file, watcher] of this.lockWatchers) {
      if (wanted.has(file)) continue;
      watcher.close();
      this.lockWatchers.delete(file);
    }
    for (const file of wanted) {
      if (this.lockWatchers.has(file) || this.closed) continue;
      try {
        const watcher = watch(path.dirname(file), { persistent: false }, (_event, name) => {
          if (name === path.basename(file)) this.changed();
        });
        watcher.on('error', () => {
          watcher.close();
          this.lockWatchers.delete(file);
        });
        this.lockWatchers.set(file, watcher);
      } catch {
        // The project folder is gone: the next sync tries again.
      }
    }
  }

  private stopWatching(): void {
    this.watcher?.close();
    this.watcher = undefined;
    for (const watcher of this.lockWatchers.values()) watcher.close();
    this.lockWatchers.clear();
  }
}
