// Read-only trees on disk (link's entry objects, snapshots): sealing a built tree's folders
// read-only, and removing such a tree, whose folders must be opened again before anything in
// them can go. Knows nothing of what the trees hold.
import type { Dirent } from 'node:fs';
import { chmod, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { PRIVATE_DIRECTORY_MODE, READ_ONLY_DIRECTORY_MODE } from './file-modes.js';
import { errorCode, lstatOrUndefined } from './private-files.js';

/** rm -rf for a tree whose folders may be read-only: each folder is opened to its owner first; a link is removed, never followed; nothing when it is gone. */
export async function removeReadOnlyTree(at: string): Promise<void> {
  await openForRemoval(at);
  await rm(at, { recursive: true, force: true });
}

async function openForRemoval(at: string): Promise<void> {
  if (!(await lstatOrUndefined(at))?.isDirectory()) return;
  // A folder this user cannot open (not theirs): rm then says what stands in the way.
  try {
    await chmod(at, PRIVATE_DIRECTORY_MODE);
  } catch {
    return;
  }
  for (const entry of await readdir(at, { withFileTypes: true }).catch(goneAsEmpty)) if (entry.isDirectory()) await openForRemoval(path.join(at, entry.name));
}

function goneAsEmpty(error: unknown): Dirent[] {
  const code = errorCode(error);
  if (code === 'ENOENT' || code === 'ENOTDIR') return [];
  throw error;
}

/** Every folder of the tree at `at` read-only (its files keep their modes), deepest first: a parent sealed first could no longer be written below, while chmod needs only search permission. */
export async function sealReadOnlyTree(at: string): Promise<void> {
  for (const entry of await readdir(at, { withFileTypes: true })) if (entry.isDirectory()) await sealReadOnlyTree(path.join(at, entry.name));
  await chmod(at, READ_ONLY_DIRECTORY_MODE);
}
