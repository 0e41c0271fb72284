// The authorization server metadata document a config names ("oauth"."authServerMetadataUrl"),
// for servers whose discovery cannot find it: fetched bounded, checked for the fields a sign-in
// needs, its issuer taken as the authorization server's identity.
import type { AuthorizationServerMetadata, FetchLike } from '@modelcontextprotocol/client';
import { SignInError } from './auth-errors.js';
import { limitedFetch } from './auth-fetch.js';

/** Fetches and checks the document; throws SignInError saying what is wrong with it. */
export async function fetchAuthServerMetadata(url: string, fetchFn: FetchLike = limitedFetch()): Promise<AuthorizationServerMetadata> {
  const response = await fetchFn(url, { headers: { Accept: 'application/json' } });
  if (!response.ok) throw new SignInError(`authServerMetadataUrl ${url}: HTTP ${response.status}`);
  let document: unknown;
  try {
    document = await response.json();
  } catch {
    throw new SignInError(`authServerMetadataUrl ${url}: the answer is not JSON`);
  }
  const metadata = document as Partial<Record<string, unknown>> | null;
  for (const field of ['issuer', 'authorization_endpoint', 'token_endpoint'] as const) {
    if (metadata === null || typeof metadata !== 'object' || typeof metadata[field] !== 'string') {
      throw new SignInError(`authServerMetadataUrl ${url}: the document has no "${field}"`);
    }
  }
  if (!Array.isArray(metadata!.response_types_supported)) (metadata as Record<string, unknown>).response_types_supported = ['code'];
  return metadata as unknown as AuthorizationServerMetadata;
}
