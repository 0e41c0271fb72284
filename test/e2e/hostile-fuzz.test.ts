// A seeded, reproducible randomized session against a hostile server: reads through a
// real mount while the server answers some requests with a random fault (wrong bytes,
// garbage, errors, silence, storms). Every read must give the exact bytes or fail; no
// wrong byte is ever served; afterwards a good server's tree diffs clean and the
// daemon is alive.
//   CI:   1,500 server requests (default)
//   full: FUZZ_REQUESTS=10000 npx vitest run test/e2e/hostile-fuzz.test.ts
//   replay: FUZZ_SEED=<seed printed on failure> (same seed, same faults and reads)
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../support/digest.mjs';
import { run } from '../support/fuse-harness.js';
import { hostileEntry, hostileSkill, type HostileSkill } from '../support/hostile-scenario.js';
import { CORPUS_DIR, REPO, makeTestDir, serveEntry, startMount, type RunningMount } from '../support/mount-harness.js';
import { prng } from '../support/prng.mjs';
import { requireFuse } from '../support/require-fuse.js';

requireFuse();

const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const REQUEST_BUDGET = Number(process.env.FUZZ_REQUESTS ?? 1_500);
const BAD_RATE = 0.25;
const READS_PER_ROUND = 200;
const READER = path.join(REPO, 'test', 'support', 'read-many.mjs');

describe(`hostile fuzz (seed ${SEED}, ${REQUEST_BUDGET} requests)`, () => {
  let mount: RunningMount;
  let statsFile: string;
  const expected = new Map<string, string>(); // relative path -> sha256 of the true bytes
  const random = prng(SEED ^ 0x5eed);

  beforeAll(async () => {
    const dir = await makeTestDir();
    statsFile = path.join(dir, 'stats.json');
    const build = prng(SEED);
    const skills: HostileSkill[] = [];
    for (let s = 0; s < 24; s++) {
      const files: Record<string, { text?: string; blob?: string }> = {};
      const count = 1 + Math.floor(build() * 5);
      for (let f = 0; f < count; f++) {
        const binary = build() < 0.3;
        const size = Math.floor(build() * 3_000);
        const bytes = Buffer.from(Array.from({ length: size }, () => (binary ? Math.floor(build() * 256) : 32 + Math.floor(build() * 90))));
        files[binary ? `data/f${f}.bin` : `f${f}.md`] = binary ? { blob: bytes.toString('base64') } : { text: bytes.toString('latin1') };
      }
      const skill = hostileSkill(`group${s % 4}/skill${s}`, `Fuzz skill ${s}`, files);
      skills.push(skill);
      for (const [uri, file] of Object.entries(skill.files)) {
        const bytes = file.blob !== undefined ? Buffer.from(file.blob, 'base64') : Buffer.from(file.text ?? '', 'utf8');
        expected.set(uri.slice('skill://'.length), sha256Hex(bytes));
      }
    }
    mount = await startMount({
      dir,
      config: {
        fuzz: await hostileEntry(dir, 'fuzz', { listing: true, skills, fuzz: { seed: SEED, badRate: BAD_RATE, statsFile } }),
        corpus: serveEntry(CORPUS_DIR),
      },
      // A tiny cache, so that reads keep reaching the server; a short deadline for silent faults.
      args: ['--timeout', '1', '--cache-size', '0.0001'],
    });
  }, 120_000);

  afterAll(async () => {
    await mount?.stop();
  });

  it('every read gives the exact bytes or EIO, never other bytes; the good server diffs clean', async () => {
    const where = `(replay with FUZZ_SEED=${SEED} FUZZ_REQUESTS=${REQUEST_BUDGET})`;
    const known = [...expected.keys()];
    let served = 0;
    let failed = 0;
    let requests = 0;
    for (let round = 0; requests < REQUEST_BUDGET; round++) {
      const picks = Array.from({ length: READS_PER_ROUND }, () =>
        random() < 0.05 ? `group${Math.floor(random() * 4)}/nope${Math.floor(random() * 9)}/f0.md` : known[Math.floor(random() * known.length)]!,
      );
      const result = await run(process.execPath, [READER, JSON.stringify(picks.map((p) => path.join(mount.mountpoint, 'fuzz', p))), '16'], 300_000);
      expect(result.code, `${where} reader: ${result.stderr}`).toBe(0);
      for (const line of result.stdout.split('\n').filter(Boolean)) {
        const outcome = JSON.parse(line) as { i: number; sha256?: string; code?: string };
        const relative = picks[outcome.i]!;
        const truth = expected.get(relative);
        if (truth === undefined) {
          expect(outcome.code, `${where} ${relative} does not exist`).toBe('ENOENT');
        } else if (outcome.sha256 !== undefined) {
          expect(outcome.sha256, `${where} ${relative}: wrong bytes served`).toBe(truth);
          served += 1;
        } else {
          const skillDir = relative.split('/').slice(0, 2).join('/');
          // On failure, what the daemon logged of that skill says which fault led there.
          const logged = () => mount.log().split('\n').filter((line) => line.includes(`${skillDir}/`)).slice(-12).join('\n');
          if (outcome.code !== 'EIO') expect.soft(logged(), `${where} ${relative}: the daemon's log of ${skillDir}`).toBe('');
          expect(outcome.code, `${where} ${relative}`).toBe('EIO');
          failed += 1;
        }
      }
      requests = JSON.parse(await readFile(statsFile, 'utf8')).requests;
      expect(mount.child.exitCode, `${where} daemon exited:\n${mount.log().slice(-3000)}`).toBeNull();
      // A SKILL.md that fails verification takes its skill offline until the next listing (no
      // requests for it meanwhile), so the budget may not be reached in bounded rounds.
      if (round >= 2 * (REQUEST_BUDGET / READS_PER_ROUND) + 10) break;
    }
    expect(requests, `${where} server requests`).toBeGreaterThan(REQUEST_BUDGET / 10);
    const stats = JSON.parse(await readFile(statsFile, 'utf8'));
    console.log(`fuzz seed ${SEED}: ${stats.requests} server requests, ${stats.faults} faults ${JSON.stringify(stats.byFault)}; reads: ${served} served, ${failed} EIO`);
    expect(served, where).toBeGreaterThan(0);
    expect(failed, where).toBeGreaterThan(0);
    expect(mount.child.exitCode, where).toBeNull();
    const diff = await run('diff', ['-r', CORPUS_DIR, path.join(mount.mountpoint, 'corpus')], 120_000);
    expect(diff.stdout + diff.stderr, where).toBe('');
    expect(diff.code, where).toBe(0);
  }, 900_000);
});
