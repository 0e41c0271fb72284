// `skills-mount serve` as a person runs it, through the built CLI: every activation (a skills/get,
// a SKILL.md read) is one log line, one --audit JSON line and one count in --metrics, over stdio
// and HTTP in both eras, and /healthz answers 200 once serving (issue 51, item 4); bad input gets
// one line naming it and exit 2, and nothing hangs (item 7); the policy refusing a server keeps its
// skills out, naming the rule.
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeReadOnlyTree } from '../../src/read-only-tree.js';
import { freePort, SKILLS_SERVE, startHttpServe, type ListeningServer } from '../support/http-server.js';
import { servedBytes, servedUris, startServe, watchHttp, watchStdio, type RunningServe, type Watching } from '../support/serve-watch.js';
import { GetResult } from '../support/server-harness.js';
import { skillMd, writeTree } from '../support/skill-builder.js';
import { cli, gitProject, person, writePolicy, writeConfig, type CliResult, type Person } from '../support/team-lock-world.js';
import { makeTempDir } from '../support/temp-dir.js';

const TREE = { 'a/SKILL.md': skillMd('a'), 'a/more.md': 'more\n', 'b/SKILL.md': skillMd('b') };

/** The first line of a refused command line, and that it said it exactly once. */
function refusal(result: CliResult, pattern: RegExp): void {
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(2);
  expect(result.stdout).toBe('');
  const lines = result.stderr.split('\n');
  expect(lines.filter((line) => pattern.test(line)), result.stderr).toHaveLength(1);
  // One line, then at most the usage (as for every command line refused).
  expect(lines[0]).toMatch(pattern);
  if (lines.length > 2) expect(lines.slice(1, 3)).toEqual(['', expect.stringMatching(/^usage: skills-mount /)]);
}

