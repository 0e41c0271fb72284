// One lock file per protected directory, without flock(2): created with O_EXCL holding
// "pid\nhost\ntoken\n", a fourth line naming why for a lock taken for a moment (the disk cache
// removing a subtree; empty when there is none but a fifth line follows) and, on Linux, a fifth line
// naming the holder beyond its pid, which repeats across containers (pid 1 in each), as hostnames do
// across a pod's containers: "boot=<boot id> pidns=<inode> start=<ticks>[ netns=<inode>]". With netns,
// the holder listens on an abstract socket named after its token in that network namespace (which a
// pod's containers share), closed by the kernel when the holder dies. lockHeldBy says who is alive.
// A stale lock is taken over (removed only if it is still the same file, by inode); two takers of one
// stale lock in the same instant can both win, the inode check narrows that to the gap between lstat
// and unlink. The disk cache refuses a held lock at once; the approvals store waits for it.
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rm, statfs, unlink, type FileHandle } from 'node:fs/promises';
import { createConnection, createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import { SkillsMountError } from './errors.js';
import { PRIVATE_FILE_MODE } from './file-modes.js';
import { CREATE_FLAGS, errorCode, isAlive, lstatOrUndefined } from './private-files.js';
import { isBootId, localProcess, procStatOf, startedAt, type LocalProcess } from './process-identity.js';

/** A lock another process holds: which, and who. Each caller's subclass names its own case. */
export abstract class LockHeldError extends SkillsMountError {
  constructor(
    message: string,
    /** The lock file. */
    readonly lockPath: string,
    /** The holder's pid, when the lock names one. */
    readonly holderPid: number | undefined,
  ) {
    super(message);
  }
}

export interface LockHolder {
  pid: number | undefined;
  host: string | undefined;
  token: string | undefined;
  /** The fourth line: why a short-lived lock was taken (e.g. "prune"); undefined for a daemon's lock. */
  purpose: string | undefined;
  ino: number;
  /** The lock file's mtime: when it was taken or last touched. */
  mtimeMs: number;
  /** The boot of the kernel the holder ran under; undefined in a lock from an older skills-mount or from a system without /proc. */
  bootId: string | undefined;
  /** The inode of the holder's pid namespace, which its pid counts in. */
  pidNamespace: number | undefined;
  /** The holder's start time (field 22 of /proc/<pid>/stat), which tells it from a later process given the same pid. */
  startTicks: number | undefined;
  /** The network namespace where the holder's socket listens; undefined when it has none. */
  netNamespace: number | undefined;
  /** Whether that socket answered: asked by readLock only where nothing else can tell (another pid namespace, our network one). */
  answered: boolean | undefined;
  /** Whether the lock file is on a filesystem only this machine writes: asked by readLock only for a lock from another boot and host. */
  onLocalDisk: boolean | undefined;
}

/** A lock file with no pid yet may be one another process is still writing; past this age it is debris. */
const LOCK_SETTLE_MS = 5_000;
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** Takeovers in a row before giving up: a lock that keeps changing hands is not ours to take. */
const MAX_ATTEMPTS = 5;
/** The abstract socket (a leading NUL: no file) a holder listens on, followed by its token. */
const SOCKET_PREFIX = '\0skills-mount-lock-';
/** A connect to a local socket is answered at once; this only bounds a kernel that does not. */
const PROBE_TIMEOUT_MS = 1_000;
/**
 * statfs f_type of filesystems whose files only this machine's kernel writes: ext2-4, xfs, btrfs,
 * tmpfs, overlay, zfs, f2fs, ramfs, bcachefs. NFS, SMB, FUSE, 9p, virtiofs and cluster filesystems are not.
 */
const LOCAL_DISK_TYPES = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0x2fc12fc1, 0xf2f52010, 0x858458f6, 0xca451a4e]);

/** The sockets of the locks this process holds, by token: open until the lock is released. */
const sockets = new Map<string, Server>();

/**
 * One attempt to take the lock: its token, or who holds it. `onStale` hears of each stale lock
 * taken over; `purpose` (one word) is written as the fourth line. Throws when the lock keeps changing hands.
 */
