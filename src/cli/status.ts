// `skills-mount status [MOUNTPOINT] [--json]`: every skills-mount mount (or one), its
// servers, skill counts, cache use and latest errors, read from each mount's skills.json
// by a `cat` child process with a deadline, so a hung mount can never hang `status`.
import path from 'node:path';
import { MOUNT_TYPE, canonicalMountpoint, skillsMounts, type MountTableEntry } from '../fuse/index.js';
import { SkillsMountError } from '../errors.js';
import { readMountFile } from '../fuse/mount-read.js';
import { escapeForLog } from '../format/escape.js';
import type { ServerApprovals } from '../fs/approved-view.js';
import { APPROVED_DIR } from '../fs/mount-layout.js';
import type { MountStatus } from '../fs/skills-json.js';

export const DEFAULT_PROBE_TIMEOUT_MS = 2_000;
const RECENT_ERRORS_SHOWN = 5;

export interface ServerStatus {
  label: string;
  state: string;
  reason?: string;
  generation: string | null;
  listingComplete: boolean;
  skills: number;
  declined: number;
  /** Skills whose SKILL.md failed verification: nothing of them is served. */
  rejected: number;
  /** Skills whose entry changed since it was first held. */
  changed: number;
  protocolVersion?: string;
  /** Entries so far while a first listing still pages on. */
  listingInProgress?: number;
  /** While its skills are shown although it cannot be reached. */
  offline?: { since: string; listingSavedAt: string | null };
  /** How many problems the server's listings had (skills.json names them). */
  problems: number;
  /** Only when the server has approvals: how many hold, and the skills changed since theirs. */
  approvals?: ServerApprovals;
}

export type MountState = 'ok' | 'stale' | 'not-responding' | 'unreadable';

export interface MountReport {
  mountpoint: string;
  state: MountState;
  /** Why the mount is not ok, in words. */
  detail?: string;
  pid?: number;
  startedAt?: string;
  cache?: { usedBytes: number; limitBytes: number };
  diskCache?: { dir: string; usedBytes: number; limitBytes: number } | null;
  /** Where the daemon serves /metrics and /healthz (http://HOST:PORT); null without --metrics. */
  metrics?: string | null;
  recentErrors?: string[];
  servers?: ServerStatus[];
}

export interface StatusReport {
  mounts: MountReport[];
  /** The skills roots `skills-mount link` keeps (absent when nothing was ever linked). */
  links?: LinkStatus[];
  /** The policy files and their state (absent when no policy file exists). */
  policy?: { files: Array<{ path: string; state: string }>; lines: string[] };
}

/** One linked skills root: whose, where, and what is in it. */
export interface LinkStatus {
  root: string;
  harnesses: string[];
  scope: 'user' | 'project';
  entries: Array<{ name: string; label: string; skillUri: string; qualified: boolean }>;
  problems: string[];
}

/** Thrown when the MOUNTPOINT given to `status` or `unmount` is not a skills-mount mount. */
export class NotMountedError extends SkillsMountError {
  override name = 'NotMountedError';
  readonly code = 'NOT_MOUNTED';
}

/** The report for one mountpoint, or every skills-mount mount when none is given. */
export async function collectStatus(mountpoint?: string, timeoutMs = DEFAULT_PROBE_TIMEOUT_MS, table?: string): Promise<StatusReport> {
  const all = await skillsMounts(table);
  let chosen: MountTableEntry[] = all;
  if (mountpoint !== undefined) {
    const wanted = await canonicalMountpoint(mountpoint);
    chosen = all.filter((entry) => entry.mountpoint === wanted);
    if (chosen.length === 0) throw new NotMountedError(`${wanted} is not a skills-mount mount (nothing of type ${MOUNT_TYPE} is mounted there)`);
  }
  return { mounts: await Promise.all(chosen.map((entry) => probeMount(entry.mountpoint, timeoutMs))) };
}

/**
 * Reads MOUNTPOINT/status.json (a few hundred bytes a server, at any catalog size) from a
 * child process; classifies what went wrong. A daemon from before status.json: skills.json.
 */
