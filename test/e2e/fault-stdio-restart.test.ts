// A stdio server that dies under a real mount: in-flight reads fail fast with EIO,
// verified cached files keep being served, skills.json shows the outage, and the server
// is restarted with capped exponential backoff (also when it crashes right after connecting).
import { rm, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Connection } from '../../src/mcp/connection.js';
import { FAULT_PROXY, childPids, proxiedServeEntry, serverStates, timed } from '../support/fault-harness.js';
import { run, runBytes } from '../support/fuse-harness.js';
import { CORPUS_DIR, SKILLS_SERVE, makeTestDir, startMount, type RunningMount } from '../support/mount-harness.js';
import { waitFor } from '../support/poll.js';
import { requireFuse } from '../support/require-fuse.js';

requireFuse();

/** The delays of "retrying in N s" log lines for one label, in seconds, in order. */
function retryDelays(log: string, label: string): number[] {
  return [...log.matchAll(new RegExp(`\\[${label}\\] [^\\n]*; retrying in ([\\d.]+) s`, 'g'))].map((match) => Number(match[1]));
}

describe('a stdio server killed with SIGKILL under a live mount', () => {
  let mount: RunningMount;
  let gate: string;
  const cached = 'commit-message/SKILL.md';
  const uncached = 'api-reference/SKILL.md';
  // The proxy swallows every request for this file: a read that is in flight when the server dies.
  const hung = 'pdf-forms/assets/w9-template.pdf';

  beforeAll(async () => {
    const dir = await makeTestDir();
    gate = path.join(dir, 'gate');
    // --timeout 30: anything that fails within a few seconds failed fast, not by deadline.
    mount = await startMount({
      dir,
      config: { corpus: proxiedServeEntry(CORPUS_DIR, { gate, drop: 'w9-template\\.pdf' }) },
      args: ['--timeout', '30'],
    });
  });
  afterAll(async () => {
    await mount?.stop();
  });

  const inMount = (file: string) => path.join(mount.mountpoint, 'corpus', file);

  it('fails the in-flight read fast, keeps serving verified cached files, shows the outage, then reconnects', async () => {
    const cachedBytes = await readFile(path.join(CORPUS_DIR, cached));
    expect((await runBytes('cat', [inMount(cached)])).stdout.equals(cachedBytes)).toBe(true);

    // A read the server will never answer, then the server dies (and is held down by the gate).
    const inflight = runBytes('cat', [inMount(hung)], 60_000);
    await mount.waitForLog(/fault-proxy: dropped .*w9-template/);
    const [proxyPid] = await childPids(mount.child.pid!, /fault-proxy/);
    expect(proxyPid).toBeGreaterThan(0);
    await writeFile(gate, 'down');
    const killedAt = performance.now();
    process.kill(proxyPid!, 'SIGKILL');

    const failed = await inflight;
    const failedAfterMs = performance.now() - killedAt;
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toMatch(/Input\/output error/);
    expect(failedAfterMs).toBeLessThan(5_000);
    await mount.waitForLog(/\[corpus\] connection closed by the server; retrying in 0\.5 s/);

    // While the server is down: verified bytes from the cache, EIO (fast) for the rest, state in skills.json.
    expect((await runBytes('cat', [inMount(cached)])).stdout.equals(cachedBytes)).toBe(true);
    const down = await timed(() => run('cat', [inMount(uncached)]));
    expect(down.value.stderr).toMatch(/Input\/output error/);
    expect(down.elapsedMs).toBeLessThan(2_000);
    const [state] = await serverStates(mount.mountpoint);
    expect(state).toMatchObject({ label: 'corpus', state: expect.stringMatching(/^(failed|connecting)$/) });
    expect(state!.reason).toMatch(/connection closed|cannot connect/);

    // Held down: every failed restart doubles the delay.
    await mount.waitForLog(/\[corpus\] cannot connect[^\n]*; retrying in 2 s/, 15_000);
    expect(retryDelays(mount.log(), 'corpus').slice(0, 3)).toEqual([0.5, 1, 2]);
    expect((await runBytes('cat', [inMount(cached)])).stdout.equals(cachedBytes)).toBe(true);

    // Let it come back: the next attempt connects, the catalog is rediscovered, reads work again.
    await rm(gate);
    await waitFor(async () => (await serverStates(mount.mountpoint))[0]?.state === 'connected', 20_000, 'state connected');
    expect((mount.log().match(/\[corpus\] connected/g) ?? []).length).toBe(2);
    const back = await runBytes('cat', [inMount(uncached)]);
    expect(back.stdout.equals(await readFile(path.join(CORPUS_DIR, uncached)))).toBe(true);
    expect(mount.child.exitCode).toBeNull();
  });

  it('a second kill is survived the same way', async () => {
    const [proxyPid] = await childPids(mount.child.pid!, /fault-proxy/);
    process.kill(proxyPid!, 'SIGKILL');
    await waitFor(() => (mount.log().match(/\[corpus\] connected/g) ?? []).length === 3, 20_000, 'third connect');
    const file = 'brand-fonts/SKILL.md';
    expect((await runBytes('cat', [inMount(file)])).stdout.equals(await readFile(path.join(CORPUS_DIR, file)))).toBe(true);
  });
});

describe('reconnect backoff', () => {
  async function collectRetries(command: string[], minBackoffMs: number, maxBackoffMs: number, count: number): Promise<number[]> {
    const lines: string[] = [];
    const connection = new Connection(
      'crashy',
      { kind: 'stdio', command: command[0]!, args: command.slice(1), env: {}, cwd: undefined },
      { timeoutMs: 5_000, log: (line) => lines.push(line), minBackoffMs, maxBackoffMs },
    );
    try {
      await connection.start();
      await waitFor(() => retryDelays(lines.join('\n'), 'crashy').length >= count, 30_000, `${count} retries`);
      return retryDelays(lines.join('\n'), 'crashy').slice(0, count).map((seconds) => Math.round(seconds * 1000));
    } finally {
      await connection.close();
    }
  }

  it('a server that cannot start: the delay doubles up to the cap', async () => {
    const delays = await collectRetries([process.execPath, '-e', 'process.exit(3)'], 40, 200, 6);
    expect(delays).toEqual([40, 80, 160, 200, 200, 200]);
  });

  it('a server that crashes right after connecting still backs off (a short-lived connection does not reset it)', async () => {
    const command = [process.execPath, FAULT_PROXY, '--die-after', '2', '--', process.execPath, SKILLS_SERVE, path.join(CORPUS_DIR, 'commit-message')];
    const delays = await collectRetries(command, 40, 400, 4);
    expect(delays).toEqual([40, 80, 160, 320]);
  });
});
