// `skills-mount verify DEST`: re-hashes a snapshot (the published link, or a folder holding a
// manifest: a copy) against its manifest and prints each file that differs, is missing or is
// extra, and which of the two it was given; exit 0 when none, 1 when any.
import { escapeForLog } from '../format/escape.js';
import { verifySnapshot, type VerifyReport } from '../snapshot/snapshot-verify.js';
import type { VerifyOptions } from './command-line.js';

/** The report as text (or JSON) and the exit code. Throws ConfigError when DEST is no snapshot. */
export async function runVerify(options: VerifyOptions): Promise<{ text: string; exitCode: number }> {
  const report = await verifySnapshot(options.dest, { expectDigest: options.expectDigest });
  return { text: options.json ? `${JSON.stringify(report, null, 2)}\n` : renderVerifyText(report), exitCode: report.problems.length === 0 ? 0 : 1 };
}

/** "differs  acme/x/SKILL.md: hashes to ..., expected ..." per problem, then one summary line. */
export function renderVerifyText(report: VerifyReport): string {
  // Paths come from a server: escaped, so no name can forge a line.
  const lines = report.problems.map((problem) => `${problem.kind.padEnd(8)} ${escapeForLog(problem.path || '.')}: ${escapeForLog(problem.detail)}`);
  const files = `${report.files.toLocaleString('en-US')} files, ${(report.bytes / (1024 * 1024)).toFixed(1)} MiB`;
  // A folder's id is its manifest's, which anyone who wrote the folder chose.
  const id = report.id === null ? '(id unknown)' : escapeForLog(report.id);
  const where = report.given === 'link' ? `at ${report.dest} (the published link, to ${report.dir})` : `in ${report.dest} (a folder holding .snapshot.json, not a published link)`;
  const manifest = report.manifestDigest === null ? '' : `; manifest ${report.manifestDigest}${report.expectedDigest === report.manifestDigest ? ', as --expect says' : ''}`;
  lines.push(
    report.problems.length === 0
      ? `snapshot ${id} ${where}: verified (${files})${manifest}`
      : `snapshot ${id} ${where}: ${report.problems.length} problem${report.problems.length === 1 ? '' : 's'} (${files} in the manifest)${manifest}`,
  );
  return `${lines.join('\n')}\n`;
}