export async function probeMount(mountpoint: string, timeoutMs: number): Promise<MountReport> {
  let file = 'status.json';
  let outcome = await readMountFile(path.join(mountpoint, file), timeoutMs);
  if (outcome.kind === 'error' && /no such file/i.test(outcome.message)) {
    file = 'skills.json';
    outcome = await readMountFile(path.join(mountpoint, file), timeoutMs);
  }
  if (outcome.kind === 'timeout') {
    return { mountpoint, state: 'not-responding', detail: `${file} did not answer within ${formatSeconds(timeoutMs)}` };
  }
  if (outcome.kind === 'error') {
    if (/not connected|aborted/i.test(outcome.message)) {
      return { mountpoint, state: 'stale', detail: `the daemon is gone (${outcome.message})` };
    }
    const denied = /permission denied/i.test(outcome.message);
    return { mountpoint, state: 'unreadable', detail: denied ? 'permission denied: the mount belongs to another user' : outcome.message };
  }
  let document: StatusDocument;
  try {
    document = JSON.parse(outcome.text) as StatusDocument;
  } catch {
    return { mountpoint, state: 'unreadable', detail: `${file} is not JSON` };
  }
  return {
    mountpoint,
    state: 'ok',
    ...(document.mount
      ? {
          pid: document.mount.pid,
          startedAt: document.mount.startedAt,
          cache: document.mount.cache,
          diskCache: document.mount.diskCache ?? null,
          metrics: typeof document.mount.metrics === 'string' ? document.mount.metrics : null,
          recentErrors: document.mount.recentErrors,
        }
      : {}),
    servers: (document.servers ?? []).map((server) => {
      const skills = Array.isArray(server.skills) ? server.skills : undefined;
      const count = (value: unknown, of: (skill: { declined?: string; state?: string }) => boolean) =>
        typeof value === 'number' ? value : (skills?.filter(of).length ?? 0);
      return {
        label: server.label,
        state: server.state,
        ...(server.reason ? { reason: server.reason } : {}),
        generation: server.generation ?? null,
        listingComplete: server.listingComplete === true,
        ...(server.protocolVersion ? { protocolVersion: server.protocolVersion } : {}),
        ...(typeof server.listingInProgress === 'number' ? { listingInProgress: server.listingInProgress } : {}),
        ...(server.offline && typeof server.offline.since === 'string' ? { offline: { since: server.offline.since, listingSavedAt: server.offline.listingSavedAt ?? null } } : {}),
        skills: count(server.skills, (skill) => !skill.declined),
        declined: count(server.declined, (skill) => Boolean(skill.declined)),
        rejected: count(server.rejected, (skill) => skill.state === 'rejected'),
        changed: count(server.changed, (skill) => skill.state === 'changed'),
        problems: typeof server.problems === 'number' ? server.problems : (server.problems?.length ?? 0),
        ...(server.approvals && typeof server.approvals.approved === 'number' ? { approvals: server.approvals } : {}),
      };
    }),
  };
}

/** The report as text for a person. */
export function renderStatusText(report: StatusReport, nowMs = Date.now()): string {
  const mounts = report.mounts.length === 0 ? 'no skills-mount mounts\n' : report.mounts.map((mount) => renderMount(mount, nowMs)).join('\n');
  const links = report.links === undefined || report.links.length === 0 ? '' : `\n${renderLinks(report.links)}`;
  const policy = report.policy === undefined ? '' : `\n${report.policy.lines.map((line) => `${escapeForLog(line)}\n`).join('')}`;
  return `${mounts}${links}${policy}`;
}

/** "linked skills roots:" and a line per root, with its problems below. */
function renderLinks(links: readonly LinkStatus[]): string {
  const lines = ['linked skills roots (skills-mount link):'];
  for (const link of links) {
    const names = link.entries.map((entry) => (entry.qualified ? `${escapeForLog(entry.name)} (${entry.label}, qualified)` : escapeForLog(entry.name)));
    lines.push(`  ${link.harnesses.join(', ')} (${link.scope}): ${escapeForLog(link.root)}: ${link.entries.length} skill${link.entries.length === 1 ? '' : 's'}${names.length ? `: ${names.join(', ')}` : ''}`);
    for (const problem of link.problems) lines.push(`    ${escapeForLog(problem)}`);
  }
  return `${lines.join('\n')}\n`;
}

