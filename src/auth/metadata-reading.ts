// What this client reads of an authorization server's metadata beyond the SDK's parse, before
// the discovery is kept: the fields the SDK's OpenID discovery schema strips (it keeps only
// OpenID's own keys, so revocation_endpoint and dpop_signing_alg_values_supported vanish), read
// from the OpenID document itself; and every endpoint checked (endpoint-rules.ts) before
// anything is registered at, sent to, or opened in a browser from it.
import type { AuthorizationServerMetadata, FetchLike, OAuthDiscoveryState } from '@modelcontextprotocol/client';
import { assertUsableEndpoint, endpointRefusal, revocationRefusal, shownAddress } from './endpoint-rules.js';

/** RFC 8414 fields this client uses that the SDK's OpenID parse drops. */
const READ_FROM_OPENID = ['revocation_endpoint', 'revocation_endpoint_auth_methods_supported', 'dpop_signing_alg_values_supported'] as const;

/** A discovery as it may be kept, and why its revocation endpoint was not kept (if it was not). */
export interface CheckedDiscovery {
  state: OAuthDiscoveryState;
  revocationRefused?: string | undefined;
}

/**
 * The discovery with what the OpenID document says of revocation and DPoP, where the metadata
 * in hand came from OpenID discovery (the SDK's parse dropped them). Best effort: a document
 * that cannot be read, or names another issuer, adds nothing.
 */
export async function withOpenIdFields(state: OAuthDiscoveryState, fetchFn: FetchLike): Promise<OAuthDiscoveryState> {
  const metadata = state.authorizationServerMetadata as Record<string, unknown> | undefined;
  if (metadata === undefined || !looksOpenId(metadata) || READ_FROM_OPENID.every((field) => field in metadata)) return state;
  for (const url of openIdDocumentUrls(state.authorizationServerUrl)) {
    if (endpointRefusal(url) !== undefined) continue;
    const document = await readJson(url, fetchFn);
    if (document === undefined || document.issuer !== metadata.issuer) continue;
    const added: Record<string, unknown> = {};
    for (const field of READ_FROM_OPENID) {
      const value = document[field];
      if (field in metadata || value === undefined) continue;
      const wellTyped = field === 'revocation_endpoint' ? typeof value === 'string' : Array.isArray(value) && value.every((item) => typeof item === 'string');
      if (wellTyped) added[field] = value;
    }
    return { ...state, authorizationServerMetadata: { ...(metadata as AuthorizationServerMetadata), ...added } };
  }
  return state;
}

/**
 * Throws SignInError when the metadata names an authorization, token or registration endpoint
 * that is not https (or http to loopback); drops a revocation endpoint tokens may not be sent to.
 */
export function checkDiscovery(state: OAuthDiscoveryState): CheckedDiscovery {
  const metadata = state.authorizationServerMetadata as (AuthorizationServerMetadata & Record<string, unknown>) | undefined;
  if (metadata === undefined) return { state };
  assertUsableEndpoint(metadata.authorization_endpoint, 'the authorization endpoint');
  assertUsableEndpoint(metadata.token_endpoint, 'the token endpoint');
  if (typeof metadata.registration_endpoint === 'string') assertUsableEndpoint(metadata.registration_endpoint, 'the registration endpoint');
  const revocation = metadata.revocation_endpoint;
  if (typeof revocation !== 'string') return { state };
  const refusal = revocationRefusal(revocation, metadata.issuer, metadata.token_endpoint);
  if (refusal === undefined) return { state };
  const { revocation_endpoint: _dropped, ...kept } = metadata;
  return { state: { ...state, authorizationServerMetadata: kept as AuthorizationServerMetadata }, revocationRefused: `the revocation endpoint ${shownAddress(revocation)} ${refusal}` };
}

/** OpenID documents carry jwks_uri and subject_types_supported (both required there, absent from plain RFC 8414 ones). */
function looksOpenId(metadata: Record<string, unknown>): boolean {
  return typeof metadata.jwks_uri === 'string' && Array.isArray(metadata.subject_types_supported);
}

/** Where OpenID discovery looks for an issuer's document, in the SDK's order. */
function openIdDocumentUrls(authorizationServerUrl: string): URL[] {
  const url = new URL(authorizationServerUrl);
  const path = url.pathname.replace(/\/$/, '');
  if (path === '') return [new URL('/.well-known/openid-configuration', url.origin)];
  return [new URL(`/.well-known/openid-configuration${path}`, url.origin), new URL(`${path}/.well-known/openid-configuration`, url.origin)];
}

async function readJson(url: URL, fetchFn: FetchLike): Promise<Record<string, unknown> | undefined> {
  try {
    const response = await fetchFn(url, { headers: { Accept: 'application/json' } });
    if (!response.ok) return undefined;
    const document: unknown = await response.json();
    return document !== null && typeof document === 'object' && !Array.isArray(document) ? (document as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
