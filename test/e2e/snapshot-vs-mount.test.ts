// The snapshot equals the mount: for the generated corpus (and the real one when
// SKILLS_MOUNT_CORPUS names it), over stdio and over Streamable HTTP, `diff -r` of a real kernel
// mount of a server and a snapshot of the same server finds nothing but the files only one of
// them has (status.json and _approved/ on the mount, .snapshot.json in the snapshot), and the
// two skills.json are equal apart from the mount's own "mount" block. The mount is served from
// a child process (mount-harness), the snapshot written by the CLI in another.
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeSnapshotFs } from '../../src/snapshot/snapshot-fs.js';
import { run, runBytes } from '../support/fuse-harness.js';
import { startHttpServe } from '../support/http-server.js';
import { SKILLS_MOUNT, serveEntry, startMount, type RunningMount } from '../support/mount-harness.js';
import { requireFuse } from '../support/require-fuse.js';
import { makeTempDir } from '../support/temp-dir.js';
import { corpusDirs } from '../support/test-corpus.mjs';

requireFuse();

let mount: RunningMount | undefined;
const made: string[] = [];
afterEach(async () => {
  await mount?.stop();
  mount = undefined;
  for (const dir of made.splice(0)) await nodeSnapshotFs.removeTree(dir);
});

/** `skills-mount snapshot DEST --config FILE` in a child process; resolves the exit code and stderr. */
function snapshot(dest: string, config: Record<string, unknown>, configDir: string): Promise<{ code: number | null; stderr: string }> {
  const configPath = path.join(configDir, 'snapshot-config.json');
  return writeFile(configPath, JSON.stringify({ mcpServers: config })).then(
    () =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, [SKILLS_MOUNT, 'snapshot', dest, '--config', configPath, '--no-disk-cache'], { stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        child.once('exit', (code) => resolve({ code, stderr }));
      }),
  );
}

/** skills.json as JSON, without the block only a running daemon has. */
function withoutMountBlock(text: string): unknown {
  const { mount: _mount, ...rest } = JSON.parse(text) as Record<string, unknown>;
  return rest;
}

async function compare(mountpoint: string, dest: string): Promise<void> {
  const diff = await run('diff', ['-r', '-x', 'status.json', '-x', '_approved', '-x', '.snapshot.json', '-x', 'skills.json', mountpoint, dest], 120_000);
  expect(diff.stdout + diff.stderr).toBe('');
  expect(diff.code).toBe(0);
  const mounted = (await runBytes('cat', [path.join(mountpoint, 'skills.json')])).stdout.toString('utf8');
  const written = await readFile(path.join(dest, 'skills.json'), 'utf8');
  expect(withoutMountBlock(written)).toEqual(withoutMountBlock(mounted));
}

for (const corpus of corpusDirs()) describe(`the ${corpus.name} corpus: snapshot and mount`, () => {
  let CORPUS_DIR: string;
  const lenient = corpus.name === 'external' ? ['--lenient'] : [];
  beforeAll(async () => {
    CORPUS_DIR = await corpus.dir();
  });

  it('over stdio: diff -r finds nothing, skills.json equal but for the mount block', async () => {
    const config = { corpus: serveEntry(CORPUS_DIR, ...lenient) };
    mount = await startMount({ config });
    const dest = path.join(await makeTempDir('skills-mount-snapshot-e2e-', '/tmp'), 'skills');
    made.push(path.dirname(dest));
    const result = await snapshot(dest, config, path.dirname(dest));
    expect(result.code, result.stderr).toBe(0);
    await compare(mount.mountpoint, dest);
  });

  it('over Streamable HTTP: the same', async () => {
    const server = await startHttpServe([CORPUS_DIR, ...lenient]);
    try {
      const config = { corpus: { url: server.url } };
      mount = await startMount({ config });
      const dest = path.join(await makeTempDir('skills-mount-snapshot-e2e-', '/tmp'), 'skills');
      made.push(path.dirname(dest));
      const result = await snapshot(dest, config, path.dirname(dest));
      expect(result.code, result.stderr).toBe(0);
      await compare(mount.mountpoint, dest);
    } finally {
      await server.stop();
    }
  });
});
