// Where the policy files are and whether each can be honoured: the machine-wide one only when root
// alone can change it and every folder and link on the way to it, the user's only when it is
// theirs alone. A file that cannot be honoured is reported as such, never taken as "no policy".
// Knows files and trust; what the rules mean is policy-document.ts's and policy.ts's.
import { constants, type Stats } from 'node:fs';
import { lstat, open, readlink } from 'node:fs/promises';
import path from 'node:path';
import { SkillsMountError } from '../errors.js';
import { modeText, othersCanWrite } from '../path-control.js';
import { errorCode, errorMessage, kindOf, lstatOrUndefined } from '../private-files.js';
import { readPrivateFile, type PrivateFileTerms } from '../private-json-file.js';
import { appDir, platformPath, type UserDirsWhere } from '../user-dirs.js';
import { MAX_POLICY_BYTES, parsePolicyText, PolicyFormatError, type PolicyDocument } from './policy-document.js';

/** The machine-wide policy's place (on Windows there is none). */
export const MACHINE_POLICY_PATH = '/etc/skills-mount/policy.json';

/** One policy file as found: its rules in force, absent, or not honoured (and why: the policy then refuses everything). */
export type PolicySource =
  | { file: string; state: 'in force'; document: PolicyDocument }
  | { file: string; state: 'absent' }
  | { file: string; state: 'not honoured'; why: string };

/** The owner uid of an entry on the way to the machine policy, from its path and stats (tests stand in for root here). */
export type OwnerUidOf = (at: string, stats: Stats) => number;

const realOwner: OwnerUidOf = (_at, stats) => stats.uid;
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK; // O_NONBLOCK: a FIFO must not hang open()
const MAX_LINKS = 40;

/** The user's policy: policy.json in skills-mount's config folder (beside config.json and approvals.json). */
export function userPolicyPath(where: UserDirsWhere): string {
  return platformPath(where.platform).join(appDir('config', 'skills-mount', where), 'policy.json');
}

/** The machine policy's text checked and parsed, absent, or not honoured: root must own it and every folder and link on the way. */
export async function readMachinePolicy(file: string, ownerUidOf: OwnerUidOf = realOwner): Promise<PolicySource> {
  try {
    const found = await walkToRootFile(path.resolve(file), ownerUidOf);
    if (found.kind === 'missing') return { file, state: 'absent' };
    if (found.kind === 'untrusted') return { file, state: 'not honoured', why: found.why };
    const read = await readRootFile(found.real, ownerUidOf);
    if (typeof read !== 'string') return read === undefined ? { file, state: 'absent' } : { file, state: 'not honoured', why: read.why };
    return parsed(file, read);
  } catch (error) {
    return { file, state: 'not honoured', why: `cannot be read (${errorMessage(error)})` };
  }
}

/** The user's policy: theirs alone (file and folder), as approvals.json must be; anything else is not honoured. */
export async function readUserPolicy(file: string): Promise<PolicySource> {
  const prefix = `policy file ${file}: `;
  const terms: PrivateFileTerms = {
    what: 'policy',
    distrust: 'its rules cannot be trusted',
    refuse: (message) => new PolicyFileError(message.startsWith(prefix) ? message.slice(prefix.length) : message),
    locked: (message) => new PolicyFileError(message),
    maxBytes: MAX_POLICY_BYTES,
  };
  let text: string | undefined;
  try {
    // No file is no policy of the user's, whatever their config folder is (a symbolic link to a
    // dotfiles repository, say): a mount must not start failing for a file nobody wrote.
    if ((await lstatOrUndefined(file)) === undefined) return { file, state: 'absent' };
    text = await readPrivateFile(file, terms);
  } catch (error) {
    return { file, state: 'not honoured', why: error instanceof PolicyFileError ? error.message : `cannot be read (${errorMessage(error)})` };
  }
  return text === undefined ? { file, state: 'absent' } : parsed(file, text);
}

/** Why a policy file cannot be read as one that only its owner controls (internal: becomes a "not honoured" state). */
class PolicyFileError extends SkillsMountError {
  override name = 'PolicyFileError';
  readonly code = 'POLICY_FILE';
}

function parsed(file: string, text: string): PolicySource {
  try {
    return { file, state: 'in force', document: parsePolicyText(text) };
  } catch (error) {
    if (error instanceof PolicyFormatError) return { file, state: 'not honoured', why: error.message };
    throw error;
  }
}

