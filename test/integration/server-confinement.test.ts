// skills-serve never serves a byte from outside DIR, even while a writer inside DIR swaps a
// directory of a served path with a link to outside, as fast as the kernel allows.
import { spawn, type ChildProcess } from 'node:child_process';
import { symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectInMemory, readBytes, type Connected } from '../support/server-harness.js';
import { skillMd, writeTree } from '../support/skill-builder.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

const INSIDE = 'inside bytes\n';
const OUTSIDE = 'OUTSIDE SECRET\n';

// Exchanges the two names atomically (renameat2 RENAME_EXCHANGE) in a tight loop; where libc
// has no renameat2, through a temporary name (three renames) instead.
const SWAPPER = `
import ctypes, os, sys
a, b, tmp = sys.argv[1], sys.argv[2], sys.argv[2] + '.tmp'
libc = ctypes.CDLL(None, use_errno=True)
exchange = getattr(libc, 'renameat2', None)
sys.stdout.write('swapping\\n'); sys.stdout.flush()
while True:
    if exchange is not None and exchange(-100, a.encode(), -100, b.encode(), 2) == 0:
        continue
    os.rename(a, tmp); os.rename(b, a); os.rename(tmp, b)
`;

function startSwapper(a: string, b: string): Promise<ChildProcess> {
  const child = spawn('python3', ['-c', SWAPPER, a, b], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout!.once('data', () => resolve(child));
  });
}

function stopSwapper(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('a symlink swap race at an inner component of a served path', () => {
  let root: string;
  let outside: string;
  let connected: Connected;

  beforeAll(async () => {
    outside = await makeTempDir('skills-serve-race-outside-');
    await writeFile(join(outside, 'file.md'), OUTSIDE);
    await writeFile(join(outside, 'SKILL.md'), OUTSIDE);
    root = await makeTempDir('skills-serve-race-');
    await writeTree(root, { 's/SKILL.md': skillMd('s'), 's/sub/file.md': INSIDE });
    await symlink(outside, join(root, 's/sublink'));
    // No watcher: the snapshot stays the scanned one, so every read goes to the swapped path.
    connected = await connectInMemory({ root, watch: false });
  });
  afterAll(async () => {
    await connected?.close();
    await removeDir(root);
    await removeDir(outside);
  });

  it('returns the inside bytes or an error, never the outside file, over 3,000 reads', async () => {
    expect((await readBytes(connected.client, 'skill://s/sub/file.md')).bytes.toString()).toBe(INSIDE);
    const swapper = await startSwapper(join(root, 's/sub'), join(root, 's/sublink'));
    const seen = { inside: 0, outside: 0, refused: 0, other: 0 };
    try {
      for (let batch = 0; batch < 300; batch++) {
        const reads = Array.from({ length: 10 }, () =>
          readBytes(connected.client, 'skill://s/sub/file.md').then(
            ({ bytes }) => {
              const text = bytes.toString();
              if (text === INSIDE) seen.inside++;
              else if (text === OUTSIDE) seen.outside++;
              else seen.other++;
            },
            () => seen.refused++,
          ),
        );
        await Promise.all(reads);
      }
    } finally {
      await stopSwapper(swapper);
    }
    expect(seen.outside).toBe(0);
    expect(seen.other).toBe(0);
    // The race really ran both ways: some reads found the real directory, some the link.
    expect(seen.inside).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  }, 60_000);
});