export async function tryLock(
  lockPath: string,
  onStale: (holder: LockHolder) => void = () => {},
  purpose?: string,
): Promise<{ token: string } | { heldBy: string; holder: LockHolder }> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const token = randomBytes(8).toString('hex');
    let handle: FileHandle | undefined;
    try {
      handle = await open(lockPath, CREATE_FLAGS, PRIVATE_FILE_MODE);
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
    }
    if (handle !== undefined) {
      // The socket listens before the file names it: a reader seeing it named and unanswered would take the lock.
      const here = localProcess();
      const socket = here === undefined ? undefined : await listenAsHolder(token);
      try {
        await handle.writeFile(lockText(token, purpose, here, socket !== undefined));
        await handle.sync();
        await handle.close();
      } catch (error) {
        await handle.close().catch(() => {});
        await unlink(lockPath).catch(() => {});
        socket?.close();
        throw error;
      }
      if (socket !== undefined) sockets.set(token, socket);
      return { token };
    }
    const holder = await readLock(lockPath);
    if (holder === undefined) continue; // released since: try again at once
    const heldBy = lockHeldBy(holder);
    if (heldBy !== undefined) return { heldBy, holder };
    const now = await lstatOrUndefined(lockPath);
    if (now !== undefined && now.ino === holder.ino) await rm(lockPath, { recursive: true, force: true });
    onStale(holder);
  }
  throw new Error(`the lock file ${lockPath} keeps changing hands`);
}

/**
 * Who holds the lock, in words; undefined when it is stale. A lock naming the holder's boot, pid
 * namespace and start time: from another boot, stale if it names this host or lies on a local disk
 * (else another machine may share the folder: held); in our pid namespace, held while that pid runs
 * with that start time; in another, held while its socket answers, and held when it cannot be asked.
 * An older lock (or no /proc here): held while the pid runs here, or when it names another host.
 */
export function lockHeldBy(holder: LockHolder): string | undefined {
  const pid = holder.pid;
  if (pid === undefined) return Date.now() - holder.mtimeMs < LOCK_SETTLE_MS ? 'a process still writing its pid' : undefined;
  const here = localProcess();
  if (here === undefined || holder.bootId === undefined || holder.pidNamespace === undefined || holder.startTicks === undefined) return heldByPidAndHost(holder, pid);
  if (holder.bootId !== here.bootId) {
    // Written under another kernel: an earlier boot of this machine, which ended the holder, or another machine.
    if (holder.host === undefined || holder.host === hostname() || holder.onLocalDisk === true) return undefined;
    return `pid ${pid} on host ${holder.host}`;
  }
  if (holder.pidNamespace === here.pidNamespace) {
    const seen = procStatOf(pid);
    // Not in /proc but alive: hidden by hidepid (another user's), so its start time cannot be read.
    if (seen === undefined) return isAlive(pid) ? `pid ${pid}` : undefined;
    // Another start time: a later process given the same pid. A zombie has let go.
    if (seen.pid !== pid || seen.startTicks !== holder.startTicks || seen.state === 'Z' || seen.state === 'X') return undefined;
    return pid === process.pid ? `this process (pid ${pid})` : `pid ${pid}`;
  }
  // Another container on this kernel: its pid means nothing here.
  if (holder.answered === false) return undefined;
  const where = `pid ${pid} in pid namespace ${holder.pidNamespace}`;
  const host = holder.host === undefined ? [] : [`host ${holder.host}`];
  if (holder.answered === true) return `${where} (${host.length > 0 ? host[0] : 'this machine'})`;
  const started = startedAt(holder.startTicks);
  const facts = [...host, ...(started === undefined ? [] : [`started ${started}`])].join(', ');
  return `${where} on this machine (${facts}${facts === '' ? '' : '; '}it cannot be checked from here: if it is gone, remove the lock file)`;
}

/** The rule for a lock that names only pid and host. */
function heldByPidAndHost(holder: LockHolder, pid: number): string | undefined {
  if (holder.host !== undefined && holder.host !== hostname()) return `pid ${pid} on host ${holder.host}`;
  if (pid === process.pid) return `this process (pid ${pid})`;
  return isAlive(pid) ? `pid ${pid}` : undefined;
}