type Walked = { kind: 'file'; real: string } | { kind: 'missing' } | { kind: 'untrusted'; why: string };

/**
 * Walks from `/` to `file`, following links: every folder must be root's and not writable by
 * others (a sticky one on the way may be: nobody can rename what is not theirs), every link
 * root's, and the file's own folder not writable by others at all (whoever can make names there
 * could plant one). Stops at a missing name: no policy there.
 */
async function walkToRootFile(file: string, ownerUidOf: OwnerUidOf): Promise<Walked> {
  const pending = file.split('/').filter((name) => name !== '' && name !== '.');
  let at = '/';
  const rootProblem = folderProblem(at, await lstat(at), ownerUidOf, false);
  if (rootProblem !== undefined) return { kind: 'untrusted', why: rootProblem };
  let links = 0;
  while (pending.length > 0) {
    const name = pending.shift()!;
    if (name === '..') {
      at = path.dirname(at);
      continue;
    }
    const next = path.join(at, name);
    let stats: Stats;
    try {
      stats = await lstat(next);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return { kind: 'missing' };
      throw error;
    }
    if (stats.isSymbolicLink()) {
      if (++links > MAX_LINKS) return { kind: 'untrusted', why: `more than ${MAX_LINKS} symbolic links on the way to it` };
      // A link's own mode means nothing; whoever owns it can point it elsewhere.
      const owner = ownerUidOf(next, stats);
      if (owner !== 0) return { kind: 'untrusted', why: `the symbolic link ${next} on the way to it is owned by uid ${owner}, must be root` };
      const to = await readlink(next);
      pending.unshift(...to.split('/').filter((part) => part !== ''));
      if (to.startsWith('/')) at = '/';
      continue;
    }
    if (pending.length === 0) {
      // The file itself (read and checked by readRootFile); its folder now without the sticky excuse.
      const parentProblem = folderProblem(at, await lstat(at), ownerUidOf, true);
      if (parentProblem !== undefined) return { kind: 'untrusted', why: parentProblem };
      return { kind: 'file', real: next };
    }
    if (!stats.isDirectory()) return { kind: 'untrusted', why: `${next} on the way to it is ${kindOf(stats)}, not a folder` };
    const problem = folderProblem(next, stats, ownerUidOf, false);
    if (problem !== undefined) return { kind: 'untrusted', why: problem };
    at = next;
  }
  return { kind: 'untrusted', why: 'names a folder, not a file' };
}

function folderProblem(at: string, stats: Stats, ownerUidOf: OwnerUidOf, strict: boolean): string | undefined {
  const owner = ownerUidOf(at, stats);
  if (owner !== 0) return `its folder ${at} is owned by uid ${owner}, must be root`;
  if (othersCanWrite(stats, { stickyExcuses: !strict })) return `its folder ${at} can be written by group or others (mode ${modeText(stats.mode)}), must be writable by root only`;
  return undefined;
}

/** The text of a root-owned regular file that only root can write; undefined when it is gone; else why not. */
async function readRootFile(file: string, ownerUidOf: OwnerUidOf): Promise<string | undefined | { why: string }> {
  let handle;
  try {
    handle = await open(file, READ_FLAGS);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT') return undefined;
    if (code === 'EACCES') return { why: 'cannot be read by this user (permission denied): it must be readable by everyone (chmod 644)' };
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { why: `is ${kindOf(stats)}, not a regular file` };
    const owner = ownerUidOf(file, stats);
    if (owner !== 0) return { why: `owned by uid ${owner}, must be root` };
    if (othersCanWrite(stats)) return { why: `can be written by group or others (mode ${modeText(stats.mode)}), must be writable by root only` };
    // Read at most one byte past the limit, whatever size the file claimed or grows to meanwhile.
    const buffer = Buffer.alloc(MAX_POLICY_BYTES + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length === buffer.length) break;
    }
    if (length > MAX_POLICY_BYTES) return { why: `is more than ${MAX_POLICY_BYTES} bytes, more than a policy file may be` };
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(buffer.subarray(0, length));
    } catch {
      return { why: 'is not UTF-8 text' };
    }
  } finally {
    await handle.close().catch(() => {});
  }
}
