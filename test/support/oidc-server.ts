// A real OAuth 2.1 / OpenID authorization server for the tests: oidc-provider (the
// OpenID-certified Node implementation, nobody here wrote it) in the test process, on
// 127.0.0.1 and a random port, with its in-memory state kept where the helpers can reach it.
//
// Usage:
//   const oidc = await startOidcServer();                       // issuer http://127.0.0.1:PORT
//   const serve = await startProtectedServe(oidc, dir);          // skills-serve --http --auth-issuer ... --auth-scope skills:read,
//                                                                // its URL a resource of oidc (tokens: JWTs, aud = serve.url)
//   const { access_token } = await oidc.clientCredentialsToken({ resource: serve.url, scope: 'skills:read' });
//   // sign-in by a program: BROWSER=`${process.execPath} ${OIDC_BROWSER}` skills-mount login LABEL ...
//   oidc.accessTokenTtlS = 2;                                    // tokens issued from now on expire in 2 s
//   await oidc.revokeAccount('alice');                           // refresh tokens of every grant of alice die
//   await oidc.close();
//
// Observing it: `authorizationRequests` (what a client asked for: resource, scope, PKCE),
// `tokenGrants` and `tokenErrors` (every token request and why one was refused),
// `registeredClients`, `liveRefreshTokens()`. Scope values: KNOWN_SCOPES (skills:read,
// skills:write, other:read) plus `options.scopes`; the SDK registers with the challenge's.
//
// What it offers: PKCE required (S256 only), resource indicators (RFC 8707: access tokens are
// JWTs for the resource named, signed RS256), dynamic client registration (no initial access
// token; registered clients default to native, so any loopback port fits a registered
// loopback redirect URI), refresh tokens on every authorization code grant, rotated at every
// use, client credentials (a pre-registered confidential client), revocation and
// introspection, and devInteractions: the login and consent pages oidc-browser.mjs fills in
// (any login name, any password). Mind oidc-provider's own security rules, which a client
// must live with: presenting a refresh token that was already rotated away is taken as theft
// and revokes the whole grant (two processes refreshing with the same token at once lose the
// sign-in), and a second use of an authorization code revokes what the first one issued.
// The server runs in the test process: a test must not block its event loop (spawnSync,
// execFileSync) while a child needs an answer from it. On Node 20 oidc-provider prints an
// "Unsupported runtime" warning; it works (these tests run on Node 20 and 24).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { errors, type Adapter, type AdapterPayload, type ClientMetadata, type KoaContextWithOIDC } from 'oidc-provider';
import { startHttpServe, type ListeningServer } from './http-server.js';

/** The `$BROWSER` script: given an authorization URL, signs in, consents and follows the redirect to the loopback listener. */
export const OIDC_BROWSER = fileURLToPath(new URL('./oidc-browser.mjs', import.meta.url));

/** The scope the resources accept unless told otherwise. */
export const DEFAULT_RESOURCE_SCOPE = 'skills:read';

/** Scope values the server knows from the start: a client may register with them (the SDK puts the challenge's scope in its registration). */
export const KNOWN_SCOPES = ['skills:read', 'skills:write', 'other:read'] as const;

/** The pre-registered confidential client for the client credentials grant (client_secret_basic or _post). */
export const ROBOT_CLIENT = { clientId: 'skills-robot', clientSecret: 'robot-secret-for-tests-only' } as const;
/** The pre-registered public client for sign-in (PKCE, no secret), redirect `http://127.0.0.1/callback` on any port. */
export const PUBLIC_CLIENT = { clientId: 'skills-mount-cli', redirectUri: 'http://127.0.0.1/callback' } as const;

export interface OidcServerOptions {
  /** Port to listen on (default 0: a free one); fix it to start the server where an issuer URL already points. */
  port?: number;
  /** Resources (RFC 8707 indicators) tokens may be issued for, each with the scopes it accepts (space-separated; default DEFAULT_RESOURCE_SCOPE). More with addResource. */
  resources?: Record<string, string>;
  /** Access token lifetime in seconds (default 300); change it later with `accessTokenTtlS`. */
  accessTokenTtlS?: number;
  /** Refresh token lifetime in seconds (default 1 day). */
  refreshTokenTtlS?: number;
  /** More pre-registered clients (oidc-provider client metadata), besides ROBOT_CLIENT and PUBLIC_CLIENT. */
  clients?: ClientMetadata[];
  /** Whether the registration endpoint is on (default true). */
  registration?: boolean;
  /** Scope values clients may name (in registration too), besides openid, offline_access and KNOWN_SCOPES; a resource's scopes must be among them. */
  scopes?: string[];
}

