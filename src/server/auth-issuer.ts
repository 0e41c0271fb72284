// The authorization server skills-serve trusts: its metadata found (RFC 8414, then OpenID
// discovery), its `issuer` checked to be exactly the configured one, its signing keys fetched
// from `jwks_uri` by jose. Every fetch has a deadline and a size cap; an issuer that does not
// answer is retried with a backoff. Knows no MCP, no HTTP serving, and never sees a token.
import { createRemoteJWKSet, customFetch, errors as joseErrors, type FetchImplementation, type JWTVerifyGetKey } from 'jose';
import { ConfigError, UnavailableError } from '../errors.js';
import { escapeForLog } from '../format/escape.js';
import type { Log } from '../log.js';
import { isLoopbackHost } from './loopback.js';

/** How long one fetch of the issuer's metadata or keys may take (5 s). */
export const DEFAULT_ISSUER_TIMEOUT_MS = 5_000;
/** The largest metadata document or key set accepted (1 MiB). */
export const DEFAULT_ISSUER_MAX_BYTES = 1024 * 1024;

export interface IssuerOptions {
  /** The issuer identifier, exactly as the authorization server's metadata states it. */
  issuer: string;
  /** Deadline of each fetch (default DEFAULT_ISSUER_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Largest response body accepted (default DEFAULT_ISSUER_MAX_BYTES). */
  maxBytes?: number;
  /** First wait after a failed discovery, doubled at each failure (default 1 s) up to `retryMaxMs` (default 30 s). */
  retryMinMs?: number;
  retryMaxMs?: number;
  /** The fetch to use; injected in tests. */
  fetch?: typeof fetch;
  log: Log;
}

/** The parts of the issuer's metadata the resource server uses. */
export interface IssuerMetadata {
  issuer: string;
  jwks_uri: string;
  /** Where it was found. */
  metadataUrl: string;
}

/**
 * The issuer's keys, found on first use and kept. `getKey` is jose's key resolver; it throws
 * UnavailableError (never a jose error) when the issuer or its key set cannot be reached, so a
 * caller can tell "cannot check now" (503) from "bad token" (401).
 */
export class TrustedIssuer {
  readonly issuer: string;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly retryMinMs: number;
  private readonly retryMaxMs: number;
  private readonly fetch: typeof fetch;
  private readonly log: Log;
  private resolved: JWTVerifyGetKey | undefined;
  private inflight: Promise<JWTVerifyGetKey> | undefined;
  private failures = 0;
  private retryAtMs = 0;
  private lastError: UnavailableError | undefined;

  constructor(options: IssuerOptions) {
    this.issuer = checkIssuerUrl(options.issuer);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_ISSUER_TIMEOUT_MS;
    this.maxBytes = options.maxBytes ?? DEFAULT_ISSUER_MAX_BYTES;
    this.retryMinMs = options.retryMinMs ?? 1_000;
    this.retryMaxMs = options.retryMaxMs ?? 30_000;
    this.fetch = options.fetch ?? fetch;
    this.log = options.log;
  }

  /** Starts discovery now, so the log says at once whether the issuer answers; never throws. */
  warm(): void {
    this.keys().catch(() => {});
  }

