// Tells the tree when something under the served directory may have changed.
// One non-recursive fs.watch per directory (Node 20's recursive mode on Linux stats
// every file synchronously); falls back to periodic rescans when watching fails.
import { watch, type FSWatcher } from 'node:fs';
import type { Log } from '../log.js';

export interface DirectoryWatcherOptions {
  onChange: () => void;
  log: Log;
  debounceMs: number;
  pollMs: number;
  /** Injected in tests; fs.watch otherwise. */
  watchDirectory?: (dir: string, listener: () => void) => FSWatcher;
}

/** Debounced change signal for a set of directories, updated after every scan. */
export class DirectoryWatcher {
  private readonly watchers = new Map<string, FSWatcher>();
  private timer: NodeJS.Timeout | undefined;
  private poller: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: DirectoryWatcherOptions) {}

  /** Watches exactly these directories from now on. */
  update(dirs: readonly string[]): void {
    if (this.closed || this.poller) return;
    const first = this.watchers.size === 0;
    let added = 0;
    const wanted = new Set(dirs);
    for (const [dir, watcher] of this.watchers) {
      if (!wanted.has(dir)) {
        watcher.close();
        this.watchers.delete(dir);
      }
    }
    for (const dir of wanted) {
      if (this.watchers.has(dir)) continue;
      try {
        const watchDirectory = this.options.watchDirectory ?? ((path, listener) => watch(path, { persistent: false }, listener));
        const watcher = watchDirectory(dir, () => this.changed());
        watcher.on('error', (error) => this.fail(dir, error));
        this.watchers.set(dir, watcher);
        added++;
      } catch (error) {
        // A directory that vanished since the scan is not a watch failure; the rescan will drop it.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          this.changed();
          continue;
        }
        this.fail(dir, error);
        return;
      }
    }
    // Files written into a new directory before its watch existed would go unseen: look once more.
    if (!first && added > 0) this.changed();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.poller);
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }

  private changed(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.options.onChange(), this.options.debounceMs);
  }

  private fail(dir: string, error: unknown): void {
    if (this.closed || this.poller) return;
    const code = (error as NodeJS.ErrnoException).code;
    // A watched directory being deleted surfaces as an error on some platforms: just rescan.
    if (code === 'ENOENT' || code === 'EPERM') {
      this.watchers.get(dir)?.close();
      this.watchers.delete(dir);
      this.changed();
      return;
    }
    this.options.log(`watch failed on ${dir} (${code ?? String(error)}); rescanning every ${this.options.pollMs} ms instead`);
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
    this.poller = setInterval(() => this.options.onChange(), this.options.pollMs);
    this.poller.unref();
  }
}
