// The platform as the mount's checks probe it, for tests: Linux x64 with FUSE usable, as a user
// who is not root.
import type { PlatformProbes } from '../../src/fuse/index.js';

/** A Linux machine with FUSE usable as a user who is not root, unless `changes` say otherwise. */
export function linuxProbes(changes: Partial<PlatformProbes> = {}): PlatformProbes {
  return {
    platform: 'linux',
    arch: 'x64',
    env: {},
    uid: 1000,
    exists: async () => true,
    readWrite: async () => true,
    which: async (name) => `/usr/bin/${name}`,
    ...changes,
  };
}
