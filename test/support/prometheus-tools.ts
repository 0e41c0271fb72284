// Prometheus's own tools for the metrics tests: promtool's linter on /metrics text, and where
// they are. They come from the Debian package prometheus (scripts/test.sh installs it); without
// them a test skips saying why, except in CI (CI=true), where a missing tool is a failure.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** The tool's path on PATH, or undefined. */
export function toolPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir === '') continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Why the tools cannot be used ("promtool is not installed (...)"), or undefined when all are there. */
export function missingTools(names: readonly string[]): string | undefined {
  const missing = names.filter((name) => toolPath(name) === undefined);
  if (missing.length === 0) return undefined;
  return `${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not installed (Debian package prometheus: apt-get install prometheus; scripts/test.sh installs it)`;
}

/**
 * Whether tests needing `names` should be skipped here: never in CI (the test then fails on
 * `failIfMissing`), else when one is missing, with a warning naming it.
 */
export function skipWithoutTools(names: readonly string[]): boolean {
  const missing = missingTools(names);
  if (missing === undefined || process.env.CI) return false;
  console.warn(`skipping: ${missing}`);
  return true;
}

/** Throws, naming the missing tool, when one of `names` is missing (the CI case of skipWithoutTools). */
export function failIfMissing(names: readonly string[]): void {
  const missing = missingTools(names);
  if (missing !== undefined) throw new Error(`${missing}; CI requires it`);
}

/** `promtool check metrics` on the text: exit code (0: accepted) and what it said. */
export function promtoolCheck(text: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
    child.stdin.end(text);
  });
}
