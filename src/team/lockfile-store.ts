// Changes a project's lockfile: read, change and replace under a writer's lock beside it, so two
// commands (`lock` and `update`, or two people's scripts) never lose each other's entries, and a
// reader (`link --watch`, the mount) sees the old file or the new one whole, never a mix. The
// project folder is the user's: refused when another user could swap names in it.
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { releaseLock, tryLock } from '../lock-file.js';
import { ControlledPathError, currentUid, describeControlFinding, pathControl } from '../path-control.js';
import { errorMessage, writeAtomically } from '../private-files.js';
import { emptyLockfile, LockfileError, readLockfileText, serializeLockfile, type Lockfile } from './lockfile.js';

/** Committed, so readable by the team's tools: the repository decides who reads it. */
const LOCKFILE_MODE = 0o644;
const LOCK_TIMEOUT_MS = 10_000;
const LOCK_POLL_MS = 20;

/**
 * Applies `change` to the lockfile at `file` (an empty one when there is none) and writes the
 * result atomically when its text differs. Resolves the lockfile as written (or as it was).
 */
export async function changeLockfile(file: string, change: (lock: Lockfile) => Lockfile | Promise<Lockfile>): Promise<{ lock: Lockfile; changed: boolean }> {
  const dir = path.dirname(file);
  const name = path.basename(file);
  await requireOwnFolder(dir);
  const lockPath = path.join(dir, `.${name}.lock`);
  const token = await takeWriterLock(lockPath, file);
  try {
    await removeOwnTemps(dir, name);
    const read = await readLockfileText(file);
    const after = await change(read?.lock ?? emptyLockfile());
    const text = serializeLockfile(after);
    // Unchanged entries are not written again, and a lockfile laid out by hand keeps its layout:
    // the text is compared first (what this writer wrote reads back the same), the entries only when it differs.
    const changed = read === undefined ? text !== serializeLockfile(emptyLockfile()) : text !== read.text && text !== serializeLockfile(read.lock);
    if (changed) await writeAtomically(dir, name, text, tempPrefix(name), { mode: LOCKFILE_MODE });
    return { lock: after, changed };
  } finally {
    await releaseLock(lockPath, token);
  }
}

/** The project folder, and every folder on the way, must be this user's (or root's), and not writable by others. */
export async function requireOwnFolder(dir: string): Promise<void> {
  const findings = await pathControl(dir, { uid: currentUid(), strictTarget: true });
  const finding = findings[0];
  if (finding !== undefined) {
    throw new ControlledPathError(`${dir}: not written, since ${describeControlFinding(finding)}: another user could replace the lockfile under you`, finding.path, finding.ownerUid, finding.mode);
  }
}

async function takeWriterLock(lockPath: string, file: string): Promise<string> {
  const deadline = Date.now() + LOCK_TIMEOUT_MS;
  for (;;) {
    let taken;
    try {
      taken = await tryLock(lockPath);
    } catch (error) {
      throw new LockfileError(`cannot take the writer's lock ${lockPath} (${errorMessage(error)})`, file, undefined, error);
    }
    if ('token' in taken) return taken.token;
    if (Date.now() >= deadline) throw new LockfileError(`${taken.heldBy} has been changing it for over ${LOCK_TIMEOUT_MS / 1000} s (its lock: ${lockPath})`, file);
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
}

function tempPrefix(name: string): string {
  return `.${name}.tmp-`;
}

/** Temp files a writer that crashed left; called under the lock, so no live writer owns one. */
async function removeOwnTemps(dir: string, name: string): Promise<void> {
  const prefix = tempPrefix(name);
  for (const entry of await readdir(dir)) {
    if (entry.startsWith(prefix)) await rm(path.join(dir, entry), { force: true });
  }
}
