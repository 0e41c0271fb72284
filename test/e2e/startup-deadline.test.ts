// A server whose listing pages come slowly and never end cannot keep the mount from
// appearing: past --startup-timeout the mount is there, the other servers whole, and the slow
// one's directory fills in as its listing pages on, `status` saying so.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../support/fuse-harness.js';
import { hostileEntry, hostileSkill } from '../support/hostile-scenario.js';
import { SKILLS_MOUNT, makeTestDir, serveEntry, startMount, type RunningMount } from '../support/mount-harness.js';
import { requireFuse } from '../support/require-fuse.js';

requireFuse();

const EXAMPLES = fileURLToPath(new URL('../../examples/skills', import.meta.url));
const STARTUP_S = 3;

describe('the startup deadline', () => {
  let mount: RunningMount;
  let mountedInMs: number;

  beforeAll(async () => {
    const dir = await makeTestDir();
    const slow = await hostileEntry(dir, 'slow', {
      listing: true,
      listingFault: 'cursor-forever',
      listingPageDelayMs: 300,
      skills: [hostileSkill('first', 'On the first page', { 'ref.md': { text: 'first page\n' } })],
    });
    const startedMs = Date.now();
    mount = await startMount({ dir, config: { demo: serveEntry(EXAMPLES), slow }, args: ['--startup-timeout', String(STARTUP_S), '--timeout', '5'], readyTimeoutMs: 30_000 });
    mountedInMs = Date.now() - startedMs;
  }, 60_000);

  afterAll(async () => {
    await mount?.stop();
  });

  it('mounts within the startup deadline, saying why, with the other servers whole', async () => {
    // A generous "did not hang" bound: the deadline plus process start-up on a loaded machine.
    expect(mountedInMs).toBeLessThan(STARTUP_S * 1000 + 10_000);
    expect(mount.log()).toMatch(new RegExp(`startup deadline \\(${STARTUP_S} s\\) passed; mounting now`));
    expect((await run('cat', [path.join(mount.mountpoint, 'demo', 'hello-mount', 'SKILL.md')])).stdout).toMatch(/name: hello-mount/);
  });

  it('the slow server fills in as its listing pages on, and status says it is still listing', async () => {
    await expect.poll(async () => (await run('cat', [path.join(mount.mountpoint, 'slow', 'first', 'ref.md')])).stdout, { timeout: 20_000, interval: 500 }).toBe('first page\n');
    const status = await run(process.execPath, [SKILLS_MOUNT, 'status', mount.mountpoint]);
    expect(status.stdout).toMatch(/slow\s+connected \(2025-11-25\)\s+listing\s+1\s+still listing \(1 entries so far\)/);
  });
});
