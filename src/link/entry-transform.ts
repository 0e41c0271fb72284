// The one change a linked entry makes to an approved skill: its SKILL.md frontmatter. Every other
// byte of the entry is the approved, verified byte, and so is every byte of the SKILL.md body
// (everything after the closing `---` line and its line ending: CRLF, a last line with no newline
// and bytes that are not UTF-8 included). The frontmatter block (a BOM before it included, which
// is dropped: a reader that looks for `---` at the first byte would not find it) is written anew,
// in the file's own line-ending style (that of its opening `---` line), from the data the YAML 1.2
// reading of the approved one gives (format/frontmatter-emit.ts: no anchor, alias, tag, merge key
// or comment survives), with these changes and no others:
//   - `name` becomes the entry's folder name (the Agent Skills rule: a skill is named as its
//     folder; the name differs from the skill's own only when it was qualified on a collision);
//   - a permission-widening field (approval-check.ts PERMISSION_FIELDS, in any spelling a harness
//     might normalize to it) is held back: `allowed-tools` unless the approval granted it
//     (--grant-allowed-tools), `hooks` always (an approval never grants the host running code);
//   - `description` starts with the origin, `[from MCP server LABEL]`: the one field besides the
//     name that every harness shows the model where it lists the skill (SEP-2640: the server's
//     identity reaches the model wherever it meets the skill);
//   - `metadata` (the Agent Skills map of strings) gets `skills-mount-server` (the server label)
//     and `skills-mount-uri` (the SKILL.md URI).
// The result is then read back by every YAML reader of format/frontmatter-readings.ts, and refused
// unless each one reads exactly that data. docs/agents.md documents this list; `skills-mount
// verify --links` checks it on every entry.
import { PERMISSION_FIELDS, permissionFieldOf } from '../approvals/approval-check.js';
import { FrontmatterEmitError, emitFrontmatter } from '../format/frontmatter-emit.js';
import { FrontmatterError, frontmatterBounds, frontmatterDifference, parseFrontmatter, type FrontmatterBounds } from '../format/frontmatter.js';
import { frontmatterReadings } from '../format/frontmatter-readings.js';

export interface EntryGrants {
  /** The approval granted the skill's `allowed-tools`. */
  allowedTools: boolean;
}

export interface EntryOrigin {
  /** The entry's folder name in the skills root. */
  entryName: string;
  label: string;
  skillUri: string;
}

/** The metadata keys that say where an entry came from. */
export const ORIGIN_KEYS = { server: 'skills-mount-server', uri: 'skills-mount-uri' } as const;
/** The Agent Skills limit on `description`, which harnesses enforce (Codex skips a longer one). */
const MAX_DESCRIPTION_CHARS = 1024;
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** What the description of an entry from `label` starts with. */
export function originPrefix(label: string): string {
  return `[from MCP server ${label}] `;
}

/** The frontmatter fields held back from an entry with these grants. */
export function heldBackFields(grants: EntryGrants): string[] {
  return PERMISSION_FIELDS.filter(({ effect }) => !(effect === 'tool-permission' && grants.allowedTools)).map(({ field }) => field);
}

/** The entry's frontmatter data, made from the approved SKILL.md's. Throws FrontmatterError. */
export function entryFrontmatter(original: string, origin: EntryOrigin, grants: EntryGrants): Record<string, unknown> {
  const approved = parseFrontmatter(original);
  const heldBack = new Set(heldBackFields(grants));
  const data: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(approved)) {
    const permission = permissionFieldOf(key);
    if (permission !== undefined && heldBack.has(permission.field)) continue;
    data[key] = value;
  }
  data['name'] = origin.entryName;
  data['description'] = withOrigin(typeof approved['description'] === 'string' ? approved['description'] : '', origin.label);
  // A metadata that is not the map the format defines is replaced rather than hide the origin inside something else.
  const metadata = approved['metadata'];
  const kept = metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata) ? (metadata as Record<string, unknown>) : {};
  data['metadata'] = { ...kept, [ORIGIN_KEYS.server]: origin.label, [ORIGIN_KEYS.uri]: origin.skillUri };
  return data;
}

