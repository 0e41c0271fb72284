// The mount against the SDK v2's own skills server (SkillsExtension over nodeSkillFiles, the
// way its documentation builds one), through a real kernel mount, on every transport it
// offers: `diff -r` against the served folder is empty, and a file changed on the server
// (reload(), ttlMs 3 s published) is served with all of its new bytes within the bound
// docs/protocol.md states — never a truncated or mixed version in between.
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LISTING_TTL_RANGE_MS } from '../../src/catalog/server-catalog.js';
import { run, runBytes } from '../support/fuse-harness.js';
import { startListening, type ListeningServer } from '../support/http-server.js';
import { makeTestDir, startMount, type RunningMount } from '../support/mount-harness.js';
import { delay } from '../support/poll.js';
import { requireFuse } from '../support/require-fuse.js';

requireFuse();

const SDK_SERVER = fileURLToPath(new URL('../support/sdk-skills-server.mjs', import.meta.url));
const EXAMPLES = fileURLToPath(new URL('../../examples/skills', import.meta.url));
const TTL_MS = 3_000;
const METADATA_TTL_S = 1;
// docs/protocol.md: held time (ttlMs clamped to 5 s..1 h) + --metadata-ttl + one listing.
const BOUND_MS = Math.max(TTL_MS, LISTING_TTL_RANGE_MS.min) + METADATA_TTL_S * 1000 + 1_000;

const transports = ['stdio', 'http-default', 'http-modern'] as const;

describe.each(transports)('the SDK v2 skills server over %s', (transport) => {
  let dir: string;
  let served: string;
  let server: ListeningServer | undefined;
  let mount: RunningMount;
  let serverPid: () => Promise<number>;

  beforeAll(async () => {
    dir = await makeTestDir();
    served = path.join(dir, 'skills');
    await cp(EXAMPLES, served, { recursive: true });
    const args = ['--metadata-ttl', String(METADATA_TTL_S), '--verbose'];
    if (transport === 'stdio') {
      mount = await startMount({ dir, config: { sdk: { command: process.execPath, args: [SDK_SERVER, served, 'stdio', String(TTL_MS)] } }, args });
      // The daemon's child: the only process whose command line names this test's folder.
      serverPid = async () => Number((await run('pgrep', ['-f', `${SDK_SERVER} ${served}`])).stdout.trim().split('\n')[0]);
    } else {
      server = await startListening([SDK_SERVER, served, transport, String(TTL_MS)]);
      mount = await startMount({ dir, config: { sdk: { url: server.url } }, args });
      serverPid = async () => server!.child.pid!;
    }
  }, 60_000);

  afterAll(async () => {
    await mount?.stop();
    await server?.stop();
  });

  it('negotiates 2026-07-28 and diff -r against the served folder is empty', async () => {
    expect(mount.log()).toMatch(/\[sdk\] connected \(protocol 2026-07-28\)/);
    const diff = await run('diff', ['-r', served, path.join(mount.mountpoint, 'sdk')], 60_000);
    expect(diff.stdout + diff.stderr).toBe('');
    expect(diff.code).toBe(0);
  });

  it('a file changed on the server is served whole, in its new version, within the documented bound', async () => {
    const relative = 'acme/billing/refunds/examples/email.md';
    const file = path.join(mount.mountpoint, 'sdk', relative);
    const before = await readFile(path.join(served, relative));
    expect((await runBytes('cat', [file])).stdout.equals(before)).toBe(true);
    // A different size, so a stale size held anywhere would show as a truncated read.
    const after = Buffer.concat([before, Buffer.from('\nP.S. Refunds over $500 need a second approval.\n')]);
    await writeFile(path.join(served, relative), after);
    process.kill(await serverPid(), 'SIGUSR2');
    const startedMs = performance.now();
    let seenNewAtMs: number | undefined;
    while (performance.now() - startedMs < BOUND_MS + 5_000) {
      const read = await runBytes('cat', [file]);
      if (read.code === 0) {
        // Every read is one whole version: the old bytes or the new, never a mix or a prefix.
        expect(read.stdout.equals(before) || read.stdout.equals(after), `read ${read.stdout.length} bytes`).toBe(true);
        if (read.stdout.equals(after)) {
          seenNewAtMs = performance.now() - startedMs;
          break;
        }
      }
      await delay(250);
    }
    expect(seenNewAtMs, mount.log().slice(-3000)).toBeDefined();
    expect(seenNewAtMs!).toBeLessThan(BOUND_MS);
  }, 30_000);
});

