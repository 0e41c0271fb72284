// skills-serve --auth-issuer in front of a real authorization server (oidc-provider): the
// 401 challenge and protected resource metadata, tokens accepted and refused (audience,
// expiry, scope, signature), DPoP-bound tokens (RFC 9449) presented with a proof, an issuer
// that is down at start, and a whole authorization code + PKCE sign-in driven by the $BROWSER
// script the client's sign-in tests use.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client, ClientCredentialsProvider, DpopSession, StreamableHTTPClientTransport, UnauthorizedError, withDpop, type OAuthClientInformationMixed, type OAuthClientMetadata, type OAuthClientProvider, type OAuthTokens } from '@modelcontextprotocol/client';
import { decodeJwt, generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitOf, stopChild } from '../support/children.js';
import { freePort, startHttpServe, type ListeningServer } from '../support/http-server.js';
import { OIDC_BROWSER, ROBOT_CLIENT, startOidcServer, startProtectedServe, type OidcServer } from '../support/oidc-server.js';
import { delay, waitFor } from '../support/poll.js';
import { EXAMPLES, listAllSkills, newClient, type ClientEra } from '../support/server-harness.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

const SCOPE = 'skills:read';
const OTHER_RESOURCE = 'http://127.0.0.1:9/other-mcp';
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } } };

/** Every token a test obtained: none may ever appear in skills-serve's log. */
const issuedTokens: string[] = [];

function post(url: string, token?: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(token !== undefined && { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(INIT),
  });
}

/** The parameters of the `scheme` challenge in a `WWW-Authenticate: Bearer k="v", ..., DPoP k="v", ...` header. */
function challengeOf(response: Response, scheme: 'Bearer' | 'DPoP' = 'Bearer'): Record<string, string> {
  const header = response.headers.get('www-authenticate') ?? '';
  expect(header).toMatch(/^Bearer .*, DPoP /);
  const part = header.split(/,\s*(?=(?:Bearer|DPoP) )/).find((one) => one.startsWith(`${scheme} `)) ?? '';
  return Object.fromEntries([...part.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((match) => [match[1]!, match[2]!.replace(/\\(.)/g, '$1')]));
}

/** A client credentials token bound to `session`'s key: the token request carries a DPoP proof (RFC 9449 §5). */
async function dpopTokenFor(oidc: OidcServer, resource: string, session: DpopSession): Promise<string> {
  const tokenUrl = `${oidc.issuer}/token`;
  const response = await fetch(tokenUrl, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${ROBOT_CLIENT.clientId}:${ROBOT_CLIENT.clientSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
      dpop: await session.buildProof({ htm: 'POST', htu: tokenUrl }),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope: SCOPE }),
  });
  const answer = (await response.json()) as { access_token: string; token_type: string; error?: string };
  expect(response.status, answer.error).toBe(200);
  expect(answer.token_type).toBe('DPoP');
  issuedTokens.push(answer.access_token);
  return answer.access_token;
}

function postWithDpop(url: string, token: string, proof: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `DPoP ${token}`, dpop: proof },
    body: JSON.stringify(INIT),
  });
}

async function connectWith(url: string, token: string, era: ClientEra): Promise<Client> {
  const client = newClient(era);
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: { token: async () => token } }));
  return client;
}

async function tokenFor(oidc: OidcServer, resource: string, scope: string | undefined = SCOPE): Promise<string> {
  const { access_token: token } = await oidc.clientCredentialsToken({ resource, ...(scope !== undefined && { scope }) });
  issuedTokens.push(token);
  return token;
}

