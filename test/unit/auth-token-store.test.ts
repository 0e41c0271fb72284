// The token store and the provider over it: private file modes, writers that do not lose each
// other's changes, one refresh of a rotating refresh token however many callers, and tokens
// never offered to another resource, server, label or authorization server.
import { createServer, type Server } from 'node:http';
import { stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NeedsLoginError } from '../../src/auth/auth-errors.js';
import { LoopbackReceiver } from '../../src/auth/loopback-receiver.js';
import { StoredOAuthProvider } from '../../src/auth/stored-provider.js';
import { TokenStore, type StoredTokens } from '../../src/auth/token-store.js';
import { TempDirs } from '../support/temp-dir.js';

const temps = new TempDirs('auth-store-');
afterEach(() => temps.removeAll());

const SERVER = 'https://skills.example.com/mcp';
const ISSUER = 'https://id.example.com';

function tokens(overrides: Partial<StoredTokens> = {}): StoredTokens {
  return { access_token: 'access-token-1', token_type: 'Bearer', refresh_token: 'refresh-token-1', issuer: ISSUER, resource: SERVER, obtainedAtMs: Date.now(), expiresAtMs: Date.now() + 3_600_000, ...overrides };
}

async function storeWith(entryTokens: StoredTokens | undefined, label = 'team', serverUrl = SERVER): Promise<TokenStore> {
  const dir = await temps.make();
  const store = new TokenStore(path.join(dir, 'skills-mount', 'auth', 'tokens.json'));
  await store.update(label, serverUrl, () => ({ label, serverUrl, clients: { [ISSUER]: { client_id: 'client-1' } }, tokens: entryTokens, updatedAtMs: 0 }));
  return store;
}

describe('token store', () => {
  it('keeps its file 0600 in a 0700 directory', async () => {
    const store = await storeWith(tokens());
    expect((await stat(store.file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(store.file))).mode & 0o777).toBe(0o700);
  });

  it('loses no change when two stores (two processes) write at once', async () => {
    const first = await storeWith(undefined);
    const second = new TokenStore(first.file);
    await Promise.all(
      Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? first : second).update(`label-${i}`, SERVER, () => ({ label: `label-${i}`, serverUrl: SERVER, clients: {}, updatedAtMs: 0 }))),
    );
    const labels = new Set<string>();
    for (let i = 0; i < 24; i++) if ((await new TokenStore(first.file).get(`label-${i}`, SERVER)) !== undefined) labels.add(`label-${i}`);
    expect(labels.size).toBe(24);
  });

  it('refuses a file others can write, and one that is not a sign-ins file', async () => {
    const store = await storeWith(tokens());
    await writeFile(store.file, '{"version": 1, "entries": [{"label": 1}]}');
    await expect(new TokenStore(store.file).get('team', SERVER)).rejects.toThrow(/an entry without label/);
    await writeFile(store.file, 'not json');
    await expect(new TokenStore(store.file).get('team', SERVER)).rejects.toThrow(/not valid JSON/);
  });

  it('tells a watcher about a change within a second', async () => {
    const store = await storeWith(undefined);
    let changes = 0;
    const stop = store.watch(() => (changes += 1));
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      await new TokenStore(store.file).update('other', SERVER, () => ({ label: 'other', serverUrl: SERVER, clients: {}, updatedAtMs: 0 }));
      const deadline = Date.now() + 1_000;
      while (changes === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(changes).toBeGreaterThan(0);
    } finally {
      stop();
    }
  });
});