function renderMount(mount: MountReport, nowMs: number): string {
  if (mount.state !== 'ok') {
    const headline = { stale: 'STALE', 'not-responding': 'NOT RESPONDING', unreadable: 'UNREADABLE' }[mount.state];
    const fix = mount.state === 'unreadable' && /another user/.test(mount.detail ?? '') ? '' : `  fix: skills-mount unmount ${mount.mountpoint}\n`;
    return `${mount.mountpoint}  ${headline}: ${mount.detail ?? ''}\n${fix}`;
  }
  const facts: string[] = [];
  if (mount.startedAt) facts.push(`up ${formatDuration(nowMs - Date.parse(mount.startedAt))}`);
  if (mount.pid !== undefined) facts.push(`pid ${mount.pid}`);
  if (mount.cache) facts.push(`cache ${formatBytes(mount.cache.usedBytes)} of ${formatBytes(mount.cache.limitBytes)}`);
  if (mount.diskCache) facts.push(`disk cache ${formatBytes(mount.diskCache.usedBytes)} of ${formatBytes(mount.diskCache.limitBytes)}`);
  if (mount.metrics) facts.push(`metrics ${escapeForLog(mount.metrics)}/metrics`);
  const lines = [`${mount.mountpoint}  ${facts.join(', ')}`];
  const servers = mount.servers ?? [];
  const rows = [
    ['SERVER', 'STATE', 'DISCOVERY', 'SKILLS', 'NOTES'],
    ...servers.map((server) => [
      server.label,
      server.state === 'needs-login' ? 'needs login' : server.offline ? 'offline' : server.protocolVersion ? `${server.state} (${server.protocolVersion})` : server.state,
      server.generation ?? '-',
      String(server.skills),
      [
        server.offline
          ? `since ${server.offline.since}${server.offline.listingSavedAt ? `; listing kept on disk ${server.offline.listingSavedAt}` : ''}; files read before are served from the disk cache`
          : undefined,
        server.reason,
        server.listingInProgress !== undefined ? `still listing (${server.listingInProgress} entries so far)` : undefined,
        server.generation !== null && server.generation !== 'none' && !server.listingComplete ? 'listing incomplete' : undefined,
        server.declined > 0 ? `${server.declined} declined` : undefined,
        server.rejected > 0 ? `${server.rejected} rejected (failed verification)` : undefined,
        server.changed > 0 ? `${server.changed} changed since first listed` : undefined,
        server.problems > 0 ? `${server.problems} problem${server.problems === 1 ? '' : 's'} (see skills.json)` : undefined,
        server.approvals ? approvalsNote(server.approvals) : undefined,
      ]
        .filter((note) => note !== undefined)
        .join('; '),
    ]),
  ];
  lines.push(...table(rows).map((row) => `  ${row}`));
  const total = servers.reduce((sum, server) => sum + server.skills, 0);
  const connected = servers.filter((server) => server.state === 'connected').length;
  lines.push(`  ${servers.length} server${servers.length === 1 ? '' : 's'} (${connected} connected), ${total} skill${total === 1 ? '' : 's'}`);
  const errors = mount.recentErrors ?? [];
  if (errors.length === 0) lines.push('  recent errors: none');
  else {
    lines.push(`  recent errors (${errors.length}, latest last):`);
    for (const error of errors.slice(-RECENT_ERRORS_SHOWN)) lines.push(`    ${error}`);
  }
  return `${lines.join('\n')}\n`;
}

/** "2 approved; changed since approval: brand-kit (brand-kit/references/style.md changed)" */
function approvalsNote(approvals: ServerApprovals): string {
  const note = [`${approvals.approved} approved`];
  if (approvals.changedSinceApproval > 0) {
    const skills = approvals.changed.map((skill) => `${escapeForLog(skill.path)} (${skill.differing.map((d) => `${escapeForLog(d.path ?? d.uri)} ${d.change}`).join(', ') || 'changed and back'})`);
    const more = approvals.changedSinceApproval - approvals.changed.length;
    note.push(`changed since approval: ${skills.join('; ')}${more > 0 ? ` and ${more} more` : ''}`);
  }
  // A lock's skills this machine cannot serve whole: left out of the approved view, with link's reason.
  for (const skill of approvals.notShown ?? []) note.push(`${escapeForLog(skill.path)} not shown in ${APPROVED_DIR}: ${escapeForLog(skill.reason)}`);
  return note.join('; ');
}

/** Rows as aligned columns, two spaces apart; the columns in `rightAligned` (numbers) padded on the left. */
export function table(rows: string[][], rightAligned: readonly number[] = [3]): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows.map((row) =>
    row
      .map((cell, column) => (rightAligned.includes(column) ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd(),
  );
}

/** "1.2 MiB", "512 B". */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** "3s", "2m 05s", "4h 10m", "2d 3h". */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, '0')}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h ${String(minutes % 60).padStart(2, '0')}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`;
}


/** status.json, or (from an older daemon) skills.json: counts, or the skills to count. */
interface StatusDocument {
  mount?: MountStatus;
  servers?: Array<{
    label: string;
    state: string;
    reason?: string;
    generation?: string | null;
    listingComplete?: boolean;
    protocolVersion?: string;
    listingInProgress?: number;
    offline?: { since?: string; listingSavedAt?: string | null };
    skills?: number | Array<{ declined?: string; state?: string }>;
    declined?: number;
    rejected?: number;
    changed?: number;
    problems?: number | string[];
    approvals?: ServerApprovals;
  }>;
}