/** One successful token request, as the server saw it (no token or secret kept). */
export interface TokenGrant {
  grantType: string;
  clientId: string | undefined;
  /** The `resource` parameters of the request. */
  resource: string[];
}

export interface OidcServer {
  /** The issuer identifier, e.g. http://127.0.0.1:PORT (no trailing slash): what `--auth-issuer` takes. */
  readonly issuer: string;
  /** The port it listens on. */
  readonly port: number;
  /** Lifetime in seconds of access tokens issued from now on. */
  accessTokenTtlS: number;
  /** The parameters of every authorization request accepted (resource, scope, code_challenge_method, redirect_uri, ...). */
  readonly authorizationRequests: URLSearchParams[];
  /** Every successful token request (authorization_code, refresh_token, client_credentials), in order. */
  readonly tokenGrants: TokenGrant[];
  /** Every refused token request, with the server's reason (the detail its answer leaves out), in order. */
  readonly tokenErrors: Array<{ grantType: string; error: string; detail: string | undefined }>;
  /** Ids of the clients registered dynamically, in order. */
  readonly registeredClients: string[];
  /** The oidc-provider instance, for what the helpers do not cover. */
  readonly provider: Provider;
  /** Accepts tokens for one more resource indicator, with these scopes (space-separated; default DEFAULT_RESOURCE_SCOPE); scopes outside KNOWN_SCOPES and options.scopes cannot be named in a client registration. */
  addResource(resource: string, scope?: string): void;
  /** A client credentials access token (a JWT) for `resource`; `scope` omitted asks for none. Throws with the server's error. */
  clientCredentialsToken(request: { resource: string; scope?: string; clientId?: string; clientSecret?: string }): Promise<{ access_token: string; expires_in: number; scope?: string; token_type: string }>;
  /** Revokes a refresh token and its whole grant (as the revocation endpoint does); false when it was unknown. */
  revokeRefreshToken(refreshToken: string): Promise<boolean>;
  /** Revokes every grant of an account (what a user does in "connected apps"): all its refresh tokens stop working. Resolves how many grants. */
  revokeAccount(accountId: string): Promise<number>;
  /** How many refresh tokens are live (for an account, or all). */
  liveRefreshTokens(accountId?: string): number;
  /** Stops listening and drops every connection. */
  close(): Promise<void>;
}

