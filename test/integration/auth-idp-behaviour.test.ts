// How `login` and `logout` fare with authorization servers as they really behave
// (test/support/auth-fixture.ts made forgetful or hostile): a second login after the sign-in
// lapsed on a server that matches redirect URIs exactly, a server that forgot its clients,
// OpenID-discovery-only metadata (revocation, DPoP), a resource that names no scope, a file:
// authorization endpoint, a plain-http authorization server elsewhere, a token type nobody
// knows, a revocation endpoint on another origin. The browser is $BROWSER (a script that
// follows the redirects with plain HTTP requests); the terminal, the browser command, the token
// store and the wire are checked.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TokenStore } from '../../src/auth/token-store.js';
import { runLogin, runLogout, type LoginIo, type LoginOptions } from '../../src/cli/login-command.js';
import { startAuthFixture, type AuthFixture, type AuthFixtureOptions } from '../support/auth-fixture.js';
import { OIDC_BROWSER } from '../support/oidc-server.js';
import { TempDirs } from '../support/temp-dir.js';

const temps = new TempDirs('auth-idp-');
const fixtures: AuthFixture[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(fixtures.splice(0).map((fixture) => fixture.close()));
  await Promise.all(servers.splice(0).map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  await temps.removeAll();
});

/** How long login waits for the browser here: a refusal recognised late shows up as this wait. */
const WAIT_MS = 30_000;
/** A login that is not waiting for a browser that will never come back is done well within this. */
const PROMPT_MS = 10_000;

interface Setup {
  fixture: AuthFixture;
  store: TokenStore;
  logs: string[];
  dir: string;
  /** Where the $BROWSER script records each address it was started with. */
  record: string;
}

async function setup(options: AuthFixtureOptions = {}): Promise<Setup> {
  const fixture = await startAuthFixture(options);
  fixtures.push(fixture);
  const dir = await temps.make();
  return { fixture, store: new TokenStore(path.join(dir, 'auth', 'tokens.json')), logs: [], dir, record: path.join(dir, 'browser.log') };
}

/** A person at a browser on this machine: $BROWSER follows the authorization server's pages back to login's listener. */
function browserIo({ store, logs, record }: Setup, browser = `"${process.execPath}" "${OIDC_BROWSER}"`): LoginIo {
  return {
    env: { HOME: '/nonexistent', BROWSER: browser, OIDC_BROWSER_RECORD: record, OIDC_BROWSER_TIMEOUT_MS: '10000' },
    store,
    say: (line) => logs.push(line),
    readLine: async () => undefined,
  };
}

function loginOptions(fixture: AuthFixture, extra: Partial<LoginOptions> = {}): LoginOptions {
  return { labels: ['team'], configPath: undefined, serverFlags: [`team=${fixture.mcpUrl}`], noBrowser: false, waitMs: WAIT_MS, timeoutMs: 5_000, ...extra };
}

/** Runs login; resolves with its exit status and how long it took. */
async function timedLogin(options: LoginOptions, io: LoginIo): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  const status = await runLogin(options, io);
  return { status, ms: Date.now() - started };
}

/** The addresses the browser was started with. */
async function browsed(record: string): Promise<string[]> {
  return existsSync(record) ? (await readFile(record, 'utf8')).split('\n').filter((line) => line !== '') : [];
}

/** A refresh token expired: the store keeps the client but no tokens (what a refused refresh leaves). */
async function lapse(store: TokenStore, fixture: AuthFixture): Promise<void> {
  await store.update('team', fixture.mcpUrl, (entry) => entry && { ...entry, tokens: undefined });
  expect(Object.keys((await store.get('team', fixture.mcpUrl))!.clients)).toHaveLength(1);
}

