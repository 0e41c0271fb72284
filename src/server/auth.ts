// skills-serve as an OAuth 2.1 protected resource (MCP authorization, 2025-11-25 and
// 2026-07-28): its protected resource metadata (RFC 9728), and the token check in front of
// the MCP endpoint: a JWT from the trusted issuer, for this resource (RFC 8707), unexpired,
// with the required scopes, presented as Bearer (RFC 6750) or, bound to a key, as DPoP with a
// proof of that key (RFC 9449); else 401 or 403 with both schemes' WWW-Authenticate challenges.
// Knows nothing of MCP messages. A token or proof is never logged nor echoed.
import type { AuthInfo } from '@modelcontextprotocol/server';
import { jwtVerify, type JWTPayload } from 'jose';
import { ConfigError, UnavailableError } from '../errors.js';
import { escapeForLog } from '../format/escape.js';
import type { Log } from '../log.js';
import { isTokenFault, TrustedIssuer, type IssuerOptions } from './auth-issuer.js';
import { DPOP_ALGORITHMS, DpopProofChecker, DpopProofError, type DpopProofOptions } from './dpop-proof.js';

export interface ResourceAuthOptions {
  /** The authorization server's issuer identifier, exactly as its metadata states it. */
  issuer: string;
  /** The resource tokens must be issued for (their `aud`), as clients see the endpoint; default the MCP endpoint URL. */
  audience?: string;
  /** Scopes every token must carry; advertised in the challenge and the metadata. */
  scopes?: readonly string[];
  /** Seconds of clock skew allowed on `exp` and `nbf` (default 0). */
  clockToleranceS?: number;
  /** Log every refused request (never its token). */
  verbose?: boolean;
  /** Deadlines, size cap, retry and fetch of the issuer's metadata and keys. */
  issuerFetch?: Omit<IssuerOptions, 'issuer' | 'log'>;
  /** The DPoP proof window and replay memory (defaults in dpop-proof.ts). */
  dpop?: DpopProofOptions;
}

/** The protected resource in front of one MCP endpoint. */
export interface ResourceAuth {
  /** The resource identifier: the audience tokens must name. */
  readonly resource: string;
  /** Where clients find the protected resource metadata (the challenge's `resource_metadata`). */
  readonly metadataUrl: string;
  /** Answers the metadata paths, refuses an MCP request without an acceptable token; undefined lets the request through. */
  handle(request: Request): Promise<Response | undefined>;
  /** Who a request `handle` let through presented: its token's subject and client, for the handlers (ctx.http.authInfo). */
  authInfoOf(request: Request): AuthInfo | undefined;
}

const PRM_PATH = '/.well-known/oauth-protected-resource';
// Asymmetric only: an `alg` of none or HS256 with the public key as secret must never pass.
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
// RFC 6750 b64token, in the shape of a compact JWS.
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

type Scheme = 'Bearer' | 'DPoP';
/** A refusal: the status, the scheme whose challenge carries the error, the error code and a fixed phrase. */
interface Refusal {
  status: 401 | 403;
  scheme: Scheme;
  error?: string;
  description: string;
}

/** Checks that a resource needing an audience can have one: a server bound to every address does not know the URL its clients use. Throws ConfigError. */
export function checkAuthBinding(host: string, auth: ResourceAuthOptions): void {
  if (auth.audience === undefined && /^(0\.0\.0\.0|::|\[::\]|0:0:0:0:0:0:0:0)$/.test(host)) {
    throw new ConfigError(`--auth-audience is required when bound to ${host}: give the URL clients use for the MCP endpoint (e.g. https://skills.example.com/mcp)`);
  }
}

