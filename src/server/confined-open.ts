// Opens a file below the served root so that no link, and no link swapped in at any moment,
// leads out of it. Node has no openat, so each component is opened from its parent's
// descriptor through /proc/self/fd/<parent>/<name> with O_NOFOLLOW (Linux). Knows no skills.
import { constants, type BigIntStats } from 'node:fs';
import { ConfigError, NotFoundError } from '../errors.js';
import { closeFd, descriptorPath, fstatBig, openFd, readlinkText } from './fs-calls.js';

/** An open regular file below the root; the caller closes `fd`. */
export interface ConfinedFile {
  fd: number;
  stat: BigIntStats;
  /** Where the kernel says the opened file is, checked to be the walked path. */
  realPath: string;
}

// As many link hops as the kernel allows one path lookup.
const MAX_LINKS = 40;
const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
// Directories on the way are opened O_PATH (only a handle to walk from; half the cost of a
// read open). Node does not export it; this is its value on every Linux architecture Node
// runs on except the few listed elsewhere in the kernel (alpha, parisc, sparc), where plain
// read-only opens do the same job.
const O_PATH = ['x64', 'arm64', 'arm', 'ia32', 'ppc64', 's390x', 'riscv64', 'loong64'].includes(process.arch) ? 0o10000000 : O_RDONLY;
const DIRECTORY_FLAGS = O_PATH | O_DIRECTORY | O_NOFOLLOW;

interface Step {
  name: string;
  /** A link here is resolved (below the root); elsewhere a link means the path changed. */
  followLink: boolean;
}

/**
 * Opens `rel` (a `/`-separated path below `realRoot`) as a regular file.
 *
 * Every directory on the way is opened from its parent's descriptor with O_NOFOLLOW and
 * O_DIRECTORY, so the walk cannot be sent outside by a link at any component, whenever it is
 * swapped in. The scanned path's directories must be real directories; a link as its last
 * component (the scan serves links to files inside the root) is resolved by this same walk,
 * its target below the root or refused. Once opened, the kernel's own name for the file
 * (/proc/self/fd/N) must be the walked path: a directory moved out of the root mid-walk is
 * refused too (after one more walk, so an editor's rename over the file is no failure).
 * Throws NotFoundError, saying why.
 */
export async function openWithinRoot(realRoot: string, rel: string): Promise<ConfinedFile> {
  const first = await walk(realRoot, rel);
  if (!('moved' in first)) return first;
  const second = await walk(realRoot, rel);
  if (!('moved' in second)) return second;
  throw new NotFoundError(`${rel} moved while it was opened (the kernel names it ${JSON.stringify(second.moved)})`);
}

