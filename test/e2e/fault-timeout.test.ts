// "FUSE operations must never hang the caller": a server that never answers costs the
// caller an EIO after --timeout, and the daemon keeps serving the other servers meanwhile.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxiedServeEntry, serverStates, timed } from '../support/fault-harness.js';
import { run, runBytes } from '../support/fuse-harness.js';
import { CORPUS_DIR, serveEntry, startMount, type RunningMount } from '../support/mount-harness.js';
import { requireFuse } from '../support/require-fuse.js';

requireFuse();

describe('servers that never answer, with --timeout 1', () => {
  let mount: RunningMount;

  beforeAll(async () => {
    mount = await startMount({
      config: {
        // Answers the handshake and listings, never a resources/read.
        stuck: proxiedServeEntry(CORPUS_DIR, { drop: '"resources/read"' }),
        // Answers nothing at all, not even initialize.
        mute: proxiedServeEntry(CORPUS_DIR, { drop: '.' }),
        ok: serveEntry(CORPUS_DIR),
      },
      args: ['--timeout', '1'],
    });
  });
  afterAll(async () => {
    await mount?.stop();
  });

  it('a read the server never answers fails with EIO after the deadline, not a hang', async () => {
    const { value, elapsedMs } = await timed(() => run('cat', [path.join(mount.mountpoint, 'stuck/commit-message/SKILL.md')], 30_000));
    expect(value.code).not.toBe(0);
    // EIO from the MCP deadline, not ETIMEDOUT from the FUSE edge's own (6 s) backstop.
    expect(value.stderr).toMatch(/Input\/output error/);
    expect(elapsedMs).toBeGreaterThan(900);
    expect(elapsedMs).toBeLessThan(5_000);
    expect(mount.log()).toMatch(/stuck: resources\/read skill:\/\/commit-message\/SKILL.md: no answer within 1000 ms/);
  });

  it('while several reads hang on one server, another server answers at once', async () => {
    const stuckReads = ['api-reference', 'brand-fonts', 'frontend-scaffold', 'data-pipeline'].map((skill) =>
      timed(() => run('cat', [path.join(mount.mountpoint, 'stuck', skill, 'SKILL.md')], 30_000)),
    );
    const startedAt = performance.now();
    const okFiles = ['commit-message/SKILL.md', 'localization/SKILL.md', 'pdf-forms/assets/w9-template.pdf'];
    for (const file of okFiles) {
      const result = await runBytes('cat', [path.join(mount.mountpoint, 'ok', file)]);
      expect(result.stdout.equals(await readFile(path.join(CORPUS_DIR, file)))).toBe(true);
    }
    const okDoneMs = performance.now() - startedAt;
    const stuck = await Promise.all(stuckReads);
    for (const { value } of stuck) expect(value.stderr).toMatch(/Input\/output error/);
    // The good server's reads all finished before the stuck ones gave up.
    expect(okDoneMs).toBeLessThan(Math.min(...stuck.map(({ elapsedMs }) => elapsedMs)));
  });

  it('a server that never answers the handshake does not hold up the mount; its state says why', async () => {
    const states = await serverStates(mount.mountpoint);
    const mute = states.find((server) => server.label === 'mute');
    expect(mute?.state).toMatch(/^(failed|connecting)$/);
    expect(mute?.reason).toMatch(/cannot connect: .*(timed out|Request timed out)/i);
    expect(states.find((server) => server.label === 'ok')?.state).toBe('connected');
    const listing = await timed(() => run('ls', [path.join(mount.mountpoint, 'mute')]));
    expect(listing.elapsedMs).toBeLessThan(3_000);
    expect(mount.child.exitCode).toBeNull();
  });
});