describe('skills-serve --auth-issuer with oidc-provider', () => {
  let oidc: OidcServer;
  let serve: ListeningServer;

  beforeAll(async () => {
    oidc = await startOidcServer();
    serve = await startProtectedServe(oidc, EXAMPLES, { scope: SCOPE });
    oidc.addResource(OTHER_RESOURCE);
  });
  afterAll(async () => {
    await serve?.stop();
    await oidc?.close();
  });

  it('answers a request without a token with 401 and the challenge, and serves its metadata at both well-known paths', async () => {
    const origin = new URL(serve.url).origin;
    const refused = await post(serve.url);
    expect(refused.status).toBe(401);
    const challenge = challengeOf(refused);
    expect(challenge).toEqual({ resource_metadata: `${origin}/.well-known/oauth-protected-resource/mcp`, scope: SCOPE });
    // A GET (the 2025 notification stream) and a DELETE are just as protected.
    expect((await fetch(serve.url, { headers: { accept: 'text/event-stream' } })).status).toBe(401);
    expect((await fetch(serve.url, { method: 'DELETE' })).status).toBe(401);
    // A token of another kind than Bearer is no token.
    const basic = await fetch(serve.url, { method: 'POST', headers: { authorization: 'Basic dXNlcjpwYXNz', 'content-type': 'application/json' }, body: JSON.stringify(INIT) });
    expect(basic.status).toBe(401);
    expect(challengeOf(basic).error).toBeUndefined();

    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const response = await fetch(origin + path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await response.json()).toMatchObject({ resource: serve.url, authorization_servers: [oidc.issuer], scopes_supported: [SCOPE], bearer_methods_supported: ['header'] });
    }
    // The metadata names a server that really is the issuer.
    const discovery = (await (await fetch(`${oidc.issuer}/.well-known/openid-configuration`)).json()) as { issuer: string };
    expect(discovery.issuer).toBe(oidc.issuer);
  });

  it.each(['legacy', 'modern'] as const)('serves skills/list to the SDK client (%s era) with a client credentials token for this resource', async (era) => {
    const token = await tokenFor(oidc, serve.url);
    expect(decodeJwt(token)).toMatchObject({ iss: oidc.issuer, aud: serve.url, scope: SCOPE });
    const client = await connectWith(serve.url, token, era);
    try {
      const { skills } = await listAllSkills(client);
      expect(skills.length).toBeGreaterThan(0);
      expect(skills.map((skill) => skill.uri)).toContain('skill://acme/billing/refunds/SKILL.md');
    } finally {
      await client.close();
    }
  });

  it('serves skills/list for a DPoP-bound token from oidc-provider with a fresh proof, and refuses it as Bearer, replayed or from another key', async () => {
    // What the client sees first: the issuer and skills-serve both advertise DPoP.
    const discovery = (await (await fetch(`${oidc.issuer}/.well-known/openid-configuration`)).json()) as { dpop_signing_alg_values_supported?: string[] };
    expect(discovery.dpop_signing_alg_values_supported).toContain('ES256');
    const metadata = (await (await fetch(`${new URL(serve.url).origin}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({ dpop_bound_access_tokens_required: false });
    expect(metadata.dpop_signing_alg_values_supported).toContain('ES256');

    const session = await DpopSession.create({ alg: 'ES256' });
    const token = await dpopTokenFor(oidc, serve.url, session);
    expect(decodeJwt(token)).toMatchObject({ iss: oidc.issuer, aud: serve.url, scope: SCOPE, cnf: { jkt: session.thumbprint } });

    // The SDK's DPoP fetch wrapper: `Authorization: DPoP`, a fresh proof on every request (both eras: the 2025 one adds GET and DELETE).
    for (const era of ['legacy', 'modern'] as const) {
      const client = newClient(era);
      await client.connect(new StreamableHTTPClientTransport(new URL(serve.url), { authProvider: { token: async () => token }, fetch: withDpop(session, async () => token)(fetch) }));
      try {
        expect((await listAllSkills(client)).skills.map((skill) => skill.uri), era).toContain('skill://acme/billing/refunds/SKILL.md');
      } finally {
        await client.close();
      }
    }

    const proof = await session.buildProof({ htm: 'POST', htu: serve.url, accessToken: token });
    // Proofs are as secret as tokens for the minute they are good: the log check covers them too.
    issuedTokens.push(proof);
    expect((await postWithDpop(serve.url, token, proof)).status).toBe(200);
    const replayed = await postWithDpop(serve.url, token, proof);
    expect(replayed.status).toBe(401);
    expect(challengeOf(replayed, 'DPoP')).toMatchObject({ error: 'invalid_dpop_proof', error_description: 'the DPoP proof was used before (jti)' });

    const asBearer = await post(serve.url, token);
    expect(asBearer.status).toBe(401);
    expect(challengeOf(asBearer)).toMatchObject({ error: 'invalid_token', error_description: 'the token is bound to a DPoP key: present it with the DPoP scheme and a proof' });

    // A thief with the token but not the key signs proofs with a key of its own.
    const thief = await DpopSession.create({ alg: 'ES256' });
    const stolen = await postWithDpop(serve.url, token, await thief.buildProof({ htm: 'POST', htu: serve.url, accessToken: token }));
    expect(stolen.status).toBe(401);
    expect(challengeOf(stolen, 'DPoP')).toMatchObject({ error: 'invalid_token', error_description: 'the token is bound to another DPoP key than the proof' });

    // A proof for another URL is refused before the token is looked at.
    const elsewhere = await postWithDpop(serve.url, token, await session.buildProof({ htm: 'POST', htu: `${oidc.issuer}/mcp`, accessToken: token }));
    expect(challengeOf(elsewhere, 'DPoP')).toMatchObject({ error: 'invalid_dpop_proof', error_description: 'the DPoP proof is for another URL (htu)' });
  });

  it('refuses a token issued for another resource with 401 invalid_token', async () => {
    const token = await tokenFor(oidc, OTHER_RESOURCE);
    expect(decodeJwt(token).aud).toBe(OTHER_RESOURCE);
    const refused = await post(serve.url, token);
    expect(refused.status).toBe(401);
    expect(challengeOf(refused)).toMatchObject({ error: 'invalid_token', error_description: 'the token is for another resource', scope: SCOPE });
    // And the SDK client cannot get in with it either.
    await expect(connectWith(serve.url, token, 'legacy')).rejects.toThrow();
  });

  it('refuses a token once it has expired', async () => {
    oidc.accessTokenTtlS = 2;
    let token: string;
    try {
      token = await tokenFor(oidc, serve.url);
    } finally {
      oidc.accessTokenTtlS = 300;
    }
    const { exp } = decodeJwt(token);
    expect((await post(serve.url, token)).status).toBe(200);
    await delay(Math.max(0, exp! * 1000 - Date.now()) + 300);
    const refused = await post(serve.url, token);
    expect(refused.status).toBe(401);
    expect(challengeOf(refused)).toMatchObject({ error: 'invalid_token', error_description: 'the token has expired' });
  });

  it('answers a token without the required scope with 403 insufficient_scope', async () => {
    const token = await tokenFor(oidc, serve.url, 'skills:write');
    expect(decodeJwt(token)).toMatchObject({ aud: serve.url, scope: 'skills:write' });
    const refused = await post(serve.url, token);
    expect(refused.status).toBe(403);
    expect(challengeOf(refused)).toMatchObject({ error: 'insufficient_scope', scope: SCOPE, resource_metadata: `${new URL(serve.url).origin}/.well-known/oauth-protected-resource/mcp` });
    // With both scopes it passes: the check is "has the required one", not "has only it".
    expect((await post(serve.url, await tokenFor(oidc, serve.url, `skills:write ${SCOPE}`))).status).toBe(200);
  });

  it('refuses tokens signed by another key, unsigned, or with a symmetric algorithm', async () => {
    const genuine = decodeJwt(await tokenFor(oidc, serve.url));
    const { kid } = ((await (await fetch(`${oidc.issuer}/jwks`)).json()) as { keys: Array<{ kid: string }> }).keys[0]!;
    const { privateKey } = await generateKeyPair('RS256');
    const claims = { scope: SCOPE, client_id: 'skills-robot' };
    const forge = (keyId: string) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: keyId, typ: 'at+jwt' }).setIssuer(oidc.issuer).setAudience(serve.url).setIssuedAt().setExpirationTime('5m').setSubject(String(genuine.sub)).sign(privateKey);
    const forgedSameKid = await forge(kid);
    const forgedOtherKid = await forge('not-a-key-of-the-issuer');
    const unsigned = new UnsecuredJWT(claims).setIssuer(oidc.issuer).setAudience(serve.url).setExpirationTime('5m').encode();
    const symmetric = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid }).setIssuer(oidc.issuer).setAudience(serve.url).setExpirationTime('5m').sign(new TextEncoder().encode('a-shared-secret-of-32-bytes-long!'));
    for (const [what, token] of Object.entries({ forgedSameKid, forgedOtherKid, unsigned, symmetric, garbage: 'not-a-jwt' })) {
      const refused = await post(serve.url, token);
      expect(refused.status, what).toBe(401);
      expect(challengeOf(refused).error, what).toBe('invalid_token');
    }
  });

  it('signs in by authorization code + PKCE through the $BROWSER script, refreshes with rotation, and loses the grant when revoked', async () => {
    const received: URL[] = [];
    const listener: Server = createServer((req, res) => {
      received.push(new URL(req.url ?? '/', 'http://127.0.0.1'));
      res.writeHead(200, { 'content-type': 'text/plain' }).end('signed in; you may close this window\n');
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const redirectUri = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/callback`;
    const recordDir = await makeTempDir('oidc-browser-');
    try {
      // Dynamic client registration (RFC 7591), as a client with no pre-registered id does.
      const registered = await fetch(`${oidc.issuer}/reg`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], client_name: 'test' }),
      });
      expect(registered.status).toBe(201);
      const { client_id: clientId } = (await registered.json()) as { client_id: string };
      expect(oidc.registeredClients).toContain(clientId);

      const authorize = async (params: Record<string, string>, env: Record<string, string> = {}): Promise<URL> => {
        const before = received.length;
        const url = `${oidc.issuer}/auth?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope: SCOPE, resource: serve.url, ...params })}`;
        const browser = spawn(process.execPath, [OIDC_BROWSER, url], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
        let stderr = '';
        browser.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        try {
          const exit = await Promise.race([exitOf(browser), delay(20_000).then(() => 'timeout' as const)]);
          expect(exit, stderr).toEqual({ code: 0, signal: null });
        } finally {
          await stopChild(browser);
        }
        expect(received.length, stderr).toBe(before + 1);
        // The browser said where it went, never with the code.
        expect(stderr).not.toMatch(/code=/);
        return received.at(-1)!;
      };

      // PKCE is required: without a challenge the server sends the browser back with an error.
      const withoutPkce = await authorize({ state: 'no-pkce' });
      expect(withoutPkce.searchParams.get('error')).toBe('invalid_request');
      expect(withoutPkce.searchParams.get('code')).toBeNull();

      // The user presses Cancel: access_denied reaches the client.
      const verifier = randomBytes(32).toString('base64url');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const denied = await authorize({ state: 'denied', code_challenge: challenge, code_challenge_method: 'S256' }, { OIDC_BROWSER_ACTION: 'deny' });
      expect(denied.searchParams.get('error')).toBe('access_denied');

      const state = randomBytes(16).toString('base64url');
      const record = join(recordDir, 'urls');
      const redirect = await authorize({ state, code_challenge: challenge, code_challenge_method: 'S256' }, { OIDC_BROWSER_RECORD: record, OIDC_BROWSER_LOGIN: 'bob' });
      expect(redirect.pathname).toBe('/callback');
      expect(redirect.searchParams.get('state')).toBe(state);
      // RFC 9207: the authorization server names itself in the response.
      expect(redirect.searchParams.get('iss')).toBe(oidc.issuer);
      const code = redirect.searchParams.get('code');
      expect(code).toBeTruthy();
      expect((await readFile(record, 'utf8')).trim().split('\n').at(-1)).toContain(`resource=${encodeURIComponent(serve.url)}`);
      expect(oidc.authorizationRequests.at(-1)?.get('code_challenge_method')).toBe('S256');

      const tokenRequest = async (params: Record<string, string>): Promise<{ status: number; body: Record<string, string> }> => {
        const response = await fetch(`${oidc.issuer}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: clientId, ...params }) });
        return { status: response.status, body: (await response.json()) as Record<string, string> };
      };
      const tokens = await tokenRequest({ grant_type: 'authorization_code', code: code!, code_verifier: verifier, redirect_uri: redirectUri, resource: serve.url });
      expect(tokens.status, JSON.stringify(tokens.body.error)).toBe(200);
      issuedTokens.push(tokens.body.access_token!, tokens.body.refresh_token!);
      expect(decodeJwt(tokens.body.access_token!)).toMatchObject({ iss: oidc.issuer, aud: serve.url, sub: 'bob', scope: SCOPE });
      expect(tokens.body.refresh_token).toBeTruthy();

      const client = await connectWith(serve.url, tokens.body.access_token!, 'modern');
      try {
        expect((await listAllSkills(client)).skills.length).toBeGreaterThan(0);
      } finally {
        await client.close();
      }

      // Refresh: a new refresh token each time; the old one is dead.
      const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token!, resource: serve.url });
      expect(refreshed.status, JSON.stringify(oidc.tokenErrors.at(-1))).toBe(200);
      issuedTokens.push(refreshed.body.access_token!, refreshed.body.refresh_token!);
      expect(refreshed.body.refresh_token).not.toBe(tokens.body.refresh_token);
      expect(decodeJwt(refreshed.body.access_token!).aud).toBe(serve.url);
      expect((await post(serve.url, refreshed.body.access_token!)).status).toBe(200);
      // Rotation with reuse detection: the old refresh token is refused, and presenting it revokes the grant.
      expect((await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token! })).body.error).toBe('invalid_grant');
      expect((await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token! })).body.error).toBe('invalid_grant');
      expect(oidc.liveRefreshTokens('bob')).toBe(0);
      expect(oidc.tokenGrants.map((grant) => grant.grantType)).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
      // The code was single-use.
      expect((await tokenRequest({ grant_type: 'authorization_code', code: code!, code_verifier: verifier, redirect_uri: redirectUri, resource: serve.url })).body.error).toBe('invalid_grant');

      // What the helpers revoke: one refresh token (and its grant), then every grant of an account.
      const signIn = async (login: string): Promise<Record<string, string>> => {
        const pkce = randomBytes(32).toString('base64url');
        const back = await authorize({ state: login, code_challenge: createHash('sha256').update(pkce).digest('base64url'), code_challenge_method: 'S256' }, { OIDC_BROWSER_LOGIN: login });
        const answer = await tokenRequest({ grant_type: 'authorization_code', code: back.searchParams.get('code') ?? '', code_verifier: pkce, redirect_uri: redirectUri, resource: serve.url });
        expect(answer.status, JSON.stringify(oidc.tokenErrors.at(-1))).toBe(200);
        issuedTokens.push(answer.body.access_token!, answer.body.refresh_token!);
        return answer.body;
      };
      const second = await signIn('bob');
      expect(oidc.liveRefreshTokens('bob')).toBe(1);
      expect(await oidc.revokeRefreshToken(second.refresh_token!)).toBe(true);
      expect(await oidc.revokeRefreshToken('no-such-token')).toBe(false);
      expect(oidc.liveRefreshTokens('bob')).toBe(0);
      expect((await tokenRequest({ grant_type: 'refresh_token', refresh_token: second.refresh_token! })).body.error).toBe('invalid_grant');
      const third = await signIn('carol');
      expect(await oidc.revokeAccount('carol')).toBe(1);
      expect(oidc.liveRefreshTokens('carol')).toBe(0);
      expect((await tokenRequest({ grant_type: 'refresh_token', refresh_token: third.refresh_token! })).body.error).toBe('invalid_grant');
      // The revocation endpoint (RFC 7009), as a client's sign-out calls it: a public client names itself.
      const fourth = await signIn('dave');
      const revoked = await fetch(`${oidc.issuer}/token/revocation`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: fourth.refresh_token!, token_type_hint: 'refresh_token', client_id: clientId }) });
      expect(revoked.status).toBe(200);
      expect((await tokenRequest({ grant_type: 'refresh_token', refresh_token: fourth.refresh_token! })).body.error).toBe('invalid_grant');
    } finally {
      listener.closeAllConnections();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
      await removeDir(recordDir);
    }
  });

  it("signs in with the SDK v2 client's own OAuth flow (discovery from the 401, registration, code + PKCE via the browser script)", async () => {
    const callbacks: URLSearchParams[] = [];
    const listener: Server = createServer((req, res) => {
      callbacks.push(new URL(req.url ?? '/', 'http://127.0.0.1').searchParams);
      res.writeHead(200).end('ok\n');
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const redirectUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/callback`;
    const browsers: Array<Promise<unknown>> = [];
    let client: OAuthClientInformationMixed | undefined;
    let tokens: OAuthTokens | undefined;
    let verifier = '';
    const provider: OAuthClientProvider = {
      get redirectUrl() {
        return redirectUrl;
      },
      get clientMetadata(): OAuthClientMetadata {
        return { client_name: 'skills-mount test', redirect_uris: [redirectUrl], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
      },
      state: () => 'sdk-state',
      clientInformation: () => client,
      saveClientInformation: (information) => void (client = information),
      tokens: () => tokens,
      saveTokens: (saved) => void (tokens = saved),
      redirectToAuthorization: (url) => {
        const browser = spawn(process.execPath, [OIDC_BROWSER, url.href], { stdio: 'ignore' });
        browsers.push(exitOf(browser));
      },
      saveCodeVerifier: (saved) => void (verifier = saved),
      codeVerifier: () => verifier,
    };
    try {
      const first = newClient('modern');
      const refused = await first.connect(new StreamableHTTPClientTransport(new URL(serve.url), { authProvider: provider })).then(() => undefined, (error: unknown) => error);
      expect(refused, String(refused)).toBeInstanceOf(UnauthorizedError);
      expect(await browsers[0]).toEqual({ code: 0, signal: null });
      const callback = callbacks.at(-1)!;
      expect(callback.get('state')).toBe('sdk-state');
      // What the SDK asked for: this resource, the challenge's scope, S256.
      const asked = oidc.authorizationRequests.at(-1)!;
      expect(asked.get('resource')).toBe(serve.url);
      expect(asked.get('scope')).toContain(SCOPE);
      expect(asked.get('code_challenge_method')).toBe('S256');
      const transport = new StreamableHTTPClientTransport(new URL(serve.url), { authProvider: provider });
      await transport.finishAuth(callback);
      expect(tokens?.access_token).toBeTruthy();
      issuedTokens.push(tokens!.access_token, ...(tokens!.refresh_token ? [tokens!.refresh_token] : []));
      expect(decodeJwt(tokens!.access_token)).toMatchObject({ aud: serve.url, iss: oidc.issuer });
      const signedIn = newClient('modern');
      await signedIn.connect(transport);
      try {
        expect((await listAllSkills(signedIn)).skills.length).toBeGreaterThan(0);
      } finally {
        await signedIn.close();
      }
    } finally {
      listener.closeAllConnections();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    }
  });

  it("gets in with the SDK v2 client's ClientCredentialsProvider", async () => {
    const client = newClient('legacy');
    await client.connect(new StreamableHTTPClientTransport(new URL(serve.url), { authProvider: new ClientCredentialsProvider({ clientId: ROBOT_CLIENT.clientId, clientSecret: ROBOT_CLIENT.clientSecret, scope: SCOPE }) }));
    try {
      expect((await listAllSkills(client)).skills.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it('never writes a token to its log', async () => {
    expect(issuedTokens.length).toBeGreaterThan(3);
    const log = serve.log();
    expect(log).toContain(`auth: issuer ${oidc.issuer} ready`);
    for (const token of issuedTokens) {
      expect(log).not.toContain(token);
      // Nor its signature alone.
      expect(log).not.toContain(token.split('.')[2]);
    }
  });
});

describe('skills-serve --auth-issuer when the issuer is down at start', () => {
  let serve: ListeningServer | undefined;
  let oidc: OidcServer | undefined;
  afterAll(async () => {
    await serve?.stop();
    await oidc?.close();
  });

  it('starts, says why, answers 401 without a token and 503 with one, and accepts tokens once the issuer answers', async () => {
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    serve = await startHttpServe([EXAMPLES, '--auth-issuer', issuer, '--auth-scope', SCOPE]);
    await waitFor(() => serve!.log().includes(`auth: issuer ${issuer} unavailable`), 10_000, 'the log line about the issuer');
    expect(serve.log()).toMatch(new RegExp(`auth: issuer ${issuer} unavailable: GET ${issuer}/\\.well-known/oauth-authorization-server: .*ECONNREFUSED.*requests with a token get 503`));

    expect((await post(serve.url)).status).toBe(401);
    const unchecked = await post(serve.url, (await new SignJWT({}).setProtectedHeader({ alg: 'RS256' }).sign((await generateKeyPair('RS256')).privateKey)));
    expect(unchecked.status).toBe(503);
    expect(unchecked.headers.get('retry-after')).toBeTruthy();
    expect(((await unchecked.json()) as { error: { message: string } }).error.message).toContain(issuer);

    // The issuer comes up: within the backoff, tokens are checked and accepted.
    oidc = await startOidcServer({ port });
    oidc.addResource(serve.url);
    const token = await tokenFor(oidc, serve.url);
    let status = 0;
    await waitFor(async () => (status = (await post(serve!.url, token)).status) === 200, 15_000, `a 200 once the issuer answers (last ${status})`);
    expect(serve.log()).toContain(`auth: issuer ${issuer} answers again`);
    expect(serve.child.exitCode).toBeNull();
    expect(serve.log()).not.toContain(token);
  });
});

describe('skills-serve --auth-* usage errors', () => {
  it.each([
    [['--auth-issuer', 'http://idp.example.com'], /must be an https URL/],
    [['--auth-issuer', 'https://idp.example.com/?tenant=1'], /no query or fragment/],
    [['--auth-audience', 'https://skills.example.com/mcp'], /--auth-audience needs --auth-issuer/],
    [['--auth-issuer', 'https://idp.example.com', '--auth-scope', 'a"b'], /not a scope/],
    [['--auth-issuer', 'https://idp.example.com', '--http', '0.0.0.0:0'], /--auth-audience is required when bound to 0\.0\.0\.0/],
  ])('%j exits 2 with why', async (args, why) => {
    const { SKILLS_SERVE } = await import('../support/http-server.js');
    const withHttp = args.includes('--http') ? args : [...args, '--http', '127.0.0.1:0'];
    const child = spawn(process.execPath, [SKILLS_SERVE, EXAMPLES, ...withHttp], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exit = await Promise.race([exitOf(child), delay(10_000).then(() => stopChild(child))]);
    expect(exit.code, stderr).toBe(2);
    expect(stderr).toMatch(why);
  });

  it('refuses --auth-issuer over stdio', async () => {
    const { SKILLS_SERVE } = await import('../support/http-server.js');
    const child = spawn(process.execPath, [SKILLS_SERVE, EXAMPLES, '--auth-issuer', 'https://idp.example.com'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exit = await Promise.race([exitOf(child), delay(10_000).then(() => stopChild(child))]);
    expect(exit.code, stderr).toBe(2);
    expect(stderr).toContain('--auth-issuer needs --http');
  });
});
