// systemd's Type=notify through a real notification socket: an AF_UNIX datagram listener the test
// owns (test/support/notify-listener.py, which also looks at the mountpoint as each datagram
// arrives), the daemon started as a child with NOTIFY_SOCKET as systemd starts it. STATUS lines
// come while servers connect, READY=1 only once `ls` through the mount works, STOPPING=1 on
// SIGTERM and nothing after; a mount that fails says no READY=1 and exits nonzero; WATCHDOG=1
// comes every half WATCHDOG_USEC while healthy, never when WATCHDOG_PID names another process;
// no process the daemon starts inherits NOTIFY_SOCKET or WATCHDOG_*. Every message comes from
// the daemon's own pid (NotifyAccess=main).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, readdir, writeFile, chmod, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { daemonEnv, exitOf, isAlive, stopChild } from '../support/children.js';
import { cleanupMounts, mountsUnder } from '../support/fuse-harness.js';
import { makeTestDir, SKILLS_MOUNT, SKILLS_SERVE } from '../support/mount-harness.js';
import { delay, waitFor } from '../support/poll.js';
import { requireFuse } from '../support/require-fuse.js';
import { writeSkill } from '../support/skill-builder.js';

requireFuse();

const LISTENER = fileURLToPath(new URL('../support/notify-listener.py', import.meta.url));
const NOTIFY_VARIABLES = ['NOTIFY_SOCKET', 'WATCHDOG_USEC', 'WATCHDOG_PID'];

interface Datagram {
  message: string;
  pid: number | null;
  atMs: number;
  probe?: { mounted: boolean; ls?: string[]; error?: string };
}

