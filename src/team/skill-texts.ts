// The verified SKILL.md texts of locked versions this machine has read, by digest, so that
// `outdated` and `update` can show a unified diff of SKILL.md when the server has moved on (a lock
// holds digests only). Content-addressed and re-hashed on every read: a damaged or altered copy is
// as good as none. In the user's data folder, private to them.
import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { PRIVATE_DIRECTORY_MODE, PRIVATE_READ_ONLY_FILE_MODE } from '../file-modes.js';
import { errorCode, writeAtomically } from '../private-files.js';
import { appDir } from '../user-dirs.js';

type Env = Readonly<Record<string, string | undefined>>;

/** `<data>/skills-mount/skill-texts`. */
export function defaultSkillTexts(env: Env, home: string): string {
  return path.join(appDir('data', 'skills-mount', { env, home }), 'skill-texts');
}

/** Keeps `bytes` under their digest; nothing when they are not what `digest` says. */
export async function keepSkillText(dir: string, digest: string, bytes: Uint8Array): Promise<void> {
  const name = fileName(digest);
  if (name === undefined || sha256(bytes) !== digest) return;
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  await writeAtomically(dir, name, bytes, `.${name}.tmp-`, { durable: false, mode: PRIVATE_READ_ONLY_FILE_MODE });
}

/** The text kept for `digest`, re-hashed; undefined when none is kept (or it no longer hashes to it). */
export async function keptSkillText(dir: string, digest: string): Promise<Buffer | undefined> {
  const name = fileName(digest);
  if (name === undefined) return undefined;
  try {
    const bytes = await readFile(path.join(dir, name));
    return sha256(bytes) === digest ? bytes : undefined;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/** The texts kept in `dir`, read only: for an outlet that serves a locked SKILL.md from them (locked-content.ts). */
export function keptSkillTextsIn(dir: string): { keptSkillText(digest: string): Promise<Buffer | undefined> } {
  return { keptSkillText: (digest) => keptSkillText(dir, digest) };
}

function fileName(digest: string): string | undefined {
  const match = /^sha256:([0-9a-f]{64})$/.exec(digest);
  return match === null ? undefined : `sha256-${match[1]}`;
}

function sha256(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}
