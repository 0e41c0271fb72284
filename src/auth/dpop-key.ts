// The DPoP key of one sign-in (RFC 9449): an asymmetric key pair whose public half the
// authorization server binds the tokens to, so a stolen token is useless without it. Kept in
// the token store (a private JWK, like the tokens it guards) so that `login`, a mount and
// `snapshot` present proofs with the same key. Used only where the authorization server
// advertises dpop_signing_alg_values_supported.
import { DPOP_SUPPORTED_ALGS, DpopSession, generateDpopKeyPair, type DpopAlg } from '@modelcontextprotocol/client';
import { calculateJwkThumbprint, exportJWK, importJWK, type JWK } from 'jose';

type KeyPair = NonNullable<NonNullable<Parameters<typeof DpopSession.create>[0]>['keyPair']>;

/** A DPoP key as stored: the algorithm and the private JWK. */
export interface StoredDpopKey {
  alg: DpopAlg;
  privateJwk: JWK;
}

/** The algorithm to use of those the server supports: ES256 when offered, else the first the SDK can sign with; undefined: none. */
export function dpopAlgorithmFor(supported: unknown): DpopAlg | undefined {
  if (!Array.isArray(supported)) return undefined;
  const usable = supported.filter((alg): alg is DpopAlg => typeof alg === 'string' && (DPOP_SUPPORTED_ALGS as readonly string[]).includes(alg));
  return usable.includes('ES256' as DpopAlg) ? ('ES256' as DpopAlg) : usable[0];
}

/** A new key pair, exported for the store. */
export async function newDpopKey(alg: DpopAlg): Promise<StoredDpopKey> {
  const pair = await generateDpopKeyPair({ alg, extractable: true });
  return { alg, privateJwk: await exportJWK(pair.privateKey) };
}

/** A DPoP session over a stored key. */
export async function dpopSessionFor(key: StoredDpopKey): Promise<DpopSession> {
  const privateKey = (await importJWK(key.privateJwk, key.alg)) as KeyPair['privateKey'];
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicJwk } = key.privateJwk;
  const publicKey = (await importJWK(publicJwk, key.alg)) as KeyPair['publicKey'];
  const thumbprint = await calculateJwkThumbprint(publicJwk, 'sha256');
  return DpopSession.create({ keyPair: { privateKey, publicKey, publicJwk, thumbprint, alg: key.alg } });
}
