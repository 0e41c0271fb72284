// The MCP TypeScript SDK's example OAuth server (nobody here wrote it) as the authorization server
// of the sign-in interop test, in the test process on 127.0.0.1 and a random port: the SDK's
// `mcpAuthRouter` (RFC 8414 metadata, dynamic client registration, /authorize with its redirect
// URI check, /token with client authentication and the PKCE check, /revoke) over the example's
// `DemoInMemoryAuthProvider` (@modelcontextprotocol/sdk, dist/esm/examples/server/), whose
// authorize() redirects at once with a code for a redirect URI registered exactly (port included).
// As shipped, the example issues opaque access tokens that only its own server can check, and no
// refresh token ("Not implemented for example demo"); a resource server that verifies JWTs, as
// skills-serve does, needs more, so this subclass issues, after the example has checked and
// consumed the code: a JWT access token (RS256, `aud` the resource asked for, the scope granted,
// living `accessTokenTtlS`), a refresh token the refresh grant accepts until it is dropped or
// revoked, and revocation (RFC 7009, which makes the SDK's router offer /revoke). The metadata
// gains the `jwks_uri` where its keys are published; everything else is the SDK's.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { InteropProvider, InteropRequest } from './idp-scenario.js';
import { OIDC_BROWSER } from './oidc-server.js';

/** Where the example server ships, relative to node_modules (scripts/idp-interop.sh checks it is there). */
export const SDK_EXAMPLE_PROVIDER = '@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js';
const SDK_ROUTER = '@modelcontextprotocol/sdk/server/auth/router.js';
const SDK_ERRORS = '@modelcontextprotocol/sdk/server/auth/errors.js';

/** What is needed of the SDK's types (its package is a dependency of the conformance suite, typed loosely here). */
interface Client {
  client_id: string;
}
interface AuthInfo {
  clientId: string;
  scopes: string[];
  resource?: URL;
}
interface DemoProvider {
  clientsStore: unknown;
  exchangeAuthorizationCode(client: Client, code: string, verifier?: string, redirectUri?: string, resource?: URL): Promise<{ access_token: string }>;
  verifyAccessToken(token: string): Promise<AuthInfo>;
}
type DemoProviderClass = new (validateResource?: (resource?: URL) => boolean) => DemoProvider;
interface ExpressApp {
  (req: IncomingMessage, res: ServerResponse): void;
  use(...handlers: unknown[]): void;
  get(path: string, handler: (req: unknown, res: { json(body: unknown): void }) => void): void;
}

interface Grant {
  clientId: string;
  scope: string;
  resource: string;
}

export interface SdkServer extends InteropProvider {
  /** Clients registered (dynamic registration), with their redirect URIs. */
  readonly registrations: Array<{ clientId: string; redirectUris: string[] }>;
}