/** The lock's holder as the file says, or undefined when there is no lock. */
export async function readLock(lockPath: string): Promise<LockHolder | undefined> {
  const stats = await lstatOrUndefined(lockPath);
  if (stats === undefined) return undefined;
  const holder: LockHolder = {
    pid: undefined,
    host: undefined,
    token: undefined,
    purpose: undefined,
    ino: stats.ino,
    mtimeMs: stats.mtimeMs,
    bootId: undefined,
    pidNamespace: undefined,
    startTicks: undefined,
    netNamespace: undefined,
    answered: undefined,
    onLocalDisk: undefined,
  };
  if (!stats.isFile()) return holder;
  try {
    const handle = await open(lockPath, READ_FLAGS);
    try {
      const buffer = Buffer.alloc(512);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      const [pidLine, hostLine, tokenLine, purposeLine, processLine] = buffer.subarray(0, bytesRead).toString('utf8').split('\n');
      if (pidLine !== undefined && /^[1-9][0-9]{0,9}$/.test(pidLine)) holder.pid = Number(pidLine);
      if (hostLine !== undefined && hostLine !== '') holder.host = hostLine;
      if (tokenLine !== undefined && tokenLine !== '') holder.token = tokenLine;
      if (purposeLine !== undefined && purposeLine !== '') holder.purpose = purposeLine;
      if (processLine !== undefined) readProcessLine(processLine, holder);
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
  }
  // What lockHeldBy cannot find out synchronously, asked only where it decides.
  const here = localProcess();
  if (here !== undefined && holder.pid !== undefined && holder.bootId !== undefined && holder.pidNamespace !== undefined) {
    if (holder.bootId === here.bootId) {
      if (holder.pidNamespace !== here.pidNamespace && holder.netNamespace === here.netNamespace && holder.token !== undefined) holder.answered = await answers(holder.token);
    } else if (holder.host !== undefined && holder.host !== hostname()) {
      holder.onLocalDisk = await isOnLocalDisk(lockPath);
    }
  }
  return holder;
}

/** Removes the lock if it is still the one `token` took (a takeover by someone else is left alone). */
export async function releaseLock(lockPath: string, token: string): Promise<void> {
  try {
    const holder = await readLock(lockPath);
    if (holder?.token === token && holder.pid === process.pid) await unlink(lockPath).catch(() => {});
  } finally {
    // Only now: while the file names this process, its socket must answer.
    sockets.get(token)?.close();
    sockets.delete(token);
  }
}

/** Whether statfs's f_type names a filesystem only this machine writes. */
export function isLocalDiskType(type: number): boolean {
  return LOCAL_DISK_TYPES.has(type >>> 0);
}

function lockText(token: string, purpose: string | undefined, here: LocalProcess | undefined, listening: boolean): string {
  const head = `${process.pid}\n${hostname()}\n${token}\n`;
  if (here === undefined) return purpose === undefined ? head : `${head}${purpose}\n`;
  const net = listening ? ` netns=${here.netNamespace}` : '';
  return `${head}${purpose ?? ''}\nboot=${here.bootId} pidns=${here.pidNamespace} start=${here.startTicks}${net}\n`;
}

/** The fifth line; all of boot, pidns and start, or nothing (a lock judged by pid and host). */
function readProcessLine(line: string, holder: LockHolder): void {
  const fields = new Map<string, string>();
  for (const pair of line.split(' ')) {
    const eq = pair.indexOf('=');
    if (eq > 0) fields.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  const bootId = fields.get('boot');
  const pidNamespace = count(fields.get('pidns'));
  const startTicks = count(fields.get('start'));
  if (bootId === undefined || !isBootId(bootId) || pidNamespace === undefined || startTicks === undefined) return;
  holder.bootId = bootId;
  holder.pidNamespace = pidNamespace;
  holder.startTicks = startTicks;
  holder.netNamespace = count(fields.get('netns'));
}

function count(text: string | undefined): number | undefined {
  if (text === undefined || !/^[0-9]{1,19}$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** Listens on the holder's socket; undefined where that fails (the lock is then judged without it). */
function listenAsHolder(token: string): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const server = createServer((connection) => connection.destroy());
    server.on('error', () => resolve(undefined));
    try {
      server.listen({ path: `${SOCKET_PREFIX}${token}` }, () => {
        server.unref(); // a lock never keeps the process alive
        resolve(server);
      });
    } catch {
      resolve(undefined);
    }
  });
}

/** Whether a holder's socket answers: false when the kernel refuses (nobody listens: the holder is gone), undefined when unsure. */
function answers(token: string): Promise<boolean | undefined> {
  return new Promise((resolve) => {
    const connection = createConnection({ path: `${SOCKET_PREFIX}${token}` });
    const timer = setTimeout(() => {
      connection.destroy();
      resolve(undefined);
    }, PROBE_TIMEOUT_MS);
    connection.on('connect', () => {
      clearTimeout(timer);
      connection.destroy();
      resolve(true);
    });
    connection.on('error', (error) => {
      clearTimeout(timer);
      const code = errorCode(error);
      // EAGAIN: its backlog is full, so it listens.
      resolve(code === 'ECONNREFUSED' || code === 'ENOENT' ? false : code === 'EAGAIN' ? true : undefined);
    });
  });
}

async function isOnLocalDisk(file: string): Promise<boolean> {
  try {
    return isLocalDiskType((await statfs(file)).type);
  } catch {
    return false;
  }
}
