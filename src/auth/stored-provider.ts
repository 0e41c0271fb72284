// The SDK's OAuthClientProvider over the token store: what the SDK's auth() leaves to a host
// (where clients, tokens, the PKCE verifier and discovery state live; how the person is sent to
// the browser; the unattended grants' token requests). Discovery, PKCE, resource indicators,
// scope selection, issuer checks, registration, refresh and step-up stay the SDK's.
//
// Unattended (a mount, a snapshot): it never starts a sign-in. Where only a person could go on,
// it throws NeedsLoginError; the connection shows "needs login" and waits for the store to change.
import { randomBytes } from 'node:crypto';
import {
  checkResourceAllowed,
  OAuthError,
  OAuthErrorCode,
  refreshAuthorization,
  resourceUrlFromServerUrl,
  type AddClientAuthentication,
  type AuthorizationServerMetadata,
  type DpopSession,
  type FetchLike,
  type OAuthClientInformationContext,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type OAuthTokens,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import type { GrantType, OAuthSettings } from '../config/server-config.js';
import { NeedsLoginError, SignInError } from './auth-errors.js';
import { limitedFetch } from './auth-fetch.js';
import { probeAuthorization, refusedSignIn } from './authorization-probe.js';
import { fitsRedirect, registeredRedirects } from './client-registration.js';
import { dpopAlgorithmFor, dpopSessionFor, newDpopKey } from './dpop-key.js';
import { assertUsableEndpoint } from './endpoint-rules.js';
import { checkDiscovery, withOpenIdFields } from './metadata-reading.js';
import { fetchAuthServerMetadata } from './metadata-url.js';
import { assertKnownTokenType, isKnownTokenType } from './token-type.js';
import { privateKeyJwtAuthentication, unattendedTokenRequest } from './unattended-grants.js';
import type { AuthEntry, StoredTokens, TokenStore } from './token-store.js';

export { JWT_BEARER_GRANT } from './unattended-grants.js';
/** A token this close to expiry (or past half its lifetime, for short-lived ones) is refreshed before it is sent. */
const REFRESH_BEFORE_MS = 60_000;

/** Whether a token should be renewed before it is sent: within a minute of expiry, or past half its life if it lives less than two. */
function dueForRefresh(tokens: StoredTokens, nowMs: number): boolean {
  if (tokens.expiresAtMs === undefined) return false;
  const window = Math.min(REFRESH_BEFORE_MS, (tokens.expiresAtMs - tokens.obtainedAtMs) / 2);
  return tokens.expiresAtMs - nowMs < window;
}
/** The redirect URL an unattended provider names (it never redirects or registers: only refresh uses its client). */
const UNATTENDED_REDIRECT_URL = 'http://127.0.0.1/callback';

/** How `login` takes a person through the browser. */
export interface InteractiveSignIn {
  /** The loopback URL the authorization server redirects back to. */
  redirectUrl: string;
  /** Shows the authorization URL to the person (a browser, or printed). */
  open(url: URL): Promise<void>;
}

export interface StoredProviderOptions {
  label: string;
  /** The server's URL as configured. */
  serverUrl: string;
  /** The entry's "oauth" object; undefined: sign in with a browser, no pre-registered client. */
  settings?: OAuthSettings | undefined;
  store: TokenStore;
  /** Set by `login` only; without it no sign-in is ever started. */
  interactive?: InteractiveSignIn | undefined;
  /** Ignore the stored tokens until this provider stores new ones (login after a refused step-up). */
  freshSignIn?: boolean | undefined;
  /** For this provider's own requests (a refresh before expiry, authServerMetadataUrl): bounded and with a deadline. */
  fetch?: FetchLike | undefined;
  now?: () => number;
}

/** One server's sign-in, as the SDK's transports and auth() use it. */
export class StoredOAuthProvider implements OAuthClientProvider {
  readonly clientMetadataUrl: string | undefined;
  readonly addClientAuthentication: AddClientAuthentication | undefined;
  /** The `state` of the last authorization request (login checks the redirect against it). */
  expectedState: string | undefined;
  private readonly grant: GrantType;
  private readonly settings: OAuthSettings;
  private readonly now: () => number;
  private resource: string | undefined;
  private verifier: string | undefined;
  /** Why this server needs a person to sign in (a refresh that was refused), for the next NeedsLoginError. */
  private problem: string | undefined;
  private refreshing: Promise<StoredTokens | undefined> | undefined;
  /** Between sending the person to the browser and storing the tokens (the callback leg needs the discovery it began with). */
  private signInUnderWay = false;
  /** A login that must sign in anew (the stored token lacks a scope the server asked for). */
  private ignoreStored: boolean;
  private dpopSession: Promise<DpopSession | undefined> | undefined;
  private authorizationServer: string | undefined;
  /** The metadata of the authorization server of the discovery in use (what it offers: offline_access). */
  private authServerMetadata: AuthorizationServerMetadata | undefined;
  /** This login has registered a new client once already because the old one was refused: no second time. */
  private registeredAgain = false;
  /** The client this login registered (the server has just accepted its redirect URI: no need to ask again). */
  private registeredNow: string | undefined;
  /** Every token, secret and verifier this provider has handled: redacted from whatever is shown. */
  private readonly secrets = new Set<string>();

  constructor(private readonly options: StoredProviderOptions) {
    this.settings = options.settings ?? { grantType: 'authorization_code' };
    this.grant = this.settings.grantType;
    this.clientMetadataUrl = this.settings.clientMetadataUrl;
    this.now = options.now ?? Date.now;
    this.ignoreStored = options.freshSignIn === true;
    if (this.settings.clientSecret !== undefined) this.secrets.add(this.settings.clientSecret);
    if (this.settings.idpClientSecret !== undefined) this.secrets.add(this.settings.idpClientSecret);
    this.addClientAuthentication = privateKeyJwtAuthentication(this.settings);
  }

  /** Whether a person is signing in through this provider (login), rather than a mount using stored tokens. */
  get isInteractive(): boolean {
    return this.options.interactive !== undefined;
  }

  get redirectUrl(): string | undefined {
    if (this.grant !== 'authorization_code') return undefined;
    return this.options.interactive?.redirectUrl ?? UNATTENDED_REDIRECT_URL;
  }

  get clientMetadata(): OAuthClientMetadata {
    const redirect = this.redirectUrl;
    // The SDK adds offline_access only to a scope it already has: a resource that names none
    // still gets a refresh token where the authorization server offers one.
    const offline = this.grant === 'authorization_code' && this.authServerMetadata?.scopes_supported?.includes('offline_access') === true;
    const scope = this.settings.scopes ?? (offline ? 'offline_access' : undefined);
    return {
      client_name: 'skills-mount',
      redirect_uris: redirect === undefined ? [] : [redirect],
      grant_types: this.grant === 'authorization_code' ? ['authorization_code', 'refresh_token'] : [this.grant],
      response_types: this.grant === 'authorization_code' ? ['code'] : [],
      ...(scope !== undefined ? { scope } : {}),
    };
  }

  state(): string {
    this.expectedState = randomBytes(24).toString('base64url');
    return this.expectedState;
  }

  async clientInformation(ctx?: OAuthClientInformationContext): Promise<StoredOAuthClientInformation | undefined> {
    const { clientId, clientSecret } = this.settings;
    if (clientId !== undefined) {
      const issuer = ctx?.issuer ?? (await this.entry())?.tokens?.issuer;
      return { client_id: clientId, ...(clientSecret !== undefined ? { client_secret: clientSecret } : {}), ...(issuer !== undefined ? { issuer } : {}) };
    }
    const entry = await this.entry();
    const issuer = ctx?.issuer ?? entry?.tokens?.issuer;
    const stored = issuer === undefined ? undefined : clientFor(entry, issuer);
    if (stored?.client_secret !== undefined) this.secrets.add(stored.client_secret);
    // A client registered for another loopback port would send the browser to a refusal: none, so the SDK registers one for this redirect.
    const interactive = this.options.interactive;
    if (stored !== undefined && interactive !== undefined && this.grant === 'authorization_code' && stored.client_id !== this.clientMetadataUrl) {
      if (!fitsRedirect(registeredRedirects(stored, entry), interactive.redirectUrl)) return undefined;
    }
    if (stored === undefined && !this.isInteractive && this.grant === 'authorization_code') {
      // Registering a client is the first step of a sign-in: leave it to `login`.
      throw new NeedsLoginError(this.options.label, this.problem ?? 'no sign-in stored for this server');
    }
    return stored;
  }

  async saveClientInformation(info: StoredOAuthClientInformation, ctx?: OAuthClientInformationContext): Promise<void> {
    const issuer = ctx?.issuer ?? info.issuer;
    if (issuer === undefined) return;
    // Which redirect URIs it was registered with (a registration answer names them; a CIMD client's are its document's).
    const registered = (info as { redirect_uris?: unknown }).redirect_uris ?? (info.client_id === this.clientMetadataUrl ? undefined : this.clientMetadata.redirect_uris);
    const kept = { ...info, issuer, ...(registered !== undefined ? { redirect_uris: registered } : {}) } as OAuthClientInformationMixed;
    if (this.isInteractive) this.registeredNow = info.client_id;
    await this.change((entry) => ({ ...entry, clients: { ...entry.clients, [issuer]: kept } }));
  }

  async tokens(ctx?: OAuthClientInformationContext): Promise<StoredOAuthTokens | undefined> {
    if (this.ignoreStored) return undefined;
    const stored = (await this.entry())?.tokens;
    if (stored === undefined || !this.covers(stored.resource)) return undefined;
    // A token of a type this client cannot present (stored before such were refused) is never sent as Bearer.
    if (!isKnownTokenType(stored.token_type)) return undefined;
    this.remember(stored);
    if (ctx !== undefined) return issuersMatch(stored.issuer, ctx.issuer) ? wireTokens(stored) : undefined;
    // The bearer read before a request: refresh a token about to expire first (one refresh at a time).
    if (stored.expiresAtMs !== undefined && dueForRefresh(stored, this.now())) {
      const fresh = await this.refreshBeforeExpiry();
      if (fresh !== undefined) return wireTokens(fresh);
      return stored.expiresAtMs > this.now() ? wireTokens(stored) : undefined;
    }
    return wireTokens(stored);
  }

  async saveTokens(tokens: StoredOAuthTokens, ctx?: OAuthClientInformationContext): Promise<void> {
    const issuer = ctx?.issuer ?? tokens.issuer;
    if (issuer === undefined) throw new SignInError(`${this.options.label}: tokens arrived without knowing which authorization server issued them; not stored`);
    assertKnownTokenType(tokens.token_type, this.options.label);
    const stored = this.toStored(tokens, issuer, this.resource ?? resourceUrlFromServerUrl(this.options.serverUrl).href);
    this.remember(stored);
    await this.change((entry) => ({
      ...entry,
      tokens: stored,
      pending: undefined,
      wantedScope: undefined,
      ...(this.options.interactive ? { redirectUrl: this.options.interactive.redirectUrl } : {}),
    }));
    this.problem = undefined;
    this.signInUnderWay = false;
    this.ignoreStored = false;
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    const interactive = this.options.interactive;
    if (interactive === undefined) {
      // A step-up (or a sign-in) only a person can complete: say which scope, and keep it for the next login.
      const asked = url.searchParams.get('scope') ?? undefined;
      const granted = (await this.entry())?.tokens?.scope;
      const beyond = asked?.split(' ').filter((scope) => scope !== '' && !(granted ?? '').split(' ').includes(scope)) ?? [];
      if (granted !== undefined && beyond.length > 0) {
        await this.change((entry) => ({ ...entry, wantedScope: unionScopes(entry.wantedScope, asked) }));
        this.problem = `the server asks for scope ${beyond.join(' ')}, beyond the sign-in's`;
      }
      throw new NeedsLoginError(this.options.label, this.problem ?? 'no usable sign-in stored for this server');
    }
    // Only https, or http to this machine, ever reaches a browser (never file:, javascript:, ...).
    assertUsableEndpoint(url, `${this.options.label}: the authorization endpoint`);
    // A scope a mount was asked for since the last sign-in is asked for now too.
    const wanted = (await this.entry())?.wantedScope;
    if (wanted !== undefined) url.searchParams.set('scope', unionScopes(url.searchParams.get('scope') ?? undefined, wanted)!);
    // A client registered a moment ago for this redirect is not asked about (one authorization request per sign-in, as servers count them).
    const fresh = url.searchParams.get('client_id') === this.registeredNow;
    const answer = fresh ? ({ kind: 'go-on' } as const) : await probeAuthorization(url, interactive.redirectUrl, this.options.fetch ?? limitedFetch());
    if (answer.kind !== 'go-on') {
      // A client this provider registered (not the config's, not a metadata document URL) may be registered again, once.
      const configured = this.settings.clientId;
      const client =
        configured !== undefined ? ({ kind: 'configured', clientId: configured } as const) : url.searchParams.get('client_id') === this.clientMetadataUrl ? ({ kind: 'document' } as const) : ({ kind: 'registered' } as const);
      const mayRegisterAgain = !this.registeredAgain;
      this.registeredAgain = true;
      this.signInUnderWay = false;
      throw refusedSignIn(answer, { label: this.options.label, redirectUrl: interactive.redirectUrl, client, mayRegisterAgain });
    }
    await interactive.open(url);
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    const interactive = this.options.interactive;
    // Unattended, auth() goes on to redirectToAuthorization, which says why a person is needed.
    if (interactive === undefined) return;
    this.verifier = codeVerifier;
    this.signInUnderWay = true;
    this.secrets.add(codeVerifier);
    const pending = { codeVerifier, state: this.expectedState, redirectUrl: interactive.redirectUrl, startedAtMs: this.now() };
    await this.change((entry) => ({ ...entry, pending }));
  }

  async codeVerifier(): Promise<string> {
    const verifier = this.verifier ?? (await this.entry())?.pending?.codeVerifier;
    if (verifier === undefined) throw new SignInError(`${this.options.label}: no sign-in is under way (no PKCE verifier stored); run login again`);
    return verifier;
  }

  prepareTokenRequest(scope?: string): Promise<URLSearchParams> | undefined {
    return unattendedTokenRequest(this.grant, this.settings, scope, {
      label: this.options.label,
      audience: this.authorizationServer,
      resource: this.resource ?? resourceUrlFromServerUrl(this.options.serverUrl).href,
      fetch: this.options.fetch,
      remember: (secret) => this.secrets.add(secret),
    });
  }

  /** Told by auth() which authorization server it resolved (the audience of an ID-JAG). */
  saveAuthorizationServerUrl(issuer: string): void {
    this.authorizationServer = issuer;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    const usedRefresh = scope === 'tokens' || scope === 'all' ? (await this.entry())?.tokens?.refresh_token : undefined;
    if (scope === 'tokens' || scope === 'all') this.problem = 'the authorization server refused the stored sign-in (expired, revoked or signed out)';
    await this.change((entry) => {
      const next = { ...entry };
      if (scope === 'all' || scope === 'client') next.clients = {};
      // Only the token this process used: another process may have stored a newer one meanwhile.
      if ((scope === 'all' || scope === 'tokens') && entry.tokens?.refresh_token === usedRefresh) next.tokens = undefined;
      if (scope === 'all' || scope === 'verifier') next.pending = undefined;
      if (scope === 'all' || scope === 'discovery') next.discovery = undefined;
      return next;
    });
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    // Before anything is registered there or sent to it: what the SDK's OpenID parse dropped, and every endpoint checked.
    const checked = checkDiscovery(await withOpenIdFields(state, this.options.fetch ?? limitedFetch()));
    this.authServerMetadata = checked.state.authorizationServerMetadata;
    await this.change((entry) => ({ ...entry, discovery: checked.state, revocationRefused: checked.revocationRefused }));
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    // Signing in, each new sign-in finds the resource's authorization server afresh (it may have
    // moved, SEP-2352); only the code's exchange uses the discovery its sign-in began with.
    if (this.isInteractive && !this.signInUnderWay) return undefined;
    const stored = (await this.entry())?.discovery;
    if (stored !== undefined || this.settings.authServerMetadataUrl === undefined) {
      this.authServerMetadata = stored?.authorizationServerMetadata;
      return stored;
    }
    // The configured metadata document stands in for discovery of the authorization server.
    const metadata = await fetchAuthServerMetadata(this.settings.authServerMetadataUrl, this.options.fetch);
    const { state } = checkDiscovery({ authorizationServerUrl: metadata.issuer, authorizationServerMetadata: metadata });
    this.authServerMetadata = state.authorizationServerMetadata;
    return state;
  }

  /**
   * The DPoP session (RFC 9449) where the authorization server advertises DPoP: one key per
   * sign-in, kept in the store so every process proves possession with the same key.
   */
  dpop(): Promise<DpopSession | undefined> {
    this.dpopSession ??= this.loadDpop().then((session) => {
      if (session === undefined) this.dpopSession = undefined; // not advertised (yet): ask again after discovery
      return session;
    });
    return this.dpopSession;
  }

  private async loadDpop(): Promise<DpopSession | undefined> {
    const entry = await this.entry();
    const alg = dpopAlgorithmFor((entry?.discovery?.authorizationServerMetadata as Record<string, unknown> | undefined)?.dpop_signing_alg_values_supported);
    if (alg === undefined) return undefined;
    let key = entry?.dpopKey;
    if (key === undefined || key.alg !== alg) {
      const fresh = await newDpopKey(alg);
      // Another process may have made one meanwhile: the first stored wins, so all sign with it.
      const stored = await this.options.store.update(this.options.label, this.options.serverUrl, (current) => {
        const base = current ?? { label: this.options.label, serverUrl: this.options.serverUrl, clients: {}, updatedAtMs: this.now() };
        return base.dpopKey?.alg === alg ? undefined : { ...base, dpopKey: fresh };
      });
      key = stored?.dpopKey ?? fresh;
    }
    return dpopSessionFor(key);
  }

  saveResourceUrl(resourceUrl: string): void {
    this.resource = resourceUrl;
  }

  resourceUrl(): string | undefined {
    return this.resource;
  }

  /** Forgets discovery results, so the next auth() finds the resource's authorization server afresh (login does this). */
  async forgetDiscovery(): Promise<void> {
    if ((await this.entry())?.discovery !== undefined) await this.change((entry) => ({ ...entry, discovery: undefined }));
  }

  /** Keeps a scope the server asked for (a step-up nobody was there to complete) for the next login. */
  async noteWantedScope(scope: string): Promise<void> {
    await this.change((entry) => ({ ...entry, wantedScope: unionScopes(entry.wantedScope, scope) }));
  }

  /** Every secret value this provider has handled (tokens, client secret, PKCE verifier), for redaction. */
  knownSecrets(): ReadonlySet<string> {
    return this.secrets;
  }

  private remember(tokens: OAuthTokens): void {
    this.secrets.add(tokens.access_token);
    if (tokens.refresh_token !== undefined) this.secrets.add(tokens.refresh_token);
  }

  /** Why the last attempt needs a person, if it does. */
  needsLoginReason(): string | undefined {
    return this.problem;
  }

  /**
   * Whether the store holds a usable access token other than `refused` (the one the server just
   * refused): another process renewed the sign-in meanwhile, and that token is the one to try.
   */
  async renewedElsewhere(refused: string | undefined): Promise<boolean> {
    const tokens = (await this.entry())?.tokens;
    if (tokens === undefined || tokens.access_token === refused || !this.covers(tokens.resource)) return false;
    return tokens.expiresAtMs === undefined || tokens.expiresAtMs > this.now();
  }

  /** Runs `work` as the one renewal of this sign-in among every process sharing the store. */
  renewing<T>(work: () => Promise<T>): Promise<T> {
    return this.options.store.renewing(work);
  }

  /**
   * Refreshes an access token about to expire under the store's lock: if another process
   * refreshed meanwhile its token is used; a rotated refresh token is on disk before this returns.
   */
  private refreshBeforeExpiry(): Promise<StoredTokens | undefined> {
    this.refreshing ??= this.refreshUnderLock().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async refreshUnderLock(): Promise<StoredTokens | undefined> {
    if (this.grant !== 'authorization_code') return undefined; // the 401 that follows gets a new token
    // A DPoP-bound refresh token is refused without a proof by the same key (RFC 9449 §5): the
    // session is had before the store's lock is taken (it may store a key under that lock itself).
    const dpop = await this.dpop();
    let refused: string | undefined;
    const after = await this.options.store.update(this.options.label, this.options.serverUrl, async (entry) => {
      const tokens = entry?.tokens;
      if (entry === undefined || tokens?.refresh_token === undefined) return undefined;
      if (!dueForRefresh(tokens, this.now())) return undefined; // refreshed by someone else
      const metadata = entry.discovery?.authorizationServerMetadata as AuthorizationServerMetadata | undefined;
      const serverUrl = entry.discovery?.authorizationServerUrl;
      const clientInformation = this.settings.clientId !== undefined ? await this.clientInformation({ issuer: tokens.issuer }) : clientFor(entry, tokens.issuer);
      if (metadata === undefined || serverUrl === undefined || clientInformation === undefined) return undefined; // auth() refreshes on the 401
      try {
        const fresh = await refreshAuthorization(serverUrl, {
          metadata,
          clientInformation,
          refreshToken: tokens.refresh_token,
          resource: new URL(tokens.resource),
          ...(this.addClientAuthentication ? { addClientAuthentication: this.addClientAuthentication } : {}),
          ...(dpop ? { dpop } : {}),
          ...(this.options.fetch ? { fetchFn: this.options.fetch } : {}),
        });
        assertKnownTokenType(fresh.token_type, this.options.label);
        const stored = this.toStored(fresh, tokens.issuer, tokens.resource);
        this.remember(stored);
        return { ...entry, tokens: stored };
      } catch (error) {
        if (!(error instanceof OAuthError) || error.code === 'server_error') return undefined; // unreachable now: try on the 401
        refused = `the authorization server refused to refresh the sign-in (${error.code})`;
        // A client the server no longer knows is dropped with the tokens: the next login registers anew.
        const forgotten = this.settings.clientId === undefined && (error.code === OAuthErrorCode.InvalidClient || error.code === OAuthErrorCode.UnauthorizedClient);
        return { ...entry, tokens: undefined, ...(forgotten ? { clients: withoutClient(entry.clients, tokens.issuer) } : {}) };
      }
    });
    if (refused !== undefined) this.problem = refused;
    return after?.tokens;
  }

  private toStored(tokens: OAuthTokens, issuer: string, resource: string): StoredTokens {
    const obtainedAtMs = this.now();
    return {
      access_token: tokens.access_token,
      token_type: tokens.token_type,
      ...(tokens.refresh_token !== undefined ? { refresh_token: tokens.refresh_token } : {}),
      ...(tokens.scope !== undefined ? { scope: tokens.scope } : {}),
      ...(tokens.expires_in !== undefined ? { expires_in: tokens.expires_in } : {}),
      issuer,
      resource,
      obtainedAtMs,
      expiresAtMs: typeof tokens.expires_in === 'number' ? obtainedAtMs + tokens.expires_in * 1000 : undefined,
    };
  }

  /** Whether a token issued for `resource` may be sent to this server (RFC 8707: the same origin and a path it covers). */
  private covers(resource: string): boolean {
    try {
      return checkResourceAllowed({ requestedResource: resourceUrlFromServerUrl(this.options.serverUrl), configuredResource: resource });
    } catch {
      return false;
    }
  }

  private entry(): Promise<AuthEntry | undefined> {
    return this.options.store.get(this.options.label, this.options.serverUrl);
  }

  private async change(apply: (entry: AuthEntry) => AuthEntry): Promise<void> {
    await this.options.store.update(this.options.label, this.options.serverUrl, (entry) =>
      apply(entry ?? { label: this.options.label, serverUrl: this.options.serverUrl, clients: {}, updatedAtMs: this.now() }),
    );
  }
}

/** The registered client for an issuer (a trailing "/" is the one difference tolerated, as the SDK does). */
function clientFor(entry: AuthEntry | undefined, issuer: string): StoredOAuthClientInformation | undefined {
  if (entry === undefined) return undefined;
  for (const [key, info] of Object.entries(entry.clients)) if (issuersMatch(key, issuer)) return { ...info, issuer: key };
  return undefined;
}

function withoutClient(clients: AuthEntry['clients'], issuer: string): AuthEntry['clients'] {
  return Object.fromEntries(Object.entries(clients).filter(([key]) => !issuersMatch(key, issuer)));
}

function unionScopes(...scopes: Array<string | undefined>): string | undefined {
  const all = new Set(scopes.flatMap((scope) => (scope ?? '').split(' ')).filter((scope) => scope !== ''));
  return all.size === 0 ? undefined : [...all].join(' ');
}

function issuersMatch(a: string, b: string): boolean {
  return a === b || (a.endsWith('/') && a.slice(0, -1) === b) || (b.endsWith('/') && b.slice(0, -1) === a);
}

/** The tokens as the SDK expects them, issuer-stamped, without the store's bookkeeping. */
function wireTokens(stored: StoredTokens): StoredOAuthTokens {
  return {
    access_token: stored.access_token,
    token_type: stored.token_type,
    ...(stored.refresh_token !== undefined ? { refresh_token: stored.refresh_token } : {}),
    ...(stored.scope !== undefined ? { scope: stored.scope } : {}),
    issuer: stored.issuer,
  };
}
