// Turns listing or index entries into checked skill records: where the skill lives,
// what each of its files must hash to, or why it is declined. Pure; no I/O.
// Records are held for every listed skill, so they are built with fixed shapes and
// share strings with the namespace (a listing of 100,000 skills is mostly these).
import { frontmatterLengthProblem, skillNameProblem } from '../format/skill-rules.js';
import { MAX_BYTES_PER_SKILL, MAX_FILES_PER_SKILL, type IndexEntry, type SkillEntry } from '../protocol/skills-wire.js';
import type { FileFacts } from './namespace.js';
import { uriToSegments } from './uri-path.js';

export type Generation = 'listing' | 'index' | 'none';

/** One file of a manifest: the facts the namespace serves it by, plus its path under the label. */
export interface ManifestFile extends FileFacts {
  /** Path under the label ("a/b/SKILL.md"); also the namespace's key, so the string is shared. */
  path: string;
  digest: string;
  sizeBytes: number;
  skillUri: string;
}

export interface SkillRecord {
  /** URI of the skill's SKILL.md. */
  uri: string;
  /** Path of the SKILL.md under the label ("acme/refunds/SKILL.md"). */
  path: string;
  /** Number of segments in `path`: nested skills are deeper. */
  depth: number;
  name: string;
  description: string;
  frontmatter: Record<string, unknown>;
  /** Digest of SKILL.md when the listing or index gives one. */
  skillMdDigest: string | undefined;
  /** Every file with digest and size; 'dynamic' when the server publishes none; 'unlisted' for the index generation. */
  files: ManifestFile[] | 'dynamic' | 'unlisted';
  /** Set when the skill is not served, with the reason shown in skills.json and the log. */
  declined: string | undefined;
  /** An Agent Skills rule the entry breaks that does not stop it being mounted (a length limit). */
  breaks: string | undefined;
}

export interface RecordOptions {
  /** Hide skills whose resources are "dynamic" (unverifiable). */
  hideDynamic: boolean;
}

/** The skill's directory under the label ("acme/refunds"). */
export function skillDirectory(record: SkillRecord): string {
  return record.path.slice(0, record.path.length - '/SKILL.md'.length);
}

/** A checked record for a skills/list or skills/get entry, or the reason the entry is unusable. */
export function recordFromListing(entry: SkillEntry, options: RecordOptions): SkillRecord | { problem: string; uri: string } {
  const refused = (problem: string) => ({ problem, uri: entry.uri });
  const located = locate(entry.uri, entry.frontmatter);
  if ('problem' in located) return refused(located.problem);
  if (entry.resources === 'dynamic') {
    return makeRecord(entry.uri, located, entry.frontmatter, undefined, 'dynamic', options.hideDynamic ? 'dynamic skill hidden by --no-dynamic' : undefined);
  }
  const root = located.segments.slice(0, -1);
  // Sized up front: a push-grown array reserves room for 17 entries, most skills have a few.
  const files = new Array<ManifestFile>(entry.resources.length);
  const seen = new Set<string>();
  let totalBytes = 0;
  let skillMdDigest: string | undefined;
  for (const file of entry.resources) {
    const segments = uriToSegments(file.uri);
    if ('problem' in segments) return refused(`manifest file ${file.uri}: ${segments.problem}`);
    if (segments.length <= root.length || !root.every((segment, i) => segments[i] === segment)) {
      return refused(`manifest file ${file.uri} is outside the skill directory`);
    }
    const isSkillMd = file.uri === entry.uri;
    const path = isSkillMd ? located.path : segments.join('/');
    if (seen.has(path)) return refused(`manifest lists ${file.uri} twice`);
    seen.add(path);
    totalBytes += file.size;
    if (isSkillMd) skillMdDigest = file.digest;
    files[seen.size - 1] = {
      uri: isSkillMd ? entry.uri : file.uri,
      path,
      sizeBytes: file.size,
      digest: file.digest,
      frontmatter: isSkillMd ? entry.frontmatter : undefined,
      skillUri: entry.uri,
    };
  }
  if (skillMdDigest === undefined) return refused(`skill ${entry.uri}: manifest does not list the skill's own SKILL.md`);
  let declined: string | undefined;
  if (files.length > MAX_FILES_PER_SKILL || totalBytes > MAX_BYTES_PER_SKILL) {
    declined = `over the per-skill limits (${files.length} files, ${totalBytes} bytes; limits ${MAX_FILES_PER_SKILL} files, ${MAX_BYTES_PER_SKILL} bytes)`;
  }
  return makeRecord(entry.uri, located, entry.frontmatter, skillMdDigest, files, declined);
}

/** A checked record for a skill://index.json entry, or the reason the entry is unusable. */
export function recordFromIndex(entry: IndexEntry): SkillRecord | { problem: string } {
  const located = locate(entry.url, entry.frontmatter);
  if ('problem' in located) return located;
  return makeRecord(entry.url, located, entry.frontmatter, entry.digest, 'unlisted', undefined);
}

interface Located {
  segments: string[];
  path: string;
  name: string;
  description: string;
}

function makeRecord(
  uri: string,
  located: Located,
  frontmatter: Record<string, unknown>,
  skillMdDigest: string | undefined,
  files: SkillRecord['files'],
  declined: string | undefined,
): SkillRecord {
  // One literal with every field, so all records share one hidden class.
  return {
    uri,
    path: located.path,
    depth: located.segments.length,
    name: located.name,
    description: located.description,
    frontmatter,
    skillMdDigest,
    files,
    declined,
    breaks: frontmatterLengthProblem(frontmatter),
  };
}

function locate(uri: string, frontmatter: Record<string, unknown>): Located | { problem: string } {
  const segments = uriToSegments(uri);
  if ('problem' in segments) return { problem: `skill uri ${uri}: ${segments.problem}` };
  const skillDirectoryIndex = segments.length - 2;
  const isSchemeDirectory = (segments[0] ?? '').endsWith(':');
  if (segments[segments.length - 1] !== 'SKILL.md' || skillDirectoryIndex < (isSchemeDirectory ? 1 : 0)) {
    return { problem: `skill uri ${uri} does not end in <skill-path>/SKILL.md` };
  }
  const name = frontmatter.name;
  const nameProblem = skillNameProblem(name);
  if (nameProblem) return { problem: `skill ${uri}: frontmatter ${nameProblem}` };
  if (segments[skillDirectoryIndex] !== name) {
    return { problem: `skill ${uri}: frontmatter name "${String(name)}" differs from its directory "${segments[skillDirectoryIndex]}"` };
  }
  if (typeof frontmatter.description !== 'string') return { problem: `skill ${uri}: frontmatter has no description` };
  return { segments, path: segments.join('/'), name: name as string, description: frontmatter.description };
}
