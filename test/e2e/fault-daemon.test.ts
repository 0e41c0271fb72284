// The daemon itself killed or stopped at a bad moment: SIGKILL with its auto_unmount
// helper gone too leaves a stale mount that the next start recovers; SIGTERM in the
// middle of heavy reads unmounts cleanly and exits 0 within 2 s.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { exitOf, isAlive } from '../support/children.js';
import { childPids, proxiedServeEntry } from '../support/fault-harness.js';
import { run, runBytes } from '../support/fuse-harness.js';
import { CORPUS_DIR, serveEntry, startMount } from '../support/mount-harness.js';
import { waitFor } from '../support/poll.js';
import { requireFuse } from '../support/require-fuse.js';

requireFuse();


describe('a daemon killed with SIGKILL', () => {
  it('leaves a stale mount when auto_unmount cannot act; the next start at the same mountpoint recovers it', async () => {
    const first = await startMount({ config: { corpus: serveEntry(CORPUS_DIR) } });
    try {
      // auto_unmount is done by the fusermount child that outlives us, and on libfuse 3 by the
      // watchdog too (its script names fusermount3): kill them first, then the daemon.
      const helpers = await childPids(first.child.pid!, /fusermount/);
      expect(helpers.length).toBeGreaterThanOrEqual(1);
      for (const helper of helpers) process.kill(helper, 'SIGKILL');
      const exited = exitOf(first.child);
      first.child.kill('SIGKILL');
      await exited;
      const stale = await run('stat', [first.mountpoint]);
      expect(stale.stderr).toMatch(/Transport endpoint is not connected/);

      const second = await startMount({ dir: first.dir, config: { corpus: serveEntry(CORPUS_DIR) } });
      try {
        const file = 'commit-message/SKILL.md';
        const result = await runBytes('cat', [path.join(second.mountpoint, 'corpus', file)]);
        expect(result.stdout.equals(await readFile(path.join(CORPUS_DIR, file)))).toBe(true);
        const mounts = (await readFile('/proc/mounts', 'utf8')).split('\n').filter((line) => line.split(' ')[1] === second.mountpoint);
        expect(mounts).toHaveLength(1);
      } finally {
        await second.stop();
      }
    } finally {
      await first.stop();
    }
  });
});

describe('SIGTERM during heavy reads', () => {
  it('unmounts cleanly and exits 0 within 2 s while several cat loops read the corpus', async () => {
    // 50 ms per request keeps cold reads in flight when the signal lands.
    const mount = await startMount({ config: { corpus: proxiedServeEntry(CORPUS_DIR, { delayMs: 50 }) }, args: ['--verbose'] });
    const root = path.join(mount.mountpoint, 'corpus');
    const readers = Array.from({ length: 4 }, (_, i) =>
      spawn('sh', ['-c', `while :; do find "$1" -type f ${i % 2 ? '' : '-name "*.md"'} -exec cat {} + >/dev/null 2>&1; done`, 'reader', root], {
        stdio: 'ignore',
        detached: true,
      }),
    );
    try {
      await mount.waitForLog(/\] resources\/read [\s\S]*\] resources\/read [\s\S]*\] resources\/read /, 20_000);
      const servers = await childPids(mount.child.pid!, /fault-proxy/);
      expect(servers).toHaveLength(1);
      const exited = exitOf(mount.child);
      const startedAt = performance.now();
      mount.child.kill('SIGTERM');
      const { code } = await exited;
      const elapsedMs = performance.now() - startedAt;
      expect(code).toBe(0);
      expect(elapsedMs).toBeLessThan(2_000);
      expect(await readFile('/proc/mounts', 'utf8')).not.toContain(mount.mountpoint);
      // The daemon's servers go with it (their stdin closes).
      await waitFor(() => !isAlive(servers[0]!), 5_000, 'the server to exit');
    } finally {
      for (const reader of readers) {
        try {
          process.kill(-reader.pid!, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      await mount.stop();
    }
  });
});
