// Renders MOUNTPOINT/skills.json: every server's state and skills, with qualified names
// that are unique across the mount and collisions shown, never silently resolved.
import { randomUUID } from 'node:crypto';
import type { CatalogHealth, CatalogSummary, SkillSummary } from '../catalog/server-catalog.js';
import type { SkillApproval } from './approved-view.js';
import type { DocumentPart, DocumentSegment } from './generated-document.js';

export interface SkillsJsonSkill {
  name: string;
  /** `<label>/<name>`, or `<label>/<skill path>` when the name repeats within the server. */
  qualifiedName: string;
  description: string;
  uri: string;
  /** Path of the skill directory relative to the mountpoint. */
  path: string;
  digest: string | null;
  /** What a reader finds verified: every file, SKILL.md only (index), nothing (dynamic), or nothing served (none: declined). */
  integrity: 'verified' | 'skill-md-verified' | 'dynamic' | 'none';
  /** Qualified names of the other skills, on any server, with the same name. */
  collidesWith?: string[];
  declined?: string;
  /** ok, or why nothing of the skill is served now (rejected), or that its entry changed. */
  state: 'ok' | 'declined' | 'rejected' | 'changed';
  rejected?: string;
  changedAt?: string;
  /** sha256 over the held entry's sorted uri+digest pairs: what an approval binds to. */
  resourcesDigest: string | null;
  /** A rule of the final text this entry breaks that does not stop it being mounted. */
  breaks?: string;
  /** Only for a skill a person approved: whether the approval still covers it, and what differs when not. */
  approval?: SkillApproval;
}

export interface SkillsJsonServer {
  label: string;
  state: 'connected' | 'degraded' | 'connecting' | 'failed' | 'incompatible' | 'needs-login' | 'closed';
  reason?: string;
  /** While its skills are shown although it cannot be reached: since when, and when the listing shown was kept. */
  offline?: { since: string; listingSavedAt: string | null };
  /** The negotiated MCP revision, while connected. */
  protocolVersion?: string;
  /** Change events can reach the mount now (else only re-listing finds changes). */
  liveChannel: boolean;
  /** While a first listing still pages on: the entries received so far. */
  listingInProgress?: number;
  /** The listing's ttlMs/cacheScope as the server sent them, and how long the mount holds it. */
  cache: { ttlMs: number | null; cacheScope: string | null; relistAfterMs: number };
  generation: 'listing' | 'index' | 'none' | null;
  listingComplete: boolean;
  skills: SkillsJsonSkill[];
  problems: string[];
}

/** The daemon's own state, for `skills-mount status`. */
export interface MountStatus {
  pid: number;
  startedAt: string;
  cache: { usedBytes: number; limitBytes: number };
  /** The verified disk cache of this mount; null with --no-disk-cache. */
  diskCache?: { dir: string; usedBytes: number; limitBytes: number } | null;
  /** Where --metrics serves /metrics and /healthz (http://HOST:PORT); null without --metrics. */
  metrics?: string | null;
  /** The latest failures reported to callers (EIO and the like), newest last. */
  recentErrors: string[];
}

const MAX_COLLISIONS_SHOWN = 20;

/**
 * A value as pretty JSON (no final newline). JSON escapes control characters but not
 * U+2028/U+2029, which some readers take for line ends: those are escaped too.
 */
export function jsonText(value: unknown): string {
  const text = JSON.stringify(value, null, 2);
  // The check first: most texts have neither, and a regex replace costs a pass over the text.
  if (!text.includes('\u2028') && !text.includes('\u2029')) return text;
  return text.replace(/[\u2028\u2029]/g, (c) => (c === '\u2028' ? '\\u2028' : '\\u2029'));
}

/** A generated document as pretty JSON ending in a newline. */
export function documentText(document: unknown): string {
  return `${jsonText(document)}\n`;
}

/** What skills.json and status.json both say of a server: its connection and its listing's progress. */
export function serverState(catalog: Pick<CatalogHealth, 'label' | 'connection' | 'offline' | 'generation' | 'listingComplete' | 'listingInProgress' | 'liveChannel'>) {
  const connection = catalog.connection;
  return {
    label: catalog.label,
    state: connection.status,
    ...(catalog.offline ? { offline: catalog.offline } : {}),
    ...('reason' in connection && connection.reason ? { reason: connection.reason } : {}),
    ...('protocolVersion' in connection ? { protocolVersion: connection.protocolVersion } : {}),
    liveChannel: catalog.liveChannel,
    ...(catalog.listingInProgress !== null ? { listingInProgress: catalog.listingInProgress } : {}),
    generation: catalog.generation ?? null,
    listingComplete: catalog.listingComplete,
  };
}

/** The skills.json document for the given catalogs, as pretty-printed JSON text. */
export function renderSkillsJson(catalogs: readonly CatalogSummary[], mount?: MountStatus, approvalOf?: ApprovalLookup): string {
  return `${[...skillsJsonParts(catalogs, mount, approvalOf)].map(String).join('')}\n`;
}

/** A skill's approval state by (label, skill URI); undefined for a skill nobody approved. */
export type ApprovalLookup = (label: string, skillUri: string) => SkillApproval | undefined;

/** How many skills are rendered between two places where rendering may pause (and make one segment). */
const SKILLS_PER_PAUSE = 500;

/**
 * skills.json in parts (no final newline), the same text JSON.stringify(document, null, 2)
 * gives: the outline as text, the skills as segments of SKILLS_PER_PAUSE that render their text
 * when asked, so a catalog of any size is never one string; '' marks a place where the caller
 * may pause. Skills are sorted by qualified name (code-unit order: cheap).
 */
