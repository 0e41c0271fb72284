// The sign-in interop scenario, run against each authorization server nobody here wrote
// (test/e2e/auth-interop-*.test.ts): that server in front of `skills-serve --auth-issuer`, a real
// kernel mount started before anyone signed in, and skills-mount used as a person uses it.
// Steps, in order (each a test; a later one needs the earlier ones):
//   1. login through a browser (a script as $BROWSER): the running mount picks it up within 2 s and reads;
//   2. access tokens that expire every few seconds while a reader reads: renewed, no error reaches it;
//   3. the refresh token gone: the mount turns "needs login"; a second login, the first one's
//      loopback port taken meanwhile (so another port), succeeds and the mount picks it up within 2 s;
//   (where clients register dynamically) the server forgot its clients: the mount turns "needs
//      login"; login registers anew, without hanging, and the mount picks it up within 2 s;
//   4. logout: revoked at the authorization server (the old refresh token, accepted just before,
//      is refused afterwards); the mount turns "needs login".
// Each login and pickup is timed and printed as an `interop:` line. A provider that cannot run
// here skips locally and fails by name in CI (CI=true), as FUSE does.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, waitFor } from './fuse-harness.js';
import { freePort, startHttpServe, type ListeningServer } from './http-server.js';
import { SKILLS_MOUNT, makeTestDir, startMount, type RunningMount } from './mount-harness.js';
import { fuseAvailable } from './require-fuse.js';
import { writeSkill } from './skill-builder.js';

/** The scope skills-serve requires of every token in these tests. */
export const INTEROP_SCOPE = 'skills:read';
/** How long a login may take to be picked up by a running mount (the documented promise). */
export const PICKUP_LIMIT_MS = 2_000;

/** What the scenario needs to start an authorization server in front of one resource. */
export interface InteropRequest {
  /** The resource (skills-serve's MCP endpoint URL): the `aud` its access tokens must name. */
  resource: string;
  /** The scope skills-serve requires. */
  scope: string;
  /** Access token lifetime in seconds. */
  accessTokenTtlS: number;
  /** A folder of the test's own for the server's files. */
  dir: string;
}

/** A running authorization server, as the scenario drives it. */
export interface InteropProvider {
  /** What `--auth-issuer` takes: exactly the `issuer` of its metadata. */
  readonly issuer: string;
  /** Its token endpoint (a refresh token is presented there before and after logout). */
  readonly tokenEndpoint: string;
  /** The `oauth` object of the config entry (a pre-registered client where it has no dynamic registration). */
  readonly oauth?: Record<string, unknown>;
  /** The `$BROWSER` command: a program and its arguments; skills-mount appends the address. */
  readonly browser: string;
  /** Environment the browser needs besides the test's. */
  readonly browserEnv?: Record<string, string>;
  /** How many refresh token grants it accepted so far. */
  refreshGrants(): Promise<number>;
  /** Makes every refresh token issued so far unusable, as when they lapse. */
  dropRefreshTokens(): Promise<void>;
  /** Forgets every client it registered dynamically (as a server whose registrations were in memory does when it restarts); absent where clients are not registered dynamically. */
  forgetClients?(): Promise<void>;
  /** What it logged or noticed, shown when a step fails. */
  diagnostics?(): string;
  close(): Promise<void>;
}

export interface InteropDefinition {
  /** The provider's name, in titles and `interop:` lines. */
  name: string;
  /** Why it cannot run on this machine (not installed, ...), or undefined when it can. */
  unavailable(): string | undefined;
  start(request: InteropRequest): Promise<InteropProvider>;
  /** Access token lifetime (default 2 s). */
  accessTokenTtlS?: number;
  /** Whether skills-mount registers itself dynamically there (then the server forgetting its clients is tested too). */
  registersClients: boolean;
  /**
   * Why this provider cannot revoke what this client holds (it has no revocation for such a client):
   * then logout is only checked to remove the sign-in. Undefined: it revokes, and that is checked.
   */
  cannotRevokeBecause?: string;
}

interface Cli {
  code: number | null;
  output: string;
  startedAtMs: number;
  exitedAtMs: number;
}

interface TokenAnswer {
  status: number;
  error: string | undefined;
}

