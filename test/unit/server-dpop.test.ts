// DPoP at the protected resource (RFC 9449): a DPoP-bound token with a good proof is let
// through; each way a proof or its binding can be wrong is refused with 401 and both
// schemes' challenges, the error in the DPoP one; a bound token sent as Bearer is refused.
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createResourceAuth, type ResourceAuth } from '../../src/server/index.js';
import { accessTokenHash, DpopProofChecker, DPOP_ALGORITHMS } from '../../src/server/dpop-proof.js';

const ISSUER = 'https://idp.example';
const ENDPOINT = 'http://127.0.0.1:4000/mcp';
const AUDIENCE = 'https://skills.example/team/mcp';
const KID = 'k1';

let issuerKey: CryptoKey;
let jwks: { keys: unknown[] };
let clientKey: { privateKey: CryptoKey; publicJwk: JWK; thumbprint: string };
let otherKey: { privateKey: CryptoKey; publicJwk: JWK; thumbprint: string };

async function dpopKey(alg: string): Promise<{ privateKey: CryptoKey; publicJwk: JWK; thumbprint: string }> {
  const pair = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(pair.publicKey);
  return { privateKey: pair.privateKey, publicJwk, thumbprint: await calculateJwkThumbprint(publicJwk) };
}

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  issuerKey = pair.privateKey;
  jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: KID, alg: 'RS256', use: 'sig' }] };
  clientKey = await dpopKey('ES256');
  otherKey = await dpopKey('ES256');
});

function fakeIssuerFetch(): typeof fetch {
  const routes: Record<string, unknown> = { [`${ISSUER}/.well-known/oauth-authorization-server`]: { issuer: ISSUER, jwks_uri: `${ISSUER}/jwks` }, [`${ISSUER}/jwks`]: jwks };
  return (async (input: string | URL | Request) => {
    const body = routes[String(input)];
    return body === undefined ? new Response('not found', { status: 404 }) : Response.json(body);
  }) as typeof fetch;
}

function makeAuth(audience?: string, nowMs?: () => number): { auth: ResourceAuth; logs: string[] } {
  const logs: string[] = [];
  const auth = createResourceAuth(
    { issuer: ISSUER, scopes: ['skills:read'], verbose: true, ...(audience && { audience }), issuerFetch: { fetch: fakeIssuerFetch() }, ...(nowMs && { dpop: { nowMs } }) },
    ENDPOINT,
    (line) => logs.push(line),
  );
  return { auth, logs };
}

/** An access token of the issuer for `audience`, bound to `jkt` when given. */
function accessToken(jkt: string | undefined, audience = ENDPOINT, scope = 'skills:read'): Promise<string> {
  return new SignJWT({ scope, ...(jkt !== undefined && { cnf: { jkt } }) })
    .setProtectedHeader({ alg: 'RS256', kid: KID, typ: 'at+jwt' })
    .setIssuer(ISSUER)
    .setAudience(audience)
    .setExpirationTime('5m')
    .sign(issuerKey);
}

interface ProofParts {
  key?: { privateKey: CryptoKey | Uint8Array; publicJwk: JWK };
  alg?: string;
  typ?: string;
  jwk?: JWK;
  claims?: Record<string, unknown>;
}

let jtiCounter = 0;
/** A proof for `token` on POST `htu`, with any part replaced. */
function proof(token: string, htu: string, parts: ProofParts = {}): Promise<string> {
  const key = parts.key ?? clientKey;
  return new SignJWT({ jti: `jti-${++jtiCounter}-${Math.random()}`, htm: 'POST', htu, iat: Math.floor(Date.now() / 1000), ath: accessTokenHash(token), ...parts.claims })
    .setProtectedHeader({ alg: parts.alg ?? 'ES256', typ: parts.typ ?? 'dpop+jwt', jwk: parts.jwk ?? key.publicJwk })
    .sign(key.privateKey);
}

