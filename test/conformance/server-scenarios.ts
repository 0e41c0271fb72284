// The official suite's SEP-2640 server scenarios, at its default revision (2026-07-28) and at
// 2025-11-25, as one describe block against any server a test starts over HTTP: what each
// scenario must pass, skip and (on examples/skills) count. Shared by skills-serve's and
// `skills-mount serve`'s conformance tests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { node24, runScenario, SERVER_SCENARIOS, summary, type Check } from './suite.js';

const REVISIONS = [undefined, '2025-11-25'] as const;
// Checks that only apply from 2026-07-28 on; the suite skips them at 2025-11-25.
const MODERN_ONLY = ['sep-2640-skills-list-cache-attributes', 'sep-2640-skills-get-cache-attributes'];
// Every check the examples exercise, per scenario, at 2026-07-28.
const EXPECTED_CHECKS = { 'sep-2640-skills-directory': 7, 'sep-2640-skills-enumeration': 32, 'sep-2640-skills-manifest': 6 };

/**
 * The corpus's first skill (algorithmic-art) may have no subdirectory, which makes one directory
 * check "not testable" (reported as a failure); every other check must pass.
 */
export const corpusNotTestable = (check: Check): boolean =>
  check.id === 'sep-2640-directory-read-subdir-mimetype' && /^Not testable/.test(check.errorMessage ?? '');

export interface ScenarioTarget {
  /** Starts the server; resolves its URL and how to stop it. */
  start(): Promise<{ url: string; stop(): Promise<unknown> }>;
  /** A failure or warning the target is allowed (none unless given). */
  allowed?: (check: Check) => boolean;
  /** Every check the examples exercise must run and pass (the target serves examples/skills). */
  countsOfExamples?: boolean;
}

let node: string | undefined;

/** One test per scenario and revision against `target`, each printing its counts. */
export function serverScenarios(label: string, target: ScenarioTarget): void {
  describe(`the conformance suite over ${label}`, () => {
    let served: { url: string; stop(): Promise<unknown> } | undefined;
    beforeAll(async () => {
      node ??= node24();
      served = await target.start();
    }, 180_000);
    afterAll(async () => {
      await served?.stop();
    });

    for (const revision of REVISIONS) {
      for (const scenario of SERVER_SCENARIOS) {
        it(`${scenario} at ${revision ?? 'the default revision (2026-07-28)'}`, async () => {
          const { checks, output } = await runScenario(node!, served!.url, scenario, revision);
          console.log(`${label}: ${summary(scenario, revision ?? '2026-07-28', checks)}`);
          const bad = checks.filter((check) => (check.status === 'FAILURE' || check.status === 'WARNING') && !(target.allowed?.(check) ?? false));
          expect(bad, output).toEqual([]);
          const skipped = checks.filter((check) => check.status === 'SKIPPED').map((check) => check.id);
          expect(skipped).toEqual(revision === undefined ? [] : MODERN_ONLY.filter((id) => checks.some((check) => check.id === id)));
          if (target.countsOfExamples) {
            expect(checks.filter((check) => check.status === 'SUCCESS')).toHaveLength(EXPECTED_CHECKS[scenario] - skipped.length);
          }
        }, 90_000);
      }
    }
  });
}
