// An authorization server in this process that issues signed JWT access tokens (jose, RS256),
// for sign-in tests in front of a real `skills-serve --auth-issuer`: RFC 8414 metadata, a key
// set, dynamic registration, an authorization endpoint that approves at once (a 302 to the
// redirect URI with code, state and iss), PKCE-checked code exchange, refresh, and the
// client_credentials grant. Its faults are switches: it ignores `resource` (tokens for another
// audience), issues opaque tokens, offers no registration, answers client authentication with
// a hostile error_description, or sends the browser back with an error.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

export interface JwtAuthServerOptions {
  /** Tokens name this audience whatever `resource` the client asked for (an AS that ignores RFC 8707). */
  ignoreResource?: boolean;
  /** Access tokens are random strings, not JWTs. */
  opaqueTokens?: boolean;
  /** No registration_endpoint in the metadata (clients must be registered beforehand). */
  registration?: boolean;
  /** Clients registered beforehand: client_id -> client_secret ('' for a public client). */
  clients?: Record<string, string>;
  /** client_credentials with a wrong secret is answered 401 invalid_client with this description. */
  invalidClientDescription?: string;
  /**
   * The person at the browser (a request with a session cookie) is sent back with this error
   * instead of a code (pressed Cancel); a visitor without one gets the login page.
   */
  authorizeError?: { error: string; description: string };
  /** Scope of every token (default "skills:read"). */
  scope?: string;
}

export interface JwtAuthServer {
  issuer: string;
  /** Every access and refresh token issued so far. */
  issued: string[];
  /** The `resource` of each token request (null when absent). */
  resourcesAsked: Array<string | null>;
  tokenRequests(): number;
  close(): Promise<void>;
}

interface Code {
  clientId: string;
  challenge: string;
  redirectUri: string;
  resource: string | null;
}

/** The audience tokens get when the server ignores `resource`. */
export const OTHER_AUDIENCE = 'https://some-other-api.example.com/';

export async function startJwtAuthServer(options: JwtAuthServerOptions = {}): Promise<JwtAuthServer> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const clients = new Map<string, string>(Object.entries(options.clients ?? {}));
  const codes = new Map<string, Code>();
  const refresh = new Map<string, string | null>(); // refresh token -> resource
  const issued: string[] = [];
  const resourcesAsked: Array<string | null> = [];
  const scope = options.scope ?? 'skills:read';
  let tokenRequests = 0;
  let base = '';

  const accessToken = async (resource: string | null, clientId: string): Promise<string> => {
    if (options.opaqueTokens) return `opaque-${randomBytes(18).toString('base64url')}`;
    return new SignJWT({ scope, client_id: clientId })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'at+jwt' })
      .setIssuer(base)
      .setSubject('alice')
      .setAudience(options.ignoreResource || resource === null ? OTHER_AUDIENCE : resource)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey);
  };
  const issue = async (resource: string | null, clientId: string, withRefresh: boolean): Promise<Record<string, unknown>> => {
    const access = await accessToken(resource, clientId);
    issued.push(access);
    const answer: Record<string, unknown> = { access_token: access, token_type: 'Bearer', expires_in: 600, scope };
    if (withRefresh) {
      const token = `rt-${randomBytes(18).toString('base64url')}`;
      issued.push(token);
      refresh.set(token, resource);
      answer.refresh_token = token;
    }
    return answer;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', base);
    if (url.pathname === '/.well-known/oauth-authorization-server') {
      return json(res, 200, {
        issuer: base,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        jwks_uri: `${base}/jwks`,
        ...(options.registration === false ? {} : { registration_endpoint: `${base}/register` }),
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
        scopes_supported: [scope],
        authorization_response_iss_parameter_supported: true,
      });
    }
    if (url.pathname === '/jwks') return json(res, 200, { keys: [jwk] });
    if (url.pathname === '/register' && req.method === 'POST' && options.registration !== false) {
      const body = JSON.parse(await read(req)) as Record<string, unknown>;
      const clientId = `client-${randomBytes(6).toString('hex')}`;
      clients.set(clientId, '');
      return json(res, 201, { ...body, client_id: clientId, token_endpoint_auth_method: 'none' });
    }
    if (url.pathname === '/authorize') {
      const q = url.searchParams;
      const clientId = q.get('client_id') ?? '';
      if (!clients.has(clientId) || q.get('code_challenge_method') !== 'S256') return send(res, 400, 'unknown client or no PKCE', 'text/plain');
      const target = new URL(q.get('redirect_uri') ?? '');
      if (options.authorizeError && req.headers.cookie === undefined) return send(res, 200, '<!doctype html><title>Sign in</title><form>...</form>', 'text/html');
      if (options.authorizeError) {
        target.searchParams.set('error', options.authorizeError.error);
        target.searchParams.set('error_description', options.authorizeError.description);
      } else {
        const code = randomBytes(16).toString('hex');
        codes.set(code, { clientId, challenge: q.get('code_challenge') ?? '', redirectUri: q.get('redirect_uri') ?? '', resource: q.get('resource') });
        target.searchParams.set('code', code);
      }
      if (q.get('state') !== null) target.searchParams.set('state', q.get('state')!);
      target.searchParams.set('iss', base);
      res.writeHead(302, { Location: target.href }).end();
      return;
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      tokenRequests += 1;
      const params = new URLSearchParams(await read(req));
      resourcesAsked.push(params.get('resource'));
      const grant = params.get('grant_type');
      if (grant === 'authorization_code') {
        const code = codes.get(params.get('code') ?? '');
        codes.delete(params.get('code') ?? '');
        const verifier = params.get('code_verifier') ?? '';
        if (!code || createHash('sha256').update(verifier).digest('base64url') !== code.challenge || params.get('redirect_uri') !== code.redirectUri) return json(res, 400, { error: 'invalid_grant' });
        return json(res, 200, await issue(params.get('resource') ?? code.resource, code.clientId, true));
      }
      if (grant === 'refresh_token') {
        const token = params.get('refresh_token') ?? '';
        if (!refresh.has(token)) return json(res, 400, { error: 'invalid_grant' });
        const resource = refresh.get(token) ?? null;
        refresh.delete(token);
        return json(res, 200, await issue(params.get('resource') ?? resource, params.get('client_id') ?? '', true));
      }
      if (grant === 'client_credentials') {
        const [id, secret] = clientCredentials(req, params);
        if (id === undefined || clients.get(id) !== secret || secret === '') {
          return json(res, 401, { error: 'invalid_client', error_description: options.invalidClientDescription ?? 'client authentication failed' });
        }
        return json(res, 200, await issue(params.get('resource'), id, false));
      }
      return json(res, 400, { error: 'unsupported_grant_type' });
    }
    send(res, 404, 'not found', 'text/plain');
  };

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, String(error), 'text/plain');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer: base,
    issued,
    resourcesAsked,
    tokenRequests: () => tokenRequests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** client_secret_basic, else client_secret_post. */
function clientCredentials(req: IncomingMessage, params: URLSearchParams): [string | undefined, string | undefined] {
  const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '');
  if (basic) {
    const [id, secret] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':').map((part) => decodeURIComponent(part));
    return [id, secret];
  }
  return [params.get('client_id') ?? undefined, params.get('client_secret') ?? undefined];
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
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' }).end(body);
}