/** The resource at `endpointUrl` (the URL the server listens on) guarded by `options`. Throws ConfigError on a bad issuer or audience. */
export function createResourceAuth(options: ResourceAuthOptions, endpointUrl: string, log: Log): ResourceAuth {
  const issuer = new TrustedIssuer({ issuer: options.issuer, log, ...options.issuerFetch });
  const resource = checkAudience(options.audience ?? endpointUrl);
  const scopes = [...new Set(options.scopes ?? [])];
  const scope = scopes.join(' ');
  const resourcePath = new URL(resource).pathname.replace(/\/+$/, '');
  const metadataUrl = new URL(PRM_PATH + resourcePath, resource).href;
  const endpointPath = new URL(endpointUrl).pathname;
  const metadataPaths = new Set([PRM_PATH, PRM_PATH + resourcePath, PRM_PATH + endpointPath]);
  const metadata = JSON.stringify({
    resource,
    authorization_servers: [issuer.issuer],
    ...(scopes.length > 0 && { scopes_supported: scopes }),
    bearer_methods_supported: ['header'],
    resource_name: 'skills-serve',
    dpop_signing_alg_values_supported: DPOP_ALGORITHMS,
    dpop_bound_access_tokens_required: false,
  });
  const dpop = new DpopProofChecker(options.dpop);
  /** Whether the log has said that a token which is not a JWT came (once per process). */
  let opaqueNoted = false;
  // RFC 9449 htu: the URL the client used for the endpoint, i.e. the resource (the audience), not
  // the URL this process sees behind a proxy; the same reason the audience is not taken from Host.
  const proofUrl = resource;
  log(`auth: tokens from ${issuer.issuer} for ${resource}${scope === '' ? '' : ` with scope "${scope}"`} required; metadata at ${metadataUrl}`);
  issuer.warm();

  // Both schemes are offered every time (RFC 9449 §7.1, RFC 9110 §11.6.1): the error, if any, in
  // the challenge of the scheme the client used; Bearer first, where MCP clients look.
  const challenge = ({ status, scheme, error, description }: Refusal): Response => {
    const render = (name: Scheme): string => {
      const params: Array<[string, string]> = [];
      if (error !== undefined && scheme === name) params.push(['error', error], ['error_description', description]);
      params.push(['resource_metadata', metadataUrl]);
      if (scope !== '') params.push(['scope', scope]);
      if (name === 'DPoP') params.push(['algs', DPOP_ALGORITHMS.join(' ')]);
      return `${name} ${params.map(([key, value]) => `${key}="${value.replace(/["\\]/g, '\\$&')}"`).join(', ')}`;
    };
    const message = status === 403 ? `Forbidden: ${description}` : `Unauthorized: ${description}`;
    return Response.json(
      { jsonrpc: '2.0', error: { code: -32001, message }, id: null },
      { status, headers: { 'www-authenticate': `${render('Bearer')}, ${render('DPoP')}`, 'cache-control': 'no-store' } },
    );
  };

  const refuse = (request: Request, refusal: Refusal): Response => {
    if (options.verbose) log(`auth: ${request.method} ${escapeForLog(new URL(request.url).pathname)} refused (${refusal.status}, ${refusal.scheme}): ${refusal.description}`);
    return challenge(refusal);
  };

  /** Undefined when the token (and its proof, for DPoP) passes every check, else why not; throws UnavailableError when the issuer cannot be asked. */
  const check = async (request: Request, scheme: Scheme, token: string): Promise<Refusal | undefined> => {
    const refusal = (error: string, description: string, status: 401 | 403 = 401): Refusal => ({ status, scheme, error, description });
    if (!JWT_SHAPE.test(token)) {
      // An issuer that hands out opaque tokens makes every sign-in fail here: said once in the
      // log, and to every client in the challenge, so nobody retries in the dark.
      if (!opaqueNoted) {
        opaqueNoted = true;
        log(`auth: refused a token that is not a JWT; if ${issuer.issuer} issues opaque access tokens, skills-serve cannot verify them: configure it to issue JWT access tokens (RFC 9068) for ${resource} (logged once)`);
      }
      return refusal('invalid_token', `the token is not a JWT; this server verifies only JWT access tokens signed by ${issuer.issuer}`);
    }
    let thumbprint: string | undefined;
    if (scheme === 'DPoP') {
      // Several DPoP fields arrive joined by ", " (a JWS has neither character).
      const proof = request.headers.get('dpop');
      if (proof === null) return refusal('invalid_dpop_proof', 'the DPoP scheme needs a DPoP proof header');
      if (/[,\s]/.test(proof.trim())) return refusal('invalid_dpop_proof', 'exactly one DPoP proof header is allowed');
      try {
        thumbprint = await dpop.check(proof.trim(), { method: request.method, url: proofUrl, accessToken: token });
      } catch (error) {
        if (error instanceof DpopProofError) return refusal(error.code, error.message);
        throw error;
      }
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, issuer.getKey, {
        issuer: issuer.issuer,
        audience: resource,
        algorithms: ALGORITHMS,
        requiredClaims: ['exp'],
        clockTolerance: options.clockToleranceS ?? 0,
      }));
    } catch (error) {
      if (!isTokenFault(error)) throw error;
      return refusal('invalid_token', describeFault(error as Error & { code: string; claim?: string }));
    }
    const boundTo = boundKeyOf(payload);
    if (scheme === 'Bearer' && boundTo !== undefined) return refusal('invalid_token', 'the token is bound to a DPoP key: present it with the DPoP scheme and a proof');
    if (scheme === 'DPoP') {
      if (boundTo === undefined) return refusal('invalid_token', 'the token is not bound to a DPoP key (no cnf.jkt): present it as Bearer');
      if (boundTo !== thumbprint) return refusal('invalid_token', 'the token is bound to another DPoP key than the proof');
    }
    const granted = grantedScopes(payload);
    const missing = scopes.filter((wanted) => !granted.has(wanted));
    if (missing.length > 0) return refusal('insufficient_scope', `the token lacks the scope ${missing.join(' ')}`, 403);
    passed.set(request, authInfoFrom(token, payload, granted));
    return undefined;
  };
  // Per request let through; the request object goes when its answer does.
  const passed = new WeakMap<Request, AuthInfo>();

  return {
    resource,
    metadataUrl,
    async handle(request) {
      const { pathname } = new URL(request.url);
      if (metadataPaths.has(pathname)) {
        if (request.method !== 'GET' && request.method !== 'HEAD') return new Response('method not allowed\n', { status: 405, headers: { allow: 'GET, HEAD' } });
        // Public metadata: a browser-based client on another origin may read it.
        return new Response(request.method === 'HEAD' ? null : metadata, { headers: { 'content-type': 'application/json', 'cache-control': 'max-age=300', 'access-control-allow-origin': '*' } });
      }
      if (pathname !== endpointPath) return undefined;

      const authorization = request.headers.get('authorization');
      const presented = authorization === null ? undefined : /^(Bearer|DPoP) +(.*)$/i.exec(authorization.trim());
      if (!presented) return refuse(request, { status: 401, scheme: 'Bearer', description: 'a bearer or DPoP token is required' });
      const scheme: Scheme = presented[1]!.toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer';

      let refusal: Refusal | undefined;
      try {
        refusal = await check(request, scheme, presented[2]!);
      } catch (error) {
        if (error instanceof UnavailableError) {
          // The issuer's own log line says why; the client may retry.
          return Response.json(
            { jsonrpc: '2.0', error: { code: -32000, message: `Service unavailable: cannot check the token now: the authorization server ${issuer.issuer} does not answer` }, id: null },
            { status: 503, headers: { 'retry-after': '5', 'cache-control': 'no-store' } },
          );
        }
        throw error;
      }
      return refusal && refuse(request, refusal);
    },
    authInfoOf: (request) => passed.get(request),
  };
}

