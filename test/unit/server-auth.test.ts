// The protected resource's checks against authorization servers that misbehave, with the
// issuer's HTTP answers injected: metadata for another issuer, not JSON, huge, hanging or
// redirected, keys that cannot be fetched; and the discovery order and scope claims.
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { checkAuthBinding, createResourceAuth, grantedScopes, metadataUrls, type ResourceAuth } from '../../src/server/index.js';

const ISSUER = 'https://idp.example';
const ENDPOINT = 'http://127.0.0.1:4000/mcp';
const KID = 'k1';

type Route = (init: RequestInit) => Response | Promise<Response>;

let privateKey: CryptoKey;
let jwks: { keys: unknown[] };
beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  privateKey = pair.privateKey;
  jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: KID, alg: 'RS256', use: 'sig' }] };
});

/** A fetch answering only the URLs in `routes` (404 for others), counting calls per URL. */
function fakeFetch(routes: Record<string, Route>): { fetch: typeof fetch; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const fake = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = String(input);
    calls.set(url, (calls.get(url) ?? 0) + 1);
    const route = routes[url];
    return route ? route(init) : new Response('not found', { status: 404 });
  };
  return { fetch: fake as typeof fetch, calls };
}

const json = (value: unknown): Route => () => Response.json(value);
const goodMetadata = { issuer: ISSUER, jwks_uri: `${ISSUER}/jwks` };
/** Never answers; rejects when the caller gives up, as fetch does. */
const hang: Route = (init) =>
  new Promise((_, reject) => init.signal?.addEventListener('abort', () => reject(init.signal!.reason), { once: true }));

function token(claims: Record<string, unknown> = {}, audience = ENDPOINT): Promise<string> {
  return new SignJWT({ scope: 'skills:read', ...claims }).setProtectedHeader({ alg: 'RS256', kid: KID }).setIssuer(ISSUER).setAudience(audience).setExpirationTime('5m').sign(privateKey);
}

function makeAuth(routes: Record<string, Route>, extra: { timeoutMs?: number; maxBytes?: number } = {}): { auth: ResourceAuth; logs: string[]; calls: Map<string, number> } {
  const { fetch, calls } = fakeFetch(routes);
  const logs: string[] = [];
  const auth = createResourceAuth({ issuer: ISSUER, scopes: ['skills:read'], issuerFetch: { fetch, timeoutMs: extra.timeoutMs ?? 2_000, retryMinMs: 60_000, ...(extra.maxBytes && { maxBytes: extra.maxBytes }) } }, ENDPOINT, (line) => logs.push(line));
  return { auth, logs, calls };
}

