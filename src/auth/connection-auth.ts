// What one MCP connection to an HTTP server needs of sign-in: the provider its transport uses,
// the fetch that keeps authorization traffic bounded, redaction of every token it handled, and
// a watch on the token store for the moment someone signs in (`skills-mount login` elsewhere).
import { auth, extractWWWAuthenticateParams, InsufficientScopeError, UnauthorizedError, withDpopFromProvider, type AuthProvider, type FetchLike } from '@modelcontextprotocol/client';
import type { ServerConfig } from '../config/server-config.js';
import { redactSdkLinesWith, type Redact } from '../log.js';
import { AuthServerUnreachableError, loginCommand, NeedsLoginError, TokenRefusedError, type TokenRefusal } from './auth-errors.js';
import { describeUrl, limitedFetch, splitFetch } from './auth-fetch.js';
import { StoredOAuthProvider } from './stored-provider.js';
import { defaultTokenStorePath, TokenStore } from './token-store.js';

export interface ConnectionAuthOptions {
  /** The token store; default: the user's ($XDG_CONFIG_HOME/skills-mount/auth/tokens.json). */
  store?: TokenStore | undefined;
  /** For authorization traffic; default: limitedFetch() over the global fetch. */
  authFetch?: FetchLike | undefined;
}

export interface ConnectionAuth {
  provider: StoredOAuthProvider;
  /**
   * What the transport is given: the bearer read, and one renewal at a time on a 401 (requests
   * refused together share it, so a rotating refresh token is never presented twice). A step-up
   * (403 insufficient_scope) is not attempted: only a person can grant more scope.
   */
  transportAuth: AuthProvider;
  /** The grant needs a person at a browser (authorization code): a refused token means "needs login". */
  interactiveGrant: boolean;
  /** `text` with every token, secret and verifier the provider handled replaced. */
  redact(text: string): string;
  /** The transport's fetch: MCP traffic to `mcp`, authorization traffic bounded and without the configured headers. */
  fetchFor(mcp: FetchLike): FetchLike;
  /** The needs-login reason for a token the server refused even after it was renewed. */
  refusedAfterRefresh(): string;
  /** The needs-login reason for a 403 insufficient_scope; the scope is kept for the next login. */
  needsScope(error: InsufficientScopeError): string;
  /** Calls `signedIn` once the store holds a sign-in for this server newer than now; returns a stop function. */
  whenSignedIn(signedIn: () => void): () => void;
}

const stores = new Map<string, TokenStore>();

/** The user's token store, one instance per file in this process. */
export function defaultTokenStore(env: NodeJS.ProcessEnv = process.env): TokenStore {
  const file = defaultTokenStorePath(env);
  let store = stores.get(file);
  if (store === undefined) {
    store = new TokenStore(file);
    stores.set(file, store);
  }
  return store;
}

/** The sign-in of one HTTP server; undefined for stdio and for an entry with its own Authorization header. */
export function connectionAuth(label: string, config: ServerConfig, options: ConnectionAuthOptions = {}): ConnectionAuth | undefined {
  if (config.kind === 'stdio') return undefined;
  const headerNames = Object.keys(config.headers).map((name) => name.toLowerCase());
  // A configured static token keeps working as it always did: nothing to sign in to.
  if (headerNames.includes('authorization')) return undefined;
  const store = options.store ?? defaultTokenStore();
  const authFetch = namingUnreachable(withoutHeaders(options.authFetch ?? limitedFetch(), headerNames), config.url, config.oauth?.idpTokenEndpoint);
  const provider = new StoredOAuthProvider({ label, serverUrl: config.url, settings: config.oauth, store, fetch: authFetch });
  const redact = secretsRedactor(provider);
  // The SDK's own lines (a refused client, a failed refresh) may quote what the authorization server said.
  redactSdkLinesWith(redact);
  const interactiveGrant = (config.oauth?.grantType ?? 'authorization_code') === 'authorization_code';
  let renewing: Promise<void> | undefined;
  /** The access token last handed to a request: the one a 401 refused. */
  let sent: string | undefined;
  /** The access token the last renewal got, until the server accepts it: refused too, no renewal can help. */
  let renewedTo: string | undefined;
  const transportAuth: AuthProvider = {
    token: async () => (sent = (await provider.tokens())?.access_token),
    onUnauthorized(ctx) {
      const refused = sent;
      renewing ??= (async () => {
        const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(ctx.response);
        // One renewal among every process sharing the store: a mount and a snapshot refused at
        // the same moment would otherwise both present the same refresh token, and an
        // authorization server that rotates them takes the second for theft (oidc-provider
        // revokes the whole grant). Whoever comes second finds the first one's token and uses it.
        await provider.renewing(async () => {
          if (await provider.renewedElsewhere(refused)) return;
          const result = await auth(provider, { serverUrl: ctx.serverUrl, resourceMetadataUrl, scope, fetchFn: ctx.fetchFn });
          if (result !== 'AUTHORIZED') throw new UnauthorizedError();
        });
        renewedTo = (await store.get(label, config.url).catch(() => undefined))?.tokens?.access_token;
      })().finally(() => {
        renewing = undefined;
      });
      return renewing;
    },
  };
  return {
    provider,
    transportAuth,
    interactiveGrant,
    redact,
    // DPoP-bound tokens get the DPoP scheme and a proof per request (the SDK's wrapper, as its transports apply it).
    fetchFor: (mcp) =>
      withDpopFromProvider(provider)(
        splitFetch(
          config.url,
          async (input, init) => {
            const response = await mcp(input, init);
            const presented = presentedToken(init);
            if (response.status !== 401 || presented === undefined || presented !== renewedTo) {
              if (response.ok && presented !== undefined && presented === renewedTo) renewedTo = undefined;
              return response;
            }
            // The token just renewed is refused as well: another renewal would get the same kind
            // of token, so the server's own reason is what the person needs to see.
            renewedTo = undefined;
            await response.body?.cancel().catch(() => undefined);
            const tokens = (await store.get(label, config.url).catch(() => undefined))?.tokens;
            const refusedError = new TokenRefusedError(label, refusalOf(response), tokens?.issuer, tokens?.resource);
            // Unattended grants: a configuration problem, shown as such; a person's sign-in: "needs login" with the reason, no loop.
            if (!interactiveGrant) throw refusedError;
            throw new NeedsLoginError(label, refusedError.message);
          },
          authFetch,
        ),
      ),
    refusedAfterRefresh() {
      const reason = provider.needsLoginReason() ?? 'the server refused the stored sign-in';
      return `needs login: ${reason}; run: ${loginCommand(label)}`;
    },
    needsScope(error) {
      const scope = error.requiredScope;
      if (scope !== undefined) void provider.noteWantedScope(scope).catch(() => undefined);
      return `needs login: the server asks for scope ${scope ?? '(unnamed)'}, beyond the sign-in's; run: ${loginCommand(label)}`;
    },
    whenSignedIn(signedIn) {
      let stopped = false;
      let before: number | undefined | null = null;
      void store.get(label, config.url).then(
        (entry) => (before = entry?.tokens?.obtainedAtMs),
        () => (before = undefined),
      );
      const stop = store.watch(() => {
        void store.get(label, config.url).then(
          (entry) => {
            const obtained = entry?.tokens?.obtainedAtMs;
            if (stopped || obtained === undefined || obtained === before) return;
            stopped = true;
            stop();
            signedIn();
          },
          () => undefined,
        );
      });
      return () => {
        stopped = true;
        stop();
      };
    },
  };
}

