// Runs the official MCP conformance suite (pinned devDependency) under the pinned Node 24
// from scripts/node24.sh, and reads back its checks.json. No assertions here.
import { execFile, execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/server-harness.js';
import { withTempDir } from '../support/temp-dir.js';

export const SERVER_SCENARIOS = ['sep-2640-skills-directory', 'sep-2640-skills-enumeration', 'sep-2640-skills-manifest'] as const;
export type Scenario = (typeof SERVER_SCENARIOS)[number];

export interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';
  description: string;
  errorMessage?: string;
}

const SUITE = join(REPO_ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

/** The Node 24 binary (installed into .cache/node24 on first use). */
export function node24(): string {
  return execFileSync(join(REPO_ROOT, 'scripts/node24.sh'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

/** One scenario against `url`; `revision` forces one (the suite's default for extensions is 2026-07-28). */
export async function runScenario(node: string, url: string, scenario: Scenario, revision?: string): Promise<{ checks: Check[]; output: string }> {
  // The suite's results are read here and the folder removed, whatever the run did.
  return withTempDir('skills-conformance-', async (out) => {
    const args = [SUITE, 'server', '--url', url, '--scenario', scenario, '-o', out, ...(revision ? ['--spec-version', revision, '--force'] : [])];
    const output = await new Promise<string>((resolve) => {
      // The exit status is ignored: checks.json says more, and it is what the test asserts on.
      execFile(node, args, { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (_error, stdout, stderr) => resolve(`${stdout}${stderr}`));
    });
    const [folder] = await readdir(out);
    if (!folder) throw new Error(`the suite wrote no results for ${scenario}:\n${output}`);
    const checks = JSON.parse(await readFile(join(out, folder, 'checks.json'), 'utf8')) as Check[];
    return { checks, output };
  });
}

/** "sep-2640-skills-directory @ 2026-07-28: 7 passed, 0 failed, 0 warnings, 0 skipped". */
export function summary(scenario: string, revision: string, checks: readonly Check[]): string {
  const count = (status: Check['status']): number => checks.filter((check) => check.status === status).length;
  return `${scenario} @ ${revision}: ${count('SUCCESS')} passed, ${count('FAILURE')} failed, ${count('WARNING')} warnings, ${count('SKIPPED')} skipped`;
}