/** Starts the SDK's example OAuth server, extended as the note at the top says. */
export async function startSdkServer({ accessTokenTtlS, scope }: InteropRequest): Promise<SdkServer> {
  const { DemoInMemoryAuthProvider } = (await import(SDK_EXAMPLE_PROVIDER)) as { DemoInMemoryAuthProvider: DemoProviderClass };
  const { mcpAuthRouter, createOAuthMetadata } = (await import(SDK_ROUTER)) as {
    mcpAuthRouter(options: Record<string, unknown>): unknown;
    createOAuthMetadata(options: Record<string, unknown>): Record<string, unknown>;
  };
  const { InvalidGrantError } = (await import(SDK_ERRORS)) as { InvalidGrantError: new (message: string) => Error };
  const expressModule: string = 'express';
  const { default: express } = (await import(expressModule)) as { default: () => ExpressApp };

  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = randomUUID();
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' }] };
  const refreshTokens = new Map<string, Grant>();
  const registrations: Array<{ clientId: string; redirectUris: string[] }> = [];
  const refusals: string[] = [];
  let refreshGrants = 0;
  let issuer = '';

  const issue = async (grant: Grant): Promise<Record<string, unknown>> => {
    const accessToken = await new SignJWT({ scope: grant.scope, client_id: grant.clientId })
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' })
      .setIssuer(issuer)
      .setAudience(grant.resource)
      .setSubject('demo_user')
      .setIssuedAt()
      .setExpirationTime(`${accessTokenTtlS}s`)
      .setJti(randomUUID())
      .sign(privateKey);
    const refreshToken = randomUUID();
    refreshTokens.set(refreshToken, grant);
    return { access_token: accessToken, token_type: 'Bearer', expires_in: accessTokenTtlS, scope: grant.scope, refresh_token: refreshToken };
  };

  class JwtIssuingDemoProvider extends DemoInMemoryAuthProvider {
    constructor() {
      super();
      // Registrations as the SDK's register handler stores them.
      const store = this.clientsStore as { registerClient(client: { client_id: string; redirect_uris: string[] }): Promise<unknown> };
      const register = store.registerClient.bind(store);
      store.registerClient = async (client) => {
        registrations.push({ clientId: client.client_id, redirectUris: [...client.redirect_uris] });
        return register(client);
      };
    }

    override async exchangeAuthorizationCode(client: Client, code: string, verifier?: string, redirectUri?: string, resource?: URL): Promise<{ access_token: string }> {
      // The example checks the code, its client and consumes it; what it granted is read back from its token.
      const opaque = await super.exchangeAuthorizationCode(client, code, verifier, redirectUri, resource);
      const granted = await this.verifyAccessToken(opaque.access_token);
      const tokens = await issue({ clientId: client.client_id, scope: granted.scopes.join(' '), resource: granted.resource?.href ?? '' });
      return tokens as { access_token: string };
    }

    async exchangeRefreshToken(client: Client, refreshToken: string): Promise<Record<string, unknown>> {
      const grant = refreshTokens.get(refreshToken);
      if (grant === undefined || grant.clientId !== client.client_id) {
        refusals.push(grant === undefined ? 'refresh_token: unknown, dropped or revoked' : `refresh_token: issued to ${grant.clientId}, presented by ${client.client_id}`);
        throw new InvalidGrantError('the refresh token is not valid');
      }
      refreshGrants += 1;
      return issue(grant);
    }

    async revokeToken(client: Client, request: { token: string }): Promise<void> {
      const grant = refreshTokens.get(request.token);
      if (grant && grant.clientId === client.client_id) refreshTokens.delete(request.token);
    }
  }

  const provider = new JwtIssuingDemoProvider();
  const app = express();
  const server = createServer((req, res) => app(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuerUrl = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  issuer = issuerUrl.href;
  const options = { provider, issuerUrl, scopesSupported: [scope] };
  // The SDK's metadata names no key set: the same document with the jwks_uri, served first.
  const metadata: Record<string, unknown> = { ...createOAuthMetadata(options), jwks_uri: new URL('/jwks', issuerUrl).href };
  app.get('/.well-known/oauth-authorization-server', (_req, res) => res.json(metadata));
  app.get('/jwks', (_req, res) => res.json(jwks));
  app.use(mcpAuthRouter(options));

  return {
    issuer,
    tokenEndpoint: String(metadata['token_endpoint']),
    browser: `${process.execPath} ${OIDC_BROWSER}`,
    registrations,
    refreshGrants: async () => refreshGrants,
    async dropRefreshTokens() {
      refreshTokens.clear();
    },
    // As after a restart: the example keeps its registrations in a Map of its clients store.
    async forgetClients() {
      const clients = (provider.clientsStore as { clients?: unknown }).clients;
      if (!(clients instanceof Map)) throw new Error("the SDK example's clients store keeps no Map of clients any more");
      clients.clear();
      refreshTokens.clear();
    },
    diagnostics: () => `registered: ${JSON.stringify(registrations)}; refused: ${JSON.stringify(refusals)}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
