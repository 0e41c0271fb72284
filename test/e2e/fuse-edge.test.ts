// The FUSE edge through a real kernel mount: a child process serves the fixture tree,
// this process inspects it only through ordinary tools run asynchronously.

import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanupMounts, FixtureMount, mountsUnder, run, runBytes } from '../support/fuse-harness.js';
import { delay, waitFor } from '../support/poll.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

interface FixtureData {
  SKILL_MD: Buffer;
  BIG_BIN: Buffer;
  LONG_XATTR: Buffer;
  MTIME_MS: number;
}

// Skipped only where /dev/fuse is missing; in CI a skip is a failure, so CI always runs it.
const fuseUsable = existsSync('/dev/fuse') || process.env['CI'] !== undefined;
const uid = String(process.getuid?.());
const gid = String(process.getgid?.());

let fixtureData: FixtureData;

async function loadFixtureData(): Promise<FixtureData> {
  await assertBuilt();
  // @ts-expect-error plain JS fixture without types
  return (await import('../support/fuse-fixture-mount.mjs')) as FixtureData;
}

function python(code: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return run('python3', ['-c', code]);
}

describe.skipIf(!fuseUsable)('FUSE edge on a live mount', () => {
  let tmp: string;
  let mnt: string;
  let fixture: FixtureMount;
  const at = (relative: string) => path.join(mnt, relative);

  beforeAll(async () => {
    fixtureData = await loadFixtureData();
    tmp = await makeTempDir('skills-mount-fuse-e2e-');
    mnt = path.join(tmp, 'nested', 'mnt'); // missing: the mount creates it
    fixture = FixtureMount.start(mnt);
    await fixture.ready();
  });

  afterAll(async () => {
    await fixture?.stop();
    if (tmp) {
      await cleanupMounts(tmp);
      await removeDir(tmp);
    }
  });

  it('shows read-only modes owned by the mounting user, with the core inode and mtime', async () => {
    const result = await run('stat', ['-c', '%n %a %u %g %h %s %i %Y', mnt, at('skill-a'), at('skill-a/SKILL.md'), at('big.bin')]);
    expect(result.stderr).toBe('');
    const mtimeSeconds = fixtureData.MTIME_MS / 1000;
    expect(result.stdout.trim().split('\n')).toEqual([
      `${mnt} 500 ${uid} ${gid} 2 0 1 ${mtimeSeconds}`,
      `${at('skill-a')} 500 ${uid} ${gid} 2 0 2 ${mtimeSeconds}`,
      `${at('skill-a/SKILL.md')} 400 ${uid} ${gid} 1 ${fixtureData.SKILL_MD.length} 1001 ${mtimeSeconds}`,
      `${at('big.bin')} 400 ${uid} ${gid} 1 ${1024 * 1024} 1004 ${mtimeSeconds}`,
    ]);
    const blocks = await run('stat', ['-c', '%b', at('big.bin')]);
    expect(blocks.stdout.trim()).toBe(String((1024 * 1024) / 512));
  });

  it('lists directories like any filesystem (ls -la)', async () => {
    const result = await run('ls', ['-la', at('skill-a')]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n').slice(1); // drop "total"
    const byName = new Map(lines.map((line) => [line.split(/\s+/).at(-1), line.split(/\s+/)[0]]));
    expect(Object.fromEntries(byName)).toEqual({
      '.': 'dr-x------',
      '..': 'dr-x------',
      'SKILL.md': '-r--------',
      'bad.bin': '-r--------',
      'weird.txt': '-r--------',
    });
    const root = await run('ls', ['-1', mnt]);
    expect(root.stdout.trim().split('\n')).toEqual(['big.bin', 'skill-a', 'slow.txt']);
  });

  it('reads files byte-identically, including 1 MiB through several kernel requests', async () => {
    const small = await runBytes('cat', [at('skill-a/SKILL.md')]);
    expect(small.stderr).toBe('');
    expect(small.stdout.equals(fixtureData.SKILL_MD)).toBe(true);
    const big = await runBytes('cat', [at('big.bin')]);
    expect(big.code).toBe(0);
    expect(big.stdout.length).toBe(fixtureData.BIG_BIN.length);
    expect(big.stdout.equals(fixtureData.BIG_BIN)).toBe(true);
    const tail = await runBytes('dd', [`if=${at('big.bin')}`, 'bs=1000', 'skip=1000', 'count=3', 'status=none']);
    expect({ code: tail.code, stderr: tail.stderr, length: tail.stdout.length }).toEqual({ code: 0, stderr: '', length: 3_000 });
    expect(tail.stdout.equals(fixtureData.BIG_BIN.subarray(1_000_000, 1_003_000))).toBe(true);
  });

  it('turns an IntegrityError into EIO for that file only, and logs it', async () => {
    const bad = await run('cat', [at('skill-a/bad.bin')]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('Input/output error');
    const good = await runBytes('cat', [at('skill-a/SKILL.md')]);
    expect(good.stdout.equals(fixtureData.SKILL_MD)).toBe(true);
    expect(fixture.stderr).toContain(
      'skills-mount: read /skill-a/bad.bin: IntegrityError: digest mismatch (server fixture skill://fixture/skill-a/bad.bin)',
    );
  });

  it('turns an unexpected error into EIO and logs operation and path', async () => {
    const weird = await run('cat', [at('skill-a/weird.txt')]);
    expect(weird.stderr).toContain('Input/output error');
    expect(fixture.stderr).toContain('skills-mount: read /skill-a/weird.txt: unexpected TypeError: boom in core');
  });

  it('answers ENOENT for missing names and ENOTDIR below a file', async () => {
    expect((await run('stat', [at('skill-a/missing.md')])).stderr).toContain('No such file or directory');
    expect((await run('ls', [at('skill-a/SKILL.md/x')])).stderr).toContain('Not a directory');
  });

  it('refuses every kind of write with "Read-only file system" and stays unchanged', async () => {
    const file = at('skill-a/SKILL.md');
    const outside = path.join(tmp, 'outside.txt');
    await writeFile(outside, 'outside');
    const attempts: [string, string[]][] = [
      ['touch', [at('new.txt')]],
      ['touch', [file]],
      ['mkdir', [at('newdir')]],
      ['rm', ['-f', file]],
      ['rmdir', [at('skill-a')]],
      ['mv', [file, at('skill-a/moved.md')]],
      ['ln', [file, at('hardlink')]],
      ['ln', ['-s', 'SKILL.md', at('skill-a/symlink')]],
      ['chmod', ['644', file]],
      ['chown', [`${uid}:${gid}`, file]],
      ['truncate', ['-s', '0', file]],
      ['mknod', [at('fifo'), 'p']],
      ['cp', [outside, at('copy.txt')]],
      ['sh', ['-c', `echo x > '${file}'`]],
      ['sh', ['-c', `echo x >> '${file}'`]],
      ['sh', ['-c', `echo x > '${at('created.txt')}'`]],
      ['python3', ['-c', `import os; os.setxattr(${JSON.stringify(file)}, 'user.new', b'1')`]],
      ['python3', ['-c', `import os; os.removexattr(${JSON.stringify(file)}, 'user.skill.uri')`]],
    ];
    for (const [command, args] of attempts) {
      const result = await run(command, args);
      expect({ command, args, failed: result.code !== 0, stderr: result.stderr }).toMatchObject({
        failed: true,
        stderr: expect.stringContaining('Read-only file system'),
      });
    }
    const after = await run('ls', ['-1', at('skill-a')]);
    expect(after.stdout.trim().split('\n')).toEqual(['SKILL.md', 'bad.bin', 'weird.txt']);
    expect((await runBytes('cat', [file])).stdout.equals(fixtureData.SKILL_MD)).toBe(true);
  });

  it('is mounted ro,nosuid,nodev,noexec with kernel permission checks and without allow_other', async () => {
    const [entry, ...others] = await mountsUnder(mnt);
    expect(others).toEqual([]);
    expect(entry).toMatchObject({ source: 'skills-mount', mountpoint: mnt, type: 'fuse.skills-mount' });
    expect(entry?.options).toEqual(expect.arrayContaining(['ro', 'nosuid', 'nodev', 'noexec', 'default_permissions']));
    expect(entry?.options).not.toContain('allow_other');
    expect(entry?.options).not.toContain('rw');
  });

  it('cannot execute files', async () => {
    const direct = await run(at('skill-a/SKILL.md'), []);
    expect(direct.errno).toBe('EACCES');
    const viaShell = await run('sh', ['-c', `'${at('skill-a/SKILL.md')}'`]);
    expect(viaShell.stderr).toContain('Permission denied');
  });

  it('serves extended attributes, with size probes, ERANGE retries and ENODATA', async () => {
    const file = JSON.stringify(at('skill-a/SKILL.md'));
    const listed = await python(`import os; print(sorted(os.listxattr(${file})))`);
    expect(listed.stdout.trim()).toBe("['user.skill.long', 'user.skill.uri']");
    const short = await python(`import os; print(os.getxattr(${file}, 'user.skill.uri').decode())`);
    expect(short.stdout.trim()).toBe('skill://fixture/skill-a/SKILL.md');
    // Python asks with a 128-byte buffer first, gets ERANGE and retries with 64 KiB.
    const long = await python(`import os; print(os.getxattr(${file}, 'user.skill.long').decode())`);
    expect(long.stdout.trim()).toBe(fixtureData.LONG_XATTR.toString());
    const probes = await python(
      [
        'import ctypes',
        'libc = ctypes.CDLL(None, use_errno=True)',
        `p = ${file}.encode()`,
        "print(libc.getxattr(p, b'user.skill.long', None, 0), libc.listxattr(p, None, 0))",
        'buf = ctypes.create_string_buffer(10)',
        "print(libc.getxattr(p, b'user.skill.long', buf, 10), ctypes.get_errno())",
      ].join('\n'),
    );
    const nameBytes = Buffer.byteLength('user.skill.uri\0user.skill.long\0');
    expect(probes.stdout.trim().split('\n')).toEqual([`300 ${nameBytes}`, '-1 34']);
    const missing = await python(`import os; os.getxattr(${file}, 'user.nope')`);
    expect(missing.stderr).toContain('[Errno 61] No data available');
  });

  it('refuses a second mount on the live mountpoint', async () => {
    const second = FixtureMount.start(mnt);
    const exit = await second.exited;
    expect(exit.code).not.toBe(0);
    expect(second.stderr).toContain(`mountpoint ${mnt} is busy: already mounted (fuse.skills-mount from skills-mount)`);
    expect((await runBytes('cat', [at('skill-a/SKILL.md')])).stdout.equals(fixtureData.SKILL_MD)).toBe(true);
  });
});

describe.skipIf(!fuseUsable)('FUSE mount lifecycle', () => {
  let tmp: string;
  const fixtures: FixtureMount[] = [];

  const start = (mountpoint: string, env: Record<string, string> = {}): FixtureMount => {
    const fixture = FixtureMount.start(mountpoint, env);
    fixtures.push(fixture);
    return fixture;
  };

  beforeAll(async () => {
    fixtureData = await loadFixtureData();
  });

  afterEach(async () => {
    await Promise.all(fixtures.splice(0).map((fixture) => fixture.stop()));
    if (tmp) {
      await cleanupMounts(tmp);
      await removeDir(tmp);
    }
  });

  const freshTmp = async (): Promise<string> => {
    tmp = await makeTempDir('skills-mount-fuse-life-');
    return tmp;
  };

  it('unmounts on SIGTERM within 2 s with an operation in flight, and releases the blocked reader', async () => {
    const mnt = path.join(await freshTmp(), 'mnt');
    const fixture = start(mnt);
    await fixture.ready();
    const hangingRead = run('cat', [path.join(mnt, 'slow.txt')], 30_000); // open never answers
    await delay(300);
    const startedMs = Date.now();
    fixture.kill('SIGTERM');
    await waitFor(() => /unmounted in \d+ ms/.test(fixture.stdout), 2_000, 'unmount');
    expect(Date.now() - startedMs).toBeLessThan(2_000);
    expect(await mountsUnder(mnt)).toEqual([]);
    expect(await fixture.exited).toEqual({ code: 0, signal: null });
    // The daemon's exit closes the connection, so the reader fails instead of hanging.
    const reader = await hangingRead;
    expect(reader.code).not.toBe(0);
    expect(reader.stderr).toContain('Software caused connection abort');
    expect(Date.now() - startedMs).toBeLessThan(5_000);
  });

  it('answers ETIMEDOUT when the core exceeds the operation timeout', async () => {
    const mnt = path.join(await freshTmp(), 'mnt');
    const fixture = start(mnt, { FIXTURE_OPERATION_TIMEOUT_MS: '1000' });
    await fixture.ready();
    const startedMs = Date.now();
    const reader = await run('cat', [path.join(mnt, 'slow.txt')], 10_000);
    expect(reader.stderr).toContain('Connection timed out');
    expect(Date.now() - startedMs).toBeGreaterThanOrEqual(900);
    expect(Date.now() - startedMs).toBeLessThan(5_000);
  });

  it('exits by itself after unmounting when nothing is in flight', async () => {
    const mnt = path.join(await freshTmp(), 'mnt');
    const fixture = start(mnt, { FIXTURE_NATURAL_EXIT: '1' });
    await fixture.ready();
    fixture.kill('SIGTERM');
    const exit = await Promise.race([
      fixture.exited,
      delay(3_000).then(() => 'hung' as const),
    ]);
    expect({ exit, stdout: fixture.stdout, stderr: fixture.stderr }).toEqual({
      exit: { code: 0, signal: null },
      stdout: expect.stringMatching(/unmounted in \d+ ms/),
      stderr: '',
    });
  });

  it('recovers a stale mount left by a killed daemon on the next mount', async () => {
    const mnt = path.join(await freshTmp(), 'mnt');
    const first = start(mnt, { FIXTURE_AUTO_UNMOUNT: '0' });
    await first.ready();
    first.kill('SIGKILL');
    await first.exited;
    expect((await run('stat', [mnt])).stderr).toContain('Transport endpoint is not connected');

    const second = start(mnt);
    await second.ready();
    expect((await runBytes('cat', [path.join(mnt, 'skill-a/SKILL.md')])).stdout.equals(fixtureData.SKILL_MD)).toBe(true);
    expect(await mountsUnder(mnt)).toHaveLength(1);
  });

  it('with autoUnmount (the default) a killed daemon leaves no mount behind', async () => {
    const mnt = path.join(await freshTmp(), 'mnt');
    const fixture = start(mnt);
    await fixture.ready();
    fixture.kill('SIGKILL');
    await fixture.exited;
    await waitFor(async () => (await mountsUnder(mnt)).length === 0, 3_000, 'auto unmount');
    expect((await run('ls', ['-A', mnt])).stdout).toBe('');
  });

  it('refuses a non-empty directory with a clear message', async () => {
    const mnt = path.join(await freshTmp(), 'mnt');
    await mkdir(mnt);
    await writeFile(path.join(mnt, 'keep.txt'), 'mine');
    const fixture = start(mnt);
    const exit = await fixture.exited;
    expect(exit.code).not.toBe(0);
    expect(fixture.stderr).toContain(
      `ConfigError: mountpoint ${mnt} is not empty; skills-mount mounts only on an empty directory`,
    );
    expect(await mountsUnder(mnt)).toEqual([]);
  });
});