/** The status and WWW-Authenticate challenge of a refusal (the Bearer challenge's, else the DPoP one's). */
export function refusalOf(response: Response): TokenRefusal {
  const { error, errorDescription } = extractWWWAuthenticateParams(response);
  return { status: response.status, error, description: errorDescription };
}

/** The access token a request carries (Bearer or DPoP scheme), if any. */
function presentedToken(init: RequestInit | undefined): string | undefined {
  const authorization = init?.headers === undefined ? null : new Headers(init.headers).get('authorization');
  return authorization === null ? undefined : /^(?:Bearer|DPoP) +(.+)$/i.exec(authorization.trim())?.[1];
}

/**
 * Authorization traffic whose failure to connect names where it went: the authorization
 * server (or identity provider, or the MCP server's own metadata) and the network's reason,
 * rather than a bare "fetch failed" that reads as if the MCP server were down.
 */
export function namingUnreachable(inner: FetchLike, serverUrl: string, idpTokenEndpoint?: string): FetchLike {
  const server = new URL(serverUrl).origin;
  return async (input, init) => {
    try {
      return await inner(input, init);
    } catch (error) {
      const reason = networkReason(error);
      if (reason === undefined) throw error;
      const endpoint = describeUrl(input);
      const role =
        idpTokenEndpoint !== undefined && endpoint === describeUrl(idpTokenEndpoint)
          ? 'the identity provider'
          : new URL(String(input)).origin === server
            ? "the server's sign-in metadata"
            : 'the authorization server';
      throw new AuthServerUnreachableError(role, endpoint, reason);
    }
  };
}

/** The errno-style code (ECONNREFUSED, ENOTFOUND, ...) of a failed connection, from anywhere in the cause chain. */
function networkReason(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 6; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
    if (typeof code === 'string' && code.startsWith('UND_ERR_')) return code;
  }
  return undefined;
}

/** Shorter values are not secrets worth mangling messages for. */
const MIN_SECRET_CHARS = 8;

/** A text with every token, secret and verifier `provider` has handled replaced, as written and as JSON quotes it. */
export function secretsRedactor(provider: StoredOAuthProvider): Redact {
  return (text) => {
    let result = text;
    for (const secret of provider.knownSecrets()) {
      if (secret.length < MIN_SECRET_CHARS) continue;
      for (const form of new Set([secret, JSON.stringify(secret).slice(1, -1)])) if (result.includes(form)) result = result.split(form).join('[redacted]');
    }
    return result;
  };
}

/** Drops the configured headers (an API key meant for the MCP server) from requests to the authorization server. */
function withoutHeaders(inner: FetchLike, names: readonly string[]): FetchLike {
  if (names.length === 0) return inner;
  return (input, init) => {
    if (init?.headers === undefined) return inner(input, init);
    const headers = new Headers(init.headers);
    for (const name of names) headers.delete(name);
    return inner(input, { ...init, headers });
  };
}
