// The mount's subtree claimed: held open and locked, and the root it is under (issue 22, item 10):
// opening them (the discovery-folder checks, 0700 directories owned by this user, the lock, the
// wait for another daemon's removal of the subtree), the label directories below, the check
// before each write that the root's path still names the held root, and letting go of it all.
// Every later file operation starts from these descriptors, so moving the root away or putting a
// link in its place cannot redirect a write. Knows the layout's names, not what files hold.
import type { Stats } from 'node:fs';
import { chmod, lstat, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { PRIVATE_DIRECTORY_MODE } from '../file-modes.js';
import type { Log } from '../log.js';
import { LockHeldError, releaseLock, tryLock } from '../lock-file.js';
import { currentUid, ownerProblem } from '../path-control.js';
import { errorCode, errorMessage, lstatOrUndefined } from '../private-files.js';
import { discoveryFolderProblem, type DiscoveryCheckOptions } from './discovery-folders.js';
import { AnchoredDirectory } from './anchored-directory.js';
import { FILES_DIR, LOCK_NAME, SUBTREE_KEY_PATTERN } from './layout.js';

/** A second daemon on a mount subtree whose lock a live process holds. */
export class CacheLockedError extends LockHeldError {
  override name = 'CacheLockedError';
  readonly code = 'CACHE_LOCKED';
}

/** A daemon starting on a subtree that another one is removing waits this long, at most, for the removal. */
const PRUNE_WAIT_MS = 50;
const PRUNE_WAIT_ATTEMPTS = 40;
/** Error codes that say a folder cannot be written here. */
const UNWRITABLE_CODES = new Set(['EROFS', 'EACCES', 'EPERM']);

/** A label's directory and its files/ directory, held open. */
export interface LabelDirectories {
  label: AnchoredDirectory;
  files: AnchoredDirectory;
}

/** The locked subtree `<root>/<key>` and its root, held open from the moment they were checked. */
export class ClaimedSubtree {
  private readonly labelDirs = new Map<string, Promise<LabelDirectories>>();
  /** Of those, the ones already open: named synchronously by heldLabelDirectories. */
  private readonly openLabelDirs = new Map<string, LabelDirectories>();
  /** Label directories of removed labels: closed only at close(), so no descriptor number is reused under a write in flight. */
  private readonly retired: Array<Promise<LabelDirectories>> = [];
  /** Set once the root's path stops naming the held root: nothing more is written. */
  private stopped = false;

  private constructor(
    readonly root: AnchoredDirectory,
    readonly dir: AnchoredDirectory,
    private readonly lockToken: string,
    private readonly log: Log,
  ) {}

  /**
   * Checks the root (not in or under a discovery folder, before and after it is opened), creates
   * what is missing (0700), holds the root and `<root>/<key>` open and takes the subtree's lock,
   * waiting while another daemon removes the subtree. CacheLockedError while a live daemon holds it.
   */
  static async open(options: { root: string; key: string; log: Log; checks: DiscoveryCheckOptions }): Promise<ClaimedSubtree> {
    const { key, log, checks } = options;
    if (!SUBTREE_KEY_PATTERN.test(key)) throw new ConfigError(`disk cache: ${JSON.stringify(key)} is not a mount subtree name`);
    const root = path.resolve(options.root);
    // Checked before anything is created. The root is enough: below it no segment starts with '.'
    // (labels cannot) and mount keys end in a hash, so no deeper path can spell a discovery folder.
    const problem = await discoveryFolderProblem(root, checks);
    if (problem !== undefined) throw new ConfigError(`disk cache root: ${problem}`);
    await createMissingDirectories(root);
    const rootDir = await holdPrivateDirectory(root, undefined, log);
    let handedOver = false;
    try {
      // The check ran on a path; what is held is what the kernel opened then: check that too.
      const opened = await rootDir.currentPath();
      if (opened !== root) {
        const heldProblem = await discoveryFolderProblem(opened, checks);
        if (heldProblem !== undefined) throw new ConfigError(`disk cache root: ${heldProblem}`);
      }
      for (let attempt = 0; ; attempt++) {
        const subtreeDir = await holdPrivateDirectory(path.join(root, key), rootDir, log);
        const locked = await lockSubtree(subtreeDir, log).catch(async (error: unknown) => {
          await subtreeDir.close();
          throw error;
        });
        if (locked === 'pruning' || !(await rootDir.stillHolds(key, subtreeDir))) {
          // Another daemon is removing this subtree (or just renamed it away): start over on the name.
          if (locked !== 'pruning') await releaseLock(subtreeDir.at(LOCK_NAME), locked);
          await subtreeDir.close();
          if (attempt >= PRUNE_WAIT_ATTEMPTS) throw new CacheLockedError(`disk cache ${subtreeDir.shownPath}: another skills-mount keeps removing it; try again`, subtreeDir.shown(LOCK_NAME), undefined);
          await new Promise((resolve) => setTimeout(resolve, PRUNE_WAIT_MS));
          continue;
        }
        handedOver = true;
        return new ClaimedSubtree(rootDir, subtreeDir, locked, log);
      }
    } finally {
      if (!handedOver) await rootDir.close();
    }
  }

  /** <root>/<key>/.lock. */
  get lockPath(): string {
    return this.dir.shown(LOCK_NAME);
  }

  /** Whether the root was found moved or replaced: then nothing more is written. */
  get writesStopped(): boolean {
    return this.stopped;
  }

  /** Whether writes may go on: the root's path still names the directory held since open (else logged once, and never again). */
  async rootStillHeld(): Promise<boolean> {
    if (this.stopped) return false;
    if (await this.root.stillNamed()) return true;
    if (this.stopped) return false;
    this.stopped = true;
    this.log(
      `disk cache: ${this.root.shownPath} no longer names the cache root opened at start (moved away, or replaced by a link or another directory); ` +
        `nothing more is written to the disk cache until skills-mount restarts, and nothing was written anywhere else`,
    );
    return false;
  }

  /** The label's directories when they are open already (labelDirectories resolved), else undefined. */
  heldLabelDirectories(label: string): LabelDirectories | undefined {
    return this.openLabelDirs.get(label);
  }

  /** The label's directory and its files/ directory, created 0700 when missing, held open; never links. */
  labelDirectories(label: string): Promise<LabelDirectories> {
    let dirs = this.labelDirs.get(label);
    if (dirs === undefined) {
      const opening = (async () => {
        const labelDir = await this.dir.child(label, { create: true });
        try {
          return { label: labelDir, files: await labelDir.child(FILES_DIR, { create: true }) };
        } catch (error) {
          await labelDir.close();
          throw error;
        }
      })();
      dirs = opening;
      this.labelDirs.set(label, opening);
      opening.then(
        (open) => {
          if (this.labelDirs.get(label) === opening) this.openLabelDirs.set(label, open);
        },
        () => {},
      );
      // A failure is not kept: the next operation tries again.
      opening.catch(() => {
        if (this.labelDirs.get(label) === opening) this.labelDirs.delete(label);
      });
    }
    return dirs;
  }

  /** Lets go of a label's directories before the label is removed (they are closed at close()). */
  retireLabel(label: string): void {
    const dirs = this.labelDirs.get(label);
    if (dirs === undefined) return;
    this.labelDirs.delete(label);
    this.openLabelDirs.delete(label);
    this.retired.push(dirs);
  }

  /** Releases the lock and closes every anchored directory. */
  async close(): Promise<void> {
    await releaseLock(this.dir.at(LOCK_NAME), this.lockToken);
    for (const dirs of [...this.labelDirs.values(), ...this.retired]) {
      const held = await dirs.catch(() => undefined);
      await held?.files.close();
      await held?.label.close();
    }
    this.labelDirs.clear();
    this.openLabelDirs.clear();
    await this.dir.close();
    await this.root.close();
  }
}

/** Takes the mount subtree's lock (one daemon per mountpoint): its token, 'pruning' while another daemon removes the subtree, or says who holds it. */
async function lockSubtree(subtreeDir: AnchoredDirectory, log: Log): Promise<string | 'pruning'> {
  const lockPath = subtreeDir.shown(LOCK_NAME);
  const subtree = subtreeDir.shownPath;
  let taken;
  try {
    taken = await tryLock(subtreeDir.at(LOCK_NAME), (stale) =>
      log(`disk cache: took over the stale lock ${lockPath} (${stale.pid === undefined ? 'it named no process' : `pid ${stale.pid} is not running`})`),
    );
  } catch (error) {
    const code = errorCode(error);
    if (code !== undefined && UNWRITABLE_CODES.has(code)) throw unwritable(lockPath, subtree, error);
    if (code !== undefined) throw error; // I/O, not a lock changing hands
    throw new CacheLockedError(`disk cache ${subtree}: ${errorMessage(error)}; is another skills-mount starting on this mountpoint?`, lockPath, undefined);
  }
  if ('token' in taken) return taken.token;
  if (taken.holder.purpose === 'prune') return 'pruning';
  throw new CacheLockedError(
    `disk cache ${subtree} is in use: ${taken.heldBy} holds the lock file ${lockPath}; one skills-mount per mountpoint (if that process is not a skills-mount serving this mountpoint, remove the lock file)`,
    lockPath,
    taken.holder.pid,
  );
}

/**
 * Creates `dir` and its missing parents (0700), one at a time. A folder that refuses (read-only
 * filesystem, no permission, or a filesystem such as /proc that answers ENOENT for a folder that
 * exists) is a ConfigError naming the folder and the two ways out.
 */
async function createMissingDirectories(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let at = dir; ; ) {
    let stats;
    try {
      stats = await lstatOrUndefined(at);
    } catch (error) {
      throw unwritable(dir, path.dirname(at), error);
    }
    if (stats !== undefined) break;
    missing.push(at);
    const parent = path.dirname(at);
    if (parent === at) break;
    at = parent;
  }
  for (const each of missing.reverse()) {
    try {
      await mkdir(each, { mode: PRIVATE_DIRECTORY_MODE });
    } catch (error) {
      const code = errorCode(error);
      if (code === 'EEXIST') continue;
      const parentExists = (await lstatOrUndefined(path.dirname(each)).catch(() => undefined)) !== undefined;
      if ((code !== undefined && UNWRITABLE_CODES.has(code)) || (code === 'ENOENT' && parentExists)) throw unwritable(dir, path.dirname(each), error);
      throw error;
    }
  }
}

