// The client's sign-in against a small authorization server and a protected skills server
// (test/support/auth-fixture.ts): `login` with the redirect pasted (--no-browser), a connection
// that uses the stored tokens, "needs login" without a retry loop and the pick-up of a login
// made elsewhere, refresh on a refused token, a revoked sign-in, and hostile authorization
// servers (issuer mismatch, a redirect elsewhere, a wrong state, huge or non-JSON metadata, a
// token endpoint that hangs): a clear error and nothing stored. No issued token in any log.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TokenStore } from '../../src/auth/token-store.js';
import { runLogin, runLogout, type LoginIo, type LoginOptions } from '../../src/cli/login-command.js';
import { Connection } from '../../src/mcp/connection.js';
import { startAuthFixture, type AuthFixture, type AuthFixtureOptions } from '../support/auth-fixture.js';
import { TempDirs } from '../support/temp-dir.js';

const temps = new TempDirs('auth-client-');
const fixtures: AuthFixture[] = [];
const connections: Connection[] = [];
afterEach(async () => {
  await Promise.all(connections.splice(0).map((connection) => connection.close()));
  await Promise.all(fixtures.splice(0).map((fixture) => fixture.close()));
  await temps.removeAll();
});

const LIST = z.looseObject({});

async function setup(options: AuthFixtureOptions = {}): Promise<{ fixture: AuthFixture; store: TokenStore; logs: string[] }> {
  const fixture = await startAuthFixture(options);
  fixtures.push(fixture);
  const dir = await temps.make();
  return { fixture, store: new TokenStore(path.join(dir, 'skills-mount', 'auth', 'tokens.json')), logs: [] };
}

/** A person at a browser on another machine: opens the printed address, pastes where it ended. */
function pastingIo(store: TokenStore, logs: string[], tamper: (redirect: URL) => string = (url) => url.href): LoginIo {
  return {
    env: { HOME: '/nonexistent' },
    store,
    say: (line) => logs.push(line),
    async readLine() {
      const printed = [...logs].reverse().find((line) => line.includes('open this address'));
      const address = /\n\s+(\S+)/.exec(printed ?? '')?.[1];
      if (address === undefined) return undefined;
      const answer = await fetch(address, { redirect: 'manual' });
      return tamper(new URL(answer.headers.get('location') ?? ''));
    },
  };
}

function loginOptions(fixture: AuthFixture, extra: Partial<LoginOptions> = {}): LoginOptions {
  return { labels: ['team'], configPath: undefined, serverFlags: [`team=${fixture.mcpUrl}`], noBrowser: true, waitMs: 5_000, timeoutMs: 5_000, ...extra };
}

function connect(fixture: AuthFixture, store: TokenStore, logs: string[]): Connection {
  const connection = new Connection('team', { kind: 'http', url: fixture.mcpUrl, headers: {} }, { timeoutMs: 5_000, log: (line) => logs.push(line), auth: { store } });
  connections.push(connection);
  return connection;
}

