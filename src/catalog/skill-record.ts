// Turns listing or index entries into checked skill records: where the skill lives,
// what each of its files must hash to, or why it is declined. Pure; no I/O.
import { skillNameProblem } from '../format/skill-rules.js';
import { MAX_BYTES_PER_SKILL, MAX_FILES_PER_SKILL, type IndexEntry, type SkillEntry } from '../mcp/protocol.js';
import { uriToSegments } from './uri-path.js';

export type Generation = 'listing' | 'index' | 'none';

export interface ManifestFile {
  uri: string;
  segments: string[];
  digest: string;
  sizeBytes: number;
}

export interface SkillRecord {
  /** URI of the skill's SKILL.md. */
  uri: string;
  /** Segments of the SKILL.md path under the label (the skill root is all but the last). */
  segments: string[];
  name: string;
  description: string;
  frontmatter: Record<string, unknown>;
  /** Digest of SKILL.md when the listing or index gives one. */
  skillMdDigest: string | undefined;
  /** Every file with digest and size; 'dynamic' when the server publishes none; 'unlisted' for the index generation. */
  files: ManifestFile[] | 'dynamic' | 'unlisted';
  /** Set when the skill is not served, with the reason shown in skills.json and the log. */
  declined: string | undefined;
}

export interface RecordOptions {
  /** Hide skills whose resources are "dynamic" (unverifiable). */
  hideDynamic: boolean;
}

/** A checked record for a skills/list or skills/get entry, or the reason the entry is unusable. */
export function recordFromListing(entry: SkillEntry, options: RecordOptions): SkillRecord | { problem: string } {
  const base = baseRecord(entry.uri, entry.frontmatter);
  if ('problem' in base) return base;
  if (entry.resources === 'dynamic') {
    return { ...base, files: 'dynamic', declined: options.hideDynamic ? 'dynamic skill hidden by --no-dynamic' : undefined };
  }
  const root = base.segments.slice(0, -1);
  const files: ManifestFile[] = [];
  const seen = new Set<string>();
  let totalBytes = 0;
  for (const file of entry.resources) {
    const segments = uriToSegments(file.uri);
    if ('problem' in segments) return { problem: `manifest file ${file.uri}: ${segments.problem}` };
    if (segments.length <= root.length || !root.every((segment, i) => segments[i] === segment)) {
      return { problem: `manifest file ${file.uri} is outside the skill directory` };
    }
    const path = segments.join('/');
    if (seen.has(path)) return { problem: `manifest lists ${file.uri} twice` };
    seen.add(path);
    totalBytes += file.size;
    files.push({ uri: file.uri, segments, digest: file.digest, sizeBytes: file.size });
  }
  const skillMd = files.find((file) => file.uri === entry.uri);
  if (!skillMd) return { problem: 'manifest does not list the skill\'s own SKILL.md' };
  let declined: string | undefined;
  if (files.length > MAX_FILES_PER_SKILL || totalBytes > MAX_BYTES_PER_SKILL) {
    declined = `over the per-skill limits (${files.length} files, ${totalBytes} bytes; limits ${MAX_FILES_PER_SKILL} files, ${MAX_BYTES_PER_SKILL} bytes)`;
  }
  return { ...base, files, skillMdDigest: skillMd.digest, declined };
}

/** A checked record for a skill://index.json entry, or the reason the entry is unusable. */
export function recordFromIndex(entry: IndexEntry): SkillRecord | { problem: string } {
  const base = baseRecord(entry.url, entry.frontmatter);
  if ('problem' in base) return base;
  return { ...base, files: 'unlisted', skillMdDigest: entry.digest };
}

type BaseRecord = Omit<SkillRecord, 'files' | 'skillMdDigest' | 'declined'> & { skillMdDigest: undefined; declined: undefined };

function baseRecord(uri: string, frontmatter: Record<string, unknown>): BaseRecord | { problem: string } {
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
  return {
    uri,
    segments,
    name: name as string,
    description: frontmatter.description,
    frontmatter,
    skillMdDigest: undefined,
    declined: undefined,
  };
}