function expectNoTokenIn(logs: readonly string[], fixture: AuthFixture): void {
  const text = logs.join('\n');
  for (const token of fixture.issued) expect(text).not.toContain(token);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A config file whose entry listens for the redirect on one fixed port (as `oauth.callbackPort` does). */
async function fixedPortConfig(s: Setup): Promise<Partial<LoginOptions>> {
  const file = path.join(s.dir, 'mcp.json');
  await writeFile(file, JSON.stringify({ mcpServers: { team: { type: 'http', url: s.fixture.mcpUrl, oauth: { callbackPort: await freePort() } } } }));
  return { configPath: file, serverFlags: [] };
}

describe('a second login', () => {
  it('after the sign-in lapsed, its registered port taken meanwhile, on a server that matches redirect URIs exactly: registers for the new port and is signed in within seconds', async () => {
    const s = await setup({ exactRedirects: true });
    const { fixture, store, logs } = s;
    expect((await timedLogin(loginOptions(fixture), browserIo(s))).status).toBe(0);
    await lapse(store, fixture);
    // Another program listens on the port the client was registered with: the login cannot reuse it.
    const registeredPort = Number(new URL(fixture.registeredRedirects()[0]![0]!).port);
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(registeredPort, '127.0.0.1', resolve));
    const second = await timedLogin(loginOptions(fixture), browserIo(s)).finally(() => squatter.close());
    expect(logs.join('\n')).not.toMatch(/sign-in failed/);
    expect(second.status).toBe(0);
    expect(second.ms).toBeLessThan(PROMPT_MS);
    expect(logs.at(-1)).toMatch(/^team: signed in \(for /);
    // The client now stored is one registered with the redirect URI this login used.
    const used = fixture.authorizationRequests().at(-1)!.get('redirect_uri');
    const entry = await store.get('team', fixture.mcpUrl);
    expect(Object.values(entry!.clients)[0]).toMatchObject({ redirect_uris: [used] });
    expect(fixture.registrations()).toBe(2);
    expect(fixture.registeredRedirects()[1]).toEqual([used]);
    expect(entry?.tokens?.refresh_token).toBeDefined();
    // The browser was sent once per login, never to an address the server refuses.
    expect(await browsed(s.record)).toHaveLength(2);
    expectNoTokenIn(logs, fixture);
  });

  it('on the port the client was registered with: reuses the client, no second registration', async () => {
    const s = await setup({ exactRedirects: true });
    const { fixture, store } = s;
    const config = await fixedPortConfig(s);
    expect((await timedLogin(loginOptions(fixture, config), browserIo(s))).status).toBe(0);
    await lapse(store, fixture);
    expect((await timedLogin(loginOptions(fixture, config), browserIo(s))).status).toBe(0);
    expect(fixture.registrations()).toBe(1);
  });
});

describe('a redirect URI the authorization server refuses', () => {
  it('of a client registered beforehand (config clientId): said at once, with what to register, and no browser is sent to the refusal', async () => {
    const registeredPort = await freePort();
    const s = await setup({ exactRedirects: true, preRegistered: { desktop: [`http://127.0.0.1:${registeredPort}/callback`] } });
    const { fixture, store, logs } = s;
    const port = await freePort();
    const file = path.join(s.dir, 'mcp.json');
    await writeFile(file, JSON.stringify({ mcpServers: { team: { type: 'http', url: fixture.mcpUrl, oauth: { clientId: 'desktop', callbackPort: port } } } }));
    const login = await timedLogin(loginOptions(fixture, { configPath: file, serverFlags: [] }), browserIo(s));
    expect(login.status).toBe(1);
    expect(login.ms).toBeLessThan(PROMPT_MS);
    expect(logs.join('\n')).toContain(
      `team: sign-in failed: team: the authorization server refused the sign-in request (HTTP 400: invalid_request: Unregistered redirect_uri); register http://127.0.0.1:${port}/callback as a redirect URI of client desktop there, or set "oauth"."callbackPort" to the port it has; nothing was stored`,
    );
    expect(await browsed(s.record)).toEqual([]);
    expect(fixture.registrations()).toBe(0);
    expect((await store.get('team', fixture.mcpUrl))?.tokens).toBeUndefined();
  });
});

describe('an authorization request refused by a redirect back with an error', () => {
  it('(access_denied) is said at once, the server\'s words escaped, nothing stored', async () => {
    const s = await setup({ authorizationError: 'access_denied' });
    const { fixture, store, logs } = s;
    const login = await timedLogin(loginOptions(fixture), browserIo(s));
    expect(login.status).toBe(1);
    expect(login.ms).toBeLessThan(PROMPT_MS);
    expect(logs.join('\n')).toContain('team: sign-in failed: the authorization server answered access_denied: The person declined\\u000ato sign in');
    expect((await store.get('team', fixture.mcpUrl))?.tokens).toBeUndefined();
  });
});

describe('an authorization server that forgot its registered clients', () => {
  it('(restarted, the sign-in lapsed meanwhile) the next login registers once more and is signed in within seconds', async () => {
    const s = await setup();
    const { fixture, store, logs } = s;
    // One fixed port: the stored client's redirect URI still fits, only the server no longer knows the client.
    const config = await fixedPortConfig(s);
    expect((await timedLogin(loginOptions(fixture, config), browserIo(s))).status).toBe(0);
    const forgotten = Object.values((await store.get('team', fixture.mcpUrl))!.clients)[0]!.client_id;
    fixture.forgetClients();
    await lapse(store, fixture);
    const second = await timedLogin(loginOptions(fixture, config), browserIo(s));
    expect(logs.join('\n')).not.toMatch(/sign-in failed/);
    expect(second.status).toBe(0);
    expect(second.ms).toBeLessThan(PROMPT_MS);
    expect(fixture.registrations()).toBe(2);
    const entry = await store.get('team', fixture.mcpUrl);
    expect(Object.values(entry!.clients)[0]!.client_id).not.toBe(forgotten);
    expect(entry?.tokens?.access_token).toBeDefined();
    // The browser went only where the server would answer: the new client's request.
    const addresses = await browsed(s.record);
    expect(addresses).toHaveLength(2);
    expect(new URL(addresses[1]!).searchParams.get('client_id')).not.toBe(forgotten);
    expectNoTokenIn(logs, fixture);
  });

  it('(restarted, tokens still stored) the refresh answered invalid_client: registers once more and signs in', async () => {
    const s = await setup();
    const { fixture, store, logs } = s;
    const config = await fixedPortConfig(s);
    expect((await timedLogin(loginOptions(fixture, config), browserIo(s))).status).toBe(0);
    fixture.forgetClients();
    const second = await timedLogin(loginOptions(fixture, config), browserIo(s));
    expect(second.status).toBe(0);
    expect(second.ms).toBeLessThan(PROMPT_MS);
    expect(fixture.registrations()).toBe(2);
    expect((await store.get('team', fixture.mcpUrl))?.tokens?.access_token).toBeDefined();
    expectNoTokenIn(logs, fixture);
  });
});

describe('OpenID discovery only', () => {
  it('reads revocation_endpoint and DPoP from /.well-known/openid-configuration: proofs are sent and logout revokes', async () => {
    const s = await setup({ openIdOnly: true, dpopAlgs: ['ES256'] });
    const { fixture, store, logs } = s;
    expect((await timedLogin(loginOptions(fixture), browserIo(s))).status).toBe(0);
    const entry = await store.get('team', fixture.mcpUrl);
    expect(entry?.discovery?.authorizationServerMetadata).toMatchObject({ revocation_endpoint: `${fixture.issuer}/revoke`, dpop_signing_alg_values_supported: ['ES256'] });
    expect(entry?.dpopKey?.alg).toBe('ES256');
    expect(fixture.dpopProofs()).toBeGreaterThan(0);
    expect(await runLogout({ labels: ['team'] }, browserIo(s))).toBe(0);
    expect(fixture.revocations()).toBe(2);
    expect(logs.at(-1)).toBe('team: signed out (1 sign-in removed; refresh token revoked; access token revoked)');
    expectNoTokenIn(logs, fixture);
  });
});

describe('a resource that names no scope', () => {
  it('asks for offline_access where the authorization server offers it', async () => {
    const s = await setup({ noResourceScope: true });
    const { fixture, store } = s;
    expect((await timedLogin(loginOptions(fixture), browserIo(s))).status).toBe(0);
    const [address] = await browsed(s.record);
    expect(new URL(address!).searchParams.get('scope')?.split(' ')).toContain('offline_access');
    expect((await store.get('team', fixture.mcpUrl))?.tokens?.scope).toContain('offline_access');
  });
});

describe('hostile metadata: refused before the browser or the server is used', () => {
  it('a file: authorization endpoint: no browser is started, no client registered, nothing stored', async () => {
    const s = await setup({ authorizationEndpoint: 'file:///etc/passwd' });
    const { fixture, store, logs } = s;
    // A browser that only records what it was given.
    const recorder = `"${process.execPath}" -e "require('fs').appendFileSync(process.argv[1], process.argv[2] + '\\n')" "${s.record}"`;
    const login = await timedLogin(loginOptions(fixture), browserIo(s, recorder));
    expect(login.status).toBe(1);
    expect(login.ms).toBeLessThan(PROMPT_MS);
    expect(logs.join('\n')).toMatch(/team: sign-in failed: the authorization endpoint file:\/\/\/etc\/passwd uses the file: scheme \(only https, or http to 127\.0\.0\.1, ::1 or localhost\)/);
    expect(await browsed(s.record)).toEqual([]);
    expect(fixture.registrations()).toBe(0);
    expect((await store.get('team', fixture.mcpUrl))?.tokens).toBeUndefined();
  });

  it('a plain-http authorization server that is not loopback (0.0.0.0): refused before any request to it', async () => {
    const s = await setup({ advertisedAuthServer: (origin) => origin.replace('127.0.0.1', '0.0.0.0') });
    const { fixture, store, logs } = s;
    const login = await timedLogin(loginOptions(fixture), browserIo(s));
    expect(login.status).toBe(1);
    expect(login.ms).toBeLessThan(PROMPT_MS);
    expect(logs.join('\n')).toMatch(/team: sign-in failed: the authorization server at http:\/\/0\.0\.0\.0:\d+\/ is plain http and not on this machine's loopback/);
    expect(fixture.requests()).toEqual([]);
    expect(await browsed(s.record)).toEqual([]);
    expect((await store.get('team', fixture.mcpUrl))?.tokens).toBeUndefined();
  });

  it('a token_type the client does not know ("mac"): a clear error, nothing stored', async () => {
    const s = await setup({ tokenType: 'mac' });
    const { fixture, store, logs } = s;
    const login = await timedLogin(loginOptions(fixture), browserIo(s));
    expect(login.status).toBe(1);
    expect(logs.join('\n')).toMatch(/team: sign-in failed: team: the authorization server issued a token of type "mac", which skills-mount cannot use \(only Bearer and DPoP\); nothing was stored/);
    expect((await store.get('team', fixture.mcpUrl))?.tokens).toBeUndefined();
    expectNoTokenIn(logs, fixture);
  });
});

describe('logout and a revocation endpoint tokens may not go to', () => {
  /** A server that records every request it gets: where a hostile metadata document points. */
  async function recorder(): Promise<{ port: number; hits: string[] }> {
    const hits: string[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => {
        hits.push(`${req.method} ${req.url} ${body}`);
        res.writeHead(200).end();
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { port: (server.address() as AddressInfo).port, hits };
  }

  for (const [what, endpoint] of [
    ['on another origin', (port: number) => `http://127.0.0.1:${port}/revoke`],
    ['plain http, not loopback', (port: number) => `http://0.0.0.0:${port}/revoke`],
  ] as const) {
    it(`${what}: no token is sent there, and the sign-in is removed`, async () => {
      const other = await recorder();
      const s = await setup({ revocationEndpoint: endpoint(other.port) });
      const { fixture, store, logs } = s;
      expect((await timedLogin(loginOptions(fixture), browserIo(s))).status).toBe(0);
      // Why, kept for logout to say (src/auth/revocation.ts).
      const refused = (await store.get('team', fixture.mcpUrl))?.revocationRefused;
      expect(await runLogout({ labels: ['team'] }, browserIo(s))).toBe(0);
      expect(other.hits).toEqual([]);
      expect(fixture.revocations()).toBe(0);
      expect(await store.get('team', fixture.mcpUrl)).toBeUndefined();
      expect(refused).toMatch(/^the revocation endpoint http:\/\/(127\.0\.0\.1|0\.0\.0\.0):\d+\/revoke (is on another origin than the issuer|is plain http and not on this machine's loopback)/);
      expectNoTokenIn(logs, fixture);
    });
  }
});