  /** jose's key resolver for tokens of this issuer. */
  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    const remote = await this.keys();
    // Keys that could not be fetched a moment ago: fail fast rather than wait out a deadline per request.
    if (this.lastError && performance.now() < this.retryAtMs) throw this.lastError;
    try {
      const key = await remote(header, token);
      if (this.lastError) this.recovered('its keys can be fetched again');
      return key;
    } catch (error) {
      if (isTokenFault(error)) throw error;
      throw this.failed(`cannot fetch the signing keys of issuer ${this.issuer}: ${reasonOf(error)}`, error);
    }
  };

  private keys(): Promise<JWTVerifyGetKey> {
    if (this.resolved) return Promise.resolve(this.resolved);
    if (this.inflight) return this.inflight;
    if (this.lastError && performance.now() < this.retryAtMs) return Promise.reject(this.lastError);
    this.inflight = this.discover()
      .then(
        (metadata) => {
          this.resolved = createRemoteJWKSet(new URL(metadata.jwks_uri), { timeoutDuration: this.timeoutMs, [customFetch]: this.boundedFetch });
          this.recovered(`${this.failures > 0 ? 'answers again' : 'ready'}: metadata ${escapeForLog(metadata.metadataUrl)}, keys ${escapeForLog(metadata.jwks_uri)}`);
          return this.resolved;
        },
        (error: unknown) => {
          throw this.failed(`issuer ${this.issuer} unavailable: ${reasonOf(error)}`, error);
        },
      )
      .finally(() => {
        this.inflight = undefined;
      });
    return this.inflight;
  }

  private recovered(what: string): void {
    this.log(`auth: issuer ${this.issuer} ${what}`);
    this.failures = 0;
    this.lastError = undefined;
  }

  /** Notes a failure, logs it with the wait before the next try, and returns the error every request gets until then. */
  private failed(message: string, cause: unknown): UnavailableError {
    this.failures++;
    const waitMs = Math.min(this.retryMaxMs, this.retryMinMs * 2 ** (this.failures - 1));
    this.retryAtMs = performance.now() + waitMs;
    this.lastError = new UnavailableError(message, { cause });
    this.log(`auth: ${message}; requests with a token get 503 until it answers (next try in ${Math.ceil(waitMs / 1000)} s or later)`);
    return this.lastError;
  }

  /** RFC 8414 first (path-inserted), then OpenID discovery (path-inserted, then appended); the first document found must name this issuer exactly. */
  private async discover(): Promise<IssuerMetadata> {
    const misses: string[] = [];
    for (const metadataUrl of metadataUrls(this.issuer)) {
      const response = await this.boundedFetch(metadataUrl, { headers: new Headers({ accept: 'application/json' }), method: 'GET', redirect: 'manual', signal: AbortSignal.timeout(this.timeoutMs) });
      if (response.status !== 200) {
        misses.push(`${metadataUrl}: HTTP ${response.status}`);
        continue;
      }
      let document: unknown;
      try {
        document = JSON.parse(await response.text());
      } catch {
        throw new Error(`${metadataUrl} is not JSON`);
      }
      if (typeof document !== 'object' || document === null || Array.isArray(document)) throw new Error(`${metadataUrl} is not a JSON object`);
      const { issuer, jwks_uri: jwksUri } = document as Record<string, unknown>;
      if (issuer !== this.issuer) throw new Error(`${metadataUrl} names issuer ${escapeForLog(JSON.stringify(issuer) ?? 'nothing')}, not ${this.issuer}`);
      if (typeof jwksUri !== 'string') throw new Error(`${metadataUrl} has no jwks_uri`);
      checkFetchable(jwksUri, `jwks_uri of ${metadataUrl}`);
      return { issuer, jwks_uri: jwksUri, metadataUrl };
    }
    throw new Error(`no authorization server metadata (${misses.join('; ')})`);
  }

  /** fetch with a deadline and a body cap, whose answer is buffered: the keys and metadata are small. */
  private readonly boundedFetch: FetchImplementation = async (url, init) => {
    const signal = AbortSignal.any([init.signal, AbortSignal.timeout(this.timeoutMs)]);
    let response: Response;
    try {
      response = await this.fetch(url, { ...init, signal });
    } catch (error) {
      throw new Error(`GET ${url}: ${reasonOf(error)}`, { cause: error });
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => {});
      throw new Error(`GET ${url}: redirected (HTTP ${response.status}); give the issuer's own URL`);
    }
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (declared > this.maxBytes) {
      await response.body?.cancel().catch(() => {});
      throw new Error(`GET ${url}: answer of ${declared} bytes, over the ${this.maxBytes} allowed`);
    }
    const chunks: Uint8Array[] = [];
    let total = 0;
    if (response.body) {
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read().catch((error: unknown) => {
          throw new Error(`GET ${url}: ${reasonOf(error)}`, { cause: error });
        });
        if (done) break;
        total += value.length;
        if (total > this.maxBytes) {
          await reader.cancel().catch(() => {});
          throw new Error(`GET ${url}: answer over the ${this.maxBytes} bytes allowed`);
        }
        chunks.push(value);
      }
    }
    return new Response(Buffer.concat(chunks), { status: response.status, headers: response.headers });
  };
}

/** The issuer URL as given, checked: https (http only on a loopback host), no query or fragment. Throws ConfigError. */
export function checkIssuerUrl(issuer: string): string {
  checkFetchable(issuer, 'the issuer', (message) => new ConfigError(message));
  const url = new URL(issuer);
  if (url.search !== '' || url.hash !== '' || issuer.includes('?') || issuer.includes('#')) throw new ConfigError(`the issuer ${issuer} must have no query or fragment (RFC 8414)`);
  return issuer;
}

/** Where the metadata of `issuer` may be, in the order the MCP authorization spec tries them. */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  return path === ''
    ? [`${url.origin}/.well-known/oauth-authorization-server`, `${url.origin}/.well-known/openid-configuration`]
    : [`${url.origin}/.well-known/oauth-authorization-server${path}`, `${url.origin}/.well-known/openid-configuration${path}`, `${url.origin}${path}/.well-known/openid-configuration`];
}

function checkFetchable(text: string, what: string, fail: (message: string) => Error = (message) => new Error(message)): void {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw fail(`${what} ${escapeForLog(text)} is not a URL`);
  }
  if (url.protocol === 'https:') return;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return;
  throw fail(`${what} ${escapeForLog(text)} must be an https URL (http only on this machine's loopback)`);
}

// jose's verdicts on the token itself (as opposed to failures to fetch the key set).
const TOKEN_FAULTS = new Set([
  joseErrors.JWKSNoMatchingKey.code,
  joseErrors.JWKSMultipleMatchingKeys.code,
  joseErrors.JWSInvalid.code,
  joseErrors.JWTInvalid.code,
  joseErrors.JOSEAlgNotAllowed.code,
  joseErrors.JOSENotSupported.code,
  joseErrors.JWSSignatureVerificationFailed.code,
  joseErrors.JWTExpired.code,
  joseErrors.JWTClaimValidationFailed.code,
]);

/** True for jose's errors about the token (bad signature, claims, format), false for fetch failures. */
export function isTokenFault(error: unknown): boolean {
  return error instanceof joseErrors.JOSEError && TOKEN_FAULTS.has(error.code);
}

function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === 'TimeoutError' || error.name === 'AbortError' || error instanceof joseErrors.JWKSTimeout) return 'timed out';
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' && error.message === 'fetch failed' ? cause.message : undefined;
  return escapeForLog(detail === undefined ? error.message : `${error.message} (${detail})`);
}
