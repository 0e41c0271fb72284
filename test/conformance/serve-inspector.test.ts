// The MCP Inspector's CLI (2.12.0, scripts/inspector.sh) as a host of `skills-mount serve` in front
// of skills-serve: `--method skills/list --verify` over stdio (the Inspector starts serve) and over
// Streamable HTTP, in both eras (`--protocol-era legacy|modern`, seen in serve's --verbose log), with
// --all and in the default (approved) view with every skill approved by the CLI: exit 0, "no
// conformance errors", one verified report per served skill. Any failed check fails the test.
// A missing Inspector skips here and fails by name in CI (CI=true). Needs the build.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectorPrefix, inspectorVerify, INSPECTOR_VERSION, isInspectorInstalled, type VerifyRun } from '../support/inspector.js';
import { CORPUS, EXAMPLES } from '../support/server-harness.js';
import { gatewayForDescribe, SERVED_VIEWS, serveCommand } from '../support/serve-gateway.js';
import { TempDirs } from '../support/temp-dir.js';
import { node24 } from './suite.js';

const ERAS = [
  { era: 'legacy', handshake: /: initialize ok /, other: /: server\/discover ok / },
  { era: 'modern', handshake: /: server\/discover ok /, other: /: initialize ok / },
] as const;
const targets = [
  { label: 'examples/skills', dir: EXAMPLES, skills: 5 },
  ...(CORPUS ? [{ label: 'SKILLS_MOUNT_CORPUS', dir: CORPUS, skills: 11 }] : []),
];
const temps = new TempDirs('skills-mount-serve-inspector-');
afterAll(() => temps.removeAll());

/** Exit 0, the closing line's "no conformance errors", and one verified report per skill, each under the label. */
function expectClean(run: VerifyRun, skills: number, how: string): void {
  const closing = run.stderr.split('\n').filter((line) => /conformance errors|failed verification|could not be fully checked/.test(line));
  console.log(`Inspector ${INSPECTOR_VERSION} via serve, ${how}: exit ${run.code}; ${closing.join(' ')}`);
  const failed = run.reports.filter((report) => !report.ok || report.outcome !== 'verified' || report.conformance.length > 0 || report.frontmatter.length > 0);
  expect(failed, run.stdout).toEqual([]);
  expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
  expect(closing.join('\n'), run.stderr).toMatch(/^Verified \d+ skills? and \d+ files?: no conformance errors\.$/);
  expect(run.reports).toHaveLength(skills);
  for (const report of run.reports) expect(report.uri).toMatch(/^skill:\/\/docs\/.+\/SKILL\.md$/);
}

if (!isInspectorInstalled()) {
  const missing = `@modelcontextprotocol/inspector ${INSPECTOR_VERSION} is not installed under ${inspectorPrefix()} (scripts/inspector.sh installs it)`;
  if (process.env['CI'] === 'true') it('the Inspector is installed', () => expect.fail(missing));
  else it.skip(`skipped: ${missing}`, () => {});
} else {
  let node: string;
  beforeAll(() => {
    node = node24();
  }, 180_000);

  describe.each(targets)('the Inspector against skills-mount serve in front of skills-serve on $label', ({ label, dir, skills }) => {
    describe.each(SERVED_VIEWS)('$view', ({ view, args, approve }) => {
      const { world, served } = gatewayForDescribe(temps, dir, { args: [...args, '--verbose'], approve });

      it.each(ERAS)('over stdio ($era): verifies every skill, no conformance errors', async ({ era, handshake, other }) => {
        const serve = serveCommand(world(), [...args, '--verbose']);
        // The Inspector hands its stdio server only the variables it is given: serve's HOME and XDG folders.
        const passed = Object.entries(serve.env).filter(([key]) => key === 'HOME' || key.startsWith('XDG_')).flatMap(([key, value]) => ['-e', `${key}=${value}`]);
        const run = await inspectorVerify(node, ['--protocol-era', era, ...passed, '--', ...serve.argv], world().who.env);
        expectClean(run, skills, `${label}, ${view}, stdio ${era}`);
        // serve's log reaches the Inspector's stderr: the era it spoke.
        expect(run.stderr).toMatch(handshake);
        expect(run.stderr).not.toMatch(other);
      });

      it.each(ERAS)('over Streamable HTTP ($era): verifies every skill, no conformance errors', async ({ era, handshake, other }) => {
        const before = served().log().length;
        const run = await inspectorVerify(node, ['--protocol-era', era, '--transport', 'http', '--server-url', served().url], world().who.env);
        expectClean(run, skills, `${label}, ${view}, http ${era}`);
        const logged = served().log().slice(before);
        expect(logged).toMatch(handshake);
        expect(logged).not.toMatch(other);
      });
    });
  });
}
