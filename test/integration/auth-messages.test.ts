// What a person sees when a sign-in goes wrong, through the built `skills-mount login` against a
// real `skills-serve --auth-issuer` and authorization servers with one fault each
// (test/support/jwt-auth-server.ts), a browser played by test/support/loopback-browser.mjs:
// a local process poking the loopback listener does not end the sign-in; the server's own
// reasons reach the terminal; no secret, ESC or bidi override reaches stderr, the SDK's lines
// included.
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { TokenStore } from '../../src/auth/token-store.js';
import { runLogin, type LoginIo } from '../../src/cli/login-command.js';
import { Connection } from '../../src/mcp/connection.js';
import { exitOf, stopChild } from '../support/children.js';
import { freePort, startHttpServe, type ListeningServer } from '../support/http-server.js';
import { startJwtAuthServer, type JwtAuthServer, type JwtAuthServerOptions } from '../support/jwt-auth-server.js';
import { delay } from '../support/poll.js';
import { EXAMPLES } from '../support/server-harness.js';
import { TempDirs } from '../support/temp-dir.js';

const SKILLS_MOUNT = fileURLToPath(new URL('../../dist/cli/skills-mount.js', import.meta.url));
const BROWSER = fileURLToPath(new URL('../support/loopback-browser.mjs', import.meta.url));
const ESC = '\u001b';
const RLO = '\u202e';

const temps = new TempDirs('auth-messages-');
const stops: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.allSettled(stops.splice(0).map((stop) => stop()));
  await temps.removeAll();
});

interface World {
  as: JwtAuthServer;
  serve: ListeningServer;
  home: string;
  record: string;
}

/** An authorization server with `options`, and skills-serve trusting it. */
async function world(options: JwtAuthServerOptions = {}, serveArgs: string[] = []): Promise<World> {
  const as = await startJwtAuthServer(options);
  stops.push(() => as.close());
  const serve = await startHttpServe([EXAMPLES, '--auth-issuer', as.issuer, '--auth-scope', 'skills:read', ...serveArgs]);
  stops.push(() => serve.stop());
  const home = await temps.make();
  return { as, serve, home, record: path.join(home, 'browser.jsonl') };
}

interface Run {
  code: number | null;
  stderr: string;
}

/** `skills-mount ARGS...` with its own home and config dirs, the test browser as $BROWSER. */
async function skillsMount(w: World, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, [SKILLS_MOUNT, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: w.home,
      XDG_CONFIG_HOME: path.join(w.home, 'config'),
      XDG_CACHE_HOME: path.join(w.home, 'cache'),
      XDG_DATA_HOME: path.join(w.home, 'data'),
      BROWSER: `${process.execPath} ${BROWSER}`,
      LOOPBACK_BROWSER_RECORD: w.record,
      ...env,
    },
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout!.resume();
  const exit = await Promise.race([exitOf(child), delay(30_000).then(() => stopChild(child))]);
  return { code: exit.code, stderr };
}

async function browserVisits(w: World): Promise<Array<{ what: string; status: number; title: string }>> {
  const text = await readFile(w.record, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { what: string; status: number; title: string });
}

async function storedTokens(w: World): Promise<unknown> {
  const text = await readFile(path.join(w.home, 'config', 'skills-mount', 'auth', 'tokens.json'), 'utf8').catch(() => '{}');
  const entries = Object.values((JSON.parse(text) as { entries?: Record<string, { tokens?: unknown }> }).entries ?? {});
  return entries.find((entry) => entry.tokens !== undefined)?.tokens;
}

function expectClean(stderr: string, secrets: readonly string[] = []): void {
  expect(stderr).not.toContain(ESC);
  expect(stderr).not.toContain(RLO);
  for (const secret of secrets) expect(stderr).not.toContain(secret);
}

