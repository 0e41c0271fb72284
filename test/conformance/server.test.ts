// The official conformance suite's SEP-2640 server scenarios against the built
// `skills-serve --http`, at the suite's default revision (2026-07-28) and at 2025-11-25:
// every check passes over examples/skills, and over SKILLS_MOUNT_CORPUS when set.
// Needs the build (dist/cli/skills-serve.js); installs Node 24 into .cache/ on first run.
import { describe } from 'vitest';
import { startHttpServe } from '../support/http-server.js';
import { CORPUS, EXAMPLES } from '../support/server-harness.js';
import { corpusNotTestable, serverScenarios } from './server-scenarios.js';

serverScenarios('examples/skills', { start: () => startHttpServe([EXAMPLES]), countsOfExamples: true });

describe.skipIf(!CORPUS)('with SKILLS_MOUNT_CORPUS', () => {
  serverScenarios('SKILLS_MOUNT_CORPUS', { start: () => startHttpServe([CORPUS!]), allowed: corpusNotTestable });
});
