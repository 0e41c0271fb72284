// The last complete listing of a server, kept on disk to show while the server is away: the
// document written, and the entries read back from it (shape-checked one by one, as a listing
// from the server is: the file is as trustworthy as the user's own account, no more).
import { IndexEntrySchema, SkillEntrySchema, type IndexEntry, type SkillEntry } from '../protocol/skills-wire.js';

const FORMAT = 'skills-mount kept listing 1';

export type KeptListing =
  | { generation: 'listing'; entries: SkillEntry[]; problems: string[] }
  | { generation: 'index'; entries: IndexEntry[]; problems: string[] };

/** The document saved for a listing or an index. */
export function keptListingDocument(generation: 'listing' | 'index', entries: readonly (SkillEntry | IndexEntry)[]): unknown {
  return { format: FORMAT, generation, entries };
}

/** The entries of a saved document, or why it cannot be used. */
export function readKeptListing(document: unknown): KeptListing | { problem: string } {
  if (typeof document !== 'object' || document === null) return { problem: 'not an object' };
  const { format, generation, entries } = document as Record<string, unknown>;
  if (format !== FORMAT) return { problem: `format ${JSON.stringify(format)}, expected ${JSON.stringify(FORMAT)}` };
  if (!Array.isArray(entries)) return { problem: 'entries is not an array' };
  if (generation === 'listing') return { generation, ...checked(entries, SkillEntrySchema, 'a skill entry') };
  if (generation === 'index') return { generation, ...checked(entries, IndexEntrySchema, 'an index entry') };
  return { problem: `generation ${JSON.stringify(generation)}` };
}

/** The entries that pass `schema`, and a problem for each that does not. */
function checked<T>(entries: unknown[], schema: { safeParse(raw: unknown): { success: true; data: T } | { success: false } }, what: string): { entries: T[]; problems: string[] } {
  const valid: T[] = [];
  const problems: string[] = [];
  for (const [i, raw] of entries.entries()) {
    const parsed = schema.safeParse(raw);
    if (parsed.success) valid.push(parsed.data);
    else problems.push(`kept entry ${i}: not ${what}`);
  }
  return { entries: valid, problems };
}
