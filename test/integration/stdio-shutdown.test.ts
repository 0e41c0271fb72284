// Item 13 of issue 22: closing a source stops its stdio server for certain. stdin is closed
// first (a well-behaved server exits then), SIGTERM follows after a grace, SIGKILL after
// another; close() resolves only once the server has exited, within a bound. Against a server
// that keeps running after stdin closes, and one that also ignores SIGTERM.
import { afterEach, describe, expect, it } from 'vitest';
import { McpSkillSource } from '../../src/mcp/mcp-skill-source.js';
import { scriptedServer } from '../support/hostile-scenario.js';
import { waitFor } from '../support/poll.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

const GRACE_MS = 500;
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function started(name: string, scenario: Record<string, unknown>) {
  const dir = await makeTempDir('skills-mount-stop-');
  cleanups.push(() => removeDir(dir));
  const lines: string[] = [];
  const source = new McpSkillSource(name, await scriptedServer(dir, name, { listing: true, ...scenario }), {
    timeoutMs: 5_000,
    log: (line) => lines.push(line),
    stopGraceMs: GRACE_MS,
  });
  await source.start();
  expect(source.connection().status).toBe('connected');
  await waitFor(() => lines.some((line) => /server: pid \d+/.test(line)), 5_000, 'the server to say its pid');
  const pid = Number(/server: pid (\d+)/.exec(lines.find((line) => /server: pid \d+/.test(line))!)![1]);
  // Should the test fail, no server outlives it.
  cleanups.push(() => alive(pid) && process.kill(pid, 'SIGKILL'));
  expect(alive(pid)).toBe(true);
  return { source, pid, lines };
}

describe('closing a stdio source', () => {
  it('a server that keeps running after stdin closes gets SIGTERM after the grace, and is gone when close() resolves', async () => {
    const { source, pid } = await started('stays', { keepRunningAfterStdinEnds: true });
    const startedAt = performance.now();
    await source.close();
    const tookMs = performance.now() - startedAt;
    expect(alive(pid)).toBe(false);
    expect(tookMs).toBeGreaterThanOrEqual(GRACE_MS - 50);
    expect(tookMs).toBeLessThan(2 * GRACE_MS + 1_000);
  });

  it('a server that also ignores SIGTERM gets SIGKILL after the second grace, and is gone when close() resolves', async () => {
    const { source, pid, lines } = await started('stubborn', { keepRunningAfterStdinEnds: true, ignoreSigterm: true });
    const startedAt = performance.now();
    await source.close();
    const tookMs = performance.now() - startedAt;
    expect(alive(pid)).toBe(false);
    expect(tookMs).toBeGreaterThanOrEqual(2 * GRACE_MS - 50);
    expect(tookMs).toBeLessThan(3 * GRACE_MS + 1_000);
    // It was asked nicely first.
    expect(lines.some((line) => /server: SIGTERM ignored/.test(line))).toBe(true);
  });

  it('a server that exits when stdin closes is not signalled, and close() does not wait for a grace', async () => {
    const { source, pid } = await started('polite', { keepRunningAfterStdinEnds: false, ignoreSigterm: false, sayPid: true });
    const startedAt = performance.now();
    await source.close();
    expect(alive(pid)).toBe(false);
    expect(performance.now() - startedAt).toBeLessThan(GRACE_MS);
  });

  it('both at once, as the daemon closes all its sources: all gone within the bound', async () => {
    const servers = await Promise.all([started('a', { keepRunningAfterStdinEnds: true }), started('b', { keepRunningAfterStdinEnds: true, ignoreSigterm: true })]);
    const startedAt = performance.now();
    await Promise.all(servers.map(({ source }) => source.close()));
    expect(servers.map(({ pid }) => alive(pid))).toEqual([false, false]);
    expect(performance.now() - startedAt).toBeLessThan(3 * GRACE_MS + 1_000);
  });
});
