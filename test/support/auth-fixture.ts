// A small authorization server and a protected MCP skills server in this process, for the
// client's sign-in tests: RFC 9728 metadata, RFC 8414 metadata, dynamic registration, an
// authorization endpoint that approves at once (a 302 to the redirect URI with code, state and
// iss), PKCE-checked code exchange, rotating refresh tokens, revocation. Every token it issues
// is recorded, so a test can grep logs for them. Hostile and forgetful variants are switches:
// exact redirect URI matching, clients forgotten (a restart), OpenID discovery only, DPoP
// advertised, a file: authorization endpoint, a plain-http authorization server, a foreign
// revocation endpoint, an unknown token type, a resource that names no scope.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSkillsHttpHandler, SkillsService, SkillTree, sendWebResponse, toWebRequest, type SkillsHttpHandler } from '../../src/server/index.js';
import { EXAMPLES } from './server-harness.js';

export interface AuthFixtureOptions {
  /** The issuer the metadata claims (default: the server's own URL). */
  claimedIssuer?: string;
  /** Replaces the metadata document with this body (huge, not JSON, ...). */
  metadataBody?: string;
  /** The token endpoint never answers. */
  tokenHangs?: boolean;
  /** Access token lifetime (default 3600 s). */
  accessTokenTtlS?: number;
  /** resources/read needs this scope too (a 403 insufficient_scope without it): a step-up. */
  scopeForRead?: string;
  /** The authorization endpoint refuses (400, as the SDK's example server) a redirect_uri the client did not register. */
  exactRedirects?: boolean;
  /** The authorization endpoint sends the browser back with this error (access_denied: the person declined). */
  authorizationError?: string;
  /** Clients registered beforehand (a config's clientId), by client ID, with their redirect URIs. */
  preRegistered?: Record<string, string[]>;
  /** Only OpenID discovery (/.well-known/openid-configuration); RFC 8414's document is 404. */
  openIdOnly?: boolean;
  /** Advertised as dpop_signing_alg_values_supported (tokens stay Bearer: only the proofs are counted). */
  dpopAlgs?: string[];
  /** The authorization_endpoint the metadata names instead of its own (a file: URL, say). */
  authorizationEndpoint?: string;
  /** The revocation_endpoint the metadata names instead of its own. */
  revocationEndpoint?: string;
  /** The token_type the token endpoint answers (default Bearer). */
  tokenType?: string;
  /** The resource names no scope: no scopes_supported in its metadata, no scope in its challenge. */
  noResourceScope?: boolean;
  /** The authorization server the resource metadata names, from this server's origin (default: that origin). */
  advertisedAuthServer?: (origin: string) => string;
}

export interface AuthFixture {
  /** The protected MCP endpoint. */
  mcpUrl: string;
  issuer: string;
  /** Every access and refresh token issued so far. */
  issued: string[];
  /** Requests to /mcp answered 401. */
  unauthorizedCount(): number;
  tokenRequests(): number;
  /** Tokens revoked at the revocation endpoint (RFC 7009). */
  revocations(): number;
  /** Revokes every refresh token issued so far (the person signed out elsewhere). */
  revokeRefreshTokens(): void;
  /** Forgets every registered client and every token (a restart of a server that keeps them in memory). */
  forgetClients(): void;
  /** Clients registered so far (dynamic registration requests answered). */
  registrations(): number;
  /** The redirect_uris each registration asked for, in order. */
  registeredRedirects(): string[][];
  /** Every request the authorization server received (method and path). */
  requests(): string[];
  /** The query of each authorization request, in order (the browser's, and any other GET). */
  authorizationRequests(): URLSearchParams[];
  /** Token requests that carried a DPoP proof. */
  dpopProofs(): number;
  /** Expires every access token now. */
  expireAccessTokens(): void;
  close(): Promise<void>;
}

interface Code {
  clientId: string;
  challenge: string;
  redirectUri: string;
  resource: string | null;
  scope: string;
}

