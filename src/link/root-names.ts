// The skill names already in use in a skills root, as a harness lists them: every folder name, and
// every `name` a SKILL.md declares there (Codex, Gemini CLI, OpenCode and Cursor list a skill by
// the name in its frontmatter, so a user's `refunds/` holding `name: billing` takes `billing`).
// Compared case-folded: two skills that differ only in case are twins to a person, and to a
// harness on a case-insensitive filesystem. Reads; never writes.
import type { Dirent } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseFrontmatter } from '../format/frontmatter.js';

/** How deep a harness that searches recursively (Codex, OpenCode) finds a SKILL.md below the root. */
const MAX_DEPTH = 3;
/** Folders read at most per root: a huge tree someone keeps there is not walked whole. */
const MAX_FOLDERS = 2_000;
/** SKILL.md files larger than this are not parsed for their name (a harness would not list them either). */
const MAX_SKILL_MD_BYTES = 256 * 1024;

/** The key two names share when a person or a case-insensitive filesystem would take them for one. */
export function foldName(name: string): string {
  return name.normalize('NFKC').toLowerCase();
}

/**
 * Who takes each name in `root` (`listing`: its entries, when already listed), by folded name ("the folder Refunds", "the skill in
 * team/billing (its SKILL.md names it billing)"); `ours` (entry names link made) are passed over.
 */
export async function namesInRoot(root: string, ours: ReadonlySet<string>, listing?: readonly Dirent[]): Promise<Map<string, string>> {
  const taken = new Map<string, string>();
  const take = (name: string, who: string) => {
    if (!taken.has(foldName(name))) taken.set(foldName(name), who);
  };
  let budget = MAX_FOLDERS;
  const walk = async (dir: string, relative: string, depth: number): Promise<void> => {
    if (budget-- <= 0) return;
    let entries: readonly Dirent[];
    try {
      // The root as the caller listed it, when it did (a sync lists it once).
      entries = depth === 0 && listing !== undefined ? listing : await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (depth === 0 && ours.has(entry.name)) continue;
      const at = path.join(dir, entry.name);
      const shown = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (depth === 0) take(entry.name, `the folder ${entry.name}`);
      if (entry.name.startsWith('.')) continue;
      // A folder, or a link to one (harnesses follow links to skill folders).
      if (!entry.isDirectory() && !(entry.isSymbolicLink() && (await stat(at).then((stats) => stats.isDirectory(), () => false)))) continue;
      const declared = await declaredName(path.join(at, 'SKILL.md'));
      if (declared !== undefined) take(declared, `the skill in ${shown} (its SKILL.md names it ${declared})`);
      if (depth + 1 < MAX_DEPTH) await walk(at, shown, depth + 1);
    }
  };
  await walk(root, '', 0);
  return taken;
}

/** The frontmatter `name` of a SKILL.md, when it has one that can be read. */
async function declaredName(file: string): Promise<string | undefined> {
  try {
    const stats = await stat(file);
    if (!stats.isFile() || stats.size > MAX_SKILL_MD_BYTES) return undefined;
    const name = parseFrontmatter(await readFile(file, 'utf8'))['name'];
    return typeof name === 'string' && name !== '' ? name : undefined;
  } catch {
    return undefined;
  }
}
