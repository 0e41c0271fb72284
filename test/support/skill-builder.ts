// Skills for tests: the text of a conformant SKILL.md, and skill directories (or any tree
// of files) written to disk for the reference server to serve.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** A SKILL.md: frontmatter with `name`, `description` and any `extraFrontmatter` (YAML lines ending in \n), then a heading. */
export function skillMd(name: string, description = `Does ${name} things`, extraFrontmatter = ''): string {
  return `---\nname: ${name}\ndescription: ${description}\n${extraFrontmatter}---\n# ${name}\n`;
}

/** Writes `files` (path relative to `root` -> content) under `root`, creating directories. */
export async function writeTree(root: string, files: Record<string, string | Uint8Array>): Promise<void> {
  for (const [relative, content] of Object.entries(files)) {
    const file = path.join(root, relative);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
  }
}

export interface SkillSpec {
  /** Default: `Does <name> things`. */
  description?: string;
  extraFrontmatter?: string;
  /** Supporting files, relative to the skill directory. */
  files?: Record<string, string | Uint8Array>;
}

/** Writes the skill directory ROOT/SKILLPATH: a SKILL.md named after its last segment, and its files; resolves the directory. */
export async function writeSkill(root: string, skillPath: string, spec: SkillSpec = {}): Promise<string> {
  const dir = path.join(root, skillPath);
  await writeTree(dir, { 'SKILL.md': skillMd(path.basename(skillPath), spec.description, spec.extraFrontmatter), ...spec.files });
  return dir;
}
