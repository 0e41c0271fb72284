// Which addresses an authorization server may name for what: every endpoint (and the server
// itself) https, or plain http only to this machine's loopback; a browser is sent only to such
// an address; tokens are revoked only at the origin of the issuer or its token endpoint.
// Pure checks: no request is made here.
import { isLoopbackHost } from '../server/loopback.js';
import { SignInError } from './auth-errors.js';
import { escapeForLog } from '../format/escape.js';

/** Why `address` may not be used for authorization traffic (shown as "WHAT ADDRESS REASON"), or undefined when it may. */
export function endpointRefusal(address: string | URL): string | undefined {
  let url: URL;
  try {
    url = new URL(String(address));
  } catch {
    return 'is not an address';
  }
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:') return isLoopbackHost(url.hostname) ? undefined : 'is plain http and not on this machine\'s loopback (only https, or http to 127.0.0.1, ::1 or localhost)';
  return `uses the ${url.protocol} scheme (only https, or http to 127.0.0.1, ::1 or localhost)`;
}

/** The address, shown without its query, escaped (it comes from a server). */
export function shownAddress(address: string | URL): string {
  try {
    const url = new URL(String(address));
    url.search = url.hash = url.username = url.password = '';
    return escapeForLog(url.href);
  } catch {
    return escapeForLog(String(address).split('?')[0]!);
  }
}

/** Throws SignInError naming `what` when `address` may not be used. */
export function assertUsableEndpoint(address: string | URL, what: string): void {
  const refusal = endpointRefusal(address);
  if (refusal !== undefined) throw new SignInError(`${what} ${shownAddress(address)} ${refusal}; refused before anything was sent to it`);
}

/**
 * Why tokens may not be sent to `endpoint` for revocation, or undefined when they may: it must be
 * usable as any endpoint is, and on the origin of the issuer or of the token endpoint (the
 * parties that already hold the tokens), so a metadata document cannot hand them to a third.
 */
export function revocationRefusal(endpoint: string, issuer: string, tokenEndpoint: string | undefined): string | undefined {
  const refusal = endpointRefusal(endpoint);
  if (refusal !== undefined) return refusal;
  const origin = new URL(endpoint).origin;
  const trusted = [issuer, tokenEndpoint].flatMap((address) => {
    try {
      return address === undefined ? [] : [new URL(address).origin];
    } catch {
      return [];
    }
  });
  return trusted.includes(origin) ? undefined : `is on another origin than the issuer ${shownAddress(issuer)} and its token endpoint`;
}
