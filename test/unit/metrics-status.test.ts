// `skills-mount status` names where a daemon serves its metrics: status.json carries the
// address (null without --metrics), status reads it back from the file, and shows it in its
// text and in --json. Read from a plain directory holding a status.json, as from a mount.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { probeMount, renderStatusText } from '../../src/cli/status.js';
import { renderStatusJson } from '../../src/fs/status-json.js';
import type { MountStatus } from '../../src/fs/skills-json.js';

const mount = (metrics: string | null): MountStatus => ({
  pid: 4242,
  startedAt: '2025-01-01T11:59:00Z',
  cache: { usedBytes: 0, limitBytes: 256 * 1024 * 1024 },
  diskCache: null,
  metrics,
  recentErrors: [],
});

async function statusOf(document: string) {
  const dir = await mkdtemp(path.join(tmpdir(), 'skills-mount-status-'));
  try {
    await writeFile(path.join(dir, 'status.json'), document);
    return await probeMount(dir, 2_000);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('status and the metrics address', () => {
  it('status.json carries it, and status reads it back (null when the daemon has none, or is older)', async () => {
    const withMetrics = renderStatusJson([], mount('http://127.0.0.1:9464'));
    expect(JSON.parse(withMetrics).mount.metrics).toBe('http://127.0.0.1:9464');
    expect((await statusOf(withMetrics)).metrics).toBe('http://127.0.0.1:9464');
    expect((await statusOf(renderStatusJson([], mount(null)))).metrics).toBeNull();
    const older = JSON.stringify({ mount: { pid: 1, startedAt: 't', cache: { usedBytes: 0, limitBytes: 1 }, recentErrors: [] }, servers: [] });
    expect((await statusOf(older)).metrics).toBeNull();
  });

  it('the text shows it on the mount line, only when there is one', async () => {
    const now = Date.parse('2025-01-01T12:00:00Z');
    const shown = await statusOf(renderStatusJson([], mount('http://127.0.0.1:9464')));
    expect(renderStatusText({ mounts: [shown] }, now).split('\n')[0]).toBe(`${shown.mountpoint}  up 1m 00s, pid 4242, cache 0 B of 256 MiB, metrics http://127.0.0.1:9464/metrics`);
    const none = await statusOf(renderStatusJson([], mount(null)));
    expect(renderStatusText({ mounts: [none] }, now).split('\n')[0]).toBe(`${none.mountpoint}  up 1m 00s, pid 4242, cache 0 B of 256 MiB`);
  });
});