function unwritable(target: string, folder: string, error: unknown): ConfigError {
  const code = errorCode(error) ?? 'error';
  const what = code === 'EROFS' ? 'is on a read-only filesystem' : 'is read-only or not writable by this user';
  return new ConfigError(
    `disk cache: cannot create ${target}: the cache folder ${folder} ${what} (${code}); ` +
      `choose a writable one with --cache-dir DIR, or run without a disk cache with --no-disk-cache`,
  );
}

/**
 * Opens `dir` (through `parent`, making it 0700 when missing): it must be a real directory owned
 * by us, else ConfigError; group or other bits on it are removed (logged). Symlinked ancestors
 * of the root are fine: only the cache's own directories must be what they claim.
 */
async function holdPrivateDirectory(dir: string, parent: AnchoredDirectory | undefined, log: Log): Promise<AnchoredDirectory> {
  let held: AnchoredDirectory;
  try {
    held = parent === undefined ? await AnchoredDirectory.open(dir) : await parent.child(path.basename(dir), { create: true });
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ELOOP' || code === 'EMLINK') throw new ConfigError(`disk cache: ${dir} is a symbolic link; refusing to use it (configure the real directory instead)`);
    if (code === 'ENOTDIR') throw new ConfigError(`disk cache: ${dir} exists and is not a directory`);
    if (code !== undefined && UNWRITABLE_CODES.has(code)) throw unwritable(dir, path.dirname(dir), error);
    throw error;
  }
  try {
    await keepPrivate(held.stats, dir, (mode) => held.chmod(mode), log);
  } catch (error) {
    await held.close();
    throw error;
  }
  return held;
}

