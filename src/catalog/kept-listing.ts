// The last complete listing of a server, kept on disk to show while the server is away: the
// document written, and the entries read back from it (shape-checked one by one, as a listing
// from the server is: the file is as trustworthy as the user's own account, no more).
import { IndexEntrySchema, SkillEntrySchema, type IndexEntry, type SkillEntry } from '../protocol/skills-wire.js';

const FORMAT = 'skills-mount kept listing 1';
/**
 * Entries whose JSON is larger than this are not kept: the disk cache reads back at most
 * 64 MiB of listing (src/cache/saved-listing.ts), and writing a hostile 250 MB listing would cost
 * its text twice over in memory (the string and its bytes) for a file nobody can read.
 */
export const MAX_KEPT_LISTING_BYTES = 56 * 1024 * 1024;

export type KeptListing =
  | { generation: 'listing'; entries: SkillEntry[]; problems: string[] }
  | { generation: 'index'; entries: IndexEntry[]; problems: string[] };

/**
 * The document saved for a listing or an index; for one over MAX_KEPT_LISTING_BYTES, a small
 * one saying so, so that an older kept listing (no longer the server's) is not shown instead.
 */
export function keptListingDocument(generation: 'listing' | 'index', entries: readonly (SkillEntry | IndexEntry)[], maxBytes = MAX_KEPT_LISTING_BYTES): unknown {
  let bytes = 0;
  for (const entry of entries) {
    // Entry by entry, stopping at the bound: never the whole listing's text at once.
    bytes += Buffer.byteLength(JSON.stringify(entry)) + 1;
    if (bytes > maxBytes) return { format: FORMAT, generation, notKept: `${entries.length} entries, over the ${Math.round(maxBytes / 2 ** 20)} MiB kept at most` };
  }
  return { format: FORMAT, generation, entries };
}

/** The entries of a saved document, or why it cannot be used. */
export function readKeptListing(document: unknown): KeptListing | { problem: string } {
  if (typeof document !== 'object' || document === null) return { problem: 'not an object' };
  const { format, generation, entries, notKept } = document as Record<string, unknown>;
  if (format !== FORMAT) return { problem: `format ${JSON.stringify(format)}, expected ${JSON.stringify(FORMAT)}` };
  if (typeof notKept === 'string') return { problem: `the server's last listing was too large to keep (${notKept})` };
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
