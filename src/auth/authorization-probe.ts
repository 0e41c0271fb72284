// Asks the authorization endpoint, before a browser is sent there, whether it takes this
// authorization request at all. A server that does not know the client or its redirect URI
// answers the browser, never the client (RFC 6749 §4.1.2.1: an error page, no redirect), so
// without this a refused sign-in looks like a person who has not finished yet. One GET without
// cookies, redirects not followed: a login page (200) or a redirect to one is "go on".
import { OAuthError, OAuthErrorCode, type FetchLike } from '@modelcontextprotocol/client';
import { escapeForLog } from '../format/escape.js';
import { SignInError } from './auth-errors.js';

/** How long the endpoint may take to answer before the browser is sent anyway. */
export const PROBE_TIMEOUT_MS = 5_000;

export type ProbeAnswer =
  /** A login page, a redirect to one, or no clear answer: let the person go on. */
  | { kind: 'go-on' }
  /** The endpoint refuses the request itself (4xx): the client or its redirect URI is not known. */
  | { kind: 'refused'; status: number; error?: string | undefined; description?: string | undefined }
  /** The endpoint sends the browser back to the client with an error, without asking anyone. */
  | { kind: 'error-redirect'; error: string; description?: string | undefined };

/** The answer of the authorization endpoint to `authorizationUrl`, whose redirect URI is `redirectUrl`. */
export async function probeAuthorization(authorizationUrl: URL, redirectUrl: string, fetchFn: FetchLike): Promise<ProbeAnswer> {
  let response: Response;
  try {
    response = await fetchFn(authorizationUrl, { redirect: 'manual', headers: { Accept: 'text/html' }, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
  } catch {
    return { kind: 'go-on' }; // the browser may reach what this process cannot (a proxy): let it try
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => undefined);
    const location = response.headers.get('location');
    if (location === null) return { kind: 'go-on' };
    let target: URL;
    try {
      target = new URL(location, authorizationUrl);
    } catch {
      return { kind: 'go-on' };
    }
    const back = new URL(redirectUrl);
    const error = target.searchParams.get('error');
    if (target.origin !== back.origin || target.pathname !== back.pathname || error === null) return { kind: 'go-on' };
    return { kind: 'error-redirect', error, description: target.searchParams.get('error_description') ?? undefined };
  }
  if (response.status < 400 || response.status >= 500) {
    await response.body?.cancel().catch(() => undefined);
    return { kind: 'go-on' };
  }
  const { error, description } = await oauthError(response);
  return { kind: 'refused', status: response.status, error, description };
}

/** "HTTP 400: invalid_request: Unregistered redirect_uri", the server's words escaped. */
export function describeProbe(answer: Exclude<ProbeAnswer, { kind: 'go-on' }>): string {
  const words = [answer.error, answer.description].filter((word): word is string => word !== undefined && word !== '').map((word) => escapeForLog(word.slice(0, 300)));
  const head = answer.kind === 'refused' ? `HTTP ${answer.status}` : 'a redirect back with an error';
  return [head, ...words].join(': ');
}

/** The sign-in a refusal ends in, and what it needs to go on. */
export interface RefusalContext {
  label: string;
  redirectUrl: string;
  /** The client: the config's pre-registered one (its ID), a client ID metadata document, or one registered dynamically. */
  client: { kind: 'configured'; clientId: string } | { kind: 'document' } | { kind: 'registered' };
  /** A dynamically registered client not yet registered again in this login. */
  mayRegisterAgain: boolean;
}

/**
 * What a refused authorization request becomes: a refusal that concerns the client (any 4xx, or
 * unauthorized_client / invalid_client sent back) of a client that may be registered again is an
 * invalid_client OAuthError, which the SDK's auth() answers by dropping the client and registering
 * anew, once; anything else a SignInError saying what the server said and what to do.
 */
export function refusedSignIn(answer: Exclude<ProbeAnswer, { kind: 'go-on' }>, context: RefusalContext): Error {
  const aboutClient = answer.kind === 'refused' || answer.error === 'unauthorized_client' || answer.error === 'invalid_client';
  const what = describeProbe(answer);
  if (aboutClient && context.client.kind === 'registered' && context.mayRegisterAgain) {
    return new OAuthError(OAuthErrorCode.InvalidClient, `the authorization server refused the sign-in request of the stored client (${what}); registering a new one`);
  }
  let advice = '';
  if (aboutClient && context.client.kind === 'configured') {
    advice = `; register ${context.redirectUrl} as a redirect URI of client ${escapeForLog(context.client.clientId)} there, or set "oauth"."callbackPort" to the port it has`;
  } else if (aboutClient && context.client.kind === 'document') {
    advice = `; the client metadata document must allow the redirect ${context.redirectUrl}`;
  } else if (aboutClient) {
    advice = ' (it refuses even a client registered just now for this redirect)';
  }
  return new SignInError(`${context.label}: the authorization server refused the sign-in request (${what})${advice}; nothing was stored`);
}

/** The OAuth error of a JSON answer ({"error", "error_description"}); nothing from HTML. */
async function oauthError(response: Response): Promise<{ error?: string | undefined; description?: string | undefined }> {
  try {
    const body: unknown = JSON.parse(await response.text());
    if (body === null || typeof body !== 'object') return {};
    const { error, error_description: description } = body as Record<string, unknown>;
    return { error: typeof error === 'string' ? error : undefined, description: typeof description === 'string' ? description : undefined };
  } catch {
    return {};
  }
}
