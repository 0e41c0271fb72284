// One small file of the user's that decides what agents get (approvals.json, links.json): in a
// directory of theirs that others cannot write, never a symbolic link, read only when it can be
// trusted, changed read-modify-write under a lock file and written atomically, so two processes
// never lose each other's changes. Knows bytes and trust, not what the file says.
import { constants, type Stats } from 'node:fs';
import { chmod, mkdir, open, readdir, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { PRIVATE_DIRECTORY_MODE } from './file-modes.js';
import { type LockHolder, releaseLock, tryLock } from './lock-file.js';
import { currentUid, modeText, othersCanWrite, ownerProblem } from './path-control.js';
import { errorCode, errorMessage, kindOf, lstatOrUndefined, writeAtomically } from './private-files.js';

export interface PrivateFileTerms {
  /** What the file holds, in messages: "approvals", "links". */
  what: string;
  /** What reading it would mean if it could not be trusted ("its approvals cannot be trusted"). */
  distrust: string;
  /** The error a refusal becomes: (message, the file or directory at fault, cause). */
  refuse: (message: string, file: string, cause?: unknown) => Error;
  /** The error when another process held the lock for longer than the wait. */
  locked: (message: string, lockPath: string, holder: LockHolder) => Error;
  /** The largest file it reads. */
  maxBytes: number;
}

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK; // O_NONBLOCK: a FIFO must not hang open()
const LOCK_POLL_MIN_MS = 5;
const LOCK_POLL_MAX_MS = 100;

/**
 * An existing directory must be a real directory of ours that others cannot write (they could
 * swap the file); a missing one is fine. Symlinked ancestors are fine: only the file's own
 * directory must be what it claims.
 */
export async function checkPrivateDirectory(dir: string, file: string, terms: PrivateFileTerms): Promise<Stats | undefined> {
  const stats = await lstatOrUndefined(dir);
  if (stats === undefined) return undefined;
  if (stats.isSymbolicLink()) throw terms.refuse(`${terms.what} directory ${dir} is a symbolic link; refusing it (configure the real directory instead)`, dir);
  if (!stats.isDirectory()) throw terms.refuse(`${terms.what} directory ${dir} exists and is not a directory`, dir);
  const foreign = ownerProblem(stats, currentUid());
  if (foreign !== undefined) throw terms.refuse(`${terms.what} directory ${dir} ${foreign}`, dir);
  if (othersCanWrite(stats)) {
    throw terms.refuse(`${terms.what} directory ${dir} has mode ${modeText(stats.mode)}: other users can replace its files; check ${path.basename(file)}, then chmod 700 it`, dir);
  }
  return stats;
}

/** The file's text; undefined when it does not exist; refused when it is not a regular file of ours that only we can write. */
export async function readPrivateFile(file: string, terms: PrivateFileTerms): Promise<string | undefined> {
  const refuse = (detail: string, cause?: unknown) => terms.refuse(`${terms.what} file ${file}: ${detail}`, file, cause);
  await checkPrivateDirectory(path.dirname(file), file, terms);
  let handle: FileHandle;
  try {
    handle = await open(file, READ_FLAGS);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT') return undefined;
    // O_NOFOLLOW refuses a symlink with ELOOP (EMLINK on FreeBSD).
    if (code === 'ELOOP' || code === 'EMLINK') throw refuse(`is a symbolic link; refusing it (${terms.what} decide what agents are shown: keep the real file here)`);
    throw refuse(`cannot be opened (${errorMessage(error)})`, error);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw refuse(`is ${kindOf(stats)}, not a regular file`);
    const foreign = ownerProblem(stats, currentUid());
    if (foreign !== undefined) throw refuse(`${foreign}; refusing ${terms.what} someone else wrote`);
    if (othersCanWrite(stats)) throw refuse(`has mode ${modeText(stats.mode)}: other users can write it, so ${terms.distrust}; check its contents, then chmod 600 it`);
    if (stats.size > terms.maxBytes) throw refuse(`is ${stats.size} bytes, more than a ${terms.what} file can be`);
    return (await handle.readFile()).toString('utf8');
  } finally {
    await handle.close().catch(() => {});
  }
}

/**
 * Read-modify-write under `<file>.lock` (waiting up to lockTimeoutMs for another writer):
 * `apply` gets the text on disk now (undefined: no file) and returns the new text, or undefined
 * to write nothing; the lock is held while it runs, awaited or not. Creates the directory (0700) when missing. Resolves once the write is on disk.
 */
export async function changePrivateFile(
  file: string,
  terms: PrivateFileTerms,
  lockTimeoutMs: number,
  apply: (text: string | undefined) => string | undefined | Promise<string | undefined>,
): Promise<void> {
  const dir = path.dirname(file);
  const name = path.basename(file);
  await ensurePrivateDirectory(dir, file, terms);
  const lockPath = `${file}.lock`;
  const token = await acquireLock(lockPath, lockTimeoutMs, terms);
  try {
    await removeOwnTemps(dir, name);
    const next = await apply(await readPrivateFile(file, terms));
    if (next !== undefined) await writeAtomically(dir, name, next, tempPrefix(name));
  } finally {
    await releaseLock(lockPath, token);
  }
}

/**
 * Runs `work` holding the lock file `<file>.<purpose>.lock` beside `file` (its directory made
 * private as for a change): a turn among processes for work that is not a change of the file
 * itself, such as one renewal of a sign-in at a time.
 */
export async function withPrivateLock<T>(file: string, purpose: string, terms: PrivateFileTerms, lockTimeoutMs: number, work: () => Promise<T>): Promise<T> {
  await ensurePrivateDirectory(path.dirname(file), file, terms);
  const lockPath = `${file}.${purpose}.lock`;
  const token = await acquireLock(lockPath, lockTimeoutMs, terms);
  try {
    return await work();
  } finally {
    await releaseLock(lockPath, token);
  }
}

/** Makes `dir` (and missing parents) 0700, or checks the existing one and takes read and search from others. */
async function ensurePrivateDirectory(dir: string, file: string, terms: PrivateFileTerms): Promise<void> {
  let stats = await checkPrivateDirectory(dir, file, terms);
  if (stats === undefined) {
    await mkdir(dir, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
    stats = await checkPrivateDirectory(dir, file, terms);
  }
  if (stats !== undefined && (stats.mode & 0o777) !== PRIVATE_DIRECTORY_MODE) await chmod(dir, PRIVATE_DIRECTORY_MODE);
}

/** Takes the lock, waiting (with backoff, up to timeoutMs) while a live process holds it. */
async function acquireLock(lockPath: string, timeoutMs: number, terms: PrivateFileTerms): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let pollMs = LOCK_POLL_MIN_MS;
  for (;;) {
    let taken;
    try {
      taken = await tryLock(lockPath);
    } catch (error) {
      throw terms.refuse(`${terms.what} lock ${lockPath}: cannot be taken (${errorMessage(error)})`, lockPath, error);
    }
    if ('token' in taken) return taken.token;
    if (Date.now() >= deadline) {
      throw terms.locked(
        `${terms.what} ${path.dirname(lockPath)}: ${taken.heldBy} has held the lock file ${lockPath} for over ${timeoutMs} ms (if no skills-mount is changing ${terms.what}, remove it)`,
        lockPath,
        taken.holder,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(pollMs, Math.max(0, deadline - Date.now()))));
    pollMs = Math.min(pollMs * 2, LOCK_POLL_MAX_MS);
  }
}

function tempPrefix(name: string): string {
  return `.${name}.tmp-`;
}

/** Temp files left by a writer that crashed; called under the lock, so no live writer owns one. */
async function removeOwnTemps(dir: string, name: string): Promise<void> {
  const prefix = tempPrefix(name);
  for (const entry of await readdir(dir)) {
    if (entry.startsWith(prefix)) await rm(path.join(dir, entry), { recursive: true, force: true });
  }
}