interface Listener {
  readonly socketPath: string;
  datagrams(): Datagram[];
  messages(): string[];
  waitFor(what: string, accept: (datagrams: Datagram[]) => boolean, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

interface Daemon {
  readonly child: ChildProcess;
  readonly mountpoint: string;
  log(): string;
  stop(): Promise<number | null>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The notification socket at DIR/notify (or `socketPath`), its datagrams as they arrive (with a look at `probe`, the mountpoint, for each). */
async function listen(dir: string, probe: string, socketPath = path.join(dir, 'notify')): Promise<Listener> {
  const child = spawn('python3', [LISTENER, socketPath, '--probe', probe], { stdio: ['pipe', 'pipe', 'pipe'] });
  const datagrams: Datagram[] = [];
  let stderr = '';
  let buffered = '';
  let listening = false;
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    for (let newline = buffered.indexOf('\n'); newline !== -1; newline = buffered.indexOf('\n')) {
      const record = JSON.parse(buffered.slice(0, newline)) as Datagram | { listening: string };
      buffered = buffered.slice(newline + 1);
      if ('listening' in record) listening = true;
      else datagrams.push(record);
    }
  });
  const stop = async () => {
    child.stdin!.end();
    await stopChild(child, { graceMs: 2_000 });
  };
  cleanups.push(stop);
  await waitFor(() => listening || child.exitCode !== null, 10_000, 'the notify listener to bind its socket');
  if (!listening) throw new Error(`the notify listener did not start: ${stderr}`);
  return {
    socketPath,
    datagrams: () => [...datagrams],
    messages: () => datagrams.map((datagram) => datagram.message),
    async waitFor(what, accept, timeoutMs = 30_000) {
      await waitFor(() => accept(datagrams), timeoutMs, `${what}; received so far: ${JSON.stringify(datagrams.map((d) => d.message))}`);
    },
    stop,
  };
}

/** A folder served by skills-serve (label "docs"), a config naming it, and DIR/mnt. */
async function world(serverCommand?: { command: string; args: string[] }): Promise<{ dir: string; config: string; mountpoint: string }> {
  const dir = await makeTestDir();
  cleanups.push(() => cleanupMounts(dir));
  const skills = path.join(dir, 'skills');
  await writeSkill(skills, 'alpha');
  const config = path.join(dir, 'config.json');
  await writeFile(config, JSON.stringify({ mcpServers: { docs: serverCommand ?? { command: process.execPath, args: [SKILLS_SERVE, skills] } } }));
  return { dir, config, mountpoint: path.join(dir, 'mnt') };
}

/** skills-mount MOUNTPOINT --config CONFIG as systemd starts it: NOTIFY_SOCKET (and `extraEnv`) in its environment. */
function startDaemon(options: { config: string; mountpoint: string; env: NodeJS.ProcessEnv; command?: string[] }): Daemon {
  const [program, ...leading] = options.command ?? [process.execPath, SKILLS_MOUNT];
  const child = spawn(program!, [...leading, options.mountpoint, '--config', options.config, '--no-disk-cache'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: daemonEnv({ ...process.env, ...options.env }),
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const stop = async () => (await stopChild(child, { graceMs: 8_000 })).code;
  cleanups.push(async () => void (await stop()));
  return { child, mountpoint: options.mountpoint, log: () => stderr, stop };
}

const isReady = (message: string) => message.split('\n').includes('READY=1');
const watchdogBeats = (datagrams: Datagram[]) => datagrams.filter((datagram) => datagram.message === 'WATCHDOG=1');

describe('skills-mount under a service manager (NOTIFY_SOCKET)', () => {
  it('says STATUS while servers connect, READY=1 only once ls works, STOPPING=1 on SIGTERM, and nothing after; all from its own pid', async () => {
    const { dir, config, mountpoint } = await world();
    const listener = await listen(dir, mountpoint);
    const daemon = startDaemon({ config, mountpoint, env: { NOTIFY_SOCKET: listener.socketPath } });
    await listener.waitFor('READY=1', (datagrams) => datagrams.some((datagram) => isReady(datagram.message)));

    const datagrams = listener.datagrams();
    const readyAt = datagrams.findIndex((datagram) => isReady(datagram.message));
    const before = datagrams.slice(0, readyAt);
    // Servers connecting: STATUS lines only, and the mount not there yet.
    expect(before.length).toBeGreaterThanOrEqual(2);
    for (const datagram of before) {
      expect(datagram.message).toMatch(/^STATUS=[^\n]+$/);
      expect(datagram.probe?.mounted).toBe(false);
    }
    expect(before[0]!.message).toBe(`STATUS=starting 1 server; mounting ${mountpoint}`);
    expect(before.map((datagram) => datagram.message)).toContain(`STATUS=1/1 servers connected; mounting ${mountpoint}`);
    // READY=1: the very moment it arrived, `ls` through the mount showed the server's folder.
    const ready = datagrams[readyAt]!;
    expect(ready.message).toMatch(new RegExp(`^READY=1\nSTATUS=mounted ${mountpoint}: 1/1 servers connected: docs; 1 skill; ready in [0-9.]+ s$`));
    expect(ready.probe).toEqual({ mounted: true, ls: ['_approved', 'docs', 'skills.json', 'status.json'] });
    expect(daemon.log()).toMatch(/mounted .* Ctrl-C to unmount/);

    daemon.child.kill('SIGTERM');
    expect((await exitOf(daemon.child)).code).toBe(0);
    // Anything sent late would still be queued: give it time to arrive.
    await delay(1_000);
    const messages = listener.messages();
    expect(messages.filter(isReady)).toHaveLength(1);
    expect(messages.slice(readyAt + 1)).toEqual(['STOPPING=1']);
    expect(messages).not.toContain('WATCHDOG=1');
    expect(new Set(listener.datagrams().map((datagram) => datagram.pid))).toEqual(new Set([daemon.child.pid]));
    expect(await mountsUnder(mountpoint)).toEqual([]);
  });

  it('a mount that fails sends no READY=1 and exits nonzero: a mountpoint that is not empty, a config that cannot be read', async () => {
    const { dir, config, mountpoint } = await world();
    await mkdir(mountpoint);
    await writeFile(path.join(mountpoint, 'someone-elses-file'), 'x\n');
    const listener = await listen(dir, mountpoint);
    const notEmpty = startDaemon({ config, mountpoint, env: { NOTIFY_SOCKET: listener.socketPath } });
    const notEmptyExit = await Promise.race([exitOf(notEmpty.child), delay(30_000).then(() => 'still running' as const)]);
    expect(notEmptyExit).toEqual({ code: 2, signal: null });
    expect(notEmpty.log()).toMatch(/is not empty/);

    const missing = startDaemon({ config: path.join(dir, 'no-such-config.json'), mountpoint: path.join(dir, 'mnt2'), env: { NOTIFY_SOCKET: listener.socketPath } });
    const missingExit = await Promise.race([exitOf(missing.child), delay(30_000).then(() => 'still running' as const)]);
    expect(missingExit).toEqual({ code: 2, signal: null });
    expect(missing.log()).toMatch(/cannot read config .*no-such-config\.json/);

    await delay(500);
    expect(listener.messages().filter(isReady)).toEqual([]);
    expect(await mountsUnder(dir)).toEqual([]);
  });

  it('feeds the watchdog every half WATCHDOG_USEC while the mount answers (WATCHDOG_PID its own pid, as systemd sets it)', async () => {
    const { dir, config, mountpoint } = await world();
    const listener = await listen(dir, mountpoint);
    // `exec` keeps the shell's pid: WATCHDOG_PID names the daemon itself, as systemd does.
    const daemon = startDaemon({
      config,
      mountpoint,
      env: { NOTIFY_SOCKET: listener.socketPath, WATCHDOG_USEC: '600000' },
      command: ['sh', '-c', 'WATCHDOG_PID=$$ exec "$0" "$@"', process.execPath, SKILLS_MOUNT],
    });
    await listener.waitFor('READY=1', (datagrams) => datagrams.some((datagram) => isReady(datagram.message)));
    await listener.waitFor('five WATCHDOG=1', (datagrams) => watchdogBeats(datagrams).length >= 5, 10_000);
    const beats = watchdogBeats(listener.datagrams());
    // 300 ms apart (half of 600 ms), well inside the 600 ms the manager allows; each while the mount answered.
    for (let i = 1; i < beats.length; i++) expect(beats[i]!.atMs - beats[i - 1]!.atMs).toBeLessThan(600);
    for (const beat of beats) expect(beat.probe).toMatchObject({ mounted: true, ls: ['_approved', 'docs', 'skills.json', 'status.json'] });
    const readyAt = listener.datagrams().findIndex((datagram) => isReady(datagram.message));
    expect(listener.datagrams().slice(0, readyAt).map((datagram) => datagram.message)).not.toContain('WATCHDOG=1');
    expect(new Set(listener.datagrams().map((datagram) => datagram.pid))).toEqual(new Set([daemon.child.pid]));

    expect(await daemon.stop()).toBe(0);
    await delay(1_000);
    expect(listener.messages().at(-1)).toBe('STOPPING=1');
  });

  it('sends no WATCHDOG=1 when WATCHDOG_PID names another process', async () => {
    const { dir, config, mountpoint } = await world();
    const listener = await listen(dir, mountpoint);
    const daemon = startDaemon({ config, mountpoint, env: { NOTIFY_SOCKET: listener.socketPath, WATCHDOG_USEC: '600000', WATCHDOG_PID: String(process.pid) } });
    await listener.waitFor('READY=1', (datagrams) => datagrams.some((datagram) => isReady(datagram.message)));
    // Five beats' time.
    await delay(1_800);
    expect(watchdogBeats(listener.datagrams())).toEqual([]);
    expect(await daemon.stop()).toBe(0);
  });

  it('speaks to an abstract socket too (NOTIFY_SOCKET=@NAME)', async () => {
    const { dir, config, mountpoint } = await world();
    const listener = await listen(dir, mountpoint, `@${path.basename(dir)}/notify`);
    const daemon = startDaemon({ config, mountpoint, env: { NOTIFY_SOCKET: listener.socketPath } });
    await listener.waitFor('READY=1', (datagrams) => datagrams.some((datagram) => isReady(datagram.message)));
    expect(listener.datagrams().find((datagram) => isReady(datagram.message))!.probe).toMatchObject({ mounted: true });
    expect(await daemon.stop()).toBe(0);
    await listener.waitFor('STOPPING=1', (datagrams) => datagrams.at(-1)?.message === 'STOPPING=1', 5_000);
  });

  it('no process it starts (its stdio server, its helpers) inherits NOTIFY_SOCKET or WATCHDOG_*', async () => {
    const dir = await makeTestDir();
    // The server: a script that writes its environment down, then serves.
    const envFile = path.join(dir, 'server-env');
    const serverScript = path.join(dir, 'server.sh');
    await writeFile(serverScript, `#!/bin/sh\nenv > '${envFile}'\nexec '${process.execPath}' '${SKILLS_SERVE}' '${path.join(dir, 'served')}'\n`);
    await chmod(serverScript, 0o755);
    await writeSkill(path.join(dir, 'served'), 'alpha');
    const config = path.join(dir, 'config.json');
    await writeFile(config, JSON.stringify({ mcpServers: { docs: { command: serverScript, env: { MARKER: 'passed-on' } } } }));
    const mountpoint = path.join(dir, 'mnt');
    cleanups.push(() => cleanupMounts(dir));
    const listener = await listen(dir, mountpoint);
    const daemon = startDaemon({ config, mountpoint, env: { NOTIFY_SOCKET: listener.socketPath, WATCHDOG_USEC: '600000', WATCHDOG_PID: '1' } });
    await listener.waitFor('READY=1', (datagrams) => datagrams.some((datagram) => isReady(datagram.message)));

    const serverEnv = await readFile(envFile, 'utf8');
    expect(serverEnv).toContain('MARKER=passed-on');
    for (const name of NOTIFY_VARIABLES) expect(serverEnv).not.toMatch(new RegExp(`^${name}=`, 'm'));
    // Every process below the daemon: the server, the watchdog shell that unmounts after a crash, probes.
    const descendants = await descendantsOf(daemon.child.pid!);
    expect(descendants.length).toBeGreaterThanOrEqual(2);
    for (const { pid, environ } of descendants) {
      for (const name of NOTIFY_VARIABLES) expect(environ.some((entry) => entry.startsWith(`${name}=`)), `pid ${pid} has ${name}`).toBe(false);
    }
    expect(await daemon.stop()).toBe(0);
    for (const { pid } of descendants) await waitFor(() => !isAlive(pid), 10_000, `pid ${pid} to end with the daemon`);
  });
});

/** The live processes below `root` (from /proc), each with its environment. */
async function descendantsOf(root: number): Promise<Array<{ pid: number; environ: string[] }>> {
  const parents = new Map<number, number>();
  for (const name of await readdir('/proc')) {
    if (!/^[0-9]+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => undefined);
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
    if (stat !== undefined) parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
  }
  const below = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, parent] of parents) {
      if (below.has(parent) && !below.has(pid)) {
        below.add(pid);
        grew = true;
      }
    }
  }
  below.delete(root);
  const found: Array<{ pid: number; environ: string[] }> = [];
  for (const pid of below) {
    const environ = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => undefined);
    if (environ !== undefined) found.push({ pid, environ: environ.split('\0') });
  }
  return found;
}