export function* skillsJsonParts(catalogs: readonly CatalogSummary[], mount?: MountStatus, approvalOf?: ApprovalLookup): Generator<DocumentPart> {
  // Stands for an array in a rendered outline, replaced by the array's rendering; random, so
  // no server-supplied string (a reason, a problem) can contain it.
  const HOLE = `\u0000${randomUUID()}\u0000`;
  const HOLE_JSON = JSON.stringify(HOLE);
  // First pass: qualified names, and every skill's name across servers (collisions).
  const byName = new Map<string, string[]>();
  const ordered = catalogs.map((catalog) => {
    const nameCounts = countBy(catalog.skills.map((skill) => skill.name));
    const named = catalog.skills.map((skill) => ({ skill, qualifiedName: `${catalog.label}/${nameCounts.get(skill.name) === 1 ? skill.name : skill.path}` }));
    named.sort((a, b) => (a.qualifiedName < b.qualifiedName ? -1 : a.qualifiedName > b.qualifiedName ? 1 : 0));
    for (const { skill, qualifiedName } of named) {
      const same = byName.get(skill.name);
      if (same) same.push(qualifiedName);
      else byName.set(skill.name, [qualifiedName]);
    }
    return named;
  });
  yield '';
  const [documentHead, documentTail] = jsonText(mount ? { mount, servers: HOLE } : { servers: HOLE }).split(HOLE_JSON) as [string, string];
  yield documentHead;
  if (catalogs.length === 0) yield '[]';
  else yield '[\n';
  for (const [serverIndex, catalog] of catalogs.entries()) {
    const server = { ...serverState(catalog), cache: catalog.cache, skills: HOLE, problems: catalog.problems };
    const [serverHead, serverTail] = indent(jsonText(server), '    ').split(HOLE_JSON) as [string, string];
    yield `    ${serverHead}`;
    const named = ordered[serverIndex]!;
    if (named.length === 0) yield '[]';
    else yield '[\n';
    // Each group of skills is one segment: it holds the summaries it shows (their strings are
    // the catalog's) while the document is held, and its bytes only while they are read.
    for (let start = 0; start < named.length; start += SKILLS_PER_PAUSE) {
      const group = named.slice(start, start + SKILLS_PER_PAUSE);
      const extras = new Map<number, Pick<SkillsJsonSkill, 'collidesWith' | 'approval'>>();
      for (const [i, { skill, qualifiedName }] of group.entries()) {
        const collidesWith = collisions(byName.get(skill.name)!, qualifiedName);
        const approval = approvalOf?.(catalog.label, skill.uri);
        if (collidesWith || approval) extras.set(i, { collidesWith, approval });
      }
      yield new SkillsSegment(catalog.label, group, extras, start + SKILLS_PER_PAUSE >= named.length);
      yield '';
    }
    yield `${serverTail}${serverIndex === catalogs.length - 1 ? '\n  ]' : ',\n'}`;
  }
  yield documentTail;
}

/** A skill as skills.json shows it. */
function renderedSkill(label: string, skill: SkillSummary, qualifiedName: string, extra: Pick<SkillsJsonSkill, 'collidesWith' | 'approval'> | undefined): SkillsJsonSkill {
  const rendered: SkillsJsonSkill = {
    name: skill.name,
    qualifiedName,
    description: skill.description,
    uri: skill.uri,
    path: `${label}/${skill.path}`,
    digest: skill.digest ?? null,
    integrity: skill.integrity,
    ...(skill.declined ? { declined: skill.declined } : {}),
    state: skill.declined ? 'declined' : skill.rejected ? 'rejected' : skill.changedAt ? 'changed' : 'ok',
    ...(skill.rejected ? { rejected: skill.rejected } : {}),
    ...(skill.changedAt ? { changedAt: skill.changedAt } : {}),
    resourcesDigest: skill.resourcesDigest,
    ...(skill.breaks ? { breaks: skill.breaks } : {}),
  };
  if (extra?.collidesWith) rendered.collidesWith = extra.collidesWith;
  if (extra?.approval) rendered.approval = extra.approval;
  return rendered;
}

/**
 * Consecutive skills of one server's array, the last one closing the array: a snapshot (the
 * summaries, their qualified names, collisions and approvals as they were), so its text is the
 * same each time it is rendered. Joined as a string, it is its text.
 */
class SkillsSegment implements DocumentSegment {
  constructor(
    private readonly label: string,
    private readonly skills: ReadonlyArray<{ skill: SkillSummary; qualifiedName: string }>,
    private readonly extras: ReadonlyMap<number, Pick<SkillsJsonSkill, 'collidesWith' | 'approval'>>,
    private readonly closesArray: boolean,
  ) {}

  text(): string {
    const pieces = this.skills.map(({ skill, qualifiedName }, i) => `        ${indent(jsonText(renderedSkill(this.label, skill, qualifiedName, this.extras.get(i))), '        ')}`);
    return `${pieces.join(',\n')}${this.closesArray ? '\n      ]' : ',\n'}`;
  }

  toString(): string {
    return this.text();
  }
}

/**
 * The other qualified names sharing a skill's name, at most MAX_COLLISIONS_SHOWN of them
 * (2,000 skills all named "x" would otherwise list 4 million names); undefined when unique.
 */
function collisions(same: string[], qualifiedName: string): string[] | undefined {
  if (same.length < 2) return undefined;
  const others: string[] = [];
  for (const other of same) {
    if (other === qualifiedName) continue;
    if (others.length === MAX_COLLISIONS_SHOWN) {
      others.push(`... and ${same.length - 1 - MAX_COLLISIONS_SHOWN} more`);
      break;
    }
    others.push(other);
  }
  return others;
}

function indent(text: string, prefix: string): string {
  return text.replace(/\n/g, `\n${prefix}`);
}

function countBy(values: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}
