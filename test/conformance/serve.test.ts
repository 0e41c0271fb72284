// The official conformance suite's SEP-2640 server scenarios against the built
// `skills-mount serve --http 127.0.0.1:0` in front of skills-serve, at 2026-07-28 and 2025-11-25:
// with --all, and in the default (approved) view with every skill approved by the CLI; over
// examples/skills (every check the examples exercise, counted), and over SKILLS_MOUNT_CORPUS when set.
// Needs the build (dist/cli/skills-mount.js, skills-serve.js); installs Node 24 into .cache/ on first run.
import { afterAll, describe } from 'vitest';
import { CORPUS, EXAMPLES } from '../support/server-harness.js';
import { approveEverything, gatewayWorld, startServeHttp } from '../support/serve-gateway.js';
import { TempDirs } from '../support/temp-dir.js';
import type { Check } from './suite.js';
import { corpusNotTestable, serverScenarios } from './server-scenarios.js';

const temps = new TempDirs('skills-mount-serve-conformance-');
afterAll(() => temps.removeAll());

function gatewayScenarios(label: string, dir: string, options: { allowed?: (check: Check) => boolean; countsOfExamples?: boolean }): void {
  serverScenarios(`skills-mount serve --all in front of skills-serve ${label}`, {
    ...options,
    start: async () => startServeHttp(await gatewayWorld(await temps.make(), { docs: dir }), ['--all']),
  });
  serverScenarios(`skills-mount serve (every skill approved) in front of skills-serve ${label}`, {
    ...options,
    start: async () => {
      const world = await gatewayWorld(await temps.make(), { docs: dir });
      const approved = await approveEverything(world);
      console.log(`approved for ${label}: ${approved.join(' ')}`);
      return startServeHttp(world);
    },
  });
}

gatewayScenarios('examples/skills', EXAMPLES, { countsOfExamples: true });

describe.skipIf(!CORPUS)('with SKILLS_MOUNT_CORPUS', () => {
  gatewayScenarios('SKILLS_MOUNT_CORPUS', CORPUS!, { allowed: corpusNotTestable });
});
