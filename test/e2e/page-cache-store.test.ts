// A first open hands the version's bytes (up to 1 MiB) to the kernel's page cache with its reply
// (docs/fuse-edge.md), through a real daemon on a real kernel mount served by skills-serve: a
// file up to 1 MiB is then read by cat without one READ reaching the daemon, a longer one reads
// its first MiB from the page cache and the rest through READs, and every byte is the file's,
// whichever side of the 1 MiB line a read starts, ends or straddles. The test process reaches
// the mount only through child processes (cat, dd, python).
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, runBytes } from '../support/fuse-harness.js';
import { freePort } from '../support/http-server.js';
import { makeTestDir, serveEntry, startMount, type RunningMount } from '../support/mount-harness.js';
import { seriesSum } from '../support/prometheus-text.js';
import { requireFuse } from '../support/require-fuse.js';
import { writeSkill } from '../support/skill-builder.js';

requireFuse();

const MIB = 1024 * 1024;
const FILES = {
  'small.txt': Buffer.from('a few bytes, one page\n'),
  'exact.bin': randomBytes(MIB),
  // Past the stored part, and not a whole number of pages.
  'over.bin': randomBytes(2 * MIB + MIB / 2 + 7),
};

describe('a first open puts its bytes in the page cache', () => {
  let mount: RunningMount | undefined;
  let metricsUrl = '';
  const at = (name: string) => path.join(mount!.mountpoint, 'tree', 'bulk', name);
  /** Reads of the mount that reached the daemon (its JavaScript or its addon), and the opens it stored. */
  const counts = async () => {
    const text = await (await fetch(metricsUrl)).text();
    return {
      reads: seriesSum(text, 'skills_mount_fuse_operations_total', { op: 'read' }) + seriesSum(text, 'skills_mount_fuse_answered_by_addon_total', { op: 'read' }),
      stored: seriesSum(text, 'skills_mount_fuse_opens_stored_total'),
    };
  };

  beforeAll(async () => {
    const dir = await makeTestDir();
    const skills = path.join(dir, 'skills');
    await writeSkill(skills, 'bulk', { files: FILES });
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    mount = await startMount({ dir, config: { tree: serveEntry(skills) }, args: ['--metrics', `127.0.0.1:${port}`] });
  });
  afterAll(async () => {
    await mount?.stop();
  });

  it('cat of files up to 1 MiB: every byte, and no read reaches the daemon', async () => {
    const before = await counts();
    for (const name of ['small.txt', 'exact.bin'] as const) {
      const read = await runBytes('cat', [at(name)]);
      expect({ code: read.code, stderr: read.stderr }, name).toEqual({ code: 0, stderr: '' });
      expect(read.stdout.equals(FILES[name]), name).toBe(true);
    }
    const after = await counts();
    expect({ reads: after.reads - before.reads, stored: after.stored - before.stored }).toEqual({ reads: 0, stored: 2 });
  });

  it('a longer file: the first MiB from the page cache, the rest through READs, every read byte for byte', async () => {
    const before = await counts();
    // Cold: the first open stores 1 MiB; these reads start below, at and above the line, and straddle it.
    const ranges = [
      [0, 4096],
      [MIB - 100, 300],
      [MIB, 5000],
      [MIB + 4096 * 3 + 11, 70_000],
      [FILES['over.bin'].length - 9, 9],
    ] as const;
    const script = [
      'import sys, os',
      `fd = os.open(sys.argv[1], os.O_RDONLY)`,
      `for offset, size in ${JSON.stringify(ranges)}:`,
      '    sys.stdout.buffer.write(os.pread(fd, size, offset))',
      'os.close(fd)',
    ].join('\n');
    const pieces = await runBytes('python3', ['-c', script, at('over.bin')]);
    expect({ code: pieces.code, stderr: pieces.stderr }).toEqual({ code: 0, stderr: '' });
    expect(pieces.stdout.equals(Buffer.concat(ranges.map(([offset, size]) => FILES['over.bin'].subarray(offset, offset + size))))).toBe(true);
    const whole = await runBytes('cat', [at('over.bin')]);
    expect(whole.code).toBe(0);
    expect(whole.stdout.equals(FILES['over.bin'])).toBe(true);
    const after = await counts();
    expect(after.stored - before.stored).toBe(1);
    // The part past the stored MiB came through READs (the kernel's readahead decides how many).
    expect(after.reads - before.reads).toBeGreaterThan(0);
    // A warm dd of the whole file reads what the page cache holds now.
    const dd = await run('sh', ['-c', `dd if='${at('over.bin')}' bs=65536 status=none | sha256sum`]);
    expect(dd.stdout.split(' ')[0]).toBe((await import('node:crypto')).createHash('sha256').update(FILES['over.bin']).digest('hex'));
  });
});
