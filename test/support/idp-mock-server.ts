// oauth2-mock-server (npm, nobody here wrote it) as an authorization server for the sign-in
// interop test, on 127.0.0.1 and a random port. Out of the box it signs JWTs with keys it
// publishes (OpenID discovery only, no RFC 8414 document, no dynamic registration: the client
// is pre-registered by name), redirects /authorize at once with a code (PKCE S256 checked), and
// accepts any refresh token. Its hooks (its documented way to shape what it issues) make its
// tokens usable by a resource server: the access token names the resource asked for (`aud`,
// RFC 8707) and the scope asked for at /authorize, and lives `accessTokenTtlS`; the refresh tokens
// it issues are tracked per grant so that a dropped or revoked grant's refresh token is refused
// (invalid_grant); POST /revoke (which it answers 200 and forgets) revokes the grant of the token.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OAuth2Issuer, OAuth2Service } from 'oauth2-mock-server';
import type { InteropProvider, InteropRequest } from './idp-scenario.js';
import { OIDC_BROWSER } from './oidc-server.js';

/** The client name login uses with it (it has no registration endpoint). */
export const MOCK_CLIENT_ID = 'skills-mount-interop';

interface Grant {
  clientId: string;
  scope: string;
  resource: string;
  live: boolean;
}

type TokenRequest = IncomingMessage & { body: Record<string, unknown> };

export interface MockServer extends InteropProvider {
  /** Token requests refused, with why. */
  readonly refusals: string[];
  /** Revocation requests received: the token type hint and whether the token was one it issued. */
  readonly revocations: Array<{ hint: string | undefined; known: boolean }>;
}

function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => resolve(new URLSearchParams(text)));
    req.on('error', reject);
  });
}

/** Starts oauth2-mock-server, hooked as the note at the top says. */
export async function startMockServer({ accessTokenTtlS }: InteropRequest): Promise<MockServer> {
  const issuer = new OAuth2Issuer();
  await issuer.keys.generate('RS256');
  const service = new OAuth2Service(issuer);
  const grantsByCode = new Map<string, Grant>();
  const grantsByRefreshToken = new Map<string, Grant>();
  const refusals: string[] = [];
  const revocations: Array<{ hint: string | undefined; known: boolean }> = [];
  let refreshGrants = 0;
  // The first token signed for a token request is its access token (the ID token comes second).
  const signed = new WeakSet<IncomingMessage>();

  const grantOf = (req: TokenRequest): Grant | undefined => {
    const body = req.body;
    if (body['grant_type'] === 'authorization_code') return grantsByCode.get(String(body['code']));
    if (body['grant_type'] === 'refresh_token') return grantsByRefreshToken.get(String(body['refresh_token']));
    return undefined;
  };

  service.on('beforeAuthorizeRedirect', ({ url }: { url: URL }, req: IncomingMessage & { query: Record<string, unknown> }) => {
    const code = url.searchParams.get('code');
    if (code === null) return;
    const { scope, resource, client_id: clientId } = req.query;
    grantsByCode.set(code, { clientId: String(clientId ?? ''), scope: typeof scope === 'string' ? scope : '', resource: typeof resource === 'string' ? resource : '', live: true });
  });
  service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }, req: TokenRequest) => {
    if (signed.has(req)) return;
    signed.add(req);
    const grant = grantOf(req);
    const now = Math.floor(Date.now() / 1000);
    token.payload['exp'] = now + accessTokenTtlS;
    if (grant === undefined) return;
    token.payload['aud'] = grant.resource;
    token.payload['scope'] = grant.scope;
    token.payload['client_id'] = grant.clientId;
  });
  service.on('beforeResponse', (response: { body: Record<string, unknown>; statusCode: number }, req: TokenRequest) => {
    const grantType = req.body['grant_type'];
    if (grantType !== 'authorization_code' && grantType !== 'refresh_token') return;
    const grant = grantOf(req);
    const clientId = String(req.body['client_id'] ?? '');
    let refusal: string | undefined;
    if (grant === undefined) refusal = `unknown ${grantType === 'refresh_token' ? 'refresh token' : 'code'}`;
    else if (!grant.live) refusal = 'the grant was revoked or its refresh tokens dropped';
    else if (grant.clientId !== clientId) refusal = `issued to client ${grant.clientId}, presented by ${clientId}`;
    if (refusal !== undefined) {
      refusals.push(`${String(grantType)}: ${refusal}`);
      response.statusCode = 400;
      response.body = { error: 'invalid_grant', error_description: refusal };
      return;
    }
    if (grantType === 'authorization_code') grantsByCode.delete(String(req.body['code']));
    else refreshGrants += 1;
    response.body['expires_in'] = accessTokenTtlS;
    response.body['scope'] = grant!.scope;
    const refreshToken = randomUUID();
    response.body['refresh_token'] = refreshToken;
    grantsByRefreshToken.set(refreshToken, grant!);
  });

  const handle = service.requestHandler;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const { pathname } = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'POST' && pathname === '/revoke') {
      // The mock answers 200 and reads no body: note the token and revoke its grant first.
      readForm(req).then(
        (form) => {
          const grant = grantsByRefreshToken.get(form.get('token') ?? '');
          revocations.push({ hint: form.get('token_type_hint') ?? undefined, known: grant !== undefined });
          if (grant) grant.live = false;
          (req as IncomingMessage & { _body?: boolean })._body = true;
          handle(req, res);
        },
        () => res.writeHead(400).end(),
      );
      return;
    }
    handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  issuer.url = origin;

  return {
    issuer: origin,
    tokenEndpoint: `${origin}/token`,
    oauth: { clientId: MOCK_CLIENT_ID },
    browser: `${process.execPath} ${OIDC_BROWSER}`,
    refusals,
    revocations,
    refreshGrants: async () => refreshGrants,
    async dropRefreshTokens() {
      for (const grant of grantsByRefreshToken.values()) grant.live = false;
    },
    diagnostics: () => `refused: ${JSON.stringify(refusals)}; revocations: ${JSON.stringify(revocations)}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