/** The entry's SKILL.md: the approved one with its frontmatter made as listed above. Throws FrontmatterError. */
export function transformSkillMd(original: string, origin: EntryOrigin, grants: EntryGrants): string {
  const bounds = frontmatterBounds(original);
  return `${entryHead(original, bounds.lineEnding, origin, grants)}${original.slice(bounds.bodyStart)}`;
}

/** transformSkillMd on bytes: the body is cut from the approved bytes themselves, so no byte of it passes through a text decoder. */
export function transformSkillMdBytes(original: Buffer, origin: EntryOrigin, grants: EntryGrants): Buffer {
  const bomBytes = original.subarray(0, UTF8_BOM.length).equals(UTF8_BOM) ? UTF8_BOM.length : 0;
  // Latin-1: one character a byte, so the bounds are byte offsets (the delimiters and line breaks are ASCII).
  const bounds = frontmatterBounds(original.toString('latin1', bomBytes));
  const head = entryHead(original.toString('utf8'), bounds.lineEnding, origin, grants);
  return Buffer.concat([Buffer.from(head, 'utf8'), original.subarray(bomBytes + bounds.bodyStart)]);
}

/** The entry's frontmatter block, both `---` lines included, each line ending in `lineEnding`. Throws FrontmatterError. */
function entryHead(original: string, lineEnding: FrontmatterBounds['lineEnding'], origin: EntryOrigin, grants: EntryGrants): string {
  const data = entryFrontmatter(original, origin, grants);
  let yaml: string;
  try {
    yaml = emitFrontmatter(data, lineEnding);
  } catch (error) {
    if (error instanceof FrontmatterEmitError) throw new FrontmatterError(`the frontmatter cannot be written for an entry: ${error.message}`);
    throw error;
  }
  // Read back exactly as written (CRLF included): that is what the harnesses' readers get.
  const problem = readingProblem(yaml, data, grants);
  if (problem !== undefined) throw new FrontmatterError(`the entry's frontmatter would not read the same everywhere: ${problem}`);
  return `---${lineEnding}${yaml}---${lineEnding}`;
}

/**
 * What an entry's SKILL.md must be, given the approved one: the frontmatter (as data) and the
 * body (as text). verify compares a served SKILL.md against it, so that a YAML library that
 * spells the same data otherwise does not turn a good entry into a failure.
 */
export function expectedEntry(original: string, origin: EntryOrigin, grants: EntryGrants): { frontmatter: Record<string, unknown>; body: string } {
  // The data and the body, not the text: no emitting and reading back here (the build did both,
  // and verify reads the served block with every reader itself).
  return { frontmatter: entryFrontmatter(original, origin, grants), body: bodyOf(original) };
}

/**
 * Why a frontmatter block does not read as `data` to every reader, or reaches a permission field
 * these grants hold back for any of them; undefined when it is safe. verify --links asks it too.
 */
export function readingProblem(yaml: string, data: Readonly<Record<string, unknown>>, grants: EntryGrants): string | undefined {
  const heldBack = new Set(heldBackFields(grants));
  for (const reading of frontmatterReadings(yaml)) {
    if (reading.data === undefined) return `${reading.reader} cannot read it (${reading.error})`;
    const reached = Object.keys(reading.data).find((key) => heldBack.has(permissionFieldOf(key)?.field ?? ''));
    if (reached !== undefined) return `${reading.reader} reads a ${reached} field`;
    const differs = frontmatterDifference(data, reading.data);
    if (differs !== undefined) return `${reading.reader} reads ${differs} otherwise`;
  }
  return undefined;
}

/** Everything after the frontmatter's closing `---` line and its line ending. */
export function bodyOf(markdown: string): string {
  return markdown.slice(frontmatterBounds(markdown).bodyStart);
}

/** The description with the origin before it, within the format's limit (the end of a long one gives way). */
function withOrigin(description: string, label: string): string {
  const prefix = originPrefix(label);
  const text = `${prefix}${description}`;
  if ([...text].length <= MAX_DESCRIPTION_CHARS) return text;
  return `${[...text].slice(0, MAX_DESCRIPTION_CHARS - 1).join('')}…`;
}
