// A server's kept listing (`<label>/listing.json`, `{ savedAt, document }`): its format written
// and read back. No digest vouches for it: it says which skills to show while the server is
// away, and every file is still checked against the digest it gives. Knows nothing of the document.
import { rm, open, type FileHandle } from 'node:fs/promises';
import type { Log } from '../log.js';
import { errorMessage, kindOf } from '../private-files.js';
import { withShownPaths } from './anchored-directory.js';
import { LISTING_NAME } from './layout.js';
import { READ_FLAGS, openFailure, readExactly } from './read-cached-file.js';

/** A listing as saved by saveListing; the document's shape is the caller's to check. */
export interface SavedListing {
  savedAt: string;
  document: unknown;
}

// A listing.json bigger than this is not read into memory (a real one is far smaller).
const MAX_LISTING_BYTES = 64 * 1024 * 1024;

/** What listing.json holds for `document`, saved now. Throws what JSON.stringify throws. */
export function listingBytes(document: unknown): Buffer {
  return Buffer.from(JSON.stringify({ savedAt: new Date().toISOString(), document }), 'utf8');
}

/**
 * The listing in `file`, or undefined: none, or unreadable (then it is removed, and one line
 * logged for `label`). An I/O error leaves the file where it is.
 */
export async function loadSavedListing(file: string, label: string, log: Log): Promise<SavedListing | undefined> {
  let found: Awaited<ReturnType<typeof readSavedListing>>;
  try {
    found = await readSavedListing(file);
  } catch (error) {
    log(`[${label}] disk cache: ${LISTING_NAME}: cannot read (${withShownPaths(errorMessage(error))}); not used`);
    return undefined;
  }
  if (found.problem !== undefined) {
    await rm(file, { recursive: true, force: true }).catch(() => {});
    log(`[${label}] disk cache: ${LISTING_NAME}: ${found.problem}; discarded`);
  }
  return found.listing;
}

/** The listing in `file`, or why it cannot be used; neither when there is none. Changes nothing. */
export async function readSavedListing(file: string): Promise<{ listing?: SavedListing; problem?: string }> {
  let handle: FileHandle;
  try {
    handle = await open(file, READ_FLAGS);
  } catch (error) {
    const failure = openFailure(error);
    return 'missing' in failure ? {} : failure;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { problem: `${kindOf(stats)}, not a regular file` };
    if (stats.size > MAX_LISTING_BYTES) return { problem: `${stats.size} bytes, more than a listing can be` };
    const bytes = await readExactly(handle, stats.size);
    if (bytes === undefined) return { problem: 'changed size while being read' };
    let parsed: unknown;
    try {
      parsed = JSON.parse(bytes.toString('utf8'));
    } catch (error) {
      return { problem: `not JSON (${errorMessage(error)})` };
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !('document' in parsed)) return { problem: 'not a saved listing (no document)' };
    const { savedAt, document } = parsed as { savedAt?: unknown; document: unknown };
    if (typeof savedAt !== 'string' || Number.isNaN(Date.parse(savedAt))) return { problem: 'not a saved listing (no savedAt time)' };
    return { listing: { savedAt, document } };
  } finally {
    await handle.close().catch(() => {});
  }
}
