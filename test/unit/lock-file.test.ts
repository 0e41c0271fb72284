// The lock file's liveness rule where pids and hostnames repeat (containers): a holder is alive
// only under this boot, in our pid namespace, with its pid and its start time; one in another pid
// namespace only while its socket answers; older lock files keep the pid-and-host rule.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { readFile, statfs, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { hostname } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isLocalDiskType, readLock, releaseLock, tryLock, type LockHolder } from '../../src/lock-file.js';
import { parseProcStat } from '../../src/process-identity.js';
import { stopChild } from '../support/children.js';
import { TempDirs } from '../support/temp-dir.js';

const temps = new TempDirs('lock-file-');
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) await stopChild(child, { signal: 'SIGKILL' });
  await temps.removeAll();
});

// Read here without the code under test.
const BOOT_ID = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
const PID_NS = statSync('/proc/self/ns/pid').ino;
const NET_NS = statSync('/proc/self/ns/net').ino;
/** Field 22, after "pid (comm) ": the command name is read from /proc/<pid>/comm (vitest's has spaces and parentheses). */
function startOf(pid: number): number {
  const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').replace(/\n$/, '');
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  expect(stat.startsWith(`${pid} (${comm}) `)).toBe(true);
  return Number(stat.slice(`${pid} (${comm}) `.length).split(' ')[22 - 3]);
}
const OTHER_BOOT = BOOT_ID.replace(/^./, (c) => (c === '0' ? '1' : '0'));
/** No process of this test is in it: nsfs inodes are near 4026531836, this is far past them. */
const OTHER_NS = 4_026_999_999;

/** A lock as a holder with these facts would write it. */
function lockText(pid: number, facts: { host?: string; token?: string; purpose?: string; boot?: string; pidns?: number; start?: number; netns?: number }): string {
  const line = `boot=${facts.boot ?? BOOT_ID} pidns=${facts.pidns ?? PID_NS} start=${facts.start ?? 1}${facts.netns === undefined ? '' : ` netns=${facts.netns}`}`;
  return `${pid}\n${facts.host ?? hostname()}\n${facts.token ?? '0123456789abcdef'}\n${facts.purpose ?? ''}\n${line}\n`;
}

async function lockPathWith(text: string): Promise<string> {
  const lockPath = path.join(await temps.make(), '.lock');
  await writeFile(lockPath, text, { mode: 0o600 });
  return lockPath;
}

/** One tryLock: the holder's words, or 'taken' with the stale holders it took over from. */
async function attempt(lockPath: string): Promise<{ heldBy: string } | { taken: LockHolder[] }> {
  const stale: LockHolder[] = [];
  const result = await tryLock(lockPath, (holder) => stale.push(holder));
  if ('heldBy' in result) return { heldBy: result.heldBy };
  await releaseLock(lockPath, result.token);
  return { taken: stale };
}

