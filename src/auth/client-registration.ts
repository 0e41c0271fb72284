// Which stored client a sign-in may use for its redirect: a dynamically registered client knows
// the loopback redirect URI(s) it was registered with, and an authorization server that matches
// redirect URIs exactly refuses any other (RFC 8252 §7.3 asks servers to ignore the port; many
// do not). A login on another port registers anew rather than send the browser to a refusal.
import type { OAuthClientInformationMixed } from '@modelcontextprotocol/client';
import type { AuthEntry } from './token-store.js';

/** The redirect URIs a stored client was registered with; undefined when not known. */
export function registeredRedirects(client: OAuthClientInformationMixed, entry: AuthEntry | undefined): string[] | undefined {
  const uris = (client as { redirect_uris?: unknown }).redirect_uris;
  if (Array.isArray(uris) && uris.every((uri) => typeof uri === 'string')) return uris as string[];
  // Stored before clients kept their redirect URIs: the last sign-in's redirect is what it knows.
  return entry?.redirectUrl === undefined ? undefined : [entry.redirectUrl];
}

/** Whether a client registered with `registered` may be sent with `redirectUrl` (exactly one of them; unknown: yes, the probe tells). */
export function fitsRedirect(registered: readonly string[] | undefined, redirectUrl: string): boolean {
  return registered === undefined || registered.includes(redirectUrl);
}

/**
 * The loopback port of the redirect the stored client for `issuer` was registered with, so that
 * login can listen there again and reuse the client (undefined: none known, or not loopback).
 */
export function registeredCallbackPort(entry: AuthEntry | undefined): number | undefined {
  if (entry === undefined) return undefined;
  const issuer = entry.tokens?.issuer ?? entry.discovery?.authorizationServerMetadata?.issuer ?? Object.keys(entry.clients)[0];
  const client = issuer === undefined ? undefined : entry.clients[issuer];
  const redirects = client === undefined ? (entry.redirectUrl === undefined ? [] : [entry.redirectUrl]) : (registeredRedirects(client, entry) ?? []);
  for (const redirect of redirects) {
    try {
      const url = new URL(redirect);
      if (url.protocol === 'http:' && url.hostname === '127.0.0.1' && url.port !== '') return Number(url.port);
    } catch {
      // not an address: no port to offer
    }
  }
  return undefined;
}