describe('the loopback listener while a sign-in waits', () => {
  it('refuses a forged state, a bare callback and /favicon.ico with error pages, and the sign-in completes with the real redirect', async () => {
    const w = await world();
    const run = await skillsMount(w, ['login', 'team', '--server', `team=${w.serve.url}`, '--wait', '20'], { LOOPBACK_BROWSER_PROBES: '1' });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/team: signed in \(for /);
    expect(await browserVisits(w)).toEqual([
      { what: 'forged state', status: 400, title: 'Sign-in refused' },
      { what: 'no parameters', status: 400, title: 'Sign-in refused' },
      { what: 'favicon', status: 404, title: 'Not found' },
      { what: 'forged error', status: 400, title: 'Sign-in refused' },
      { what: 'redirect', status: 200, title: 'Signed in' },
    ]);
    // The person is told something knocked, and that the sign-in went on.
    expect(run.stderr).toMatch(/team: refused a redirect that did not carry this sign-in's state .*still waiting/);
    expect(await storedTokens(w)).toBeDefined();
    expectClean(run.stderr, w.as.issued);
  });

  it("ends with the authorization server's error, named and escaped, when the redirect with the right state carries one", async () => {
    const w = await world({ authorizeError: { error: 'access_denied', description: `the user said no ${ESC}[31mred${RLO}txet` } });
    const run = await skillsMount(w, ['login', 'team', '--server', `team=${w.serve.url}`, '--wait', '20']);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/team: sign-in failed: .*authorization server.*access_denied: the user said no \\u001b\[31mred\\u202etxet/);
    expect(await browserVisits(w)).toEqual([{ what: 'redirect', status: 200, title: 'Sign-in not completed' }]);
    expect(await storedTokens(w)).toBeUndefined();
    expectClean(run.stderr);
  });
});

describe("the SDK's own lines", () => {
  const SECRET = 'wrong-robot-secret-5f2a9c1e77';

  async function clientCredentialsConfig(w: World): Promise<string> {
    const file = path.join(w.home, 'servers.json');
    const oauth = { grantType: 'client_credentials', clientId: 'robot', clientSecret: SECRET };
    await writeFile(file, JSON.stringify({ mcpServers: { team: { type: 'http', url: w.serve.url, oauth } } }));
    return file;
  }

  it('a client secret the token endpoint quotes back, with ESC and U+202E, reaches stderr redacted and escaped (login and doctor)', async () => {
    const w = await world({ clients: { robot: 'the-real-secret-of-robot' }, invalidClientDescription: `client secret "${SECRET}" is wrong ${ESC}[2J${RLO}evil` });
    const config = await clientCredentialsConfig(w);
    const login = await skillsMount(w, ['login', 'team', '--config', config]);
    expect(login.code, login.stderr).toBe(1);
    // The SDK said its piece, and the product said why the sign-in failed: neither quotes the secret.
    expect(login.stderr).toMatch(/\[mcp-sdk\] OAuth \\?"invalid_client\\?" .*\[redacted\].*\\u001b\[2J\\u202eevil/);
    expect(login.stderr).toMatch(/team: sign-in failed: the authorization server answered invalid_client: client secret "\[redacted\]" is wrong \\u001b\[2J\\u202eevil/);
    expectClean(login.stderr, [SECRET]);

    // A mount's connection (doctor connects as the mount does): the same.
    const doctor = await skillsMount(w, ['doctor', '--config', config]);
    expect(doctor.stderr).toContain('[mcp-sdk] OAuth');
    expectClean(doctor.stderr, [SECRET]);
    expect(doctor.stderr).not.toContain(SECRET);
  });
});

describe('errors that say which server, what happened and what to do', () => {
  it("an authorization server that ignores `resource`: login shows skills-serve's own reason, stops at once, keeps nothing; doctor does not say signed in", async () => {
    const w = await world({ ignoreResource: true });
    const started = Date.now();
    const run = await skillsMount(w, ['login', 'team', '--server', `team=${w.serve.url}`, '--wait', '20']);
    expect(run.code, run.stderr).toBe(1);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(run.stderr).not.toContain('Server returned 401 after re-authentication');
    expect(run.stderr).toContain(
      `team: sign-in failed: the server refused the token ${w.as.issuer} issued for it (HTTP 401 invalid_token: "the token is for another resource"): ` +
        `the authorization server seems to ignore the resource indicator (RFC 8707) and issue tokens for another audience; have it issue tokens whose "aud" is ${w.serve.url}`,
    );
    // One trip through the browser: another would get the same kind of token.
    expect((await browserVisits(w)).map((visit) => visit.what)).toEqual(['redirect']);
    expect(await storedTokens(w)).toBeUndefined();
    expect(w.as.resourcesAsked).toContain(w.serve.url);
    expect(w.as.issued.length).toBeGreaterThan(0);
    expectClean(run.stderr, w.as.issued);

    // The tokens that never worked are not "signed in" to doctor.
    const report = await doctorReport(w, ['--server', `team=${w.serve.url}`]);
    expect(report).toMatch(/sign-in +no sign-in stored: team/);
    expect(report).not.toMatch(/signed in: team/);
  });

  it('an issuer whose tokens are opaque: skills-serve says so once in its log, and login shows it at once', async () => {
    const w = await world({ opaqueTokens: true });
    const run = await skillsMount(w, ['login', 'team', '--server', `team=${w.serve.url}`, '--wait', '20']);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain(
      `team: sign-in failed: the server refused the token ${w.as.issuer} issued for it (HTTP 401 invalid_token: "the token is not a JWT; this server verifies only JWT access tokens signed by ${w.as.issuer}"): ` +
        'the authorization server issues tokens the server cannot verify; have it issue JWT access tokens for this server',
    );
    const lines = w.serve.log().split('\n').filter((line) => line.includes('not a JWT'));
    expect(lines).toEqual([
      `skills-serve: auth: refused a token that is not a JWT; if ${w.as.issuer} issues opaque access tokens, skills-serve cannot verify them: configure it to issue JWT access tokens (RFC 9068) for ${w.serve.url} (logged once)`,
    ]);
    expect(await storedTokens(w)).toBeUndefined();
    expectClean(run.stderr, w.as.issued);
    expectClean(w.serve.log(), w.as.issued);
  });

  it('an unattended grant whose tokens the server cannot verify: a mount shows the reason, not a bare 401', async () => {
    const w = await world({ opaqueTokens: true, clients: { robot: 'robot-secret-of-the-tests' } });
    const config = path.join(w.home, 'servers.json');
    await writeFile(config, JSON.stringify({ mcpServers: { team: { type: 'http', url: w.serve.url, oauth: { grantType: 'client_credentials', clientId: 'robot', clientSecret: 'robot-secret-of-the-tests' } } } }));
    const report = await doctorReport(w, ['--config', config]);
    expect(report).toMatch(/FAIL +server team +http .*: cannot connect: .*the server refused the token .* \(HTTP 401 invalid_token: "the token is not a JWT; .*\(after \d+\.\d s\)/);
    expect(report).toMatch(/sign-in +stored but refused by the server: team/);
    expect(report).not.toContain('Server returned 401 after re-authentication');
    expect(report).not.toContain('not reached within');
  });

  it('no registration endpoint: login says to register a client and how to give its ID; with --server ... oauth.clientId it signs in', async () => {
    const w = await world({ registration: false, clients: { 'desk-client': '' } });
    const failed = await skillsMount(w, ['login', 'team', '--server', `team=${w.serve.url}`, '--wait', '20']);
    expect(failed.code, failed.stderr).toBe(1);
    expect(failed.stderr).not.toContain('Incompatible auth server');
    expect(failed.stderr).toContain(
      `team: sign-in failed: the authorization server ${w.as.issuer} does not let clients register themselves (it has no registration endpoint): ` +
        'register skills-mount there as a client with the redirect URI http://127.0.0.1:8765/callback, then give its client ID: ' +
        `"oauth": { "clientId": "ID", "callbackPort": 8765 } on "team" in the config file, or --server 'team=${w.serve.url} oauth.clientId=ID oauth.callbackPort=8765'`,
    );
    const port = await freePort();
    const run = await skillsMount(w, ['login', 'team', '--server', `team=${w.serve.url} oauth.clientId=desk-client oauth.callbackPort=${port}`, '--wait', '20']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/team: signed in \(for /);
    expect(run.stderr).toContain(`redirect_uri=http%3A%2F%2F127.0.0.1%3A${port}%2Fcallback`);
    expect(run.stderr).toContain('client_id=desk-client');
  });

  it('an authorization server that is down: login and doctor name it (not the MCP server), and doctor does not say "not reached within"', async () => {
    const w = await world({ clients: { robot: 'robot-secret-of-the-tests' } });
    const issuer = w.as.issuer;
    await w.as.close();
    const run = await skillsMount(w, ['login', 'team', '--server', `team=${w.serve.url}`, '--wait', '20']);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`team: sign-in failed: cannot reach the authorization server at ${issuer}/\\.well-known/oauth-authorization-server \\(ECONNREFUSED\\): check that it is up`));
    expect(run.stderr).not.toContain('cannot reach it');

    const config = path.join(w.home, 'servers.json');
    await writeFile(config, JSON.stringify({ mcpServers: { team: { type: 'http', url: w.serve.url, oauth: { grantType: 'client_credentials', clientId: 'robot', clientSecret: 'robot-secret-of-the-tests' } } } }));
    const report = await doctorReport(w, ['--config', config]);
    expect(report).toMatch(new RegExp(`FAIL +server team +http ${w.serve.url}: the server answered, but signing in to it cannot go on: cannot reach the authorization server at ${issuer}/\\S+ \\(ECONNREFUSED\\).*\\(after \\d+\\.\\d s\\)`));
    expect(report).not.toContain('not reached within');
  });
});

/** `skills-mount doctor ARGS...`'s report (stdout). */
async function doctorReport(w: World, args: string[]): Promise<string> {
  const child = spawn(process.execPath, [SKILLS_MOUNT, 'doctor', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: w.home, XDG_CONFIG_HOME: path.join(w.home, 'config'), XDG_CACHE_HOME: path.join(w.home, 'cache'), XDG_DATA_HOME: path.join(w.home, 'data') },
  });
  let stdout = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.resume();
  await Promise.race([exitOf(child), delay(30_000).then(() => stopChild(child))]);
  return stdout;
}

describe('a mount whose renewed token the server refuses', () => {
  it('turns to needs login with the server\'s own reason, once, instead of a bare 401', async () => {
    const options: JwtAuthServerOptions = {};
    const w = await world(options);
    const store = new TokenStore(path.join(w.home, 'tokens.json'));
    const said: string[] = [];
    // A person signs in (the address printed, the redirect pasted back), while the authorization server behaves.
    const io: LoginIo = {
      env: { HOME: '/nonexistent' },
      store,
      say: (line) => said.push(line),
      async readLine() {
        const address = /\n\s+(\S+)/.exec([...said].reverse().find((line) => line.includes('open this address')) ?? '')?.[1];
        if (address === undefined) return undefined;
        const answer = await fetch(address, { redirect: 'manual' });
        return answer.headers.get('location') ?? undefined;
      },
    };
    expect(await runLogin({ labels: ['team'], configPath: undefined, serverFlags: [`team=${w.serve.url}`], noBrowser: true, waitMs: 10_000, timeoutMs: 5_000 }, io), said.join('\n')).toBe(0);
    // Then it starts ignoring `resource`, and the stored access token is no longer good.
    options.ignoreResource = true;
    await store.update('team', w.serve.url, (entry) => (entry?.tokens ? { ...entry, tokens: { ...entry.tokens, access_token: 'no-longer-good' } } : undefined));
    const logs: string[] = [];
    const connection = new Connection('team', { kind: 'http', url: w.serve.url, headers: {} }, { timeoutMs: 5_000, log: (line) => logs.push(line), auth: { store } });
    stops.push(() => connection.close());
    const requestsBefore = w.as.tokenRequests();
    await connection.start();
    expect(connection.connection()).toMatchObject({
      status: 'needs-login',
      reason: expect.stringContaining('the server refused the token') as unknown,
    });
    const reason = (connection.connection() as { reason: string }).reason;
    expect(reason).toContain('HTTP 401 invalid_token: "the token is for another resource"');
    expect(reason).toContain('run: skills-mount login team');
    expect(reason).not.toContain('after re-authentication');
    // One renewal, then no loop.
    await delay(1_000);
    expect(w.as.tokenRequests() - requestsBefore).toBe(1);
    expectClean(logs.join('\n'), w.as.issued);
  });
});
