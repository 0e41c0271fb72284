// `logout`'s revocation of a removed sign-in's tokens (RFC 7009), best effort: only at an
// endpoint that is https (or http to loopback) and on the origin of the issuer or its token
// endpoint (endpoint-rules.ts); otherwise nothing is sent, and the result says why.
import { selectClientAuthMethod, type AuthorizationServerMetadata, type FetchLike } from '@modelcontextprotocol/client';
import { escapeForLog } from '../format/escape.js';
import { limitedFetch } from './auth-fetch.js';
import { revocationRefusal, shownAddress } from './endpoint-rules.js';
import type { AuthEntry } from './token-store.js';

/**
 * What became of each token, in words ("refresh token revoked", "tokens not revoked: ..."); empty
 * when there was nothing to revoke where. `configured`: the client the configuration names
 * (`oauth.clientId`, `clientSecret`), used where the sign-in stored none.
 */
export async function revokeSignIn(entry: AuthEntry, fetchFn: FetchLike = limitedFetch(), configured?: { client_id: string; client_secret?: string | undefined }): Promise<string[]> {
  const tokens = entry.tokens;
  if (tokens === undefined) return [];
  if (entry.revocationRefused !== undefined) return [`tokens not revoked: ${entry.revocationRefused}, so nothing was sent to it`];
  const metadata = entry.discovery?.authorizationServerMetadata as (AuthorizationServerMetadata & Record<string, unknown>) | undefined;
  const endpoint = metadata?.revocation_endpoint;
  if (typeof endpoint !== 'string') return [];
  const refusal = revocationRefusal(endpoint, tokens.issuer, metadata?.token_endpoint);
  if (refusal !== undefined) return [`tokens not revoked: the revocation endpoint ${shownAddress(endpoint)} ${refusal}, so nothing was sent to it`];
  // A client registered beforehand is the configuration's (`oauth.clientId`), never stored with the sign-in.
  const client = Object.entries(entry.clients).find(([issuer]) => issuer === tokens.issuer)?.[1] ?? configured;
  const results: string[] = [];
  for (const [hint, token] of [
    ['refresh_token', tokens.refresh_token],
    ['access_token', tokens.access_token],
  ] as const) {
    if (token === undefined) continue;
    const body = new URLSearchParams({ token, token_type_hint: hint });
    const headers = new Headers({ 'Content-Type': 'application/x-www-form-urlencoded' });
    if (client !== undefined) {
      const supported = (metadata?.revocation_endpoint_auth_methods_supported as string[] | undefined) ?? metadata?.token_endpoint_auth_methods_supported ?? [];
      const method = selectClientAuthMethod(client, supported);
      if (method === 'client_secret_basic' && client.client_secret) headers.set('Authorization', `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`).toString('base64')}`);
      else {
        body.set('client_id', client.client_id);
        if (method === 'client_secret_post' && client.client_secret) body.set('client_secret', client.client_secret);
      }
    }
    const what = hint.replace('_', ' ');
    try {
      // No redirect is followed: a token goes to the endpoint checked above, nowhere else.
      const response = await fetchFn(endpoint, { method: 'POST', headers, body, redirect: 'manual' });
      results.push(response.ok ? `${what} revoked` : `revoking the ${what} failed (HTTP ${response.status})`);
    } catch (error) {
      results.push(`revoking the ${what} failed (${error instanceof Error ? escapeForLog(error.message) : 'error'})`);
    }
  }
  return results;
}
