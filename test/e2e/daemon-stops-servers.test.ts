// Item 13 of issue 22 through a real daemon and mount: on SIGTERM skills-mount stops its stdio
// servers (stdin closed, then SIGTERM, then SIGKILL, 1 s each) and exits only once they are
// gone: a server that keeps running after stdin closes, and one that also ignores SIGTERM,
// are both dead when the daemon has exited, and the daemon took at most a few seconds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '../support/children.js';
import { SCRIPTED_SERVER } from '../support/hostile-scenario.js';
import { makeTestDir, startMount, type RunningMount } from '../support/mount-harness.js';
import { requireFuse } from '../support/require-fuse.js';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

requireFuse();


describe('the daemon stops its stdio servers when it stops', () => {
  let mount: RunningMount;
  let pids: number[] = [];

  beforeAll(async () => {
    const dir = await makeTestDir();
    const entry = async (name: string, scenario: Record<string, unknown>) => {
      const file = path.join(dir, `${name}.json`);
      await writeFile(file, JSON.stringify({ listing: true, ...scenario }));
      return { command: process.execPath, args: [SCRIPTED_SERVER, file] };
    };
    mount = await startMount({
      dir,
      config: {
        stays: await entry('stays', { keepRunningAfterStdinEnds: true }),
        stubborn: await entry('stubborn', { keepRunningAfterStdinEnds: true, ignoreSigterm: true }),
      },
    });
    await mount.waitForLog(/\[stays\] server: pid \d+/);
    await mount.waitForLog(/\[stubborn\] server: pid \d+/);
    pids = [...mount.log().matchAll(/\[(?:stays|stubborn)\] server: pid (\d+)/g)].map((match) => Number(match[1]));
  });
  afterAll(async () => {
    await mount?.stop();
    for (const pid of pids) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  });

  it('SIGTERM: exit 0 within the bound, and neither server outlives the daemon', async () => {
    expect(pids).toHaveLength(2);
    expect(pids.map(isAlive)).toEqual([true, true]);
    const startedAt = performance.now();
    const code = await mount.stop('SIGTERM');
    const tookMs = performance.now() - startedAt;
    expect(code).toBe(0);
    expect(pids.map(isAlive)).toEqual([false, false]);
    // stdin, SIGTERM, SIGKILL: about 2 s for the stubborn one. Exit code 0 also says the harness
    // did not have to SIGKILL the daemon after its 5 s grace; the bound includes the unmount cleanup.
    expect(tookMs).toBeLessThan(9_000);
    expect(mount.log()).toMatch(/\[stubborn\] server: SIGTERM ignored/);
  });
});