async function walk(realRoot: string, rel: string): Promise<ConfinedFile | { moved: string }> {
  const parts = rel.split('/');
  const steps = parts.map((name, i): Step => ({ name, followLink: i === parts.length - 1 }));
  const rootFd = await acquireRoot(realRoot);
  const dirs: Array<{ fd: number; name: string }> = [];
  const closeDirs = (): void => dirs.splice(0).forEach(({ fd }) => closeFd(fd));
  let links = 0;
  try {
    for (;;) {
      const step = steps.shift();
      if (step === undefined) throw new NotFoundError(`${rel} is a directory`);
      const last = steps.length === 0;
      if (step.name === '' || step.name === '.') {
        if (last) throw new NotFoundError(`${rel} is a directory`);
        continue;
      }
      if (step.name === '..') {
        const up = dirs.pop();
        if (up === undefined) throw new NotFoundError(`${rel} leads outside the served directory`);
        closeFd(up.fd);
        if (last) throw new NotFoundError(`${rel} is a directory`);
        continue;
      }
      const via = `/proc/self/fd/${dirs.at(-1)?.fd ?? rootFd}/${step.name}`;
      let fd: number;
      try {
        // O_NONBLOCK: a FIFO swapped in must not hang the server.
        fd = await openFd(via, last ? O_RDONLY | O_NOFOLLOW | O_NONBLOCK : DIRECTORY_FLAGS);
      } catch (error) {
        const code = codeOf(error);
        // A link is ELOOP as the last component, ENOTDIR with O_DIRECTORY.
        if (!step.followLink || (code !== 'ELOOP' && code !== 'ENOTDIR')) throw new NotFoundError(`cannot open ${rel}: ${code}`, { cause: error });
        const target = await readlinkText(via).catch(() => undefined);
        if (target === undefined) throw new NotFoundError(`cannot open ${rel}: ${code}`, { cause: error });
        if (++links > MAX_LINKS) throw new NotFoundError(`cannot open ${rel}: too many links`);
        if (target.startsWith('/')) {
          if (!isBelow(target, realRoot)) throw new NotFoundError(`${rel} leads outside the served directory`);
          closeDirs();
          steps.unshift(...linkSteps(target.slice(realRoot.length)));
        } else {
          steps.unshift(...linkSteps(target));
        }
        continue;
      }
      if (!last) {
        dirs.push({ fd, name: step.name });
        continue;
      }
      try {
        const stat = fstatBig(fd);
        if (!stat.isFile()) throw new NotFoundError(`${rel} is not a regular file`);
        const walked = joinBelow(realRoot, [...dirs.map((dir) => dir.name), step.name]);
        const realPath = descriptorPath(fd);
        if (realPath !== walked) {
          closeFd(fd);
          return { moved: realPath };
        }
        return { fd, stat, realPath };
      } catch (error) {
        closeFd(fd);
        if (error instanceof NotFoundError) throw error;
        throw new NotFoundError(`cannot open ${rel}: ${codeOf(error)}`, { cause: error });
      }
    }
  } finally {
    closeDirs();
    releaseRoot(realRoot);
  }
}

// The root's descriptor, shared by the walks in flight and closed when the last one ends: one
// open fewer per read under load. A root renamed meanwhile fails the final path check.
const roots = new Map<string, { fd: Promise<number>; users: number }>();

async function acquireRoot(realRoot: string): Promise<number> {
  let held = roots.get(realRoot);
  if (held === undefined) {
    const fd = openFd(realRoot, DIRECTORY_FLAGS);
    held = { fd, users: 0 };
    roots.set(realRoot, held);
    fd.catch(() => roots.get(realRoot)?.fd === fd && roots.delete(realRoot));
  }
  held.users++;
  try {
    return await held.fd;
  } catch (error) {
    held.users--;
    throw new NotFoundError(`cannot open the served directory: ${codeOf(error)}`, { cause: error });
  }
}

function releaseRoot(realRoot: string): void {
  const held = roots.get(realRoot)!;
  if (--held.users > 0) return;
  roots.delete(realRoot);
  void held.fd.then(closeFd);
}

/** Throws ConfigError unless this system can open files component by component (needs /proc). */
export async function checkConfinement(realRoot: string): Promise<void> {
  let rootFd: number | undefined;
  try {
    rootFd = await openFd(realRoot, DIRECTORY_FLAGS);
    const probe = await openFd(`/proc/self/fd/${rootFd}/.`, DIRECTORY_FLAGS);
    closeFd(probe);
  } catch (error) {
    throw new ConfigError(
      `cannot confine reads to ${realRoot}: opening it through /proc/self/fd failed (${codeOf(error)}); skills-serve needs Linux with /proc mounted`,
      { cause: error },
    );
  } finally {
    if (rootFd !== undefined) closeFd(rootFd);
  }
}

function linkSteps(target: string): Step[] {
  return target.split('/').map((name) => ({ name, followLink: true }));
}

function isBelow(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`);
}

function joinBelow(root: string, names: string[]): string {
  return (root.endsWith('/') ? root : `${root}/`) + names.join('/');
}

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? String(error);
}
