// Sign-in through a real authorization server nobody here wrote (oidc-provider: PKCE, resource
// indicators, dynamic registration, rotating refresh tokens) in front of `skills-serve
// --auth-issuer`, with skills-mount as a person uses it: `login` with a browser (a script given
// as $BROWSER), a kernel mount reading the server's skills, access tokens that expire every 2 s
// while a reader keeps reading (renewed: no error reaches the reader), the sign-in revoked at the
// authorization server ("needs login", what was read still served), and `login` again from
// another process picked up by the running mount. Every token the store ever held is looked for
// in everything the suite keeps (the daemon's log, the commands' output, status, skills.json, what
// a second server was sent): it is in none of them.
import { spawn } from 'node:child_process';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, waitFor } from '../support/fuse-harness.js';
import { startAuthServer, type AuthServer } from '../support/cli-auth-server.js';
import { freePort, type ListeningServer } from '../support/http-server.js';
import { SKILLS_MOUNT, makeTestDir, startMount, type RunningMount } from '../support/mount-harness.js';
import { OIDC_BROWSER, startOidcServer, startProtectedServe, type OidcServer } from '../support/oidc-server.js';
import { fuseAvailable } from '../support/require-fuse.js';
import { writeSkill } from '../support/skill-builder.js';

const OTHER_TOKEN = 'static-token-of-the-other-server';

/** What a server was sent: the headers that could carry a sign-in. */
interface SeenRequest {
  url: string;
  authorization: string | undefined;
  dpop: string | undefined;
}