async function waitForStatus(connection: Connection, status: string, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (connection.connection().status !== status) {
    if (Date.now() - started > timeoutMs) throw new Error(`still ${JSON.stringify(connection.connection())} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return Date.now() - started;
}

function expectNoTokenIn(logs: readonly string[], fixture: AuthFixture): void {
  const text = logs.join('\n');
  for (const token of fixture.issued) expect(text).not.toContain(token);
}

describe('sign-in with login, then a connection with the stored tokens', () => {
  it('signs in, stores the tokens privately, and a connection lists skills with them', async () => {
    const { fixture, store, logs } = await setup();
    expect(await runLogin(loginOptions(fixture), pastingIo(store, logs))).toBe(0);
    expect(logs.join('\n')).toMatch(/team: signed in \(for .*\/mcp, from http:\/\/127\.0\.0\.1:\d+, valid for 60 min, renewed automatically/);
    const entry = await store.get('team', fixture.mcpUrl);
    expect(entry?.tokens?.resource).toBe(fixture.mcpUrl);
    expect(entry?.pending).toBeUndefined();
    const connection = connect(fixture, store, logs);
    await connection.start();
    expect(connection.connection().status).toBe('connected');
    await connection.request('resources/list', {}, LIST);
    expectNoTokenIn(logs, fixture);
  });

  it('renews a token the server refuses, with the rotating refresh token, and no error reaches the caller', async () => {
    const { fixture, store, logs } = await setup();
    expect(await runLogin(loginOptions(fixture), pastingIo(store, logs))).toBe(0);
    const connection = connect(fixture, store, logs);
    await connection.start();
    const before = (await store.get('team', fixture.mcpUrl))?.tokens?.refresh_token;
    fixture.expireAccessTokens();
    await connection.request('resources/list', {}, LIST);
    const after = (await store.get('team', fixture.mcpUrl))?.tokens?.refresh_token;
    expect(after).toBeDefined();
    expect(after).not.toBe(before);
    expect(connection.connection().status).toBe('connected');
    expectNoTokenIn(logs, fixture);
  });

  it('two processes refused at the same moment renew once between them: no rotated-away refresh token is presented', async () => {
    const { fixture, store, logs } = await setup();
    expect(await runLogin(loginOptions(fixture), pastingIo(store, logs))).toBe(0);
    // Two processes: each its own store object on the one file (a mount and a snapshot, say).
    const first = connect(fixture, store, logs);
    const second = connect(fixture, new TokenStore(store.file), logs);
    await Promise.all([first.start(), second.start()]);
    const issuedBefore = fixture.issued.length;
    fixture.expireAccessTokens();
    await Promise.all([first.request('resources/list', {}, LIST), second.request('resources/list', {}, LIST)]);
    expect([first.connection().status, second.connection().status]).toEqual(['connected', 'connected']);
    // One refresh between them: one access and one refresh token issued.
    expect(fixture.issued.length - issuedBefore).toBe(2);
    expectNoTokenIn(logs, fixture);
  });

  it('turns to "needs login" when the sign-in is revoked', async () => {
    const { fixture, store, logs } = await setup();
    expect(await runLogin(loginOptions(fixture), pastingIo(store, logs))).toBe(0);
    const connection = connect(fixture, store, logs);
    await connection.start();
    fixture.revokeRefreshTokens();
    fixture.expireAccessTokens();
    await expect(connection.request('resources/list', {}, LIST)).rejects.toThrow(/needs login/);
    expect(connection.connection()).toMatchObject({ status: 'needs-login', reason: expect.stringMatching(/run: skills-mount login team/) });
    expectNoTokenIn(logs, fixture);
  });
});

describe('step-up', () => {
  it('a mount refused for scope shows "needs login" naming it; one login grants it and the mount reads', async () => {
    const { fixture, store, logs } = await setup({ scopeForRead: 'skills:admin' });
    expect(await runLogin(loginOptions(fixture), pastingIo(store, logs))).toBe(0);
    const connection = connect(fixture, store, logs);
    await connection.start();
    const read = () => connection.request('resources/read', { uri: 'skill://index.json' }, LIST);
    await expect(read()).rejects.toThrow(/needs login: the server asks for scope skills:read skills:admin, beyond the sign-in's; run: skills-mount login team/);
    expect(connection.connection().status).toBe('needs-login');
    // The scope is kept for the next login (written just after the state changes).
    for (let i = 0; i < 100 && (await store.get('team', fixture.mcpUrl))?.wantedScope === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await store.get('team', fixture.mcpUrl))?.wantedScope).toBe('skills:read skills:admin');
    expect(await runLogin(loginOptions(fixture), pastingIo(new TokenStore(store.file), logs))).toBe(0);
    expect((await store.get('team', fixture.mcpUrl))?.tokens?.scope).toContain('skills:admin');
    await waitForStatus(connection, 'connected', 2_000);
    await read();
    expectNoTokenIn(logs, fixture);
  });
});

describe('logout', () => {
  it('removes the sign-in and revokes its tokens at the authorization server', async () => {
    const { fixture, store, logs } = await setup();
    expect(await runLogin(loginOptions(fixture), pastingIo(store, logs))).toBe(0);
    expect(await runLogout({ labels: ['team'] }, pastingIo(store, logs))).toBe(0);
    expect(await store.get('team', fixture.mcpUrl)).toBeUndefined();
    expect(fixture.revocations()).toBe(2);
    expect(logs.at(-1)).toBe('team: signed out (1 sign-in removed; refresh token revoked; access token revoked)');
    expectNoTokenIn(logs, fixture);
  });
});

describe('a server that needs a sign-in nobody has given', () => {
  it('is "needs login", not retried in a loop, and connects within 2 s of a login elsewhere', async () => {
    const { fixture, store, logs } = await setup();
    const connection = connect(fixture, store, logs);
    await connection.start();
    expect(connection.connection()).toMatchObject({ status: 'needs-login', reason: expect.stringContaining('skills-mount login team') });
    const refusedAtFirst = fixture.unauthorizedCount();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(fixture.unauthorizedCount()).toBe(refusedAtFirst);
    // "Another terminal": its own store instance on the same file.
    const otherLogs: string[] = [];
    expect(await runLogin(loginOptions(fixture), pastingIo(new TokenStore(store.file), otherLogs))).toBe(0);
    const pickedUpMs = await waitForStatus(connection, 'connected', 2_000);
    process.stdout.write(`auth: a running connection served the server ${pickedUpMs} ms after login returned\n`);
    await connection.request('resources/list', {}, LIST);
    expectNoTokenIn([...logs, ...otherLogs], fixture);
  });
});

describe('hostile authorization servers: a clear error, nothing stored', () => {
  async function failedLogin(options: AuthFixtureOptions, tamper?: (redirect: URL) => string, extra: Partial<LoginOptions> = {}): Promise<{ text: string; fixture: AuthFixture; store: TokenStore }> {
    const { fixture, store, logs } = await setup(options);
    const started = Date.now();
    expect(await runLogin(loginOptions(fixture, extra), pastingIo(store, logs, tamper))).toBe(1);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await store.get('team', fixture.mcpUrl))?.tokens).toBeUndefined();
    // Refused before any token was issued (a check for leaked tokens would have nothing to find).
    expect(fixture.issued).toEqual([]);
    return { text: logs.join('\n'), fixture, store };
  }

  it('metadata naming another issuer', async () => {
    const { text } = await failedLogin({ claimedIssuer: 'https://not-this-server.example.com' });
    expect(text).toMatch(/sign-in failed: Issuer mismatch in authorization server metadata/);
  });

  it('a redirect to somewhere that is not this sign-in\'s loopback address', async () => {
    const { text } = await failedLogin({}, (url) => `https://attacker.example.com/callback${url.search}`);
    expect(text).toMatch(/the pasted address is not this sign-in's redirect .*attacker\.example\.com\/callback, so nothing was stored/);
  });

  it('a redirect with another state', async () => {
    const { text } = await failedLogin({}, (url) => {
      url.searchParams.set('state', 'forged');
      return url.href;
    });
    expect(text).toMatch(/state that does not match this sign-in/);
  });

  it('metadata of several megabytes', async () => {
    const { text } = await failedLogin({ metadataBody: `{"issuer": "${'x'.repeat(3 * 1024 * 1024)}"}` });
    expect(text).toMatch(/more than an authorization document may be|more than the \d+ an authorization document may be/);
  });

  it('metadata that is not JSON', async () => {
    const { text } = await failedLogin({ metadataBody: '<html>sign in here</html>' });
    expect(text).toMatch(/sign-in failed: .*(JSON|Unexpected token)/);
  });

  it('a token endpoint that never answers', async () => {
    const { text } = await failedLogin({ tokenHangs: true }, undefined, { authTimeoutMs: 1_500 });
    expect(text).toMatch(/\/token: no complete answer within 1\.5 s/);
  });
});