describe('serve: activations, audit, metrics and health', () => {
  let base: string;
  let ana: Person;
  let audit: string;
  let gateway: RunningServe;
  const watchers: Watching[] = [];

  beforeAll(async () => {
    base = await makeTempDir('skills-mount-serve-cli-');
    const served = path.join(base, 'served');
    await writeTree(served, TREE);
    ana = await person(base, 'ana');
    await writeConfig(ana, { docs: { command: process.execPath, args: [SKILLS_SERVE, served] } });
    audit = path.join(base, 'audit.jsonl');
    // --metrics takes no port 0 (as the mount's): a port free a moment ago.
    gateway = await startServe(ana, ['--config', ana.configFile, '--all', '--audit', audit, '--metrics', `127.0.0.1:${await freePort()}`]);
  }, 60_000);
  afterAll(async () => {
    await Promise.allSettled(watchers.map((watching) => watching.close()));
    await gateway?.stop();
    if (base) await removeReadOnlyTree(base);
  });

  const metricsUrl = (): string => /metrics at (http:\/\/\S+)\/metrics/.exec(gateway.log())![1]!;
  const activations = async (): Promise<number> => {
    const text = await (await fetch(`${metricsUrl()}/metrics`)).text();
    return Number(/^skills_mount_serve_activations_total\{server="docs"\} (\d+)$/m.exec(text)?.[1] ?? 0);
  };

  it('/healthz is 200 once serving, and /metrics has the activations counter', async () => {
    const health = await fetch(`${metricsUrl()}/healthz`);
    expect(health.status, await health.clone().text()).toBe(200);
    expect(await (await fetch(`${metricsUrl()}/metrics`)).text()).toMatch(/^# TYPE skills_mount_serve_activations_total counter$/m);
    expect(await activations()).toBe(0);
  });

  it('each skills/get and each SKILL.md read is one log line, one audit line and one count; other reads and listings are none', async () => {
    watchers.push(await watchHttp(gateway.url, 'legacy'), await watchHttp(gateway.url, 'modern'));
    // A serve of its own on stdio: its log is the client's to read, its audit file another.
    const stdioAudit = path.join(base, 'stdio-audit.jsonl');
    const stdio = await watchStdio(ana, ['--config', ana.configFile, '--all', '--audit', stdioAudit], 'legacy');
    watchers.push(stdio);
    for (const { client } of watchers) {
      expect(await servedUris(client)).toEqual(['skill://docs/a/SKILL.md', 'skill://docs/b/SKILL.md']);
      await client.request({ method: 'skills/get', params: { uri: 'skill://docs/a/SKILL.md' } }, GetResult);
      expect(await servedBytes(client, 'skill://docs/b/SKILL.md')).toBe(TREE['b/SKILL.md']);
      expect(await servedBytes(client, 'skill://docs/a/more.md')).toBe('more\n');
    }
    // Two clients of the HTTP serve: four activations there, two on stdio.
    await expect.poll(activations, { timeout: 2_000 }).toBe(4);
    const lines = gateway.log().split('\n').filter((line) => line.includes('activation: '));
    expect(lines).toHaveLength(4);
    const legacySession = /^session:[0-9a-f-]{36}$/;
    for (const line of lines) expect(line).toMatch(/^skills-mount: activation: (session:[0-9a-f-]{36}|http) (skills\/get \[docs\] a|resources\/read \[docs\] b) sha256:[0-9a-f]{64}$/);
    const records = async (file: string): Promise<Array<Record<string, string>>> =>
      (await readFile(file, 'utf8').catch(() => ''))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, string>);
    await expect.poll(async () => (await records(audit)).length, { timeout: 2_000 }).toBe(4);
    const written = await records(audit);
    expect(written.map((record) => `${record.method} ${record.skill}`)).toEqual(['skills/get a', 'resources/read b', 'skills/get a', 'resources/read b']);
    // The 2025 client by its session, the stateless 2026-07-28 one by its transport.
    expect(written[0]!.client).toMatch(legacySession);
    expect(written[0]!.client).toBe(written[1]!.client);
    expect(written[2]!.client).toBe('http');
    for (const record of written) {
      expect(Object.keys(record).sort()).toEqual(['client', 'digest', 'label', 'method', 'skill', 'time', 'upstreamUri', 'uri']);
      expect(record.label).toBe('docs');
      expect(record.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(Date.now() - new Date(record.time!).getTime()).toBeLessThan(60_000);
    }
    expect(written[0]).toMatchObject({ uri: 'skill://docs/a/SKILL.md', upstreamUri: 'skill://a/SKILL.md' });

    await expect.poll(() => stdio.log().split('\n').filter((line) => line.includes('activation: ')).length, { timeout: 2_000 }).toBe(2);
    expect(stdio.log()).toMatch(/activation: stdio skills\/get \[docs\] a sha256:/);
    await expect.poll(async () => (await records(stdioAudit)).map((record) => record.client), { timeout: 2_000 }).toEqual(['stdio', 'stdio']);
  });
});

describe('serve: bad input gets one line naming it, exit 2, and nothing hangs', () => {
  let base: string;
  let bo: Person;
  let blocker: Server | undefined;

  beforeAll(async () => {
    base = await makeTempDir('skills-mount-serve-bad-');
    const served = path.join(base, 'served');
    await writeTree(served, TREE);
    bo = await person(base, 'bo');
    await writeConfig(bo, { docs: { command: process.execPath, args: [SKILLS_SERVE, served] } });
  });
  afterAll(async () => {
    await new Promise((resolve) => (blocker ? blocker.close(resolve) : resolve(undefined)));
    if (base) await removeReadOnlyTree(base);
  });

  const serve = (args: readonly string[]) => cli(bo, ['serve', '--config', bo.configFile, ...args], { timeoutMs: 20_000 });

  it('an unknown flag, --project with --all, a --project folder without a lockfile or with a broken one', async () => {
    const noLock = await gitProject(path.join(base, 'no-lock'));
    const broken = await gitProject(path.join(base, 'broken'));
    await writeTree(broken, { 'skills-lock.json': '{"lockfileVersion": 1, "servers": ' });
    const [unknown, both, missing, unusable] = await Promise.all([
      serve(['--htttp', '127.0.0.1:0']),
      serve(['--project', noLock, '--all']),
      serve(['--project', noLock, '--http', '127.0.0.1:0']),
      serve(['--project', broken, '--http', '127.0.0.1:0']),
    ]);
    refusal(unknown, /^skills-mount: unknown option --htttp$/);
    refusal(both, /^skills-mount: serve takes --project DIR or --all, not both/);
    refusal(missing, new RegExp(`^skills-mount: --project ${noLock}/skills-lock\\.json: no such lockfile$`));
    refusal(unusable, new RegExp(`^skills-mount: --project ${broken}/skills-lock\\.json: is not JSON`));
  });

  it('a port in use: exit 2 naming it, its upstream stopped', async () => {
    blocker = createServer();
    const port = await new Promise<number>((resolve) => blocker!.listen(0, '127.0.0.1', () => resolve((blocker!.address() as { port: number }).port)));
    const result = await serve(['--all', '--http', `127.0.0.1:${port}`]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n').at(-1)).toBe(`skills-mount: --http 127.0.0.1:${port}: the port is in use`);
    expect(result.stderr).toContain('[docs] server: skills-serve: stdin closed; shutting down');
  });

  it('a server command that does not exist: named in one line; serve goes on with the servers that start', async () => {
    const cara = await person(base, 'cara');
    await writeConfig(cara, { docs: { command: process.execPath, args: [SKILLS_SERVE, path.join(base, 'served')] }, nope: { command: path.join(base, 'no-such-command') } });
    const gateway = await startServe(cara, ['--config', cara.configFile, '--all']);
    try {
      expect(gateway.log()).toContain(`[nope] command ${path.join(base, 'no-such-command')} does not exist; fix "command" in the config`);
      const watching = await watchHttp(gateway.url, 'modern');
      try {
        expect(await servedUris(watching.client)).toEqual(['skill://docs/a/SKILL.md', 'skill://docs/b/SKILL.md']);
      } finally {
        await watching.close();
      }
    } finally {
      await gateway.stop();
    }
  });
});

describe('serve under a policy that refuses a server', () => {
  let base: string;
  let allowed: ListeningServer;
  let refused: ListeningServer;
  let dee: Person;
  let gateway: RunningServe | undefined;

  beforeAll(async () => {
    base = await makeTempDir('skills-mount-serve-policy-');
    await writeTree(path.join(base, 'ok'), TREE);
    await writeTree(path.join(base, 'shady'), { 's/SKILL.md': skillMd('s') });
    // --verbose: each logs every request it answers.
    allowed = await startHttpServe([path.join(base, 'ok'), '--verbose']);
    refused = await startHttpServe([path.join(base, 'shady'), '--verbose']);
    dee = await person(base, 'dee');
    await writeConfig(dee, { docs: { url: allowed.url }, shady: { url: refused.url } });
    await writePolicy(dee, { policyVersion: 1, servers: [{ url: allowed.url, may: ['mount', 'approve', 'lock', 'link'] }, { url: refused.url, may: [] }] });
  }, 60_000);
  afterAll(async () => {
    await gateway?.stop();
    await allowed?.stop();
    await refused?.stop();
    if (base) await removeReadOnlyTree(base);
  });

  it('serves none of its skills, even with --all, and the log names the policy file and the rule', async () => {
    gateway = await startServe(dee, ['--config', dee.configFile, '--all']);
    expect(gateway.log()).toContain(`refused by policy ${dee.policyFile} (servers[1]): server "shady" (${refused.url}) may not be mounted: not served`);
    const watching = await watchHttp(gateway.url, 'legacy');
    try {
      expect(await servedUris(watching.client)).toEqual(['skill://docs/a/SKILL.md', 'skill://docs/b/SKILL.md']);
      await expect(servedBytes(watching.client, 'skill://shady/s/SKILL.md')).rejects.toThrow(/not found/i);
    } finally {
      await watching.close();
    }
    // Never even asked: the refused server saw no request at all.
    expect(allowed.log()).toMatch(/skills\/list ok/);
    expect(refused.log()).not.toMatch(/initialize|server\/discover|skills\/list/);
  });

  it('a policy that refuses every configured server: exit 2, one line', async () => {
    const eve = await person(base, 'eve');
    await writeConfig(eve, { shady: { url: refused.url } });
    await writePolicy(eve, { policyVersion: 1, servers: [{ url: refused.url, may: [] }] });
    const result = await cli(eve, ['serve', '--config', eve.configFile, '--http', '127.0.0.1:0'], { timeoutMs: 20_000 });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('the policy in force lets none of its servers be mounted');
  });
});