/** The server's front door: passes every request to `upstream`, or, once told, redirects it (307) to another origin. */
async function startFrontDoor(): Promise<{ url: string; upstream?: URL; redirectTo?: string | undefined; close(): Promise<void> }> {
  const door: { url: string; upstream?: URL; redirectTo?: string | undefined; close(): Promise<void> } = { url: '', close: async () => undefined };
  const server = createServer((req, res) => {
    if (door.redirectTo !== undefined) {
      res.writeHead(307, { location: `${door.redirectTo}${req.url ?? '/'}` }).end();
      return;
    }
    const upstream = httpRequest({ host: door.upstream!.hostname, port: door.upstream!.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  door.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  door.close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return door;
}

/** A server on another origin that records what it was sent and answers 404. */
async function startRecorder(): Promise<{ origin: string; seen: SeenRequest[]; close(): Promise<void> }> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', authorization: req.headers.authorization, dpop: req.headers['dpop'] as string | undefined });
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close };
}

interface Cli {
  code: number | null;
  stdout: string;
  stderr: string;
  /** When the process exited (performance.now()). */
  exitedAtMs: number;
}

describe.skipIf(!fuseAvailable())('sign-in against oidc-provider, through a real mount', () => {
  let oidc: OidcServer;
  let serve: ListeningServer;
  let door: Awaited<ReturnType<typeof startFrontDoor>>;
  let elsewhere: Awaited<ReturnType<typeof startRecorder>>;
  let other: AuthServer;
  let dir: string;
  let skills: string;
  let configPath: string;
  let env: NodeJS.ProcessEnv;
  let mount: RunningMount | undefined;
  let metricsPort: number;
  /** Every access and refresh token the store held at any point. */
  const tokens = new Set<string>();
  /** Everything the suite keeps that a token must never be in. */
  const kept: Array<{ what: string; text: string }> = [];

  const storeFile = () => path.join(env['XDG_CONFIG_HOME']!, 'skills-mount', 'auth', 'tokens.json');
  const collectTokens = async () => {
    const text = await readFile(storeFile(), 'utf8').catch(() => '');
    for (const match of text.matchAll(/"(?:access_token|refresh_token)":\s*"([^"]+)"/g)) tokens.add(match[1]!);
  };
  const cli = (...args: string[]): Promise<Cli> =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, [SKILLS_MOUNT, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.once('close', (code) => {
        clearTimeout(timer);
        kept.push({ what: `skills-mount ${args.join(' ')}`, text: stdout + stderr });
        resolve({ code, stdout, stderr, exitedAtMs: performance.now() });
      });
    });
  const serverState = async (label: string): Promise<string | undefined> => {
    const text = await readFile(path.join(mount!.mountpoint, 'skills.json'), 'utf8').catch(() => '{}');
    return (JSON.parse(text) as { servers?: Array<{ label: string; state: string }> }).servers?.find((server) => server.label === label)?.state;
  };
  /** A file added on the server, and the time until a reader on the mount gets its bytes (ms). */
  const addAndRead = async (name: string, timeoutMs = 15_000): Promise<number> => {
    const started = performance.now();
    await writeFile(path.join(skills, 'alpha', 'references', name), `# ${name}\n`);
    const file = path.join(mount!.mountpoint, 'team', 'alpha', 'references', name);
    await waitFor(async () => (await run('cat', [file])).stdout === `# ${name}\n`, timeoutMs, `${name} on the mount`);
    return performance.now() - started;
  };

  beforeAll(async () => {
    dir = await makeTestDir();
    skills = path.join(dir, 'skills');
    await writeSkill(skills, 'alpha', { files: { 'references/first.md': '# first\n' } });
    await writeSkill(path.join(dir, 'other-skills'), 'beta');
    // Access tokens live 2 s: a reader that keeps reading meets an expired one every few reads.
    oidc = await startOidcServer({ accessTokenTtlS: 2 });
    // The server is reached through a front door that can redirect it elsewhere: its address is the resource.
    door = await startFrontDoor();
    elsewhere = await startRecorder();
    // --ttl 1: the mount asks the server again about once a second, so expiring tokens are met often.
    serve = await startProtectedServe(oidc, skills, { args: ['--ttl', '1', '--auth-audience', door.url] });
    oidc.addResource(door.url, 'skills:read skills:write');
    door.upstream = new URL(serve.url);
    other = await startAuthServer(path.join(dir, 'other-skills'), OTHER_TOKEN);
    configPath = path.join(dir, 'config.json');
    await writeFile(
      configPath,
      JSON.stringify({ mcpServers: { team: { url: door.url }, other: { url: `${other.origin}/mcp`, headers: { Authorization: `Bearer ${OTHER_TOKEN}` } } } }),
    );
    env = {
      ...process.env,
      HOME: path.join(dir, 'home'),
      XDG_CONFIG_HOME: path.join(dir, 'config'),
      XDG_CACHE_HOME: path.join(dir, 'cache'),
      XDG_DATA_HOME: path.join(dir, 'data'),
      BROWSER: `${process.execPath} ${OIDC_BROWSER}`,
    };
  }, 60_000);

  afterAll(async () => {
    if (mount) kept.push({ what: 'the daemon log', text: mount.log() });
    await mount?.stop();
    await serve?.stop();
    await door?.close();
    await elsewhere?.close();
    await other?.close();
    await oidc?.close();
  });

  it('login through the browser stores the tokens privately; the mount reads the skills with them, and sends them nowhere else', async () => {
    const login = await cli('login', 'team', '--config', configPath);
    expect(login.code, login.stdout + login.stderr).toBe(0);
    expect(login.stdout + login.stderr).toMatch(/team: signed in \(for http:\/\/127\.0\.0\.1:\d+\/mcp, from http:\/\/127\.0\.0\.1:\d+/);
    expect((await stat(storeFile())).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(storeFile()))).mode & 0o777).toBe(0o700);
    await collectTokens();
    expect(tokens.size).toBeGreaterThanOrEqual(2);
    // What oidc-provider saw: PKCE S256 and the resource indicator, a client it registered.
    const asked = oidc.authorizationRequests.at(-1)!;
    expect({ resource: asked.getAll('resource'), method: asked.get('code_challenge_method') }).toEqual({ resource: [door.url], method: 'S256' });

    metricsPort = await freePort();
    mount = await startMount({ dir: path.join(dir, 'm'), args: ['--config', configPath, '--metrics', `127.0.0.1:${metricsPort}`], env });
    const first = await run('cat', [path.join(mount.mountpoint, 'team', 'alpha', 'SKILL.md')]);
    expect(first.stdout).toContain('name: alpha');
    expect((await run('cat', [path.join(mount.mountpoint, 'team', 'alpha', 'references', 'first.md')])).stdout).toBe('# first\n');
    expect(await serverState('other')).toBe('connected');
    // The second server was sent its own header, and never a token of this sign-in.
    expect(other.seen.length).toBeGreaterThan(0);
    expect(new Set(other.seen)).toEqual(new Set([`Bearer ${OTHER_TOKEN}`]));
  }, 90_000);

  it('access tokens that expire every 2 s while a reader reads: renewed (rotating refresh tokens), no error reaches the reader', async () => {
    const refreshesBefore = oidc.tokenGrants.filter((grant) => grant.grantType === 'refresh_token').length;
    const started = performance.now();
    let reads = 0;
    while (performance.now() - started < 8_000) {
      await addAndRead(`loop-${reads}.md`);
      reads += 1;
      await collectTokens();
    }
    const refreshes = oidc.tokenGrants.filter((grant) => grant.grantType === 'refresh_token').length - refreshesBefore;
    expect(reads).toBeGreaterThan(2);
    expect(refreshes, `${refreshes} refreshes during ${reads} reads`).toBeGreaterThanOrEqual(2);
    expect(oidc.tokenErrors).toEqual([]);
    expect(await serverState('team')).toBe('connected');
  }, 90_000);

  it('the sign-in revoked at the authorization server: "needs login" with the command, what was read still served; login elsewhere is picked up', async () => {
    await collectTokens();
    expect(await oidc.revokeAccount('alice')).toBeGreaterThan(0);
    // The next renewal fails (the access token lives 2 s): the server needs a sign-in.
    await writeFile(path.join(skills, 'alpha', 'references', 'while-revoked.md'), '# while revoked\n');
    await waitFor(async () => (await serverState('team')) === 'needs-login', 20_000, 'team needs login');
    // /healthz: the mount is healthy, and says which server waits for a sign-in.
    const health = await fetch(`http://127.0.0.1:${metricsPort}/healthz`);
    expect({ status: health.status, body: await health.text() }).toEqual({ status: 200, body: 'ok\nteam: needs login; run: skills-mount login team\n' });
    const status = await cli('status');
    expect(status.stdout).toMatch(/team.*needs login/);
    expect(status.stdout).toContain('skills-mount login team');
    kept.push({ what: 'skills.json', text: await readFile(path.join(mount!.mountpoint, 'skills.json'), 'utf8') });
    kept.push({ what: 'status.json', text: await readFile(path.join(mount!.mountpoint, 'status.json'), 'utf8') });
    // Not retried in a fast loop: no token request while it waits for a sign-in.
    const grants = oidc.tokenGrants.length;
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(oidc.tokenGrants.length).toBe(grants);
    // What was read before is still there.
    expect((await run('cat', [path.join(mount!.mountpoint, 'team', 'alpha', 'references', 'first.md')])).stdout).toBe('# first\n');
    expect(await serverState('other')).toBe('connected');

    const login = await cli('login', 'team', '--config', configPath);
    expect(login.code, login.stdout + login.stderr).toBe(0);
    await collectTokens();
    await waitFor(async () => (await serverState('team')) === 'connected', 10_000, 'team connected after login');
    const connectedMs = performance.now() - login.exitedAtMs;
    const file = path.join(mount!.mountpoint, 'team', 'alpha', 'references', 'while-revoked.md');
    await waitFor(async () => (await run('cat', [file])).stdout === '# while revoked\n', 10_000, 'the file added meanwhile');
    const servedMs = performance.now() - login.exitedAtMs;
    console.log(`auth-oidc: login returned -> mount connected ${connectedMs.toFixed(0)} ms, -> a file added meanwhile read ${servedMs.toFixed(0)} ms`);
    expect(connectedMs).toBeLessThan(2_000);
  }, 120_000);

  it('the server redirected to another origin: not followed, so the sign-in goes nowhere else; what was read is still served', async () => {
    door.redirectTo = elsewhere.origin;
    try {
      const file = path.join(mount!.mountpoint, 'team', 'alpha', 'references', 'after-redirect.md');
      await writeFile(path.join(skills, 'alpha', 'references', 'after-redirect.md'), '# moved\n');
      const refused = `Redirect to ${elsewhere.origin}/mcp not followed`;
      await waitFor(async () => (await run('cat', [file]), mount!.log().includes(refused)), 15_000, 'the redirect refused');
      expect((await run('cat', [path.join(mount!.mountpoint, 'team', 'alpha', 'references', 'first.md')])).stdout).toBe('# first\n');
    } finally {
      door.redirectTo = undefined;
    }
    // The SDK's transports follow a redirect only within the server's origin.
    expect(elsewhere.seen).toEqual([]);
  }, 60_000);

  it('no token the store ever held is in any log, output, status or index the suite keeps, nor was sent to the other server', async () => {
    await collectTokens();
    kept.push({ what: 'the daemon log', text: mount!.log() });
    kept.push({ what: 'what the other server was sent', text: other.seen.join('\n') });
    expect(tokens.size).toBeGreaterThanOrEqual(6);
    for (const { what, text } of kept) {
      for (const token of tokens) expect(text.includes(token), `a token in ${what}`).toBe(false);
    }
  });
});
