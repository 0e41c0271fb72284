// The official conformance suite's four SEP-2640 host scenarios against skills-mount, through
// a real kernel mount: the suite serves tampered skills, host-adapter.mjs mounts its server
// and reads as an agent would, and the suite judges from the requests it saw.
// The suite needs Node >= 22: it runs under the pinned Node 24 of scripts/node24.sh.
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuseAvailable, requireFuse } from '../support/require-fuse.js';
import { REPO_ROOT } from '../support/server-harness.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

const run = promisify(execFile);
const SUITE = path.join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const ADAPTER = path.join(REPO_ROOT, 'test', 'conformance', 'host-adapter.mjs');

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

const SCENARIOS: Array<[scenario: string, checkId: string]> = [
  ['sep-2640-client-no-prefetch', 'sep-2640-host-no-prefetch'],
  ['sep-2640-client-verify-digest', 'sep-2640-host-verify-digest'],
  ['sep-2640-client-verify-size', 'sep-2640-host-size-mismatch-failure'],
  ['sep-2640-client-verify-frontmatter', 'sep-2640-host-frontmatter-comparison'],
];

requireFuse();

describe.skipIf(!fuseAvailable() && !process.env.CI)('conformance: SEP-2640 host scenarios through a real mount', () => {
  let node24: string;
  let outDir: string;

  beforeAll(async () => {
    node24 = (await run(path.join(REPO_ROOT, 'scripts', 'node24.sh'), [], { timeout: 300_000 })).stdout.trim();
    outDir = await makeTempDir('skills-mount-conformance-out-');
  }, 320_000);

  afterAll(() => removeDir(outDir));

  for (const revision of ['2025-11-25', '2026-07-28']) {
    for (const [scenario, checkId] of SCENARIOS) {
      it(`${scenario} at ${revision}: passes`, async () => {
        const out = path.join(outDir, `${revision}-${scenario}`);
        const args = [SUITE, 'client', '--scenario', scenario, '--command', `${process.execPath} ${ADAPTER}`, '--timeout', '60000', '-o', out];
        if (revision !== '2025-11-25') args.push('--spec-version', revision, '--force');
        const result = await run(node24, args, { timeout: 90_000, maxBuffer: 16 << 20 }).then(
          ({ stdout }) => ({ code: 0, stdout }),
          (error: { code?: number; stdout?: string }) => ({ code: error.code ?? 1, stdout: error.stdout ?? '' }),
        );
        const [runDir] = await readdir(out);
        const checks = JSON.parse(await readFile(path.join(out, runDir!, 'checks.json'), 'utf8')) as Check[];
        const check = checks.find((candidate) => candidate.id === checkId);
        const stderr = await readFile(path.join(out, runDir!, 'stderr.txt'), 'utf8').catch(() => '');
        process.stdout.write(`conformance ${revision} ${scenario}: ${check?.status ?? 'no check'} (exit ${result.code})\n`);
        expect(check, `checks: ${JSON.stringify(checks)}\nadapter stderr:\n${stderr}`).toBeDefined();
        expect(check!.status, `${check!.errorMessage ?? ''}\nadapter stderr:\n${stderr}`).toBe('SUCCESS');
        expect(result.code, result.stdout).toBe(0);
      }, 120_000);
    }
  }
});
