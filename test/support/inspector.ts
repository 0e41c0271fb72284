// The MCP Inspector's CLI (@modelcontextprotocol/inspector, pinned; scripts/inspector.sh installs
// it into a prefix of its own) as the client tests run it: under the pinned Node 24 (it needs
// >= 22.19), one `--method skills/list --verify` run, its exit code, its per-skill JSON reports
// (stdout) and its closing line (stderr). Starting servers is the test's job, not this file's.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './server-harness.js';

export const INSPECTOR_VERSION = '2.12.0';

/** Where scripts/inspector.sh installs (SKILLS_MOUNT_INSPECTOR overrides, as the script's PREFIX argument). */
export function inspectorPrefix(): string {
  return process.env['SKILLS_MOUNT_INSPECTOR'] ?? path.join(REPO_ROOT, '.cache/inspector');
}

/** Whether the pinned version is installed (the script's stamp, written after its version check). */
export function isInspectorInstalled(): boolean {
  return existsSync(path.join(inspectorPrefix(), `.installed-${INSPECTOR_VERSION}`));
}

/** One skill's report, as `--verify` prints it (one JSON line per skill). */
export interface SkillReport {
  uri: string;
  name: string;
  ok: boolean;
  outcome: 'verified' | 'failed' | 'incomplete' | 'unverifiable';
  conformance: unknown[];
  frontmatter: unknown[];
  files: Array<{ uri: string; status: string }>;
}

export interface VerifyRun {
  code: number | null;
  reports: SkillReport[];
  stdout: string;
  stderr: string;
}

/**
 * `inspector --cli --method skills/list --verify ...args` on `node`, in `env` (its HOME too: it
 * keeps state there). `args` name the server: `--server-url URL`, or `-- COMMAND ARGS...`.
 */
export function inspectorVerify(node: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<VerifyRun> {
  const launcher = path.join(inspectorPrefix(), 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');
  return new Promise((resolve) => {
    execFile(node, [launcher, '--cli', '--method', 'skills/list', '--verify', ...args], { env, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      // Each report is one line starting with "{"; anything else on stdout stays in `stdout` for the message.
      const reports = stdout
        .split('\n')
        .filter((line) => line.startsWith('{"uri"'))
        .map((line) => JSON.parse(line) as SkillReport);
      resolve({ code, reports, stdout, stderr });
    });
  });
}
