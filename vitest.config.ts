import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Separate processes: e2e tests serve FUSE mounts from child processes and
    // must never share an event loop with the code that reads the mount.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