function request(bearer?: string): Request {
  return new Request(ENDPOINT, { method: 'POST', headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` } });
}

describe('the issuer skills-serve trusts', () => {
  it('looks for metadata where RFC 8414 and OpenID discovery say, path-inserted first', () => {
    expect(metadataUrls('https://idp.example')).toEqual(['https://idp.example/.well-known/oauth-authorization-server', 'https://idp.example/.well-known/openid-configuration']);
    expect(metadataUrls('https://idp.example/realms/eng/')).toEqual([
      'https://idp.example/.well-known/oauth-authorization-server/realms/eng',
      'https://idp.example/.well-known/openid-configuration/realms/eng',
      'https://idp.example/realms/eng/.well-known/openid-configuration',
    ]);
  });

  it('accepts a good token when only OpenID discovery answers', async () => {
    const { auth, logs } = makeAuth({ [`${ISSUER}/.well-known/openid-configuration`]: json(goodMetadata), [`${ISSUER}/jwks`]: json(jwks) });
    expect(await auth.handle(request(await token()))).toBeUndefined();
    expect(logs.join('\n')).toContain(`auth: issuer ${ISSUER} ready: metadata ${ISSUER}/.well-known/openid-configuration`);
  });

  it.each([
    ['names another issuer', json({ ...goodMetadata, issuer: 'https://evil.example' }), /names issuer "https:\/\/evil\.example", not https:\/\/idp\.example/],
    ['is not JSON', () => new Response('<html>sign in</html>'), /is not JSON/],
    ['is a JSON list', json([goodMetadata]), /is not a JSON object/],
    ['has no jwks_uri', json({ issuer: ISSUER }), /has no jwks_uri/],
    ['sends its keys over plain http', json({ ...goodMetadata, jwks_uri: 'http://idp.example/jwks' }), /must be an https URL/],
    ['is huge', () => new Response('x'.repeat(2 * 1024 * 1024)), /over the 1048576 bytes allowed/],
    ['redirects', () => new Response(null, { status: 302, headers: { location: 'https://elsewhere.example/' } }), /redirected \(HTTP 302\)/],
  ])('refuses metadata that %s: 503 for a token, one log line saying why, nothing accepted', async (_what, route, why) => {
    const { auth, logs, calls } = makeAuth({ [`${ISSUER}/.well-known/oauth-authorization-server`]: route, [`${ISSUER}/jwks`]: json(jwks) });
    const answer = await auth.handle(request(await token()));
    expect(answer?.status).toBe(503);
    expect(answer?.headers.get('retry-after')).toBe('5');
    const line = logs.find((entry) => entry.includes('unavailable'));
    expect(line).toMatch(why);
    expect(line).toContain(`auth: issuer ${ISSUER} unavailable`);
    // Within the backoff a second request neither fetches again nor logs again.
    expect((await auth.handle(request(await token())))?.status).toBe(503);
    expect(calls.get(`${ISSUER}/.well-known/oauth-authorization-server`)).toBe(1);
    expect(logs.filter((entry) => entry.includes('unavailable'))).toHaveLength(1);
    expect(calls.get(`${ISSUER}/jwks`)).toBeUndefined();
    // Without a token the answer is the ordinary challenge: no issuer is needed for it.
    expect((await auth.handle(request()))?.status).toBe(401);
  });

  it('gives up on an issuer that hangs after its deadline', async () => {
    const { auth, logs } = makeAuth({ [`${ISSUER}/.well-known/oauth-authorization-server`]: hang }, { timeoutMs: 200 });
    const started = performance.now();
    expect((await auth.handle(request(await token())))?.status).toBe(503);
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(logs.join('\n')).toMatch(/unavailable: GET https:\/\/idp\.example\/\.well-known\/oauth-authorization-server: timed out/);
  });

  it('answers 503 when the keys cannot be fetched, and fails fast during the backoff', async () => {
    const { auth, logs, calls } = makeAuth({ [`${ISSUER}/.well-known/oauth-authorization-server`]: json(goodMetadata), [`${ISSUER}/jwks`]: () => new Response('down', { status: 500 }) });
    expect((await auth.handle(request(await token())))?.status).toBe(503);
    expect((await auth.handle(request(await token())))?.status).toBe(503);
    expect(calls.get(`${ISSUER}/jwks`)).toBe(1);
    expect(logs.filter((line) => line.includes(`cannot fetch the signing keys of issuer ${ISSUER}`))).toHaveLength(1);
  });

  it('never logs or echoes a token', async () => {
    const { auth, logs } = makeAuth({ [`${ISSUER}/.well-known/oauth-authorization-server`]: json(goodMetadata), [`${ISSUER}/jwks`]: json(jwks) });
    const expired = await new SignJWT({ scope: 'skills:read' }).setProtectedHeader({ alg: 'RS256', kid: KID }).setIssuer(ISSUER).setAudience(ENDPOINT).setExpirationTime(Math.floor(Date.now() / 1000) - 10).sign(privateKey);
    const answers = [await auth.handle(request(expired)), await auth.handle(request(await token({}, 'https://other.example/mcp')))];
    for (const answer of answers) {
      expect(answer?.status).toBe(401);
      const text = `${answer!.headers.get('www-authenticate')}\n${await answer!.text()}`;
      expect(text).not.toContain(expired.split('.')[2]);
    }
    expect(logs.join('\n')).not.toContain(expired.split('.')[2]);
  });
});

describe('scopes and binding', () => {
  it('reads scope (space-separated) and scp (string or list)', () => {
    expect([...grantedScopes({ scope: 'a b  c' })]).toEqual(['a', 'b', 'c']);
    expect([...grantedScopes({ scp: 'a b' })]).toEqual(['a', 'b']);
    expect([...grantedScopes({ scp: ['a', 7, 'b'] })]).toEqual(['a', 'b']);
    expect(grantedScopes({}).size).toBe(0);
  });

  it('accepts an Entra-style scp list holding the required scope', async () => {
    const { auth } = makeAuth({ [`${ISSUER}/.well-known/oauth-authorization-server`]: json(goodMetadata), [`${ISSUER}/jwks`]: json(jwks) });
    const entra = await new SignJWT({ scp: ['skills:read', 'other'] }).setProtectedHeader({ alg: 'RS256', kid: KID }).setIssuer(ISSUER).setAudience([ENDPOINT, 'https://graph.example']).setExpirationTime('5m').sign(privateKey);
    expect(await auth.handle(request(entra))).toBeUndefined();
  });

  it('needs an audience when bound to every address, and refuses a bad issuer or audience', () => {
    expect(() => checkAuthBinding('0.0.0.0', { issuer: ISSUER })).toThrow(ConfigError);
    expect(() => checkAuthBinding('::', { issuer: ISSUER })).toThrow(/--auth-audience is required/);
    expect(() => checkAuthBinding('0.0.0.0', { issuer: ISSUER, audience: 'https://skills.example/mcp' })).not.toThrow();
    expect(() => checkAuthBinding('127.0.0.1', { issuer: ISSUER })).not.toThrow();
    expect(() => createResourceAuth({ issuer: 'http://idp.example' }, ENDPOINT, () => {})).toThrow(/must be an https URL/);
    expect(() => createResourceAuth({ issuer: ISSUER, audience: 'skills' }, ENDPOINT, () => {})).toThrow(/is not a URL/);
  });

  it('serves the metadata for a proxied audience at its own path, and only GET or HEAD', async () => {
    const logs: string[] = [];
    const auth = createResourceAuth({ issuer: ISSUER, audience: 'https://skills.example/team/mcp', issuerFetch: { fetch: fakeFetch({}).fetch } }, ENDPOINT, (line) => logs.push(line));
    expect(auth.metadataUrl).toBe('https://skills.example/.well-known/oauth-protected-resource/team/mcp');
    for (const path of ['/.well-known/oauth-protected-resource/team/mcp', '/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const answer = await auth.handle(new Request(`http://127.0.0.1:4000${path}`));
      expect(answer?.status, path).toBe(200);
      expect(await answer!.json()).toEqual({
        resource: 'https://skills.example/team/mcp',
        authorization_servers: [ISSUER],
        bearer_methods_supported: ['header'],
        resource_name: 'skills-serve',
        dpop_signing_alg_values_supported: ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512', 'EdDSA', 'Ed25519'],
        dpop_bound_access_tokens_required: false,
      });
    }
    expect((await auth.handle(new Request('http://127.0.0.1:4000/.well-known/oauth-protected-resource', { method: 'POST' })))?.status).toBe(405);
    // Other paths are not the resource's business.
    expect(await auth.handle(new Request('http://127.0.0.1:4000/elsewhere'))).toBeUndefined();
    const challenge = (await auth.handle(request()))!.headers.get('www-authenticate');
    expect(challenge).toBe(
      'Bearer resource_metadata="https://skills.example/.well-known/oauth-protected-resource/team/mcp", DPoP resource_metadata="https://skills.example/.well-known/oauth-protected-resource/team/mcp", algs="ES256 ES384 ES512 PS256 PS384 PS512 RS256 RS384 RS512 EdDSA Ed25519"',
    );
  });
});
