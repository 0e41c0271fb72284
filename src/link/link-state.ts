// What `skills-mount link` has done, per user: the skills roots it keeps (which harness, which
// scope) and the entries it made in each, in `$XDG_DATA_HOME/skills-mount/links/links.json`
// (0600, in a 0700 directory of the user's, changed under a lock: private-json-file.ts). The
// entries recorded here are what status shows; what is ours in a root is decided there (a
// symbolic link into this store), so a crash between the two loses nothing.
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { mountOf } from '../fuse/mount-table.js';
import { SkillsMountError } from '../errors.js';
import { LockHeldError } from '../lock-file.js';
import { currentUid, describeControlFinding, pathControl, type PathControlFinding } from '../path-control.js';
import { errorMessage } from '../private-files.js';
import { changePrivateFile, readPrivateFile, type PrivateFileTerms } from '../private-json-file.js';
import { appDir, platformPath } from '../user-dirs.js';
import { OBJECTS_DIR, OBJECT_KEY_PATTERN } from './entry-objects.js';
import type { Scope } from './harness-roots.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface LinkedEntry {
  label: string;
  skillUri: string;
  /** The entry's content in the store (objects/<object>/skill). */
  object: string;
  /** Not the skill's own name: it collided. */
  qualified: boolean;
}

export interface LinkedRoot {
  /** Absolute path of the skills root, as configured (not resolved: it may be a symbolic link). */
  root: string;
  /** Harness names linked to this root (`agents` and a project's `codex` share one). */
  harnesses: string[];
  scope: Scope;
  linkedAt: string;
  /** The folders link made for this root (the root and the parents it lacked), deepest first: unlink removes each again while it is empty. */
  created: string[];
  /** By entry name. */
  entries: Record<string, LinkedEntry>;
  /** What the last sync could not do here, in sentences (collisions, skills waiting for content, a refusal). */
  problems: string[];
  /** A project root under a lockfile (`skills-lock.json`, absolute): its entries are the lock's, not the person's approvals. */
  lockfile?: string | undefined;
  /** With a lockfile: the configuration it was linked with (judged-roots.ts), the only one its lock is judged with. */
  configuration?: string | undefined;
  /** When a sync last changed this root's entries or problems (ISO). */
  changedAt: string | null;
}

export interface LinkState {
  roots: LinkedRoot[];
  /** Objects no root points to, and since when (ISO): removed once a harness can no longer be reading them. */
  retired: Record<string, string>;
}

/** links.json or its directory cannot be used. */
export class LinkStateError extends SkillsMountError {
  override name = 'LinkStateError';
  readonly code = 'LINK_STATE';
}

class LinksLockedError extends LockHeldError {
  override name = 'LinksLockedError';
  readonly code = 'LINKS_LOCKED';
}

const FILE_VERSION = 1;
/** The store's folders besides itself: the objects, and link-sync.ts's temporary links. */
const STORE_DIRS = [OBJECTS_DIR, 'tmp'];
const STATE_FILE = 'links.json';
/** A sync of many skills may hold the lock for seconds; another waits this long. */
export const LINK_LOCK_TIMEOUT_MS = 60_000;

const TERMS: PrivateFileTerms = {
  what: 'links',
  distrust: 'what it says was linked cannot be trusted',
  refuse: (message, file, cause) => new LinkStateError(message, cause === undefined ? {} : { cause }),
  locked: (message, lockPath, holder) => new LinksLockedError(message, lockPath, holder.pid),
  maxBytes: 64 * 1024 * 1024,
};

/** `<data>/skills-mount/links` (user-dirs.ts: `$XDG_DATA_HOME` when absolute, else `~/.local/share`; `%LOCALAPPDATA%` on Windows). */
export function defaultLinkStore(env: Env, home: string, platform: NodeJS.Platform = process.platform): string {
  return platformPath(platform).join(appDir('data', 'skills-mount', { env, home, platform }), 'links');
}

/**
 * The filesystem the store lies on (or would, from its nearest existing folder), and whether it is
 * mounted noexec, where no granted script could run: what link reports and doctor checks.
 */
export async function storeFilesystem(store: string): Promise<{ mountpoint: string; noexec: boolean } | undefined> {
  let at = path.resolve(store);
  for (;;) {
    const real = await realpath(at).catch(() => undefined);
    if (real !== undefined) {
      const mount = await mountOf(real);
      return mount === undefined ? undefined : { mountpoint: mount.mountpoint, noexec: mount.options.split(',').includes('noexec') };
    }
    if (path.dirname(at) === at) return undefined;
    at = path.dirname(at);
  }
}