/** The scan's check of a directory inside the subtree (reached at `at`, shown as `shown`): a real directory, ours, 0700. */
export async function ensurePrivateMode(at: string, shown: string, log: Log): Promise<void> {
  const stats = await lstat(at);
  if (stats.isSymbolicLink()) throw new ConfigError(`disk cache: ${shown} is a symbolic link; refusing to use it (configure the real directory instead)`);
  if (!stats.isDirectory()) throw new ConfigError(`disk cache: ${shown} exists and is not a directory`);
  await keepPrivate(stats, shown, (mode) => chmod(at, mode), log);
}

/** A directory of ours must be owned by us (else ConfigError) and 0700: other bits are removed, logged when they opened it to others. */
async function keepPrivate(stats: Stats, shown: string, setMode: (mode: number) => Promise<void>, log: Log): Promise<void> {
  const foreign = ownerProblem(stats, currentUid());
  if (foreign !== undefined) throw new ConfigError(`disk cache: ${shown} ${foreign}; refusing a cache directory someone else controls`);
  const mode = stats.mode & 0o777;
  if (mode !== PRIVATE_DIRECTORY_MODE) {
    await setMode(PRIVATE_DIRECTORY_MODE);
    if ((mode & 0o077) !== 0) log(`disk cache: ${shown} had mode ${mode.toString(8).padStart(4, '0')}, open to other users; changed to 0700`);
  }
}
