// The real-harness kit, proven on plain folders: for each installed harness (scripts/harnesses.sh),
// a skill written by hand into its user root, and once into its project root, reaches the model
// (name, description), and the harness sends back its SKILL.md and a referenced file when the
// mock model asks. Without a harness the test is skipped, except with CI=true, where it fails.
import { mkdir, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HARNESS_KINDS, harnesses, harnessPrefix, isInstalled, type HarnessKind } from '../support/harness/harnesses.js';
import { requestText, type RecordedRequest } from '../support/harness/mock-model.mjs';
import { loadSkillScript } from '../support/harness/model-scripts.js';
import { runHarness } from '../support/harness/run-harness.js';
import { TempDirs } from '../support/temp-dir.js';

const SKILL = 'kit-probe-skill';
/** A skill on disk outside every skills root: a harness that lists it reads too much, a parser that finds it is wrong. */
const DECOY = 'kit-decoy-skill';
const temps = new TempDirs('skills-mount-harness-kit-');

afterEach(() => temps.removeAll());

interface Probe {
  home: string;
  cwd: string;
  /** The skill's folder as written (real path). */
  dir: string;
  markers: { description: string; body: string; reference: string };
}

/** A temp HOME and working folder, with SKILL in the harness's user or project root and DECOY elsewhere. */
async function writeProbe(kind: HarnessKind, scope: 'user' | 'project'): Promise<Probe> {
  const base = await realpath(await temps.make());
  const home = path.join(base, 'home');
  const cwd = path.join(base, 'work');
  const root = scope === 'user' ? path.join(home, harnesses[kind].userRoots[0]!) : path.join(cwd, harnesses[kind].projectRoots[0]!);
  const dir = path.join(root, SKILL);
  const tag = `${kind}-${scope}-${Math.random().toString(36).slice(2, 8)}`;
  const markers = { description: `desc-${tag}`, body: `body-${tag}`, reference: `reference-${tag}` };
  await mkdir(cwd, { recursive: true });
  await mkdir(path.join(dir, 'references'), { recursive: true });
  await writeFile(path.join(dir, 'SKILL.md'), `---\nname: ${SKILL}\ndescription: Probe skill (${markers.description}). Use when asked for the probe.\n---\n# Probe\n\n${markers.body}\n\nRead references/x.md for the details.\n`);
  await writeFile(path.join(dir, 'references/x.md'), `# Details\n\n${markers.reference}\n`);
  const decoy = path.join(base, 'not-a-root', DECOY);
  await mkdir(decoy, { recursive: true });
  await writeFile(path.join(decoy, 'SKILL.md'), `---\nname: ${DECOY}\ndescription: Must not be listed.\n---\nDecoy.\n`);
  return { home, cwd, dir, markers };
}

function modelRequests(requests: RecordedRequest[]): RecordedRequest[] {
  return requests.filter((r) => r.api !== undefined);
}

for (const kind of HARNESS_KINDS) {
  const harness = harnesses[kind];
  describe(`${kind} ${harness.version}, run for real against the mock model`, () => {
    if (!isInstalled(kind)) {
      const missing = `${kind} is not installed under ${harnessPrefix()} (scripts/harnesses.sh installs it)`;
      if (process.env['CI'] === 'true') it('is installed', () => expect.fail(missing));
      else it.skip(`skipped: ${missing}`, () => {});
      return;
    }

    for (const scope of ['user', 'project'] as const) {
      it(`lists a skill in its ${scope} root, and returns its SKILL.md and a referenced file`, async () => {
        const probe = await writeProbe(kind, scope);
        const result = await runHarness(kind, {
          home: probe.home,
          cwd: probe.cwd,
          prompt: 'Use the probe skill and read its details.',
          script: loadSkillScript(kind, SKILL, 'references/x.md'),
          timeoutMs: 120_000,
        });
        const context = `${kind} exit ${result.exitCode}\nstderr: ${result.stderr.slice(-2_000)}`;
        expect(result.timedOut, context).toBe(false);
        expect(result.exitCode, context).toBe(0);
        // Listing, load, read: three model turns at least, all answered by the mock; nothing went elsewhere.
        const requests = modelRequests(result.requests);
        expect(requests.length, context).toBeGreaterThanOrEqual(3);
        expect(result.requests.filter((r) => r.outbound !== undefined).map((r) => r.outbound)).toEqual([]);

        const listed = harness.listedSkills(result.requests);
        const probeListed = listed.find((skill) => skill.name === SKILL);
        expect(probeListed, `listed: ${listed.map((s) => s.name).join(', ')}`).toBeDefined();
        expect(probeListed!.description).toContain(probe.markers.description);
        if (probeListed!.location !== undefined) expect(probeListed!.location).toBe(path.join(probe.dir, 'SKILL.md'));
        expect(listed.map((skill) => skill.name)).not.toContain(DECOY);
        for (const request of requests) expect(requestText(request)).not.toContain(DECOY);

        const loaded = harness.loadedSkillText(result.requests, SKILL);
        expect(loaded, context).toContain(probe.markers.body);
        expect(loaded).toContain('Read references/x.md for the details.');
        const read = harness.readFileText(result.requests, path.join(probe.dir, 'references/x.md'));
        expect(read, context).toContain(probe.markers.reference);
        // The reference reached the model only as the read's result, not with the listing.
        expect(requestText(requests[0]!)).not.toContain(probe.markers.reference);
      });
    }
  });
}
