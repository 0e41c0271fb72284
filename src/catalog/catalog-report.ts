// One server's state as skills.json and status.json show it: counts (cheap at any size) and
// a summary per skill. Reads the other parts; changes nothing.
import type { ConnectionStatus, SkillSource } from '../mcp/skill-source.js';
import type { CatalogState } from './catalog-state.js';
import type { Discovery } from './discovery.js';
import type { HeldEntries } from './held-entries.js';
import { resourcesDigest } from './resources-digest.js';
import type { ServerLog } from './server-log.js';
import { skillDirectory, type Generation, type SkillRecord } from './skill-record.js';

export interface SkillSummary {
  name: string;
  description: string;
  uri: string;
  /** Skill directory, relative to the label directory. */
  path: string;
  digest: string | undefined;
  /** verified: every file checked against a manifest; skill-md-verified: index generation; dynamic: nothing checkable; none: declined, nothing served. */
  integrity: 'verified' | 'skill-md-verified' | 'dynamic' | 'none';
  declined: string | undefined;
  /** The SKILL.md failed verification against the held entry: no file of the skill is served. */
  rejected: string | undefined;
  /** When a refreshed entry brought a different resources set (ISO time). */
  changedAt: string | undefined;
  /** sha256 over the sorted uri+digest pairs of the held entry; null for dynamic and index skills. */
  resourcesDigest: string | null;
  /** A rule of the final text the entry breaks that does not stop it being mounted. */
  breaks: string | undefined;
}

/** A server whose skills are shown while it cannot be reached. */
export interface OfflineState {
  /** Since when it has been unreachable (ISO time). */
  since: string;
  /** When the listing shown was kept on disk, if it came from there (ISO time). */
  listingSavedAt: string | null;
}

export interface CatalogSummary {
  label: string;
  connection: ConnectionStatus;
  /** Set while the server's skills are shown although it cannot be reached. */
  offline: OfflineState | null;
  generation: Generation | undefined;
  listingComplete: boolean;
  /** The listing's freshness hint, and how long it is actually held (ms). */
  cache: { ttlMs: number | null; cacheScope: string | null; relistAfterMs: number };
  /** Change events can reach the mount now. */
  liveChannel: boolean;
  /** While a first listing is still paging: how many entries have arrived. */
  listingInProgress: number | null;
  skills: SkillSummary[];
  problems: string[];
}

export interface CatalogHealth {
  label: string;
  connection: ConnectionStatus;
  offline: OfflineState | null;
  generation: Generation | undefined;
  listingComplete: boolean;
  listingInProgress: number | null;
  liveChannel: boolean;
  /** Skills served (not declined), declined, rejected (SKILL.md failed verification), changed since first held. */
  skills: number;
  declined: number;
  rejected: number;
  changed: number;
  problems: number;
}

export class CatalogReport {
  private readonly setDigests = new WeakMap<SkillRecord, string>();

  constructor(
    private readonly source: SkillSource,
    private readonly state: CatalogState,
    private readonly held: HeldEntries,
    private readonly discovery: Discovery,
    private readonly log: ServerLog,
    private readonly offline: () => OfflineState | null,
  ) {}

  /** The server's state in counts: cheap at any catalog size (no per-skill objects). */
  health(): CatalogHealth {
    let skills = 0;
    let declined = 0;
    for (const record of this.state.records.values()) {
      if (record.declined) declined += 1;
      else skills += 1;
    }
    const { rejected, changed } = this.held.counts();
    return {
      ...this.serverFacts(),
      skills,
      declined,
      rejected,
      changed,
      problems: this.log.count,
    };
  }

  /** The server's state with every skill it holds. */
  summary(): CatalogSummary {
    const skills: SkillSummary[] = [...this.state.records.values()].map((record) => ({
      name: record.name,
      description: record.description,
      uri: record.uri,
      path: skillDirectory(record),
      digest: record.skillMdDigest,
      // A declined skill has no file served, so none is vouched for, whatever its entry lists.
      integrity: record.declined ? 'none' : record.files === 'dynamic' ? 'dynamic' : record.files === 'unlisted' ? 'skill-md-verified' : 'verified',
      declined: record.declined,
      rejected: this.held.rejection(record.uri),
      changedAt: isoTime(this.held.changedAtMs(record.uri)),
      resourcesDigest: this.resourcesDigestOf(record),
      breaks: record.breaks,
    }));
    const hint = this.discovery.hint;
    return {
      ...this.serverFacts(),
      cache: { ttlMs: hint.ttlMs ?? null, cacheScope: hint.cacheScope ?? null, relistAfterMs: this.discovery.relistAfterMs() },
      skills,
      problems: this.log.list(),
    };
  }

  /** What health() and summary() both say of the server itself. */
  private serverFacts() {
    return {
      label: this.state.label,
      connection: this.source.connection(),
      offline: this.offline(),
      generation: this.state.generation,
      listingComplete: this.state.listingComplete,
      listingInProgress: this.discovery.inProgress ?? null,
      liveChannel: this.source.features().liveChannel,
    };
  }

  private resourcesDigestOf(record: SkillRecord): string | null {
    if (!Array.isArray(record.files)) return null;
    let digest = this.setDigests.get(record);
    if (digest === undefined) {
      digest = resourcesDigest(record.files);
      this.setDigests.set(record, digest);
    }
    return digest;
  }
}

function isoTime(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : new Date(ms).toISOString();
}
