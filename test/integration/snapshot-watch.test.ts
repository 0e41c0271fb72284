// `skills-mount snapshot DEST --watch` while 8 reader processes read every file over and over:
// the served folder changes 20 times (skills-serve watches it and announces each change), the
// watch publishes a snapshot for each, and every read of every pass returns the bytes of the one
// published snapshot the pass resolved, never a mix, never a missing file. Readers do what
// docs/snapshot.md tells them: resolve DEST once per pass (chdir into it), then relative paths.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, readlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeSnapshotFs } from '../../src/snapshot/snapshot-fs.js';
import { exitOf, stopChild } from '../support/children.js';
import { SKILLS_MOUNT, SKILLS_SERVE } from '../support/mount-harness.js';
import { waitFor } from '../support/poll.js';
import { skillMd } from '../support/skill-builder.js';
import { makeTempDir } from '../support/temp-dir.js';

const CHANGES = 20;
const READERS = 8;

/** One reader: passes over the snapshot until STOP exists; prints what it saw as one JSON line. */
const READER = `
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { basename } from 'node:path';
const [dest, stop] = process.argv.slice(1);
let passes = 0, reads = 0;
const errors = [];
const seen = new Set();
while (!existsSync(stop)) {
  // Resolve DEST once for the pass: from here on every path is relative to one snapshot.
  try { process.chdir(dest); } catch (error) { errors.push('chdir: ' + error.code); continue; }
  const id = basename(realpathSync('.'));
  let manifest;
  try { manifest = JSON.parse(readFileSync('.snapshot.json', 'utf8')); } catch (error) { errors.push(id + ' .snapshot.json: ' + error.code); continue; }
  for (const file of manifest.files) {
    reads += 1;
    try {
      const digest = 'sha256:' + createHash('sha256').update(readFileSync(file.path)).digest('hex');
      if (digest !== file.sha256) errors.push(id + ' ' + file.path + ': other bytes than this snapshot holds');
    } catch (error) {
      errors.push(id + ' ' + file.path + ': ' + error.code);
    }
  }
  seen.add(id);
  passes += 1;
}
process.stdout.write(JSON.stringify({ passes, reads, errors: errors.slice(0, 20), errorCount: errors.length, seen: [...seen] }) + '\\n');
`;

const made: string[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children.splice(0)) await stopChild(child, { graceMs: 2_000 });
  for (const dir of made.splice(0)) await nodeSnapshotFs.removeTree(dir);
});

describe('snapshot --watch with readers', () => {
  it(`publishes ${CHANGES} changes while ${READERS} readers see only whole published snapshots; SIGTERM stops it with exit 0`, async () => {
    const dir = await makeTempDir('skills-mount-snapshot-watch-');
    made.push(dir);
    const served = path.join(dir, 'served');
    for (const name of ['alpha', 'beta', 'gamma']) {
      await mkdir(path.join(served, name, 'refs'), { recursive: true });
      await writeFile(path.join(served, name, 'SKILL.md'), skillMd(name));
      await writeFile(path.join(served, name, 'refs', 'notes.md'), `${name} notes\n`.repeat(50));
    }
    const dest = path.join(dir, 'skills');
    const watch = spawn(process.execPath, [SKILLS_MOUNT, 'snapshot', dest, '--watch', '--no-disk-cache', '--server', `w=${process.execPath} ${SKILLS_SERVE} ${served}`], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(watch);
    let log = '';
    watch.stderr!.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
    const publishedIds = () => [...log.matchAll(/snapshot (\S+) published at /g)].map((match) => match[1]!);
    await waitFor(() => publishedIds().length === 1, 30_000, `the first snapshot; log:\n${log}`);

    const stop = path.join(dir, 'stop-readers');
    const readers = Array.from({ length: READERS }, () => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', READER, dest, stop], { stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(child);
      let out = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      return { child, output: () => out };
    });

    for (let change = 1; change <= CHANGES; change++) {
      const before = publishedIds().length;
      // A new size and new bytes each time, in one skill's supporting file and, every other time, its SKILL.md.
      await writeFile(path.join(served, 'beta', 'refs', 'notes.md'), `change ${change}\n`.repeat(50 + change));
      if (change % 2 === 0) await writeFile(path.join(served, 'beta', 'SKILL.md'), `${skillMd('beta')}\nChange ${change}.\n`);
      await waitFor(() => publishedIds().length > before, 30_000, `a snapshot for change ${change}; log:\n${log}`);
      const notes = await readFile(path.join(dest, 'w', 'beta', 'refs', 'notes.md'), 'utf8').catch(() => '');
      if (!notes.startsWith(`change ${change}\n`)) await waitFor(async () => (await readFile(path.join(dest, 'w', 'beta', 'refs', 'notes.md'), 'utf8')).startsWith(`change ${change}\n`), 30_000, `change ${change} in DEST`);
    }

    await writeFile(stop, '');
    const reports = await Promise.all(
      readers.map(async (reader) => {
        await exitOf(reader.child);
        return JSON.parse(reader.output()) as { passes: number; reads: number; errors: string[]; errorCount: number; seen: string[] };
      }),
    );
    const published = new Set(publishedIds());
    expect(published.size).toBeGreaterThanOrEqual(CHANGES + 1);
    for (const report of reports) {
      expect(report.errors, `${report.errorCount} bad reads`).toEqual([]);
      expect(report.passes).toBeGreaterThan(0);
      for (const id of report.seen) expect(published.has(id), id).toBe(true);
    }
    // The readers saw many snapshots between them, not just the last one.
    expect(new Set(reports.flatMap((report) => report.seen)).size).toBeGreaterThan(CHANGES / 2);

    const target = await readlink(dest);
    watch.kill('SIGTERM');
    expect((await exitOf(watch)).code).toBe(0);
    expect(await readlink(dest)).toBe(target);
    const verify = spawn(process.execPath, [SKILLS_MOUNT, 'verify', dest], { stdio: 'ignore' });
    expect((await exitOf(verify)).code).toBe(0);
  }, 240_000);
});
