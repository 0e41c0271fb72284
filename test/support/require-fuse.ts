// End-to-end tests need a usable /dev/fuse. Without one they skip locally, but in CI
// (CI=true) a skip would hide a broken machine, so they fail instead.
import { constants } from 'node:fs';
import { accessSync } from 'node:fs';
import { beforeAll } from 'vitest';

export function fuseAvailable(): boolean {
  try {
    accessSync('/dev/fuse', constants.R_OK | constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Call at the top of an e2e file: fails every test in CI when FUSE is missing. */
export function requireFuse(): void {
  beforeAll(() => {
    if (!fuseAvailable()) {
      if (process.env.CI) throw new Error('/dev/fuse is not usable: end-to-end tests cannot run (CI requires them)');
      console.warn('skipping: /dev/fuse is not usable');
    }
  });
}