/**
 * Refuses a store on a path another user could change: whoever can rename a folder on the way to
 * it, or write the store or its objects, could swap the content of every entry in every root.
 * Each directory and link on the way is checked as skills roots are (path-control.ts).
 */
export async function checkLinkStore(store: string): Promise<void> {
  const uid = currentUid();
  const findings = new Map<string, PathControlFinding>();
  for (const dir of [store, ...STORE_DIRS.map((name) => path.join(store, name))]) {
    for (const finding of await pathControl(dir, { uid, strictTarget: true })) findings.set(finding.path, finding);
  }
  if (findings.size === 0) return;
  throw new LinkStateError(
    `links store ${store}: ${[...findings.values()].map(describeControlFinding).join('; ')}; refusing it (another user could change the skills your harnesses load); set XDG_DATA_HOME to a folder only you control`,
  );
}

/** The state in `store` (empty when nothing was ever linked). */
export async function readLinkState(store: string): Promise<LinkState> {
  await checkLinkStore(store);
  const file = path.join(store, STATE_FILE);
  return parseState(file, await readPrivateFile(file, TERMS));
}

/**
 * Read-modify-write of the state under its lock, held while `apply` runs (it may change skills
 * roots meanwhile): the lock makes every linker (the CLI, daemons) take its turn.
 */
export async function changeLinkState(store: string, apply: (state: LinkState) => Promise<void>): Promise<LinkState> {
  await checkLinkStore(store);
  const file = path.join(store, STATE_FILE);
  let result: LinkState | undefined;
  await changePrivateFile(file, TERMS, LINK_LOCK_TIMEOUT_MS, async (text) => {
    // Again once the folders exist: one made meanwhile on the way to it is checked too.
    await checkLinkStore(store);
    const state = parseState(file, text);
    const before = serialize(state);
    await apply(state);
    result = state;
    const after = serialize(state);
    return after === before ? undefined : after;
  });
  return result!;
}

function serialize(state: LinkState): string {
  const roots = [...state.roots].sort((a, b) => (a.root < b.root ? -1 : a.root > b.root ? 1 : 0));
  return `${JSON.stringify({ version: FILE_VERSION, roots, retired: state.retired }, null, 2)}\n`;
}

function parseState(file: string, text: string | undefined): LinkState {
  if (text === undefined) return { roots: [], retired: {} };
  const refuse = (detail: string) => new LinkStateError(`links file ${file}: ${detail}; fix or remove it (removing it forgets what was linked: the links stay in the roots until you remove them)`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw refuse(`is not valid JSON (${errorMessage(error)})`);
  }
  if (!isObject(parsed) || parsed['version'] !== FILE_VERSION || !Array.isArray(parsed['roots'])) throw refuse(`is not a version ${FILE_VERSION} links file`);
  const roots: LinkedRoot[] = [];
  for (const [index, value] of (parsed['roots'] as unknown[]).entries()) {
    const problem = rootProblem(value);
    if (problem !== undefined) throw refuse(`roots[${index}]: ${problem}`);
    roots.push(value as LinkedRoot);
  }
  const retired = isObject(parsed['retired']) ? (parsed['retired'] as Record<string, string>) : {};
  return { roots, retired };
}

function rootProblem(value: unknown): string | undefined {
  if (!isObject(value)) return 'not an object';
  if (typeof value['root'] !== 'string' || !path.isAbsolute(value['root'])) return 'root is not an absolute path';
  if (!Array.isArray(value['harnesses']) || !value['harnesses'].every((name) => typeof name === 'string')) return 'harnesses is not a list of names';
  if (value['scope'] !== 'user' && value['scope'] !== 'project') return 'scope is neither user nor project';
  if (!Array.isArray(value['created']) || !value['created'].every((folder) => typeof folder === 'string' && path.isAbsolute(folder))) return 'created is not a list of absolute paths';
  if (!isObject(value['entries'])) return 'entries is not an object';
  for (const [name, entry] of Object.entries(value['entries'])) {
    if (!isObject(entry) || typeof entry['label'] !== 'string' || typeof entry['skillUri'] !== 'string' || typeof entry['object'] !== 'string' || !OBJECT_KEY_PATTERN.test(entry['object'])) {
      return `entry ${JSON.stringify(name)} is not {label, skillUri, object}`;
    }
  }
  if (!Array.isArray(value['problems'])) return 'problems is not a list';
  if (value['lockfile'] !== undefined && (typeof value['lockfile'] !== 'string' || !path.isAbsolute(value['lockfile']))) return 'lockfile is not an absolute path';
  if (value['configuration'] !== undefined && typeof value['configuration'] !== 'string') return 'configuration is not a string';
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
