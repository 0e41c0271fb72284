// An offline start through a real mount counts the skills it shows (issue 22 item 14): the
// server listed 4 entries of which 1 is shown (two refused, one dynamic declined by
// --no-dynamic); started again while the server cannot start, the daemon shows the kept
// listing and says 1 skill, in its log line and in its startup summary, where it said 4.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../support/fuse-harness.js';
import { HOSTILE_SERVER, hostileSkill } from '../support/hostile-scenario.js';
import { makeTestDir, startMount, type RunningMount } from '../support/mount-harness.js';
import { waitFor } from '../support/poll.js';
import { requireFuse } from '../support/require-fuse.js';

requireFuse();

describe('an offline start', () => {
  let mount: RunningMount | undefined;
  afterEach(async () => {
    await mount?.stop();
    mount = undefined;
  });

  it('counts the 1 skill it shows of the 4 entries the server listed, in the kept-listing line and the summary', async () => {
    const dir = await makeTestDir();
    const cacheDir = path.join(dir, 'cache');
    const scenarioFile = path.join(dir, 'scenario.json');
    const downFlag = path.join(dir, 'down');
    await writeFile(
      scenarioFile,
      JSON.stringify({
        listing: true,
        skills: [
          hostileSkill('good', 'The one shown'),
          hostileSkill('misnamed-a', 'Its name is not its directory', {}, { frontmatter: { name: 'other-a', description: 'x' } }),
          hostileSkill('misnamed-b', 'Its name is not its directory', {}, { frontmatter: { name: 'other-b', description: 'x' } }),
          hostileSkill('live', 'Dynamic, declined by --no-dynamic', {}, { dynamic: true }),
        ],
      }),
    );
    // The server refuses to start while the flag file exists.
    const entry = { command: '/bin/sh', args: ['-c', `test -e '${downFlag}' && exit 1; exec "$0" "$@"`, process.execPath, HOSTILE_SERVER, scenarioFile] };
    const start = () => startMount({ dir, config: { srv: entry }, diskCache: true, args: ['--cache-dir', cacheDir, '--no-dynamic'] });

    mount = await start();
    expect(mount.log()).toMatch(/mounted \S+ \(1\/1 servers connected: srv; 1 skill; ready in/);
    // The listing is kept in the background: wait until it is on disk.
    await waitFor(async () => (await run('find', [cacheDir, '-name', 'listing.json'])).stdout.trim() !== '', 10_000, 'the listing kept on disk');
    await mount.stop();
    mount = undefined;

    await writeFile(downFlag, '');
    mount = await start();
    expect((await run('ls', [path.join(mount.mountpoint, 'srv')])).stdout.split('\n').filter(Boolean)).toEqual(['good']);
    expect(mount.log()).toMatch(/\[srv\] not reachable: showing the listing kept on disk \(saved [^)]+\): 1 skills; 3 of its 4 entries not shown \(see problems\)/);
    expect(mount.log()).toMatch(/mounted \S+ \(0\/1 servers connected; not connected: srv; offline, shown from the disk cache: srv; 1 skill; ready in/);
  });
});
