// Every report reaches a reader that is slow to start (issue 50, item 6): the built CLI's stdout
// goes into a pipe whose reader sleeps before reading, as `outdated --json | (sleep 2; cat)` does,
// and each command's report is made larger than the 64 KiB a pipe holds. What the reader gets is
// the whole report: valid JSON, or text ending with the command's summary line. A reader that
// goes away (`| head`) ends the command quietly; one that never reads does not keep it forever.
import { spawn } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourcesDigest } from '../../src/catalog/resources-digest.js';
import { manifestText } from '../../src/snapshot/snapshot-manifest.js';
import { manifestOf } from '../support/snapshot-manifest.js';
import { cli, person, writeConfig, type CliResult, type Person } from '../support/team-lock-world.js';
import { lockedEntry, lockText, rawLockfile, sha256Of, skillText } from '../support/team-lockfile.js';
import { makeTempDir } from '../support/temp-dir.js';

/** Runs the CLI with its stdout into `(sleep 1.5; cat)`; exits with the CLI's own code. */
const SLOW_READER = ['bash', '-c', '"$0" "$@" | (sleep 1.5; cat); exit "${PIPESTATUS[0]}"'];
/** Well past what a pipe holds (64 KiB), so a report cut at the pipe's size shows. */
const PIPE_BYTES = 65_536;
/** Skills in the lock, approvals in the file, rules in the policy: each report runs to some 100 KiB or more. */
const MANY = 1_200;
/** Servers doctor checks, each a check of about 200 bytes. */
const SERVERS = 1_000;

let base: string;
let who: Person;
let project: string;