export async function startAuthFixture(options: AuthFixtureOptions = {}): Promise<AuthFixture> {
  const issued: string[] = [];
  const codes = new Map<string, Code>();
  const access = new Map<string, { expiresAtMs: number; scope: string }>();
  const refresh = new Map<string, string>(); // refresh token -> scope
  const clients = new Map<string, string[]>(); // client ID -> registered redirect URIs
  for (const [clientId, redirects] of Object.entries(options.preRegistered ?? {})) clients.set(clientId, redirects);
  const registered: string[][] = [];
  const requests: string[] = [];
  const authorizations: URLSearchParams[] = [];
  let dpopProofs = 0;
  let unauthorized = 0;
  let tokenRequests = 0;
  let revocations = 0;
  const ttlS = options.accessTokenTtlS ?? 3600;
  const hanging: ServerResponse[] = [];

  const as = await listen(async (req, res, ownBase) => {
    // Named by another address (advertisedAuthServer), it answers as that address.
    const base = options.advertisedAuthServer ? `http://${req.headers.host}` : ownBase;
    const url = new URL(req.url ?? '/', base);
    requests.push(`${req.method} ${url.pathname}`);
    const metadata = {
      issuer: options.claimedIssuer ?? base,
      authorization_endpoint: options.authorizationEndpoint ?? `${base}/authorize`,
      token_endpoint: `${base}/token`,
      registration_endpoint: `${base}/register`,
      revocation_endpoint: options.revocationEndpoint ?? `${base}/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      scopes_supported: ['skills:read', 'offline_access'],
      authorization_response_iss_parameter_supported: true,
      ...(options.dpopAlgs ? { dpop_signing_alg_values_supported: options.dpopAlgs } : {}),
    };
    if (url.pathname === '/.well-known/oauth-authorization-server') {
      if (options.metadataBody !== undefined) return send(res, 200, options.metadataBody, 'application/json');
      if (options.openIdOnly) return send(res, 404, 'not found', 'text/plain');
      return json(res, 200, metadata);
    }
    if (url.pathname === '/.well-known/openid-configuration' && options.openIdOnly) {
      return json(res, 200, { ...metadata, jwks_uri: `${base}/jwks`, subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'] });
    }
    if (url.pathname === '/register' && req.method === 'POST') {
      const body = JSON.parse(await read(req)) as Record<string, unknown>;
      const clientId = `client-${randomBytes(6).toString('hex')}`;
      const redirects = Array.isArray(body.redirect_uris) ? body.redirect_uris.map(String) : [];
      clients.set(clientId, redirects);
      registered.push(redirects);
      return json(res, 201, { ...body, client_id: clientId, token_endpoint_auth_method: 'none' });
    }
    if (url.pathname === '/authorize') {
      const q = url.searchParams;
      authorizations.push(q);
      const clientId = q.get('client_id') ?? '';
      if (!clients.has(clientId) || q.get('code_challenge_method') !== 'S256') return send(res, 400, 'bad request', 'text/plain');
      // RFC 6749 §4.1.2.1: a redirect_uri that is not the client's is told to the person, never redirected to.
      if (options.exactRedirects && !clients.get(clientId)!.includes(q.get('redirect_uri') ?? '')) {
        return json(res, 400, { error: 'invalid_request', error_description: 'Unregistered redirect_uri' });
      }
      if (options.authorizationError !== undefined) {
        const back = new URL(q.get('redirect_uri') ?? '');
        back.searchParams.set('error', options.authorizationError);
        back.searchParams.set('error_description', 'The person declined\nto sign in');
        if (q.get('state') !== null) back.searchParams.set('state', q.get('state')!);
        back.searchParams.set('iss', options.claimedIssuer ?? base);
        res.writeHead(302, { Location: back.href }).end();
        return;
      }
      const code = randomBytes(16).toString('hex');
      codes.set(code, { clientId, challenge: q.get('code_challenge') ?? '', redirectUri: q.get('redirect_uri') ?? '', resource: q.get('resource'), scope: q.get('scope') ?? 'skills:read' });
      const target = new URL(q.get('redirect_uri') ?? '');
      target.searchParams.set('code', code);
      if (q.get('state') !== null) target.searchParams.set('state', q.get('state')!);
      target.searchParams.set('iss', options.claimedIssuer ?? base);
      res.writeHead(302, { Location: target.href }).end();
      return;
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      tokenRequests += 1;
      if (req.headers.dpop !== undefined) dpopProofs += 1;
      if (options.tokenHangs) {
        hanging.push(res);
        return;
      }
      const params = new URLSearchParams(await read(req));
      if (!clients.has(params.get('client_id') ?? '')) return json(res, 401, { error: 'invalid_client', error_description: 'client unknown' });
      if (params.get('grant_type') === 'authorization_code') {
        const code = codes.get(params.get('code') ?? '');
        codes.delete(params.get('code') ?? '');
        const verifier = params.get('code_verifier') ?? '';
        if (!code || createHash('sha256').update(verifier).digest('base64url') !== code.challenge || params.get('redirect_uri') !== code.redirectUri) {
          return json(res, 400, { error: 'invalid_grant' });
        }
        return json(res, 200, issue(code.scope));
      }
      if (params.get('grant_type') === 'refresh_token') {
        const token = params.get('refresh_token') ?? '';
        const scope = refresh.get(token);
        if (scope === undefined || !refresh.delete(token)) return json(res, 400, { error: 'invalid_grant', error_description: 'refresh token unknown, used or revoked' });
        return json(res, 200, issue(scope));
      }
      return json(res, 400, { error: 'unsupported_grant_type' });
    }
    if (url.pathname === '/revoke' && req.method === 'POST') {
      const params = new URLSearchParams(await read(req));
      if (refresh.delete(params.get('token') ?? '') || access.delete(params.get('token') ?? '')) revocations += 1;
      return send(res, 200, '', 'text/plain');
    }
    send(res, 404, 'not found', 'text/plain');
  });

  function issue(scope: string): Record<string, unknown> {
    const accessToken = `at-${randomBytes(18).toString('base64url')}`;
    const refreshToken = `rt-${randomBytes(18).toString('base64url')}`;
    issued.push(accessToken, refreshToken);
    access.set(accessToken, { expiresAtMs: Date.now() + ttlS * 1000, scope });
    refresh.set(refreshToken, scope);
    return { access_token: accessToken, token_type: options.tokenType ?? 'Bearer', expires_in: ttlS, refresh_token: refreshToken, scope };
  }

  const tree = await SkillTree.open({ root: EXAMPLES, watch: false });
  const service = new SkillsService(tree);
  let handler: SkillsHttpHandler | undefined;
  const mcp = await listen(async (req, res, base) => {
    const url = new URL(req.url ?? '/', base);
    const metadataUrl = `${base}/.well-known/oauth-protected-resource/mcp`;
    if (url.pathname === '/.well-known/oauth-protected-resource/mcp') {
      const authorizationServer = options.advertisedAuthServer?.(as.url) ?? as.url;
      return json(res, 200, { resource: `${base}/mcp`, authorization_servers: [authorizationServer], ...(options.noResourceScope ? {} : { scopes_supported: ['skills:read'] }) });
    }
    if (url.pathname !== '/mcp') return send(res, 404, 'not found', 'text/plain');
    const header = req.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7) : '';
    const granted = access.get(token);
    if (granted === undefined || granted.expiresAtMs <= Date.now()) {
      unauthorized += 1;
      res.writeHead(401, { 'WWW-Authenticate': `Bearer resource_metadata="${metadataUrl}"${options.noResourceScope ? '' : ', scope="skills:read"'}`, 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_token' }));
      return;
    }
    handler ??= createSkillsHttpHandler(service, { loopbackOnly: true });
    const { request, body } = await toWebRequest(req, res, 4 * 1024 * 1024);
    const method = body === undefined ? undefined : (JSON.parse(body.toString('utf8') || '{}') as { method?: string }).method;
    if (options.scopeForRead !== undefined && method === 'resources/read' && !granted.scope.split(' ').includes(options.scopeForRead)) {
      res.writeHead(403, { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="skills:read ${options.scopeForRead}", resource_metadata="${metadataUrl}"`, 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: 'insufficient_scope' }));
      return;
    }
    await sendWebResponse(res, await handler.handle(request, body));
  });

  return {
    mcpUrl: `${mcp.url}/mcp`,
    issuer: as.url,
    issued,
    unauthorizedCount: () => unauthorized,
    tokenRequests: () => tokenRequests,
    revocations: () => revocations,
    revokeRefreshTokens: () => refresh.clear(),
    forgetClients: () => {
      clients.clear();
      codes.clear();
      access.clear();
      refresh.clear();
    },
    registrations: () => registered.length,
    registeredRedirects: () => registered.map((redirects) => [...redirects]),
    requests: () => [...requests],
    authorizationRequests: () => [...authorizations],
    dpopProofs: () => dpopProofs,
    expireAccessTokens: () => {
      for (const granted of access.values()) granted.expiresAtMs = 0;
    },
    async close() {
      for (const res of hanging) res.destroy();
      await handler?.close();
      service.close();
      tree.close();
      await Promise.all([as.close(), mcp.close()]);
    },
  };
}

async function listen(handle: (req: IncomingMessage, res: ServerResponse, base: string) => Promise<void> | void): Promise<{ url: string; close(): Promise<void> }> {
  let base = '';
  const server: Server = createServer((req, res) => {
    void Promise.resolve(handle(req, res, base)).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, String(error), 'text/plain');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function read(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => resolve(body)).on('error', reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, JSON.stringify(body), 'application/json');
}

function send(res: ServerResponse, status: number, body: string, type: string): void {
  res.writeHead(status, { 'Content-Type': type }).end(body);
}