function connects(token: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ path: `\0skills-mount-lock-${token}` });
    socket.on('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

async function sleeper(): Promise<ChildProcess & { pid: number }> {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  children.push(child);
  await new Promise((resolve, reject) => child.once('spawn', resolve).once('error', reject));
  return child as ChildProcess & { pid: number };
}

describe('parseProcStat', () => {
  it('counts fields after the last parenthesis: a command name may hold spaces and parentheses', () => {
    const rest = '0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 1234 8192 10';
    expect(parseProcStat(`1 (a b) c) S ${rest}\n`)).toEqual({ pid: 1, state: 'S', startTicks: 1234 });
    expect(parseProcStat(`7 (x) Z 1 2) R ${rest}`)).toEqual({ pid: 7, state: 'R', startTicks: 1234 });
    expect(parseProcStat(`42 () S ${rest}`)).toEqual({ pid: 42, state: 'S', startTicks: 1234 });
  });

  it('refuses what is not a stat line', () => {
    for (const text of ['', 'garbage', '1 (sh) S 0 1', 'x (sh) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 1234', '1 (sh) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 -5']) {
      expect(parseProcStat(text), text).toBeUndefined();
    }
  });

  it('reads this process', () => {
    expect(parseProcStat(readFileSync('/proc/self/stat', 'utf8'))).toEqual({ pid: process.pid, state: 'R', startTicks: startOf(process.pid) });
  });
});

describe('the lock file', () => {
  it('records pid, host, token, the purpose line and this process beyond its pid; its socket answers until it is released', async () => {
    const lockPath = path.join(await temps.make(), '.lock');
    const taken = await tryLock(lockPath);
    if (!('token' in taken)) throw new Error(`held by ${taken.heldBy}`);
    expect(await readFile(lockPath, 'utf8')).toBe(`${process.pid}\n${hostname()}\n${taken.token}\n\nboot=${BOOT_ID} pidns=${PID_NS} start=${startOf(process.pid)} netns=${NET_NS}\n`);
    expect(await readLock(lockPath)).toMatchObject({ pid: process.pid, host: hostname(), token: taken.token, purpose: undefined, bootId: BOOT_ID, pidNamespace: PID_NS, startTicks: startOf(process.pid), netNamespace: NET_NS });
    expect(await connects(taken.token)).toBe(true);
    expect(await attempt(lockPath)).toEqual({ heldBy: `this process (pid ${process.pid})` });
    await releaseLock(lockPath, taken.token);
    expect(await readLock(lockPath)).toBeUndefined();
    expect(await connects(taken.token)).toBe(false);
  });

  it('keeps a purpose on the fourth line, where older versions read it', async () => {
    const lockPath = path.join(await temps.make(), '.lock');
    const taken = await tryLock(lockPath, () => {}, 'prune');
    if (!('token' in taken)) throw new Error(`held by ${taken.heldBy}`);
    const lines = (await readFile(lockPath, 'utf8')).split('\n');
    expect(lines.slice(0, 4)).toEqual([String(process.pid), hostname(), taken.token, 'prune']);
    expect((await readLock(lockPath))?.purpose).toBe('prune');
    await releaseLock(lockPath, taken.token);
  });

  it('takes over a lock naming our pid with another start time: a predecessor given the same pid', async () => {
    const lockPath = await lockPathWith(lockText(process.pid, { start: startOf(process.pid) - 1 }));
    const result = await attempt(lockPath);
    expect(result).toEqual({ taken: [expect.objectContaining({ pid: process.pid, startTicks: startOf(process.pid) - 1 })] });
  });

  it('is held by this process when the lock names our pid and our start time', async () => {
    const lockPath = await lockPathWith(lockText(process.pid, { start: startOf(process.pid), token: 'fedcba9876543210' }));
    expect(await attempt(lockPath)).toEqual({ heldBy: `this process (pid ${process.pid})` });
  });

  it('is held by a live process of this namespace with that start time, and stale once it is killed', async () => {
    const child = await sleeper();
    const lockPath = await lockPathWith(lockText(child.pid, { start: startOf(child.pid) }));
    expect(await attempt(lockPath)).toEqual({ heldBy: `pid ${child.pid}` });
    await stopChild(child, { signal: 'SIGKILL' });
    expect(await attempt(lockPath)).toEqual({ taken: [expect.objectContaining({ pid: child.pid })] });
  });

  it('takes over a lock naming a live pid with another start time: not the process that took it', async () => {
    const child = await sleeper();
    const lockPath = await lockPathWith(lockText(child.pid, { start: startOf(child.pid) + 1 }));
    expect(await attempt(lockPath)).toEqual({ taken: [expect.objectContaining({ pid: child.pid })] });
  });

  it('takes over a lock from another boot naming this host, or on a local disk from another host', async () => {
    const ours = await lockPathWith(lockText(process.pid, { boot: OTHER_BOOT, start: startOf(process.pid) }));
    expect(await attempt(ours)).toEqual({ taken: [expect.objectContaining({ bootId: OTHER_BOOT })] });
    const other = await lockPathWith(lockText(1, { boot: OTHER_BOOT, host: 'previous-pod-7f9c' }));
    expect(isLocalDiskType((await statfs(other)).type)).toBe(true); // the temp dir: ext4 or tmpfs
    expect(await attempt(other)).toEqual({ taken: [expect.objectContaining({ host: 'previous-pod-7f9c', onLocalDisk: true })] });
  });

  it('counts only disks of this machine as local: another machine may hold a lock on NFS, SMB, FUSE or 9p', () => {
    for (const type of [0xef53, 0x01021994, 0x58465342, 0x9123683e, 0x794c7630]) expect(isLocalDiskType(type), type.toString(16)).toBe(true);
    for (const type of [0x6969, 0xff534d42, 0xfe534d42, 0x65735546, 0x01021997, 0x00c36400, 0]) expect(isLocalDiskType(type), type.toString(16)).toBe(false);
  });

  it('in another pid namespace sharing our network one (a pod\'s restarted container): held while the holder answers, stale once it is killed', async () => {
    const token = 'a1b2c3d4e5f60718';
    // The holder's socket, as tryLock opens it, in a process of its own that SIGKILL ends.
    const holder = spawn(process.execPath, ['-e', `require('node:net').createServer((c) => c.destroy()).listen({ path: '\\0skills-mount-lock-' + process.argv[1] }, () => console.log('ready'))`, token], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(holder);
    await new Promise((resolve) => holder.stdout?.once('data', resolve));
    // pid 1 there, as in every container; its start time means nothing here.
    const lockPath = await lockPathWith(lockText(1, { token, pidns: OTHER_NS, netns: NET_NS, start: 5 }));
    expect(await attempt(lockPath)).toEqual({ heldBy: `pid 1 in pid namespace ${OTHER_NS} (host ${hostname()})` });
    await stopChild(holder, { signal: 'SIGKILL' });
    expect(await attempt(lockPath)).toEqual({ taken: [expect.objectContaining({ pid: 1, pidNamespace: OTHER_NS, answered: false })] });
  });

  it('in another pid namespace it cannot ask (another network namespace, or no socket): held, saying what holds it and what to do', async () => {
    const pattern = new RegExp(
      `^pid 1 in pid namespace ${OTHER_NS} on this machine \\(host pod-b, started \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ; it cannot be checked from here: if it is gone, remove the lock file\\)$`,
    );
    for (const netns of [OTHER_NS, undefined]) {
      const lockPath = await lockPathWith(lockText(1, { host: 'pod-b', pidns: OTHER_NS, netns, start: 5 }));
      const result = await attempt(lockPath);
      expect('heldBy' in result && result.heldBy).toMatch(pattern);
    }
  });

  it('judges a lock of older versions (no fifth line, or one it cannot read) by pid and host, as they did', async () => {
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    expect(dead).toBeGreaterThan(0);
    for (const tail of ['', 'prune\n', `\nboot=not-a-boot-id pidns=${OTHER_NS} start=5\n`, `\nboot=${OTHER_BOOT} start=5\n`]) {
      const lines = (pid: number, host = hostname()) => `${pid}\n${host}\n0123456789abcdef\n${tail}`;
      // The parent of this test process runs as long as the test does.
      expect(await attempt(await lockPathWith(lines(process.ppid)))).toEqual({ heldBy: `pid ${process.ppid}` });
      expect(await attempt(await lockPathWith(lines(process.pid)))).toEqual({ heldBy: `this process (pid ${process.pid})` });
      expect(await attempt(await lockPathWith(lines(1, 'some-other-host')))).toEqual({ heldBy: 'pid 1 on host some-other-host' });
      expect(await attempt(await lockPathWith(lines(dead)))).toEqual({ taken: [expect.objectContaining({ pid: dead, bootId: undefined })] });
    }
    expect(await attempt(await lockPathWith(`${process.ppid}\n${hostname()}\n`))).toEqual({ heldBy: `pid ${process.ppid}` });
  });
});