/** Starts oidc-provider on 127.0.0.1; see the note at the top of this file. */
export async function startOidcServer(options: OidcServerOptions = {}): Promise<OidcServer> {
  const httpServer = createServer();
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port ?? 0, '127.0.0.1', () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const { port } = httpServer.address() as AddressInfo;
  const issuer = `http://127.0.0.1:${port}`;

  const resources = new Map<string, string>(Object.entries(options.resources ?? {}).map(([resource, scope]) => [resource, scope || DEFAULT_RESOURCE_SCOPE]));
  const settings = { accessTokenTtlS: options.accessTokenTtlS ?? 300 };
  const store = new MemoryStore();
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: `test-${port}`, alg: 'RS256', use: 'sig' };

  const provider = new Provider(issuer, {
    adapter: (model: string) => store.adapter(model),
    jwks: { keys: [signingKey] },
    cookies: { keys: ['oidc-test-cookie-key'] },
    clients: [
      {
        client_id: ROBOT_CLIENT.clientId,
        client_secret: ROBOT_CLIENT.clientSecret,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      {
        client_id: PUBLIC_CLIENT.clientId,
        application_type: 'native',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: [PUBLIC_CLIENT.redirectUri, 'http://localhost/callback'],
        token_endpoint_auth_method: 'none',
      },
      ...(options.clients ?? []),
    ],
    // Dynamically registered clients: public native apps (RFC 8252), unless they ask otherwise.
    clientDefaults: {
      application_type: 'native',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'RS256',
    },
    pkce: { required: () => true },
    scopes: [...new Set(['openid', 'offline_access', ...KNOWN_SCOPES, ...(options.scopes ?? []), ...[...resources.values()].flatMap((scope) => scope.split(' '))])],
    findAccount: (_ctx: KoaContextWithOIDC, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: options.registration ?? true, initialAccessToken: false },
      clientCredentials: { enabled: true },
      revocation: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx: KoaContextWithOIDC, _client: unknown, oneOf?: string[]) => oneOf ?? undefined!,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: KoaContextWithOIDC, resource: string) => {
          const scope = resources.get(resource);
          if (scope === undefined) throw new errors.InvalidTarget(`unknown resource ${resource}`);
          return { scope, audience: resource, accessTokenTTL: settings.accessTokenTtlS, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } };
        },
      },
    },
    issueRefreshToken: async (_ctx: KoaContextWithOIDC, client: InstanceType<Provider['Client']>) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    ttl: {
      AccessToken: () => settings.accessTokenTtlS,
      ClientCredentials: () => settings.accessTokenTtlS,
      RefreshToken: options.refreshTokenTtlS ?? 24 * 60 * 60,
      Grant: 14 * 24 * 60 * 60,
      Session: 14 * 24 * 60 * 60,
      Interaction: 10 * 60,
      IdToken: 60 * 60,
      AuthorizationCode: 60,
    },
    // oidc-provider's own clock tolerance (15 s) would let an expired token pass introspection.
    clockTolerance: 0,
  });

  const authorizationRequests: URLSearchParams[] = [];
  const tokenGrants: TokenGrant[] = [];
  const registeredClients: string[] = [];
  const tokenErrors: Array<{ grantType: string; error: string; detail: string | undefined }> = [];
  provider.on('authorization.accepted', (ctx: KoaContextWithOIDC) => {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(ctx.oidc.params ?? {})) {
      for (const one of Array.isArray(value) ? value : [value]) if (typeof one === 'string') params.append(name, one);
    }
    authorizationRequests.push(params);
  });
  provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    const params = (ctx.oidc.params ?? {}) as { grant_type?: unknown; resource?: unknown };
    const resource = params.resource === undefined ? [] : ([] as unknown[]).concat(params.resource).filter((one): one is string => typeof one === 'string');
    tokenGrants.push({ grantType: String(params.grant_type), clientId: ctx.oidc.client?.clientId, resource });
  });
  provider.on('grant.error', (ctx: KoaContextWithOIDC, error: Error & { error?: string; error_detail?: string }) => {
    tokenErrors.push({ grantType: String(ctx.oidc?.params?.grant_type), error: error.error ?? error.message, detail: error.error_detail });
  });
  provider.on('registration_create.success', (_ctx: KoaContextWithOIDC, client: { clientId: string }) => registeredClients.push(client.clientId));
  // An error the server answers 500 with is a bug in the setup: say so in the test's output.
  provider.on('server_error', (_ctx: KoaContextWithOIDC, error: Error) => process.stderr.write(`oidc-server: server error: ${error.stack ?? error.message}\n`));

  httpServer.on('request', provider.callback());

  const revokeGrant = async (grantId: string): Promise<void> => {
    await provider.AccessToken.revokeByGrantId(grantId);
    await provider.AuthorizationCode.revokeByGrantId(grantId);
    await provider.RefreshToken.revokeByGrantId(grantId);
    await (await provider.Grant.find(grantId))?.destroy();
  };

  return {
    issuer,
    port,
    get accessTokenTtlS() {
      return settings.accessTokenTtlS;
    },
    set accessTokenTtlS(seconds: number) {
      settings.accessTokenTtlS = seconds;
    },
    authorizationRequests,
    tokenGrants,
    tokenErrors,
    registeredClients,
    provider,
    addResource(resource, scope = DEFAULT_RESOURCE_SCOPE) {
      resources.set(resource, scope);
    },
    async clientCredentialsToken({ resource, scope, clientId = ROBOT_CLIENT.clientId, clientSecret = ROBOT_CLIENT.clientSecret }) {
      const body = new URLSearchParams({ grant_type: 'client_credentials', resource });
      if (scope !== undefined) body.set('scope', scope);
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
      const answer = (await response.json()) as { access_token: string; expires_in: number; scope?: string; token_type: string; error?: string; error_description?: string };
      if (!response.ok) throw new Error(`client credentials grant refused (HTTP ${response.status}): ${answer.error ?? ''} ${answer.error_description ?? ''}`);
      return answer;
    },
    async revokeRefreshToken(refreshToken) {
      const token = await provider.RefreshToken.find(refreshToken, { ignoreExpiration: true });
      if (!token) return false;
      await token.destroy();
      if (token.grantId) await revokeGrant(token.grantId);
      return true;
    },
    async revokeAccount(accountId) {
      const grants = store.ids('Grant', (payload) => payload.accountId === accountId);
      for (const grantId of grants) await revokeGrant(grantId);
      return grants.length;
    },
    liveRefreshTokens(accountId) {
      return store.ids('RefreshToken', (payload) => accountId === undefined || payload.accountId === accountId).length;
    },
    async close() {
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}

/**
 * The built skills-serve on `dir` over HTTP behind `oidc`: `--auth-issuer oidc.issuer --auth-scope SCOPE`
 * (default DEFAULT_RESOURCE_SCOPE), its URL added as a resource accepting `resourceScopes`
 * (default: the required scope and skills:write). Stop it with `.stop()`.
 */
export async function startProtectedServe(oidc: OidcServer, dir: string, { scope = DEFAULT_RESOURCE_SCOPE, resourceScopes, args = [] }: { scope?: string; resourceScopes?: string; args?: string[] } = {}): Promise<ListeningServer> {
  const serve = await startHttpServe([dir, '--auth-issuer', oidc.issuer, '--auth-scope', scope, ...args]);
  oidc.addResource(serve.url, resourceScopes ?? `${scope} skills:write`);
  return serve;
}

interface Stored {
  payload: AdapterPayload;
  expiresAtMs: number;
}

// oidc-provider's storage, one per server (its built-in one is a module-wide LRU), and
// enumerable: revoking "every grant of an account" needs to find them.
class MemoryStore {
  private readonly entries = new Map<string, Stored>();

  ids(model: string, match: (payload: AdapterPayload) => boolean): string[] {
    const found: string[] = [];
    for (const [key, entry] of this.entries) {
      if (key.startsWith(`${model}:`) && this.live(key, entry) && match(entry.payload)) found.push(key.slice(model.length + 1));
    }
    return found;
  }

  adapter(model: string): Adapter {
    const key = (id: string): string => `${model}:${id}`;
    const find = (id: string | undefined): AdapterPayload | undefined => {
      if (id === undefined) return undefined;
      const entry = this.entries.get(key(id));
      return entry && this.live(key(id), entry) ? entry.payload : undefined;
    };
    const findBy = (field: 'uid' | 'userCode', value: string): AdapterPayload | undefined => {
      for (const [stored, entry] of this.entries) {
        if (stored.startsWith(`${model}:`) && this.live(stored, entry) && entry.payload[field] === value) return entry.payload;
      }
      return undefined;
    };
    return {
      upsert: async (id, payload, expiresInS) => {
        this.entries.set(key(id), { payload, expiresAtMs: typeof expiresInS === 'number' ? Date.now() + expiresInS * 1000 : Infinity });
      },
      find: async (id) => find(id),
      findByUid: async (uid) => findBy('uid', uid),
      findByUserCode: async (userCode) => findBy('userCode', userCode),
      consume: async (id) => {
        const payload = find(id);
        if (payload) payload.consumed = Math.floor(Date.now() / 1000);
      },
      destroy: async (id) => {
        this.entries.delete(key(id));
      },
      revokeByGrantId: async (grantId) => {
        for (const [stored, entry] of this.entries) if (stored.startsWith(`${model}:`) && entry.payload.grantId === grantId) this.entries.delete(stored);
      },
    };
  }

  private live(key: string, entry: Stored): boolean {
    if (entry.expiresAtMs > Date.now()) return true;
    this.entries.delete(key);
    return false;
  }
}
