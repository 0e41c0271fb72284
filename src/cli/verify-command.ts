// `skills-mount verify DEST`: re-hashes a snapshot (the published link, or a folder holding a
// manifest: a copy) against its manifest and prints each file that differs, is missing or is
// extra, and which of the two it was given; with --expect and --against-server, against an
// anchor the folder cannot forge; exit 0 when nothing differs, 1 when anything does.
import { escapeForLog } from '../format/escape.js';
import { modeText } from '../path-control.js';
import { ConfigError } from '../errors.js';
import { isImageLayout } from '../snapshot/oci-layout.js';
import { verifyImageLayout } from '../snapshot/oci-verify.js';
import { verifySnapshot, type VerifyReport } from '../snapshot/snapshot-verify.js';
import type { Log } from '../log.js';
import type { VerifyOptions } from './command-line.js';
import { againstServers } from '../in-process/verify-servers.js';

/** The report as text (or JSON) and the exit code. Throws ConfigError when DEST is no snapshot. */
export async function runVerify(options: VerifyOptions, log: Log): Promise<{ text: string; exitCode: number }> {
  let report: VerifyReport;
  if (await isImageLayout(options.dest)) {
    if (options.againstServer !== undefined) throw new ConfigError(`${options.dest} is an OCI image layout: --against-server compares a snapshot folder (unpack the image, e.g. umoci unpack, and verify its rootfs)`);
    report = await verifyImageLayout(options.dest, { expectDigest: options.expectDigest });
  } else {
    report = await verifySnapshot(options.dest, {
      expectDigest: options.expectDigest,
      againstServer: options.againstServer === undefined ? undefined : againstServers(options.againstServer, log),
    });
  }
  return { text: options.json ? `${JSON.stringify(report, null, 2)}\n` : renderVerifyText(report), exitCode: report.problems.length === 0 ? 0 : 1 };
}

/** "differs  acme/x/SKILL.md: hashes to ..., expected ..." per problem, then one summary line. */
export function renderVerifyText(report: VerifyReport): string {
  // Paths come from a server: escaped, so no name can forge a line.
  const lines = report.problems.map((problem) => `${problem.kind.padEnd(9)} ${escapeForLog(problem.path || '.')}: ${escapeForLog(problem.detail)}`);
  const files = `${report.files.toLocaleString('en-US')} files, ${(report.bytes / (1024 * 1024)).toFixed(1)} MiB`;
  // A folder's id is its manifest's, which anyone who wrote the folder chose.
  const id = report.id === null ? '(id unknown)' : escapeForLog(report.id);
  if (report.image !== null) return imageText(report, report.image, lines);
  const where = report.given === 'link' ? `at ${report.dest} (the published link, to ${report.dir})` : `in ${report.dest} (a folder holding .snapshot.json, not a published link)`;
  const warning = controlWarning(report);
  if (warning !== undefined) lines.push(warning);
  const manifest = report.manifestDigest === null ? '' : `; manifest ${report.manifestDigest}${report.expectedDigest === report.manifestDigest ? ', as --expect says' : ''}`;
  const servers = report.againstServer === null ? '' : serversText(report.againstServer);
  lines.push(
    report.problems.length === 0
      ? `snapshot ${id} ${where}: verified (${files})${manifest}${servers}`
      : `snapshot ${id} ${where}: ${report.problems.length} problem${report.problems.length === 1 ? '' : 's'} (${files} in the manifest)${manifest}${servers}`,
  );
  return `${lines.join('\n')}\n`;
}

/** "OCI image sha256:... in DEST: verified (N files, X MiB in its layer sha256:...; linux/amd64, linux/arm64)". */
function imageText(report: VerifyReport, image: NonNullable<VerifyReport['image']>, lines: string[]): string {
  const files = `${report.files.toLocaleString('en-US')} files, ${(report.bytes / (1024 * 1024)).toFixed(1)} MiB`;
  const layer = image.layerDigest === null ? 'no layer checked' : `its layer ${image.layerDigest}${image.harness === null ? '' : `, a ${escapeForLog(image.harness)} skills root`}`;
  const platforms = image.platforms.map((platform) => escapeForLog(platform)).join(', ');
  const expect = report.expectedDigest !== null && report.expectedDigest === image.indexDigest ? ', as --expect says' : '';
  const what = `OCI image ${escapeForLog(image.indexDigest)}${expect} in ${report.dest}`;
  const detail = `${files} in ${layer}; ${platforms || 'no platform'}${report.manifestDigest === null ? '' : `; snapshot manifest ${report.manifestDigest}`}`;
  lines.push(report.problems.length === 0 ? `${what}: verified (${detail})` : `${what}: ${report.problems.length} problem${report.problems.length === 1 ? '' : 's'} (${detail})`);
  return `${lines.join('\n')}\n`;
}

/** Entries shown by name in the warning; the rest are counted. */
const CONTROLLED_SHOWN = 3;

/** "warning: others than you ... can change this snapshot: PATH (owner uid N, mode M), ...": one line, or undefined when nobody else can. */
export function controlWarning(report: VerifyReport): string | undefined {
  const entries = report.controlledByOthers;
  if (entries.length === 0) return undefined;
  const shown = entries.slice(0, CONTROLLED_SHOWN).map((entry) => `${escapeForLog(entry.path)} (owner uid ${entry.ownerUid}, mode ${modeText(entry.mode)})`);
  const more = entries.length > CONTROLLED_SHOWN ? ` and ${entries.length - CONTROLLED_SHOWN} more` : '';
  const anchor = report.expectedDigest !== null && report.expectedDigest === report.manifestDigest ? 'its manifest is the one --expect names, but what is there can still change' : 'its own manifest proves nothing against them: check it with --expect (the digest snapshot printed) or --against-server';
  return `warning: others than you and root can change this snapshot: ${shown.join(', ')}${more}; ${anchor}`;
}

/** "; against the servers a, b: 57 files compared (55 by digest)", and what --only left out. */
function serversText(comparison: NonNullable<VerifyReport['againstServer']>): string {
  const labels = comparison.servers.length === 0 ? 'none' : comparison.servers.map((label) => escapeForLog(label)).join(', ');
  const leftOut = comparison.leftOut.length === 0 ? '' : `; not compared, as --only says: ${comparison.leftOut.map((label) => escapeForLog(label)).join(', ')}`;
  return `; against the servers (${labels}): ${comparison.filesCompared.toLocaleString('en-US')} files compared (${comparison.digestsCompared.toLocaleString('en-US')} by digest)${leftOut}`;
}
