import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

// No daemon started by a test reads or writes the user's disk cache (the harness turns it off
// unless a test asks for it, and gives a directory of its own then): this is the safety net.
const testCacheHome = path.join(os.tmpdir(), 'skills-mount-test-cache');
// Nor the user's config and approvals: approvals for a label the tests mount (demo, docs) would
// put skills in every test mount's approved view. Tests of approvals give each daemon its own.
const testConfigHome = path.join(os.tmpdir(), 'skills-mount-test-config');
// Nor the user's linked skills roots (skills-mount link keeps them in XDG_DATA_HOME).
const testDataHome = path.join(os.tmpdir(), 'skills-mount-test-data');

// Separate processes: end-to-end tests serve FUSE mounts from child processes and must
// never share an event loop with the code that reads the mount. Files that mount run one
// after another: parallel mounts on a 2-core machine turn deadlines into flakes.
export default defineConfig({
  test: {
    pool: 'forks',
    env: { XDG_CACHE_HOME: testCacheHome, XDG_CONFIG_HOME: testConfigHome, XDG_DATA_HOME: testDataHome },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'fast', include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'] } },
      { extends: true, test: { name: 'mounts', include: ['test/e2e/**/*.test.ts', 'test/conformance/**/*.test.ts'], fileParallelism: false } },
      // The real coding agents (scripts/harnesses.sh installs them), run offline against a mock model:
      // a CI pass of its own (--project harnesses). One harness at a time: each session is a few
      // seconds of CPU on a 2-core machine, and timing facts (a skill picked up while a session runs) must not drift.
      { extends: true, test: { name: 'harnesses', include: ['test/harness/**/*.test.ts'], fileParallelism: false, testTimeout: 300_000, hookTimeout: 60_000 } },
    ],
  },
});