beforeAll(async () => {
  base = await makeTempDir('slow-pipe-cli-');
  who = await person(base, 'pat');
  // The lock names "crew", which this configuration lacks: every skill is refused or not asked, by name, with no server started.
  await writeConfig(who, { docs: { url: 'http://127.0.0.1:9/mcp' } });
  project = path.join(base, 'project');
  await mkdir(project);
  const skills = Array.from({ length: MANY }, (_, index) => {
    const name = `skill-${String(index).padStart(4, '0')}`;
    return lockedEntry('crew', name, { 'SKILL.md': skillText(name) });
  });
  await writeFile(path.join(project, 'skills-lock.json'), lockText(rawLockfile({ crew: { url: 'https://crew.example.org/mcp' } }, skills)));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

function slowly(args: readonly string[], as: Person = who): Promise<CliResult> {
  return cli(as, args, { runUnder: SLOW_READER });
}

/** The reader got more than a pipe holds, and all of it: the JSON parses. */
function wholeJson(result: CliResult): unknown {
  expect(Buffer.byteLength(result.stdout), result.stderr).toBeGreaterThan(2 * PIPE_BYTES);
  return JSON.parse(result.stdout);
}

/** The reader got more than a pipe holds, and all of it: the last line is the summary. */
function lastLine(result: CliResult): string {
  expect(Buffer.byteLength(result.stdout), result.stderr).toBeGreaterThan(2 * PIPE_BYTES);
  expect(result.stdout.endsWith('\n')).toBe(true);
  return result.stdout.slice(0, -1).split('\n').at(-1)!;
}

describe('a report larger than a pipe holds, read late, arrives whole', () => {
  it('link --project: every refused skill is said, to the last', async () => {
    const result = await slowly(['link', 'claude-code', '--project', project]);
    expect(result.code, result.stderr).toBe(1);
    const refused = result.stdout.split('\n').filter((line) => / is not linked: the lock names server "crew"/.test(line));
    expect(refused).toHaveLength(MANY);
    expect(lastLine(result)).toMatch(/^ {2}crew\/skill-1199 is not linked: /);
  });

  it('verify --project: every locked skill not linked is named, then the summary', async () => {
    await cli(who, ['link', 'claude-code', '--project', project]);
    const result = await slowly(['verify', '--project', project]);
    expect(result.code, result.stderr).toBe(1);
    expect(lastLine(result)).toBe(`${MANY} locked skills, 0 entries in 1 root, 0 files: ${MANY} differences`);
  });

  it('outdated and outdated --json: every locked skill, then the summary (text); valid JSON', async () => {
    const text = await slowly(['outdated', '--project', project]);
    expect(text.code, text.stderr).toBe(2);
    expect(lastLine(text)).toBe(`${MANY} locked skills: 0 current, 0 changed, ${MANY} not asked`);
    const json = await slowly(['outdated', '--project', project, '--json']);
    expect(json.code, json.stderr).toBe(2);
    expect((wholeJson(json) as { skills: unknown[] }).skills).toHaveLength(MANY);
  });

  it('status --json: every problem of the linked root', async () => {
    await cli(who, ['link', 'claude-code', '--project', project]);
    const result = await slowly(['status', '--json']);
    const report = wholeJson(result) as { links: Array<{ problems: string[] }> };
    expect(report.links[0]!.problems).toHaveLength(MANY);
  });

  it('approvals --json: every approval in the file', async () => {
    const approvals = Array.from({ length: MANY }, (_, index) => {
      const text = skillText(`skill-${index}`);
      const resources = [{ uri: `skill://skill-${index}/SKILL.md`, digest: sha256Of(text), sizeBytes: Buffer.byteLength(text) }];
      return { label: 'docs', skillUri: resources[0]!.uri, name: `skill-${index}`, resources, resourcesDigest: resourcesDigest(resources), approvedAt: '2026-01-01T00:00:00.000Z', allowedToolsApproved: false, allowedTools: null, execApproved: false, revokedAt: null };
    });
    const approver = await person(base, 'approver');
    const file = path.join(approver.env.XDG_CONFIG_HOME!, 'skills-mount', 'approvals.json');
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    await writeFile(file, JSON.stringify({ version: 1, approvals }), { mode: 0o600 });
    const result = await slowly(['approvals', '--json'], approver);
    expect(result.code, result.stderr).toBe(0);
    expect((wholeJson(result) as { approvals: unknown[] }).approvals).toHaveLength(MANY);
  });

  it('cache status --json: every mount subtree and its servers', async () => {
    const cacheDir = path.join(base, 'cache');
    for (let index = 0; index < 300; index++) {
      for (const label of ['alpha', 'beta', 'gamma']) await mkdir(path.join(cacheDir, `mount-${index}-${index.toString(16).padStart(12, '0')}`, label), { recursive: true });
    }
    const result = await slowly(['cache', 'status', '--cache-dir', cacheDir, '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect((wholeJson(result) as { subtrees: unknown[] }).subtrees).toHaveLength(300);
  });

  it('doctor --json: a check for every configured server', async () => {
    // Nothing listens on port 9: each server fails at once, with its own line.
    const doctored = await person(base, 'doctored');
    await writeConfig(doctored, Object.fromEntries(Array.from({ length: SERVERS }, (_, index) => [`server-${index}`, { url: 'http://127.0.0.1:9/mcp' }])));
    const result = await slowly(['doctor', '--json'], doctored);
    const report = wholeJson(result) as { checks: Array<{ name: string }> };
    expect(report.checks.filter((check) => check.name.startsWith('server '))).toHaveLength(SERVERS);
    expect(report.checks.at(-1)?.name).toBe('policy');
  });

  it('verify DEST: every file missing from a snapshot folder, then the summary', async () => {
    const copy = path.join(base, 'snapshot-copy');
    await mkdir(copy);
    const files = Object.fromEntries(Array.from({ length: MANY }, (_, index) => [`docs/skill-${index}/SKILL.md`, skillText(`skill-${index}`)]));
    const directories = ['docs', ...Array.from({ length: MANY }, (_, index) => `docs/skill-${index}`)];
    await writeFile(path.join(copy, '.snapshot.json'), manifestText(manifestOf('many', files, directories)));
    const result = await slowly(['verify', copy]);
    expect(result.code, result.stderr).toBe(1);
    expect(lastLine(result)).toMatch(new RegExp(`^snapshot many in ${copy} \\(a folder holding \\.snapshot\\.json, not a published link\\): \\d+ problems`));
  });
});

describe('a reader that goes away or never reads', () => {
  it('a reader that closes early (| head -c 100) ends the command quietly: no stack, its own exit code', async () => {
    const result = await cli(who, ['outdated', '--project', project, '--json'], { runUnder: ['bash', '-c', '"$0" "$@" | head -c 100 >/dev/null; exit "${PIPESTATUS[0]}"'] });
    expect(result.code).toBe(2);
    expect(result.stderr).not.toMatch(/EPIPE|Error|at /);
  });

  it('a reader that never reads: the command still ends, saying its output was cut', async () => {
    // The module, driven in a child with a short stall bound (the CLI waits a minute).
    const script = `import { exitAfterDrain } from ${JSON.stringify(new URL('../../dist/cli/process-exit.js', import.meta.url).href)};
process.stdout.write('x'.repeat(${4 * PIPE_BYTES}));
await exitAfterDrain(0, { stallMs: 500 });`;
    const started = Date.now();
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      // stdout: a pipe this test never reads.
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.pause();
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.once('close', (code) => resolve({ code, stderr }));
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^skills-mount: stdout: nothing read for 0.5 s, \d+ bytes left unwritten\n$/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