/** The SDK's AuthInfo of a verified token: `sub` in extra (the subject an audit line names), client from `client_id` or `azp`. */
function authInfoFrom(token: string, payload: JWTPayload, scopes: ReadonlySet<string>): AuthInfo {
  const { client_id: clientId, azp } = payload as { client_id?: unknown; azp?: unknown };
  const client = typeof clientId === 'string' ? clientId : typeof azp === 'string' ? azp : '';
  return { token, clientId: client, scopes: [...scopes], ...(payload.exp === undefined ? {} : { expiresAt: payload.exp }), extra: payload.sub === undefined ? {} : { sub: payload.sub } };
}

/** The scopes a token grants: its `scope` claim (space-separated), else `scp` (a string or a list). */
export function grantedScopes(payload: JWTPayload): Set<string> {
  const { scope, scp } = payload as { scope?: unknown; scp?: unknown };
  if (typeof scope === 'string') return new Set(scope.split(' ').filter(Boolean));
  if (typeof scp === 'string') return new Set(scp.split(' ').filter(Boolean));
  if (Array.isArray(scp)) return new Set(scp.filter((entry): entry is string => typeof entry === 'string'));
  return new Set();
}

/** The JWK thumbprint a token is bound to (`cnf.jkt`, RFC 9449 §6.1), or undefined for a bearer token. */
function boundKeyOf(payload: JWTPayload): string | undefined {
  const { cnf } = payload as { cnf?: unknown };
  if (typeof cnf !== 'object' || cnf === null) return undefined;
  const { jkt } = cnf as { jkt?: unknown };
  // A jkt that is not a string still binds the token, to a key no proof can show: refused either way.
  return jkt === undefined ? undefined : typeof jkt === 'string' ? jkt : '';
}

function checkAudience(audience: string): string {
  let url: URL;
  try {
    url = new URL(audience);
  } catch {
    throw new ConfigError(`the audience ${escapeForLog(audience)} is not a URL`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.hash !== '' || audience.includes('#')) {
    throw new ConfigError(`the audience ${escapeForLog(audience)} must be an http(s) URL without a fragment: the URL clients use for the MCP endpoint`);
  }
  return audience;
}

// Fixed phrases: error_description must stay ASCII, and the claim values come from the token.
function describeFault(error: Error & { code: string; claim?: string }): string {
  switch (error.code) {
    case 'ERR_JWT_EXPIRED':
      return 'the token has expired';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (error.claim === 'aud') return 'the token is for another resource';
      if (error.claim === 'iss') return 'the token is from another issuer';
      if (error.claim === 'nbf') return 'the token is not valid yet';
      return `the token's ${error.claim ?? 'claims'} claim is not acceptable`;
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return "the token is not signed by the issuer's keys";
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'the token is signed with an algorithm not accepted';
    default:
      return 'the token is malformed';
  }
}
