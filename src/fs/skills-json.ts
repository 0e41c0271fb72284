// Renders MOUNTPOINT/skills.json: every server's state and skills, with qualified names
// that are unique across the mount and collisions shown, never silently resolved.
import type { CatalogHealth, CatalogSummary } from '../catalog/server-catalog.js';

export interface SkillsJsonSkill {
  name: string;
  /** `<label>/<name>`, or `<label>/<skill path>` when the name repeats within the server. */
  qualifiedName: string;
  description: string;
  uri: string;
  /** Path of the skill directory relative to the mountpoint. */
  path: string;
  digest: string | null;
  integrity: 'verified' | 'skill-md-verified' | 'dynamic';
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
}

export interface SkillsJsonServer {
  label: string;
  state: 'connected' | 'connecting' | 'failed' | 'incompatible' | 'closed';
  reason?: string;
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
  /** The latest failures reported to callers (EIO and the like), newest last. */
  recentErrors: string[];
}

const MAX_COLLISIONS_SHOWN = 20;

/**
 * A generated document as pretty JSON ending in a newline. JSON escapes control characters
 * but not U+2028/U+2029, which some readers take for line ends: those are escaped too.
 */
export function documentText(document: unknown): string {
  return `${JSON.stringify(document, null, 2).replace(/[\u2028\u2029]/g, (c) => (c === '\u2028' ? '\\u2028' : '\\u2029'))}\n`;
}

/** What skills.json and status.json both say of a server: its connection and its listing's progress. */
export function serverState(catalog: Pick<CatalogHealth, 'label' | 'connection' | 'generation' | 'listingComplete' | 'listingInProgress' | 'liveChannel'>) {
  const connection = catalog.connection;
  return {
    label: catalog.label,
    state: connection.status,
    ...('reason' in connection && connection.reason ? { reason: connection.reason } : {}),
    ...(connection.status === 'connected' ? { protocolVersion: connection.protocolVersion } : {}),
    liveChannel: catalog.liveChannel,
    ...(catalog.listingInProgress !== null ? { listingInProgress: catalog.listingInProgress } : {}),
    generation: catalog.generation ?? null,
    listingComplete: catalog.listingComplete,
  };
}

/** The skills.json document for the given catalogs, as pretty-printed JSON text. */
export function renderSkillsJson(catalogs: readonly CatalogSummary[], mount?: MountStatus): string {
  const servers: SkillsJsonServer[] = catalogs.map((catalog) => {
    const nameCounts = countBy(catalog.skills.map((skill) => skill.name));
    return {
      ...serverState(catalog),
      cache: catalog.cache,
      skills: catalog.skills
        .map((skill) => ({
          name: skill.name,
          qualifiedName: `${catalog.label}/${nameCounts.get(skill.name) === 1 ? skill.name : skill.path}`,
          description: skill.description,
          uri: skill.uri,
          path: `${catalog.label}/${skill.path}`,
          digest: skill.digest ?? null,
          integrity: skill.integrity,
          ...(skill.declined ? { declined: skill.declined } : {}),
          state: skill.declined ? 'declined' : skill.rejected ? 'rejected' : skill.changedAt ? 'changed' : 'ok',
          ...(skill.rejected ? { rejected: skill.rejected } : {}),
          ...(skill.changedAt ? { changedAt: skill.changedAt } : {}),
          resourcesDigest: skill.resourcesDigest,
          ...(skill.breaks ? { breaks: skill.breaks } : {}),
        }) satisfies SkillsJsonSkill)
        .sort((a, b) => a.qualifiedName.localeCompare(b.qualifiedName)),
      problems: catalog.problems,
    };
  });
  // Collisions by name, linear in the skills: each skill names at most MAX_COLLISIONS_SHOWN
  // others (2,000 skills all named "x" would otherwise list 4 million names).
  const byName = new Map<string, string[]>();
  for (const server of servers) {
    for (const skill of server.skills) {
      const same = byName.get(skill.name);
      if (same) same.push(skill.qualifiedName);
      else byName.set(skill.name, [skill.qualifiedName]);
    }
  }
  for (const server of servers) {
    for (const skill of server.skills) {
      const same = byName.get(skill.name)!;
      if (same.length < 2) continue;
      const others: string[] = [];
      for (const qualifiedName of same) {
        if (qualifiedName === skill.qualifiedName) continue;
        if (others.length === MAX_COLLISIONS_SHOWN) {
          others.push(`... and ${same.length - 1 - MAX_COLLISIONS_SHOWN} more`);
          break;
        }
        others.push(qualifiedName);
      }
      skill.collidesWith = others;
    }
  }
  return documentText(mount ? { mount, servers } : { servers });
}

function countBy(values: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}