describe('stored provider: a token goes only where it was issued for', () => {
  it('offers the token to its own label, server and issuer', async () => {
    const store = await storeWith(tokens());
    const provider = new StoredOAuthProvider({ label: 'team', serverUrl: SERVER, store });
    expect((await provider.tokens())?.access_token).toBe('access-token-1');
    expect((await provider.tokens({ issuer: ISSUER }))?.access_token).toBe('access-token-1');
  });

  it('never to another server, another label, another authorization server or another resource', async () => {
    const store = await storeWith(tokens());
    expect(await new StoredOAuthProvider({ label: 'team', serverUrl: 'https://evil.example.com/mcp', store }).tokens()).toBeUndefined();
    expect(await new StoredOAuthProvider({ label: 'other', serverUrl: SERVER, store }).tokens()).toBeUndefined();
    expect(await new StoredOAuthProvider({ label: 'team', serverUrl: SERVER, store }).tokens({ issuer: 'https://other-id.example.com' })).toBeUndefined();
    const foreign = await storeWith(tokens({ resource: 'https://skills.example.com/other-mcp' }));
    expect(await new StoredOAuthProvider({ label: 'team', serverUrl: SERVER, store: foreign }).tokens()).toBeUndefined();
  });

  it('unattended, asks for a login instead of registering or redirecting', async () => {
    const store = await storeWith(undefined);
    const provider = new StoredOAuthProvider({ label: 'team', serverUrl: SERVER, store });
    await expect(provider.clientInformation({ issuer: 'https://new-id.example.com' })).rejects.toBeInstanceOf(NeedsLoginError);
    await provider.saveCodeVerifier('verifier-value');
    expect((await store.get('team', SERVER))?.pending).toBeUndefined();
    await expect(provider.redirectToAuthorization(new URL('https://id.example.com/authorize'))).rejects.toThrow(/needs login: .*run: skills-mount login team/);
  });

  it('unattended, a step-up it cannot complete names the scope, and the next login asks for it', async () => {
    const store = await storeWith(tokens({ scope: 'skills:read' }));
    const mount = new StoredOAuthProvider({ label: 'team', serverUrl: SERVER, store });
    await expect(mount.redirectToAuthorization(new URL('https://id.example.com/authorize?scope=skills:read%20skills:admin'))).rejects.toThrow(/asks for scope skills:admin, beyond the sign-in's/);
    let opened: URL | undefined;
    const login = new StoredOAuthProvider({ label: 'team', serverUrl: SERVER, store, interactive: { redirectUrl: 'http://127.0.0.1:1/callback', open: async (url) => void (opened = url) } });
    await login.redirectToAuthorization(new URL('https://id.example.com/authorize?scope=skills:read'));
    expect(opened?.searchParams.get('scope')).toBe('skills:read skills:admin');
  });
});

describe('stored provider: refresh before expiry', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  it('refreshes a rotating token once for two processes at once, storing the new refresh token', async () => {
    let refreshes = 0;
    let current = 'refresh-token-1';
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk)).on('end', () => {
        const params = new URLSearchParams(body);
        response.setHeader('Content-Type', 'application/json');
        if (params.get('grant_type') !== 'refresh_token' || params.get('refresh_token') !== current) {
          response.statusCode = 400;
          return response.end(JSON.stringify({ error: 'invalid_grant' }));
        }
        refreshes += 1;
        current = `refresh-token-${refreshes + 1}`;
        response.end(JSON.stringify({ access_token: `access-token-${refreshes + 1}`, token_type: 'Bearer', refresh_token: current, expires_in: 3600 }));
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const issuer = `http://127.0.0.1:${port}`;
    const store = await storeWith(tokens({ issuer, obtainedAtMs: Date.now() - 3_600_000, expiresAtMs: Date.now() + 5_000 }));
    await store.update('team', SERVER, (entry) => ({
      ...entry!,
      clients: { [issuer]: { client_id: 'client-1' } },
      discovery: { authorizationServerUrl: issuer, authorizationServerMetadata: { issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, response_types_supported: ['code'] } },
    }));
    const a = new StoredOAuthProvider({ label: 'team', serverUrl: SERVER, store });
    const b = new StoredOAuthProvider({ label: 'team', serverUrl: SERVER, store: new TokenStore(store.file) });
    const [fromA, fromB] = await Promise.all([a.tokens(), b.tokens()]);
    expect(refreshes).toBe(1);
    expect(fromA?.access_token).toBe('access-token-2');
    expect(fromB?.access_token).toBe('access-token-2');
    expect((await new TokenStore(store.file).get('team', SERVER))?.tokens?.refresh_token).toBe('refresh-token-2');
  });
});

describe('loopback receiver', () => {
  it('hands over the redirect with the right state, and refuses one with another without ending the wait', async () => {
    const receiver = await LoopbackReceiver.start({ label: 'team' });
    try {
      expect(receiver.redirectUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      const waiting = receiver.wait('state-1', 5_000);
      const page = await fetch(`${receiver.redirectUrl}?code=c0de&state=state-1`);
      expect(page.status).toBe(200);
      expect((await waiting).get('code')).toBe('c0de');
      const forged = receiver.wait('state-2', 5_000);
      const refused = await fetch(`${receiver.redirectUrl}?code=c0de&state=forged`);
      expect(refused.status).toBe(400);
      expect((await fetch(`${receiver.redirectUrl}?code=c0de2&state=state-2`)).status).toBe(200);
      expect((await forged).get('code')).toBe('c0de2');
    } finally {
      await receiver.close();
    }
  });

  it('gives up after its deadline', async () => {
    const receiver = await LoopbackReceiver.start({ label: 'team' });
    try {
      await expect(receiver.wait('s', 100)).rejects.toThrow(/no sign-in redirect arrived/);
    } finally {
      await receiver.close();
    }
  });
});
