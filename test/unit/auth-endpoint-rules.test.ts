// Where authorization traffic may go and what a token endpoint may answer: https or loopback
// http only (0.0.0.0 is not loopback), revocation only on the issuer's or token endpoint's
// origin (logout says why it sent nothing otherwise), Bearer and DPoP tokens only, the port a
// client was registered with, and a refresh answered invalid_client that drops the client.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { registeredCallbackPort } from '../../src/auth/client-registration.js';
import { endpointRefusal, revocationRefusal } from '../../src/auth/endpoint-rules.js';
import { revokeSignIn } from '../../src/auth/revocation.js';
import { StoredOAuthProvider } from '../../src/auth/stored-provider.js';
import { TokenStore, type AuthEntry } from '../../src/auth/token-store.js';
import { assertKnownTokenType } from '../../src/auth/token-type.js';
import { startAuthFixture, type AuthFixture } from '../support/auth-fixture.js';
import { TempDirs } from '../support/temp-dir.js';

const temps = new TempDirs('auth-rules-');
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  await temps.removeAll();
});

describe('endpoint rules', () => {
  it('https anywhere, plain http only to loopback; no other scheme', () => {
    for (const ok of ['https://id.example.com/authorize', 'http://127.0.0.1:8080/token', 'http://127.9.9.9/x', 'http://[::1]:1/x', 'http://localhost:3000/x']) expect(endpointRefusal(ok)).toBeUndefined();
    expect(endpointRefusal('http://0.0.0.0:8080/authorize')).toMatch(/plain http and not on this machine's loopback/);
    expect(endpointRefusal('http://id.example.com/authorize')).toMatch(/plain http/);
    expect(endpointRefusal('file:///etc/passwd')).toMatch(/uses the file: scheme/);
    expect(endpointRefusal('javascript:alert(1)')).toMatch(/uses the javascript: scheme/);
    expect(endpointRefusal('not a url')).toBe('is not an address');
  });

  it('revocation only on the origin of the issuer or of its token endpoint', () => {
    expect(revocationRefusal('https://id.example.com/revoke', 'https://id.example.com', 'https://id.example.com/token')).toBeUndefined();
    expect(revocationRefusal('https://oauth2.example.net/revoke', 'https://id.example.com', 'https://oauth2.example.net/token')).toBeUndefined();
    expect(revocationRefusal('https://collector.example.org/revoke', 'https://id.example.com', 'https://id.example.com/token')).toMatch(/on another origin than the issuer https:\/\/id\.example\.com\//);
    expect(revocationRefusal('http://id.example.com/revoke', 'http://id.example.com', 'http://id.example.com/token')).toMatch(/plain http/);
  });

  it('Bearer and DPoP tokens in any case; anything else is refused, naming the type escaped', () => {
    for (const type of ['Bearer', 'bearer', 'DPoP', 'dpop']) expect(() => assertKnownTokenType(type, 'team')).not.toThrow();
    expect(() => assertKnownTokenType('mac', 'team')).toThrow(/team: the authorization server issued a token of type "mac", which skills-mount cannot use \(only Bearer and DPoP\); nothing was stored/);
    expect(() => assertKnownTokenType('N_A\nforged line', 'team')).toThrow(/type "N_A\\u000aforged line"/);
    expect(() => assertKnownTokenType(undefined, 'team')).toThrow(/type none/);
  });

  it('the loopback port a stored client was registered with', () => {
    const entry = (client: Record<string, unknown>): AuthEntry => ({ label: 'team', serverUrl: 'https://s.example.com/mcp', clients: { 'https://id.example.com': client as never }, updatedAtMs: 0 });
    expect(registeredCallbackPort(entry({ client_id: 'c', redirect_uris: ['http://127.0.0.1:45123/callback'] }))).toBe(45123);
    expect(registeredCallbackPort({ ...entry({ client_id: 'c' }), redirectUrl: 'http://127.0.0.1:40000/callback' })).toBe(40000);
    expect(registeredCallbackPort(entry({ client_id: 'c', redirect_uris: ['https://app.example.com/cb'] }))).toBeUndefined();
    expect(registeredCallbackPort(undefined)).toBeUndefined();
  });
});

describe('logout revocation', () => {
  /** An endpoint that records what reaches it. */
  async function recorder(): Promise<{ origin: string; hits: string[] }> {
    const hits: string[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => {
        hits.push(body);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
  }

  function signIn(issuer: string, revocationEndpoint: string, extra: Partial<AuthEntry> = {}): AuthEntry {
    return {
      label: 'team',
      serverUrl: 'http://127.0.0.1:1/mcp',
      clients: { [issuer]: { client_id: 'client-1', issuer } as never },
      tokens: { access_token: 'at-secret-123456', token_type: 'Bearer', refresh_token: 'rt-secret-123456', issuer, resource: 'http://127.0.0.1:1/mcp', obtainedAtMs: 0 },
      discovery: {
        authorizationServerUrl: issuer,
        authorizationServerMetadata: { issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, response_types_supported: ['code'], revocation_endpoint: revocationEndpoint },
      },
      updatedAtMs: 0,
      ...extra,
    };
  }

  it('revokes both tokens at the issuer\'s own endpoint', async () => {
    const as = await recorder();
    expect(await revokeSignIn(signIn(as.origin, `${as.origin}/revoke`))).toEqual(['refresh token revoked', 'access token revoked']);
    expect(as.hits).toEqual([
      'token=rt-secret-123456&token_type_hint=refresh_token&client_id=client-1',
      'token=at-secret-123456&token_type_hint=access_token&client_id=client-1',
    ]);
  });

  it('sends nothing to an endpoint on another origin or plain http elsewhere (stored before the check), and says why', async () => {
    const as = await recorder();
    const elsewhere = await recorder();
    expect(await revokeSignIn(signIn(as.origin, `${elsewhere.origin}/revoke`))).toEqual([
      `tokens not revoked: the revocation endpoint ${elsewhere.origin}/revoke is on another origin than the issuer ${as.origin}/ and its token endpoint, so nothing was sent to it`,
    ]);
    expect(await revokeSignIn(signIn(as.origin, 'http://0.0.0.0:9/revoke'))).toEqual([
      expect.stringMatching(/^tokens not revoked: the revocation endpoint http:\/\/0\.0\.0\.0:9\/revoke is plain http and not on this machine's loopback/),
    ]);
    expect(await revokeSignIn(signIn(as.origin, `${as.origin}/revoke`, { revocationRefused: 'the revocation endpoint https://x.example/revoke is on another origin' }))).toEqual([
      'tokens not revoked: the revocation endpoint https://x.example/revoke is on another origin, so nothing was sent to it',
    ]);
    expect([...as.hits, ...elsewhere.hits]).toEqual([]);
  });
});

describe('a refresh before expiry answered invalid_client', () => {
  it('drops the client with the tokens, so the next login registers anew', async () => {
    const fixture: AuthFixture = await startAuthFixture();
    closers.push(() => fixture.close());
    const store = new TokenStore(path.join(await temps.make(), 'tokens.json'));
    const nowMs = Date.now();
    const issuer = fixture.issuer;
    await store.update('team', fixture.mcpUrl, () => ({
      label: 'team',
      serverUrl: fixture.mcpUrl,
      // A client the server does not know (it forgot it).
      clients: { [issuer]: { client_id: 'client-forgotten', issuer, redirect_uris: ['http://127.0.0.1:1/callback'] } as never },
      tokens: { access_token: 'at-old-123456789', token_type: 'Bearer', refresh_token: 'rt-old-123456789', issuer, resource: fixture.mcpUrl, obtainedAtMs: nowMs - 3_590_000, expiresAtMs: nowMs + 10_000 },
      discovery: {
        authorizationServerUrl: issuer,
        authorizationServerMetadata: { issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, response_types_supported: ['code'] },
      },
      updatedAtMs: nowMs,
    }));
    const provider = new StoredOAuthProvider({ label: 'team', serverUrl: fixture.mcpUrl, store });
    await provider.tokens();
    expect(fixture.tokenRequests()).toBe(1);
    const entry = await store.get('team', fixture.mcpUrl);
    expect(entry?.tokens).toBeUndefined();
    expect(entry?.clients).toEqual({});
    expect(provider.needsLoginReason()).toBe('the authorization server refused to refresh the sign-in (invalid_client)');
  });
});

describe('a token of an unknown type stored before such were refused', () => {
  it('is never offered to the server (as Bearer or otherwise)', async () => {
    const store = new TokenStore(path.join(await temps.make(), 'tokens.json'));
    const serverUrl = 'http://127.0.0.1:1/mcp';
    const issuer = 'http://127.0.0.1:2';
    const tokens = { access_token: 'at-mac-123456789', refresh_token: 'rt-mac-123456789', issuer, resource: serverUrl, obtainedAtMs: Date.now() };
    await store.update('team', serverUrl, () => ({ label: 'team', serverUrl, clients: {}, tokens: { ...tokens, token_type: 'mac' }, updatedAtMs: 0 }));
    expect(await new StoredOAuthProvider({ label: 'team', serverUrl, store }).tokens()).toBeUndefined();
    await store.update('team', serverUrl, (entry) => entry && { ...entry, tokens: { ...tokens, token_type: 'bearer' } });
    expect((await new StoredOAuthProvider({ label: 'team', serverUrl, store }).tokens())?.access_token).toBe('at-mac-123456789');
  });
});