function request(authorization: string | undefined, dpop?: string | string[], { url = ENDPOINT, method = 'POST' } = {}): Request {
  const headers = new Headers();
  if (authorization !== undefined) headers.set('authorization', authorization);
  for (const one of dpop === undefined ? [] : ([] as string[]).concat(dpop)) headers.append('dpop', one);
  return new Request(url, { method, headers });
}

/** The challenges of a WWW-Authenticate header, scheme -> params. */
function challenges(response: Response): Record<string, Record<string, string>> {
  const header = response.headers.get('www-authenticate') ?? '';
  const found: Record<string, Record<string, string>> = {};
  for (const part of header.split(/,\s*(?=(?:Bearer|DPoP) )/)) {
    const scheme = part.slice(0, part.indexOf(' '));
    found[scheme] = Object.fromEntries([...part.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((match) => [match[1]!, match[2]!.replace(/\\(.)/g, '$1')]));
  }
  return found;
}

async function expectRefused(answer: Response | undefined, scheme: 'Bearer' | 'DPoP', error: string, description: RegExp): Promise<void> {
  expect(answer?.status).toBe(401);
  const found = challenges(answer!);
  expect(Object.keys(found)).toEqual(['Bearer', 'DPoP']);
  expect(found[scheme]).toMatchObject({ error });
  expect(found[scheme]!.error_description).toMatch(description);
  const other = scheme === 'Bearer' ? 'DPoP' : 'Bearer';
  expect(found[other]!.error).toBeUndefined();
  expect(found.DPoP!.algs).toBe(DPOP_ALGORITHMS.join(' '));
}

describe('DPoP-bound tokens at skills-serve', () => {
  it('lets a bound token with a fresh proof of its key through, on POST, GET and DELETE', async () => {
    const { auth } = makeAuth();
    const token = await accessToken(clientKey.thumbprint);
    expect(await auth.handle(request(`DPoP ${token}`, await proof(token, ENDPOINT)))).toBeUndefined();
    for (const method of ['GET', 'DELETE']) {
      const forMethod = await proof(token, ENDPOINT, { claims: { htm: method } });
      expect(await auth.handle(request(`DPoP ${token}`, forMethod, { method })), method).toBeUndefined();
    }
    // The scheme name is case-insensitive (RFC 9110), and htu is compared after normalization.
    expect(await auth.handle(request(`dpop ${token}`, await proof(token, 'HTTP://127.0.0.1:4000/mcp?x=1#f')))).toBeUndefined();
  });

  it('accepts RSA, RSA-PSS and EdDSA proofs too', async () => {
    const { auth } = makeAuth();
    for (const alg of ['RS256', 'PS256', 'EdDSA']) {
      const key = await dpopKey(alg);
      const token = await accessToken(key.thumbprint);
      expect(await auth.handle(request(`DPoP ${token}`, await proof(token, ENDPOINT, { key, alg }))), alg).toBeUndefined();
    }
  });

  it('behind --auth-audience, wants the htu the client used (the audience), not the URL it listens on', async () => {
    const { auth } = makeAuth(AUDIENCE);
    const token = await accessToken(clientKey.thumbprint, AUDIENCE);
    expect(await auth.handle(request(`DPoP ${token}`, await proof(token, AUDIENCE)))).toBeUndefined();
    await expectRefused(await auth.handle(request(`DPoP ${token}`, await proof(token, ENDPOINT))), 'DPoP', 'invalid_dpop_proof', /another URL \(htu\)/);
  });

  it.each<[string, (token: string) => Promise<string>, RegExp]>([
    ['wrong htm', (token) => proof(token, ENDPOINT, { claims: { htm: 'GET' } }), /another method \(htm\)/],
    ['wrong htu (path)', (token) => proof(token, 'http://127.0.0.1:4000/other'), /another URL \(htu\)/],
    ['wrong htu (origin)', (token) => proof(token, 'http://127.0.0.1:4001/mcp'), /another URL \(htu\)/],
    ['stale iat', (token) => proof(token, ENDPOINT, { claims: { iat: Math.floor(Date.now() / 1000) - 120 } }), /too old \(iat\)/],
    ['iat in the future', (token) => proof(token, ENDPOINT, { claims: { iat: Math.floor(Date.now() / 1000) + 60 } }), /from the future \(iat\)/],
    ['no iat', (token) => proof(token, ENDPOINT, { claims: { iat: undefined } }), /no iat/],
    ['no jti', (token) => proof(token, ENDPOINT, { claims: { jti: undefined } }), /no usable jti/],
    ['wrong ath', (token) => proof(token, ENDPOINT, { claims: { ath: accessTokenHash(`${token}x`) } }), /another access token \(ath\)/],
    ['no ath', (token) => proof(token, ENDPOINT, { claims: { ath: undefined } }), /another access token \(ath\)/],
    ['typ JWT', (token) => proof(token, ENDPOINT, { typ: 'JWT' }), /typ is not dpop\+jwt/],
    ['HS256 signature', (token) => proof(token, ENDPOINT, { key: { privateKey: new TextEncoder().encode('a-shared-secret-of-32-bytes-long!'), publicJwk: clientKey.publicJwk }, alg: 'HS256' }), /algorithm not accepted/],
    ['a private key in jwk', async (token) => proof(token, ENDPOINT, { jwk: await exportJWK(clientKey.privateKey) }), /jwk is not a public key/],
    ['a signature by another key than its jwk', (token) => proof(token, ENDPOINT, { key: { privateKey: otherKey.privateKey, publicJwk: clientKey.publicJwk } }), /signature does not verify/],
    ['no jwk', async (token) => new SignJWT({ jti: 'x', htm: 'POST', htu: ENDPOINT, iat: Math.floor(Date.now() / 1000), ath: accessTokenHash(token) }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt' }).sign(clientKey.privateKey), /no jwk header/],
    ['garbage', async () => 'not.a-proof', /not a signed JWT/],
  ])('refuses a proof with %s: 401 invalid_dpop_proof', async (_what, makeProof, why) => {
    const { auth, logs } = makeAuth();
    const token = await accessToken(clientKey.thumbprint);
    const sent = await makeProof(token);
    const answer = await auth.handle(request(`DPoP ${token}`, sent));
    await expectRefused(answer, 'DPoP', 'invalid_dpop_proof', why);
    // Neither the token nor the proof is echoed or logged.
    const shown = `${answer!.headers.get('www-authenticate')}\n${await answer!.text()}\n${logs.join('\n')}`;
    expect(shown).not.toContain(token.split('.')[2]);
    if (sent.includes('.')) expect(shown).not.toContain(sent.split('.').at(-1));
    expect(logs.join('\n')).toMatch(/refused \(401, DPoP\)/);
  });

  it('refuses a proof presented a second time (jti), and forgets it only once it is too old to pass', async () => {
    let nowMs = Date.now();
    const { auth } = makeAuth(undefined, () => nowMs);
    const token = await accessToken(clientKey.thumbprint);
    const once = await proof(token, ENDPOINT);
    expect(await auth.handle(request(`DPoP ${token}`, once))).toBeUndefined();
    await expectRefused(await auth.handle(request(`DPoP ${token}`, once)), 'DPoP', 'invalid_dpop_proof', /used before \(jti\)/);
    nowMs += 30_000;
    await expectRefused(await auth.handle(request(`DPoP ${token}`, once)), 'DPoP', 'invalid_dpop_proof', /used before \(jti\)/);
    // Past the window the iat check refuses it: the replay memory need not hold it longer.
    nowMs += 40_000;
    await expectRefused(await auth.handle(request(`DPoP ${token}`, once)), 'DPoP', 'invalid_dpop_proof', /too old \(iat\)/);
    // A fresh proof of the same key passes.
    expect(await auth.handle(request(`DPoP ${token}`, await proof(token, ENDPOINT, { claims: { iat: Math.floor(nowMs / 1000) } })))).toBeUndefined();
  });

  it('bounds the replay memory', async () => {
    const checker = new DpopProofChecker({ maxRemembered: 2 });
    const token = 'a.b.c';
    const proofs = await Promise.all([1, 2, 3].map(() => proof(token, ENDPOINT)));
    for (const one of proofs) await checker.check(one, { method: 'POST', url: ENDPOINT, accessToken: token });
    // The newest two are remembered; the oldest was let go to keep the bound.
    await expect(checker.check(proofs[2]!, { method: 'POST', url: ENDPOINT, accessToken: token })).rejects.toThrow(/used before/);
    await expect(checker.check(proofs[1]!, { method: 'POST', url: ENDPOINT, accessToken: token })).rejects.toThrow(/used before/);
    await expect(checker.check(proofs[0]!, { method: 'POST', url: ENDPOINT, accessToken: token })).resolves.toBe(clientKey.thumbprint);
  });

  it('refuses a proof of another key than the token is bound to (cnf.jkt)', async () => {
    const { auth } = makeAuth();
    const token = await accessToken(otherKey.thumbprint);
    await expectRefused(await auth.handle(request(`DPoP ${token}`, await proof(token, ENDPOINT))), 'DPoP', 'invalid_token', /bound to another DPoP key/);
  });

  it('refuses a bound token sent as Bearer, even with a good proof (RFC 9449 §7.2)', async () => {
    const { auth } = makeAuth();
    const token = await accessToken(clientKey.thumbprint);
    await expectRefused(await auth.handle(request(`Bearer ${token}`)), 'Bearer', 'invalid_token', /bound to a DPoP key: present it with the DPoP scheme/);
    await expectRefused(await auth.handle(request(`Bearer ${token}`, await proof(token, ENDPOINT))), 'Bearer', 'invalid_token', /bound to a DPoP key/);
  });

  it('refuses an unbound token sent with the DPoP scheme, and the DPoP scheme without exactly one proof', async () => {
    const { auth } = makeAuth();
    const unbound = await accessToken(undefined);
    await expectRefused(await auth.handle(request(`DPoP ${unbound}`, await proof(unbound, ENDPOINT))), 'DPoP', 'invalid_token', /not bound to a DPoP key \(no cnf\.jkt\)/);
    // The unbound token still works as Bearer.
    expect(await auth.handle(request(`Bearer ${unbound}`))).toBeUndefined();
    const token = await accessToken(clientKey.thumbprint);
    await expectRefused(await auth.handle(request(`DPoP ${token}`)), 'DPoP', 'invalid_dpop_proof', /needs a DPoP proof header/);
    await expectRefused(await auth.handle(request(`DPoP ${token}`, [await proof(token, ENDPOINT), await proof(token, ENDPOINT)])), 'DPoP', 'invalid_dpop_proof', /exactly one DPoP proof/);
  });

  it('puts insufficient_scope in the DPoP challenge for a bound token lacking the scope', async () => {
    const { auth } = makeAuth();
    const token = await accessToken(clientKey.thumbprint, ENDPOINT, 'skills:write');
    const answer = await auth.handle(request(`DPoP ${token}`, await proof(token, ENDPOINT)));
    expect(answer?.status).toBe(403);
    expect(challenges(answer!)).toMatchObject({ Bearer: { scope: 'skills:read' }, DPoP: { error: 'insufficient_scope', scope: 'skills:read' } });
    expect(challenges(answer!).Bearer!.error).toBeUndefined();
  });

  it('advertises DPoP in its metadata and offers both schemes when no token is sent', async () => {
    const { auth } = makeAuth();
    const metadata = (await (await auth.handle(new Request('http://127.0.0.1:4000/.well-known/oauth-protected-resource/mcp')))!.json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({ dpop_signing_alg_values_supported: ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512', 'EdDSA', 'Ed25519'], dpop_bound_access_tokens_required: false });
    const answer = await auth.handle(request(undefined));
    expect(answer?.status).toBe(401);
    const found = challenges(answer!);
    expect(found.Bearer).toEqual({ resource_metadata: 'http://127.0.0.1:4000/.well-known/oauth-protected-resource/mcp', scope: 'skills:read' });
    expect(found.DPoP).toEqual({ resource_metadata: 'http://127.0.0.1:4000/.well-known/oauth-protected-resource/mcp', scope: 'skills:read', algs: DPOP_ALGORITHMS.join(' ') });
  });
});
