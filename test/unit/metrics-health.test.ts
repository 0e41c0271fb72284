// /healthz's verdict with a fake mount table and a fake probe: the reasons a person reads
// (starting, detached, replaced, not answering, failing, stopping), one probe at a time and one
// result a second however many ask, a result up to 5 s old answered at once while the next check
// runs; and the child-process probe's deadline on a child that hangs.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MountHealth, childProbe, statProbe, type MountProbe, type ProbeOutcome } from '../../src/metrics/index.js';

const MOUNTPOINT = '/home/u/.cache/mcp-skills';
const OURS = { fsType: 'fuse.skills-mount', connection: '52' };

function setUp(options: { probe?: MountProbe; table?: () => { fsType: string; connection: string } | undefined } = {}) {
  const clock = { nowMs: 0 };
  let probes = 0;
  const health = new MountHealth({
    mountpoint: MOUNTPOINT,
    findMount: async () => (options.table ?? (() => OURS))(),
    probe: async () => {
      probes += 1;
      return (options.probe ?? (async () => ({ kind: 'ok' }) as ProbeOutcome))();
    },
    probeTimeoutMs: 2_000,
    now: () => clock.nowMs,
  });
  return { health, clock, probes: () => probes };
}

describe('mount health', () => {
  it('is unhealthy while starting, healthy once mounted and the probe answers, unhealthy when stopping', async () => {
    const { health } = setUp();
    expect(await health.check()).toEqual({ healthy: false, reason: `starting: ${MOUNTPOINT} is not mounted yet` });
    health.mounted(OURS);
    expect(await health.check()).toEqual({ healthy: true });
    health.stopping();
    expect(await health.check()).toEqual({ healthy: false, reason: `stopping: unmounting ${MOUNTPOINT}` });
  });

  it('says the mount is gone when the table no longer has it (umount -l), or has another mount there', async () => {
    let row: { fsType: string; connection: string } | undefined = undefined;
    const { health, clock, probes } = setUp({ table: () => row });
    health.mounted(OURS);
    expect(await health.check()).toEqual({ healthy: false, reason: `mount ${MOUNTPOINT} is gone (detached)` });
    // Nothing is probed through a mount that is not there.
    expect(probes()).toBe(0);
    row = { fsType: 'tmpfs', connection: '30' };
    clock.nowMs += 5_000;
    expect(await health.check()).toEqual({ healthy: false, reason: `mount ${MOUNTPOINT} is gone: tmpfs is mounted there now` });
    row = { fsType: 'fuse.skills-mount', connection: '77' };
    clock.nowMs += 5_000;
    expect(await health.check()).toEqual({
      healthy: false,
      reason: `mount ${MOUNTPOINT} is gone: another skills-mount mount is there now (FUSE connection 77, this daemon's was 52)`,
    });
  });

  it('names a probe that timed out or failed', async () => {
    let outcome: ProbeOutcome = { kind: 'timeout' };
    const { health, clock } = setUp({ probe: async () => outcome });
    health.mounted(OURS);
    expect(await health.check()).toEqual({ healthy: false, reason: 'probe through the mount did not answer within 2 s' });
    outcome = { kind: 'error', message: 'Transport endpoint is not connected' };
    clock.nowMs += 5_000;
    expect(await health.check()).toEqual({ healthy: false, reason: 'probe through the mount failed: Transport endpoint is not connected' });
  });

  it('runs one probe at a time and keeps its result for a second, however many ask', async () => {
    let release: (outcome: ProbeOutcome) => void = () => {};
    const { health, clock, probes } = setUp({ probe: () => new Promise((resolve) => (release = resolve)) });
    health.mounted(OURS);
    const storm = Array.from({ length: 100 }, () => health.check());
    await new Promise((resolve) => setImmediate(resolve));
    expect(probes()).toBe(1);
    release({ kind: 'ok' });
    expect(new Set(await Promise.all(storm)).size).toBe(1);
    expect((await storm[0])!.healthy).toBe(true);
    clock.nowMs += 999;
    for (let i = 0; i < 100; i++) await health.check();
    expect(probes()).toBe(1);
    clock.nowMs += 1;
    // A second old: a new check starts, and the last answer is given at once meanwhile.
    expect(await health.check()).toEqual({ healthy: true });
    expect(probes()).toBe(2);
    for (let i = 0; i < 100; i++) expect(await health.check()).toEqual({ healthy: true });
    expect(probes()).toBe(2);
    release({ kind: 'error', message: 'Input/output error' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(await health.check()).toEqual({ healthy: false, reason: 'probe through the mount failed: Input/output error' });
    expect(probes()).toBe(2);
  });

  it('answers a result up to 5 s old at once while the next check runs; past that, the asker waits for the check', async () => {
    let release: (outcome: ProbeOutcome) => void = () => {};
    const { health, clock, probes } = setUp({ probe: () => new Promise((resolve) => (release = resolve)) });
    health.mounted(OURS);
    const first = health.check();
    await new Promise((resolve) => setImmediate(resolve));
    release({ kind: 'ok' });
    expect(await first).toEqual({ healthy: true });
    // 4.9 s old: answered at once, though the probe now hangs.
    clock.nowMs += 4_900;
    expect(await health.check()).toEqual({ healthy: true });
    expect(probes()).toBe(2);
    // 5 s old: no longer answered; the asker gets the check's own result.
    clock.nowMs += 100;
    let answered: unknown;
    const late = health.check().then((report) => (answered = report));
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBeUndefined();
    expect(probes()).toBe(2);
    release({ kind: 'timeout' });
    await late;
    expect(answered).toEqual({ healthy: false, reason: 'probe through the mount did not answer within 2 s' });
  });

  it('never answers a result from before the mount, nor from before a stop', async () => {
    const { health, clock } = setUp();
    health.mounted(OURS);
    expect(await health.check()).toEqual({ healthy: true });
    health.stopping();
    clock.nowMs += 1_500;
    expect(await health.check()).toEqual({ healthy: false, reason: `stopping: unmounting ${MOUNTPOINT}` });
  });

  it('gives up on a probe that never resolves, a second after its deadline', async () => {
    const health = new MountHealth({ mountpoint: MOUNTPOINT, findMount: async () => OURS, probe: () => new Promise(() => {}), probeTimeoutMs: 100 });
    health.mounted(OURS);
    const startedAt = performance.now();
    expect(await health.check()).toEqual({ healthy: false, reason: 'probe through the mount did not answer within 0.1 s' });
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(1_000);
    expect(performance.now() - startedAt).toBeLessThan(3_000);
  });
});

describe('the child-process probe', () => {
  it('kills a child that hangs at the deadline and reports a timeout', async () => {
    const startedAt = performance.now();
    // `sleep` stands for a `cat` blocked in a FUSE request that never gets its answer.
    expect(await childProbe('sleep', ['31.4159'], 300)()).toEqual({ kind: 'timeout' });
    expect(performance.now() - startedAt).toBeLessThan(2_000);
    // Killed, not left behind: nothing runs that command line any more.
    const left = await new Promise<string>((resolve) => execFile('pgrep', ['-f', '^sleep 31.4159$'], (_error, stdout) => resolve(stdout)));
    expect(left).toBe('');
  });

  it('stat: ok on a directory, the reason when it fails', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'skills-mount-probe-'));
    try {
      expect(await statProbe(dir, 2_000)()).toEqual({ kind: 'ok' });
      expect(await statProbe(path.join(dir, 'missing'), 2_000)()).toEqual({ kind: 'error', message: 'No such file or directory' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
