// Scratch directories for tests: made under the OS temp dir (or a parent the test names)
// with a prefix that says which test made them, and removed however the test ended.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A new, empty directory PARENT/PREFIXxxxxxx (PARENT: the OS temp dir unless given). */
export function makeTempDir(prefix: string, parent: string = tmpdir()): Promise<string> {
  return mkdtemp(path.join(parent, prefix));
}

/** Removes `dir` and everything under it; nothing happens when it is undefined or gone. */
export async function removeDir(dir: string | undefined): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true });
}

/** Runs `use` on a fresh temp dir and removes the dir afterwards, whether `use` succeeds or throws. */
export async function withTempDir<T>(prefix: string, use: (dir: string) => Promise<T>): Promise<T> {
  const dir = await makeTempDir(prefix);
  try {
    return await use(dir);
  } finally {
    await removeDir(dir);
  }
}

/** Temp dirs made one by one (e.g. several per test) and removed together (e.g. in afterEach). */
export class TempDirs {
  readonly #made: string[] = [];

  constructor(
    private readonly prefix: string,
    private readonly parent: string = tmpdir(),
  ) {}

  async make(): Promise<string> {
    const dir = await makeTempDir(this.prefix, this.parent);
    this.#made.push(dir);
    return dir;
  }

  async removeAll(): Promise<void> {
    for (const dir of this.#made.splice(0)) await removeDir(dir);
  }
}