/** Declares the scenario's tests for one provider. */
export function describeInterop(definition: InteropDefinition): void {
  const { name } = definition;
  const missing = fuseAvailable() ? definition.unavailable() : '/dev/fuse is not usable';
  if (missing !== undefined) {
    if (process.env['CI']) {
      // In CI a skip would hide a machine without the provider: one failing test names it.
      describe(`sign-in interop with ${name}`, () => {
        it(`${name} and FUSE are there (CI requires them)`, () => {
          throw new Error(`${name} interop tests cannot run: ${missing}`);
        });
      });
      return;
    }
    console.warn(`skipping the ${name} interop tests: ${missing}`);
    describe.skip(`sign-in interop with ${name}`, () => {
      it('needs its authorization server and FUSE', () => undefined);
    });
    return;
  }

  describe(`sign-in interop with ${name}, through a real mount`, () => {
    const ttlS = definition.accessTokenTtlS ?? 2;
    let provider: InteropProvider | undefined;
    let serve: ListeningServer | undefined;
    let mount: RunningMount | undefined;
    let dir: string;
    let skills: string;
    let configPath: string;
    let env: NodeJS.ProcessEnv;
    let logins = 0;

    const storeFile = () => path.join(env['XDG_CONFIG_HOME']!, 'skills-mount', 'auth', 'tokens.json');
    const cli = (...args: string[]): Promise<Cli> =>
      new Promise((resolve) => {
        const startedAtMs = performance.now();
        const child = spawn(process.execPath, [SKILLS_MOUNT, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
        const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
        child.once('close', (code) => {
          clearTimeout(timer);
          resolve({ code, output, startedAtMs, exitedAtMs: performance.now() });
        });
      });
    const serverState = async (): Promise<string | undefined> => {
      const text = await readFile(path.join(mount!.mountpoint, 'skills.json'), 'utf8').catch(() => '{}');
      return (JSON.parse(text) as { servers?: Array<{ label: string; state: string }> }).servers?.find((server) => server.label === 'team')?.state;
    };
    const context = () => `\n--- ${name}:\n${provider?.diagnostics?.() ?? ''}\n--- the daemon's log:\n${mount?.log().slice(-4_000) ?? ''}`;
    const stored = async () => {
      const file = JSON.parse(await readFile(storeFile(), 'utf8')) as {
        entries: Array<{
          label: string;
          tokens?: { refresh_token?: string; issuer: string; resource: string };
          clients: Record<string, { client_id: string; client_secret?: string }>;
          discovery?: { authorizationServerMetadata?: { token_endpoint_auth_methods_supported?: string[] } };
        }>;
      };
      const entry = file.entries.find((one) => one.label === 'team');
      const tokens = entry?.tokens;
      // A pre-registered client is in the config, not the store.
      const { clientId, clientSecret } = (provider?.oauth ?? {}) as { clientId?: string; clientSecret?: string };
      const preRegistered = clientId === undefined ? undefined : { client_id: clientId, ...(clientSecret !== undefined && { client_secret: clientSecret }) };
      const methods = entry?.discovery?.authorizationServerMetadata?.token_endpoint_auth_methods_supported ?? [];
      return { refreshToken: tokens?.refresh_token, client: (tokens && entry?.clients[tokens.issuer]) ?? preRegistered, resource: tokens?.resource, methods };
    };
    /** Presents a refresh token at the token endpoint as the client would: with its secret where it has one, HTTP Basic unless the server names only client_secret_post. */
    const presentRefreshToken = async (refreshToken: string, client: { client_id: string; client_secret?: string }, resource: string, methods: string[]): Promise<TokenAnswer> => {
      const body = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, resource });
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
      const basic = client.client_secret !== undefined && (methods.includes('client_secret_basic') || !methods.includes('client_secret_post'));
      if (basic) headers['authorization'] = `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret!)}`).toString('base64')}`;
      else {
        body.set('client_id', client.client_id);
        if (client.client_secret !== undefined) body.set('client_secret', client.client_secret);
      }
      const response = await fetch(provider!.tokenEndpoint, { method: 'POST', headers, body });
      const answer = (await response.json().catch(() => ({}))) as { error?: string };
      return { status: response.status, error: answer.error };
    };
    /** The parameters of the last authorization address a browser was given. */
    const lastAuthorization = (): URLSearchParams => new URL(readFileSync(env['OIDC_BROWSER_RECORD']!, 'utf8').trim().split('\n').at(-1)!).searchParams;
    /** `login team`, then the time until the running mount is connected; both printed. */
    const loginAndPickUp = async (): Promise<{ loginMs: number; pickupMs: number }> => {
      logins += 1;
      // A browser that fails leaves login waiting: 30 s, not the 5 minutes a person gets.
      const login = await cli('login', 'team', '--config', configPath, '--wait', '30');
      const loginMs = login.exitedAtMs - login.startedAtMs;
      expect(login.code, `login ${logins} with ${name}: ${login.output}${context()}`).toBe(0);
      expect(login.output).toMatch(/team: signed in \(for http:\/\/127\.0\.0\.1:\d+\/mcp, from /);
      await waitFor(async () => (await serverState()) === 'connected', 15_000, `the mount connected after login ${logins}`);
      const pickupMs = performance.now() - login.exitedAtMs;
      const asked = lastAuthorization();
      const via = `client ${asked.get('client_id')}, redirect ${asked.get('redirect_uri')}`;
      console.log(`interop: ${name}: login ${logins} took ${(loginMs / 1000).toFixed(2)} s; the running mount picked it up in ${(pickupMs / 1000).toFixed(2)} s (${via})`);
      return { loginMs, pickupMs };
    };
    /** A file added on the server, and the time until a reader on the mount gets its bytes (ms). */
    const addAndRead = async (file: string, timeoutMs = 15_000): Promise<number> => {
      const started = performance.now();
      await writeFile(path.join(skills, 'alpha', 'references', file), `# ${file}\n`);
      const onMount = path.join(mount!.mountpoint, 'team', 'alpha', 'references', file);
      await waitFor(async () => (await run('cat', [onMount])).stdout === `# ${file}\n`, timeoutMs, `${file} on the mount`);
      return performance.now() - started;
    };

    beforeAll(async () => {
      dir = await makeTestDir();
      skills = path.join(dir, 'skills');
      await writeSkill(skills, 'alpha', { files: { 'references/first.md': '# first\n' } });
      // skills-serve's address is the resource: chosen first, so the provider knows it from the start.
      const port = await freePort();
      const resource = `http://127.0.0.1:${port}/mcp`;
      provider = await definition.start({ resource, scope: INTEROP_SCOPE, accessTokenTtlS: ttlS, dir: path.join(dir, 'idp') });
      // --ttl 1: the mount asks the server again about once a second, so expiring tokens are met often.
      serve = await startHttpServe([skills, '--auth-issuer', provider.issuer, '--auth-scope', INTEROP_SCOPE, '--ttl', '1'], { port });
      expect(serve.url).toBe(resource);
      configPath = path.join(dir, 'config.json');
      await writeFile(configPath, JSON.stringify({ mcpServers: { team: { url: resource, ...(provider.oauth && { oauth: provider.oauth }) } } }));
      env = {
        ...process.env,
        ...provider.browserEnv,
        HOME: path.join(dir, 'home'),
        XDG_CONFIG_HOME: path.join(dir, 'config'),
        XDG_CACHE_HOME: path.join(dir, 'cache'),
        XDG_DATA_HOME: path.join(dir, 'data'),
        BROWSER: provider.browser,
        // The browser notes each authorization address it is given (no code or token).
        OIDC_BROWSER_RECORD: path.join(dir, 'authorization-urls.txt'),
      };
      // Started before anyone signed in: it must pick the sign-in up by itself.
      mount = await startMount({ dir: path.join(dir, 'm'), args: ['--config', configPath], env });
    }, 120_000);

    afterAll(async () => {
      await mount?.stop();
      await serve?.stop();
      await provider?.close();
    }, 60_000);

    it('a mount started before login: "needs login"; login through the browser; picked up within 2 s; the skills read', async () => {
      await waitFor(async () => (await serverState()) === 'needs-login', 20_000, 'team needs login before any sign-in');
      const { pickupMs } = await loginAndPickUp();
      expect(pickupMs, context()).toBeLessThan(PICKUP_LIMIT_MS);
      expect((await run('cat', [path.join(mount!.mountpoint, 'team', 'alpha', 'SKILL.md')])).stdout).toContain('name: alpha');
      expect((await run('cat', [path.join(mount!.mountpoint, 'team', 'alpha', 'references', 'first.md')])).stdout).toBe('# first\n');
    }, 90_000);

    it(`access tokens that expire every ${ttlS} s while a reader reads: renewed with the refresh token, no error reaches the reader`, async () => {
      const before = await provider!.refreshGrants();
      const started = performance.now();
      let reads = 0;
      while (performance.now() - started < 8_000) {
        await addAndRead(`loop-${reads}.md`);
        reads += 1;
      }
      const refreshes = (await provider!.refreshGrants()) - before;
      expect(reads).toBeGreaterThan(2);
      expect(refreshes, `${refreshes} refreshes during ${reads} reads${context()}`).toBeGreaterThanOrEqual(2);
      expect(await serverState()).toBe('connected');
    }, 90_000);

    it('the refresh token gone: "needs login"; a second login (the first one\'s loopback port taken, unless the config fixes the port) succeeds; the running mount picks it up within 2 s', async () => {
      await provider!.dropRefreshTokens();
      await writeFile(path.join(skills, 'alpha', 'references', 'while-signed-out.md'), '# while signed out\n');
      await waitFor(async () => (await serverState()) === 'needs-login', 20_000, 'team needs login once its refresh token is gone');
      // What was read before is still served.
      expect((await run('cat', [path.join(mount!.mountpoint, 'team', 'alpha', 'references', 'first.md')])).stdout).toBe('# first\n');
      // The loopback port of the first sign-in is taken meanwhile (by anything): login must use another
      // one, which the client registered then does not know. A configured callbackPort stays as it is.
      let squatter: Server | undefined;
      if (provider!.oauth?.['callbackPort'] === undefined) {
        const firstPort = Number(new URL(lastAuthorization().get('redirect_uri')!).port);
        squatter = createServer((_req, res) => res.writeHead(503).end());
        await new Promise<void>((resolve, reject) => squatter!.once('error', reject).listen(firstPort, '127.0.0.1', resolve));
      }
      let pickupMs: number;
      try {
        ({ pickupMs } = await loginAndPickUp());
      } finally {
        await new Promise<void>((resolve) => (squatter ? squatter.close(() => resolve()) : resolve()));
      }
      expect(pickupMs, context()).toBeLessThan(PICKUP_LIMIT_MS);
      const file = path.join(mount!.mountpoint, 'team', 'alpha', 'references', 'while-signed-out.md');
      await waitFor(async () => (await run('cat', [file])).stdout === '# while signed out\n', 10_000, 'the file added meanwhile');
    }, 120_000);

    if (definition.registersClients) it('the authorization server forgot its clients: "needs login"; login registers anew (no hang) and the running mount picks it up within 2 s', async () => {
      expect(provider!.forgetClients, `${name} registers clients dynamically: it must say how to forget them`).toBeDefined();
      await provider!.forgetClients!();
      await writeFile(path.join(skills, 'alpha', 'references', 'after-forgetting.md'), '# after forgetting\n');
      await waitFor(async () => (await serverState()) === 'needs-login', 20_000, 'team needs login once its client is unknown');
      const { pickupMs } = await loginAndPickUp();
      expect(pickupMs, context()).toBeLessThan(PICKUP_LIMIT_MS);
      const file = path.join(mount!.mountpoint, 'team', 'alpha', 'references', 'after-forgetting.md');
      await waitFor(async () => (await run('cat', [file])).stdout === '# after forgetting\n', 10_000, 'the file added meanwhile');
    }, 120_000);

    if (definition.cannotRevokeBecause !== undefined) {
      it(`logout removes the sign-in; the mount turns "needs login" (no revocation: ${definition.cannotRevokeBecause})`, async () => {
        const logout = await cli('logout', 'team', '--config', configPath);
        expect(logout.code, logout.output).toBe(0);
        expect(logout.output, `what logout did${context()}`).toMatch(/team: signed out \(1 sign-in removed/);
        console.log(`interop: ${name}: logout: ${logout.output.trim()} (cannot revoke: ${definition.cannotRevokeBecause})`);
        await waitFor(async () => (await serverState()) === 'needs-login', 20_000, 'team needs login after logout');
      }, 90_000);
      return;
    }

    it('logout revokes the sign-in at the authorization server: its refresh token, accepted just before, is refused afterwards', async () => {
      const { refreshToken, client, resource, methods } = await stored();
      expect(refreshToken, 'the sign-in holds a refresh token').toBeDefined();
      expect(client, 'the sign-in names its client').toBeDefined();
      expect(await presentRefreshToken(refreshToken!, client!, resource!, methods), `before logout${context()}`).toEqual({ status: 200, error: undefined });
      const logout = await cli('logout', 'team', '--config', configPath);
      expect(logout.code, logout.output).toBe(0);
      console.log(`interop: ${name}: logout: ${logout.output.trim()}`);
      expect(logout.output, `what logout did${context()}`).toMatch(/team: signed out \(1 sign-in removed; refresh token revoked/);
      // Refused: invalid_grant (RFC 6749), or a bare 400 where the provider sends no body (Glewlwyd).
      const after = await presentRefreshToken(refreshToken!, client!, resource!, methods);
      expect(after.status, `after logout${context()}`).toBe(400);
      if (after.error !== undefined) expect(after.error, `after logout${context()}`).toBe('invalid_grant');
      await waitFor(async () => (await serverState()) === 'needs-login', 20_000, 'team needs login after logout');
    }, 90_000);
  });
}
