// One walk from a path up to the label directory: the skills whose directories hold the path,
// and what their entries say (a manifest, none, declined, refused). Reads the tree; asks no server.
import type { CatalogState } from './catalog-state.js';
import type { FileFacts } from './namespace.js';
import type { SkillRecord } from './skill-record.js';
import { segmentsToUri } from './uri-path.js';

/** What the skills around a path say about it. "Containing" is strict: a skill's directory does not contain itself. */
export interface Ancestry {
  /** The entry of the skill whose directory is the path itself, declined or not. */
  own: SkillRecord | undefined;
  /** The innermost skill containing the path whose manifest (not declined) enumerates its files. */
  manifestOwner: SkillRecord | undefined;
  /** The innermost skill (not declined) containing the path, when no manifest enumerates its files (index generation, dynamic). */
  unenumeratedOwner: SkillRecord | undefined;
  /** Inside a skill whose files nobody enumerates: an index or dynamic entry, or a SKILL.md found by path with no entry at all. */
  insideUnenumerated: boolean;
  /** The path is a declined skill's directory or inside one. */
  declined: boolean;
  /** A declined skill contains the path. */
  declinedAbove: boolean;
  /** The path is the directory of a skill whose entry was refused, or inside one (spec: hosts MUST NOT load an invalid entry). */
  refused: boolean;
}

/** Walks `segments` and each of its ancestors once, innermost first. */
export function ancestryOf(state: CatalogState, segments: readonly string[]): Ancestry {
  return withOwnLevel(state, segments, containingAncestry(state, segments.slice(0, -1)));
}

/**
 * What the skills whose directories are `directory` or above it say about any path directly in
 * `directory`: the same for all its children, so a directory's worth of files walks it once.
 * Complete it per child with withOwnLevel.
 */
export function containingAncestry(state: CatalogState, directory: readonly string[]): Ancestry {
  const { namespace, records, refusedSkills } = state;
  const ancestry: Ancestry = {
    own: undefined,
    manifestOwner: undefined,
    unenumeratedOwner: undefined,
    insideUnenumerated: false,
    declined: false,
    declinedAbove: false,
    refused: false,
  };
  let innermostSeen = false;
  let innermostSkillMd: FileFacts | undefined;
  for (let depth = directory.length; depth >= 1; depth--) {
    const skillMdSegments = [...directory.slice(0, depth), 'SKILL.md'];
    const skillMd = namespace.get(skillMdSegments.join('/'));
    const record = records.get(skillMd?.kind === 'file' ? skillMd.facts.uri : segmentsToUri(skillMdSegments));
    if (record?.declined) {
      ancestry.declined = true;
      ancestry.declinedAbove = true;
    }
    if (refusedSkills.size > 0 && refusedSkills.has(segmentsToUri(skillMdSegments))) ancestry.refused = true;
    if (innermostSkillMd === undefined && skillMd?.kind === 'file') innermostSkillMd = skillMd.facts;
    if (!record || record.declined) continue;
    if (!innermostSeen) {
      innermostSeen = true;
      if (!Array.isArray(record.files)) ancestry.unenumeratedOwner = record;
    }
    if (ancestry.manifestOwner === undefined && Array.isArray(record.files)) ancestry.manifestOwner = record;
  }
  ancestry.insideUnenumerated = ancestry.unenumeratedOwner !== undefined || (innermostSkillMd !== undefined && !records.has(innermostSkillMd.uri));
  return ancestry;
}

/** `containing` (the containingAncestry of the path's directory) with what the skill whose directory is the path itself says. */
export function withOwnLevel(state: CatalogState, segments: readonly string[], containing: Ancestry): Ancestry {
  if (segments.length === 0) return { ...containing };
  const { namespace, records, refusedSkills } = state;
  const skillMdSegments = [...segments, 'SKILL.md'];
  const skillMd = namespace.get(skillMdSegments.join('/'));
  // An entry is found by its SKILL.md as the tree spells it; a refusal by the canonical spelling.
  const own = records.get(skillMd?.kind === 'file' ? skillMd.facts.uri : segmentsToUri(skillMdSegments));
  const refused = containing.refused || (refusedSkills.size > 0 && refusedSkills.has(segmentsToUri(skillMdSegments)));
  return { ...containing, own, declined: containing.declined || Boolean(own?.declined), refused };
}

/** The ancestries of a directory's children, the walk above them done once however many are asked for. */
export class ChildAncestries {
  private containing: Ancestry | undefined;

  constructor(
    private readonly state: CatalogState,
    private readonly directory: readonly string[],
  ) {}

  /** ancestryOf(segments): for a child of the directory, from its one walk. */
  of(segments: readonly string[]): Ancestry {
    const directory = this.directory;
    if (segments.length !== directory.length + 1 || directory.some((segment, index) => segments[index] !== segment)) return ancestryOf(this.state, segments);
    this.containing ??= containingAncestry(this.state, directory);
    return withOwnLevel(this.state, segments, this.containing);
  }
}
