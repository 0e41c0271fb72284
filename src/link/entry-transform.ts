// The one change a linked entry makes to an approved skill: its SKILL.md frontmatter. Every other
// byte of the entry is the approved, verified byte, and so is the SKILL.md body (everything after
// the closing `---` line). In the frontmatter, and nowhere else:
//   - `name` becomes the entry's folder name (the Agent Skills rule: a skill is named as its
//     folder; the name differs from the skill's own only when it was qualified on a collision);
//   - a permission-widening field (src/approvals/approval-check.ts PERMISSION_FIELDS) is held
//     back: `allowed-tools` unless the approval granted it (--grant-allowed-tools), `hooks` always
//     (an approval never grants the host running code on the skill's say);
//   - `metadata` (the Agent Skills map of strings) gets `skills-mount-server` (the server label)
//     and `skills-mount-uri` (the SKILL.md URI): where the entry came from, which harnesses pass
//     over (they show the model name and description only).
// docs/agents.md documents this list; `skills-mount verify --links` checks it on every entry.
import { isMap, parseDocument, type Document } from 'yaml';
import { PERMISSION_FIELDS } from '../approvals/approval-check.js';
import { FrontmatterError, frontmatterBlock, parseFrontmatter } from '../format/frontmatter.js';

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

/** The frontmatter fields held back from an entry with these grants. */
export function heldBackFields(grants: EntryGrants): string[] {
  return PERMISSION_FIELDS.filter(({ effect }) => !(effect === 'tool-permission' && grants.allowedTools)).map(({ field }) => field);
}

/** The entry's SKILL.md: the approved one with its frontmatter changed as listed above. Throws FrontmatterError. */
export function transformSkillMd(original: string, origin: EntryOrigin, grants: EntryGrants): string {
  const block = frontmatterBlock(original);
  const start = blockStart(original);
  const document = parseDocument(block, { schema: 'core', uniqueKeys: true });
  if (document.errors.length > 0) throw new FrontmatterError(`frontmatter is not valid YAML: ${document.errors[0]!.message.split('\n')[0]}`);
  if (!isMap(document.contents)) throw new FrontmatterError('frontmatter is not a YAML mapping');
  document.set('name', origin.entryName);
  for (const field of heldBackFields(grants)) document.delete(field);
  setOrigin(document, origin);
  // lineWidth 0: no folding of long values, so a description stays on the line it was written on.
  const yaml = document.toString({ lineWidth: 0 });
  return original.slice(0, start) + yaml + original.slice(start + block.length);
}

/**
 * What an entry's SKILL.md must be, given the approved one: the frontmatter (as data) and the
 * body (as text). verify compares a served SKILL.md against it, so that a YAML library that
 * spells the same data otherwise does not turn a good entry into a failure.
 */
export function expectedEntry(original: string, origin: EntryOrigin, grants: EntryGrants): { frontmatter: Record<string, unknown>; body: string } {
  const transformed = transformSkillMd(original, origin, grants);
  return { frontmatter: parseFrontmatter(transformed), body: bodyOf(transformed) };
}

/** Everything after the frontmatter's closing `---` line. */
export function bodyOf(markdown: string): string {
  const afterBlock = blockStart(markdown) + frontmatterBlock(markdown).length;
  const closing = markdown.indexOf('\n', afterBlock);
  return closing === -1 ? '' : markdown.slice(closing + 1);
}

/** Where the frontmatter's YAML starts: after the opening `---` line (frontmatterBlock checked it is one). */
function blockStart(markdown: string): number {
  return markdown.indexOf('\n') + 1;
}

function setOrigin(document: Document, origin: EntryOrigin): void {
  const metadata = document.get('metadata');
  if (metadata !== undefined && !isMap(metadata)) {
    // Not the map the format defines: the origin replaces it rather than hide inside something else.
    document.delete('metadata');
  }
  document.setIn(['metadata', ORIGIN_KEYS.server], origin.label);
  document.setIn(['metadata', ORIGIN_KEYS.uri], origin.skillUri);
}
