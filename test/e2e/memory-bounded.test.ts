// The daemon's memory under large files and large listings, measured as its peak RSS
// (VmHWM), against the cache cap plus the overhead stated in docs/robustness.md.
// Listing size: MEMORY_TEST_SKILLS (default 20,000; the full run is 100,000, see docs/robustness.md).
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapLimited } from '../../src/concurrency.js';
import { sha256Hex } from '../support/digest.mjs';
import { peakRssBytes } from '../support/fault-harness.js';
import { run } from '../support/fuse-harness.js';
import { REPO, serveEntry, startMount, type RunningMount } from '../support/mount-harness.js';
import { requireFuse } from '../support/require-fuse.js';
import { writeSkill } from '../support/skill-builder.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

requireFuse();

const MIB = 1024 * 1024;
const CACHE_MIB = 32;
/**
 * What the daemon costs beyond its cache with nothing listed: Node, the SDK, the FUSE edge
 * (~80 MiB idle), plus transient response buffers: the SDK's stdio reader concatenates a
 * whole response (a 16 MiB file is ~22 MiB of base64 JSON) before parsing it, and the
 * JSON text, the base64 string and the decoded bytes coexist. Measured: 264-302 MiB peak.
 */
const FIXED_OVERHEAD_MIB = 400;
/** Peak cost of one listed skill (entry, record, namespace nodes, and the skills.json rendering of it). */
const PER_SKILL_PEAK_KIB = 8;
const SHM = '/dev/shm';

async function scratchDir(prefix: string): Promise<string> {
  // tmpfs keeps generation fast; fall back to /tmp where /dev/shm is missing.
  const base = await run('test', ['-d', SHM, '-a', '-w', SHM]).then((result) => (result.code === 0 ? SHM : '/tmp'));
  return makeTempDir(prefix, base);
}

describe('large files: memory stays within the cache cap plus overhead', () => {
  const skills = 20;
  const filesPerSkill = 2;
  const fileBytes = 4 * MIB;
  let dir: string;
  let mount: RunningMount;
  const digests = new Map<string, string>();

  beforeAll(async () => {
    dir = await scratchDir('skills-mount-memory-files-');
    for (let s = 0; s < skills; s++) {
      const name = `big-${String(s).padStart(2, '0')}`;
      const files: Record<string, Buffer> = {};
      for (let f = 0; f < filesPerSkill; f++) {
        const bytes = randomBytes(fileBytes);
        files[`assets/blob-${f}.bin`] = bytes;
        digests.set(path.join(name, 'assets', `blob-${f}.bin`), sha256Hex(bytes));
      }
      await writeSkill(dir, name, { description: 'Two 4 MiB files.', files });
    }
    // One file near the per-skill limit: over the SDK's default 10 MiB stdio message size once encoded.
    const huge = randomBytes(15 * MIB);
    digests.set(path.join('huge', 'assets', 'blob.bin'), sha256Hex(huge));
    await writeSkill(dir, 'huge', { description: 'One 15 MiB file.', files: { 'assets/blob.bin': huge } });
    mount = await startMount({ config: { big: serveEntry(dir) }, args: ['--cache-size', String(CACHE_MIB), '--timeout', '60'] });
  });
  afterAll(async () => {
    await mount?.stop();
    await removeDir(dir);
  });

  it(`${skills * filesPerSkill} files of 4 MiB and one of 15 MiB, 4 readers at a time, twice: every byte right, peak RSS < ${CACHE_MIB} MiB + ${FIXED_OVERHEAD_MIB} MiB`, async () => {
    const files = [...digests.keys()];
    for (let pass = 0; pass < 2; pass++) {
      await mapLimited(files, 4, async (relative) => {
        const result = await run('sha256sum', [path.join(mount.mountpoint, 'big', relative)], 60_000);
        expect(result.stderr).toBe('');
        expect(result.stdout.split(' ')[0]).toBe(digests.get(relative));
      });
    }
    const skillsJson = JSON.parse((await run('cat', [path.join(mount.mountpoint, 'skills.json')])).stdout);
    expect(skillsJson.mount.cache.usedBytes).toBeLessThanOrEqual(CACHE_MIB * MIB);
    const peakBytes = await peakRssBytes(mount.child.pid!);
    expect(mount.log()).not.toMatch(/ReadBuffer exceeded|connection closed/);
    console.log(`memory: ${files.length - 1} x 4 MiB files + 1 x 15 MiB, --cache-size ${CACHE_MIB}: daemon peak RSS ${(peakBytes / MIB).toFixed(0)} MiB`);
    expect(peakBytes).toBeLessThan((CACHE_MIB + FIXED_OVERHEAD_MIB) * MIB);
  });
});

describe('large listings: memory grows by a stated amount per skill, never unbounded', () => {
  const skills = Number(process.env['MEMORY_TEST_SKILLS'] ?? 20_000);
  let dir: string;
  let mount: RunningMount;

  beforeAll(async () => {
    dir = await scratchDir('skills-mount-memory-listing-');
    const generated = await run(process.execPath, [path.join(REPO, 'scripts', 'gen-skills.mjs'), dir, '--skills', String(skills), '--files', '1'], 300_000);
    expect(generated.code, generated.stderr).toBe(0);
    mount = await startMount({
      config: { many: serveEntry(dir) },
      args: ['--cache-size', String(CACHE_MIB), '--timeout', '120'],
      readyTimeoutMs: 240_000,
    });
  }, 600_000);
  afterAll(async () => {
    await mount?.stop();
    await removeDir(dir);
  }, 120_000);

  it(`${skills} skills listed, skills.json rendered, skills read: peak RSS < ${CACHE_MIB} MiB + ${FIXED_OVERHEAD_MIB} MiB + ${PER_SKILL_PEAK_KIB} KiB per skill`, async () => {
    expect(mount.log()).toMatch(new RegExp(`\\[many\\] listing generation: ${skills} skills`));
    const afterListingBytes = await peakRssBytes(mount.child.pid!);
    const skillsJson = await run('sh', ['-c', `cat "$1" | wc -c`, 'sh', path.join(mount.mountpoint, 'skills.json')], 120_000);
    expect(Number(skillsJson.stdout.trim())).toBeGreaterThan(skills * 100);
    const top = await run('ls', [path.join(mount.mountpoint, 'many')]);
    expect(top.stdout.trim().split('\n').length).toBe(Math.ceil(skills / 100));
    for (const s of [0, Math.floor(skills / 2), skills - 1]) {
      const name = `skill-${String(s).padStart(5, '0')}`;
      const file = path.join(mount.mountpoint, 'many', `g${String(Math.floor(s / 100)).padStart(3, '0')}`, name, 'SKILL.md');
      expect((await run('cat', [file])).stdout).toMatch(new RegExp(`name: ${name}`));
    }
    const peakBytes = await peakRssBytes(mount.child.pid!);
    console.log(
      `memory: ${skills} skills, --cache-size ${CACHE_MIB}: daemon peak RSS ${(afterListingBytes / MIB).toFixed(0)} MiB after listing, ` +
        `${(peakBytes / MIB).toFixed(0)} MiB after skills.json (${((peakBytes / skills) / 1024).toFixed(1)} KiB per skill)`,
    );
    expect(peakBytes).toBeLessThan((CACHE_MIB + FIXED_OVERHEAD_MIB) * MIB + skills * PER_SKILL_PEAK_KIB * 1024);
  });
});
