// The resource server's half of DPoP (RFC 9449 §4.3 and §7): one proof checked against the
// request it came with (method, the URL the client used, the access token) and against replay.
// Knows no token issuer and no HTTP serving; never logs, and its errors never quote the proof.
import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, decodeProtectedHeader, EmbeddedJWK, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';

/** Proof signature algorithms accepted: asymmetric only, as for tokens (never none or HS*). */
export const DPOP_ALGORITHMS: readonly string[] = ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512', 'EdDSA', 'Ed25519'];
/** How old a proof's `iat` may be (60 s). */
export const DEFAULT_DPOP_MAX_AGE_S = 60;
/** How far ahead of this clock a proof's `iat` may be (5 s). */
export const DEFAULT_DPOP_FUTURE_S = 5;
/** How many proof ids are remembered for the replay check (100,000, about 10 MB at most). */
export const DEFAULT_DPOP_MAX_REMEMBERED = 100_000;

// JWK members that only a private or symmetric key has (RFC 7518 §6).
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const MAX_JTI_CHARS = 256;
const JWS_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** A DPoP proof refused; `message` is a fixed ASCII phrase fit for `error_description`. */
export class DpopProofError extends Error {
  override readonly name = 'DpopProofError';
  readonly code = 'invalid_dpop_proof';
}

export interface DpopProofOptions {
  /** Oldest `iat` accepted, in seconds before now (default DEFAULT_DPOP_MAX_AGE_S). */
  maxAgeS?: number;
  /** Newest `iat` accepted, in seconds after now (default DEFAULT_DPOP_FUTURE_S). */
  futureS?: number;
  /** Proof ids remembered at most (default DEFAULT_DPOP_MAX_REMEMBERED). */
  maxRemembered?: number;
  /** The clock, in ms since the epoch; injected in tests. */
  nowMs?: () => number;
}

/** What a proof must match: the request as the client made it, and the token it came with. */
export interface DpopExpectation {
  /** The request method (`htm`). */
  method: string;
  /** The URL the client used, without query and fragment (`htu`). */
  url: string;
  /** The access token of the `Authorization: DPoP` header (`ath`). */
  accessToken: string;
}

/** Checks DPoP proofs for one resource, remembering the ids of those accepted until they are too old to pass again. */
export class DpopProofChecker {
  private readonly maxAgeS: number;
  private readonly futureS: number;
  private readonly nowMs: () => number;
  private readonly seen: LRUCache<string, true>;

  constructor(options: DpopProofOptions = {}) {
    this.maxAgeS = options.maxAgeS ?? DEFAULT_DPOP_MAX_AGE_S;
    this.futureS = options.futureS ?? DEFAULT_DPOP_FUTURE_S;
    this.nowMs = options.nowMs ?? Date.now;
    // An id must be remembered as long as its proof could pass the iat window: both sides of it.
    const nowMs = this.nowMs;
    this.seen = new LRUCache({ max: options.maxRemembered ?? DEFAULT_DPOP_MAX_REMEMBERED, ttl: (this.maxAgeS + this.futureS) * 1000 + 1000, perf: { now: nowMs } });
  }

  /** Checks `proof` against `expected`; resolves the JWK SHA-256 thumbprint of its key (for `cnf.jkt`). Throws DpopProofError. */
  async check(proof: string, expected: DpopExpectation): Promise<string> {
    if (!JWS_SHAPE.test(proof)) throw new DpopProofError('the DPoP proof is not a signed JWT');
    let jwk: unknown;
    try {
      jwk = decodeProtectedHeader(proof).jwk;
    } catch {
      throw new DpopProofError('the DPoP proof is malformed');
    }
    if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) throw new DpopProofError('the DPoP proof has no jwk header');
    if (PRIVATE_MEMBERS.some((member) => member in jwk)) throw new DpopProofError('the DPoP proof jwk is not a public key');

    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: [...DPOP_ALGORITHMS] }));
    } catch (error) {
      throw new DpopProofError(describeJoseFault(error), { cause: error });
    }
    const { jti, htm, htu, iat, ath } = payload as { jti?: unknown; htm?: unknown; htu?: unknown; iat?: unknown; ath?: unknown };
    if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI_CHARS) throw new DpopProofError('the DPoP proof has no usable jti');
    if (htm !== expected.method) throw new DpopProofError('the DPoP proof is for another method (htm)');
    if (typeof htu !== 'string' || !sameTarget(htu, expected.url)) throw new DpopProofError('the DPoP proof is for another URL (htu)');
    if (typeof iat !== 'number' || !Number.isFinite(iat)) throw new DpopProofError('the DPoP proof has no iat');
    const nowS = this.nowMs() / 1000;
    if (iat < nowS - this.maxAgeS) throw new DpopProofError('the DPoP proof is too old (iat)');
    if (iat > nowS + this.futureS) throw new DpopProofError('the DPoP proof is from the future (iat)');
    if (ath !== accessTokenHash(expected.accessToken)) throw new DpopProofError('the DPoP proof is for another access token (ath)');
    // The nonce, if any, is not checked: skills-serve issues none (RFC 9449 §9 makes them optional),
    // and a client may send one its authorization server gave on the same origin.

    const thumbprint = await calculateJwkThumbprint(jwk as Parameters<typeof calculateJwkThumbprint>[0], 'sha256');
    // Per key: ids are unique per proof, and one client's ids cannot collide with another's.
    const id = `${thumbprint} ${jti}`;
    if (this.seen.has(id)) throw new DpopProofError('the DPoP proof was used before (jti)');
    this.seen.set(id, true);
    return thumbprint;
  }
}

/** base64url(SHA-256(token)): the `ath` a proof for `token` carries. */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest('base64url');
}

/** `htu` compared to the expected URL as RFC 9449 §4.3 says: both without query and fragment, after URL normalization (case of scheme and host, default port). */
function sameTarget(htu: string, expected: string): boolean {
  let actual: URL;
  let wanted: URL;
  try {
    actual = new URL(htu);
    wanted = new URL(expected);
  } catch {
    return false;
  }
  for (const url of [actual, wanted]) {
    url.search = '';
    url.hash = '';
  }
  return actual.href === wanted.href;
}

// Fixed phrases: the details jose gives quote the proof's header.
function describeJoseFault(error: unknown): string {
  if (!(error instanceof joseErrors.JOSEError)) return 'the DPoP proof cannot be checked';
  switch (error.code) {
    case joseErrors.JOSEAlgNotAllowed.code:
    case joseErrors.JOSENotSupported.code:
      return `the DPoP proof is signed with an algorithm not accepted (use one of ${DPOP_ALGORITHMS.join(' ')})`;
    case joseErrors.JWSSignatureVerificationFailed.code:
      return 'the DPoP proof signature does not verify with its jwk';
    case joseErrors.JWTClaimValidationFailed.code:
      return (error as joseErrors.JWTClaimValidationFailed).claim === 'typ' ? 'the DPoP proof typ is not dpop+jwt' : 'the DPoP proof claims are not acceptable';
    default:
      return 'the DPoP proof is malformed';
  }
}
