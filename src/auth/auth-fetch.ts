// The fetch that authorization traffic goes through (discovery, registration, token and
// revocation requests): a deadline on the whole exchange and a small bound on the answer,
// since an authorization server that hangs or answers with megabytes must not stall a
// connection. MCP traffic to the server itself keeps the transport's own fetch.
import type { FetchLike } from '@modelcontextprotocol/client';
import { SignInError } from './auth-errors.js';
import { endpointRefusal, shownAddress } from './endpoint-rules.js';

/** Largest answer an authorization endpoint may give (metadata, a token, a registration). */
export const MAX_AUTH_RESPONSE_BYTES = 1024 * 1024;
/** Deadline for one authorization request, answer included. */
export const AUTH_REQUEST_TIMEOUT_MS = 15_000;

export interface LimitedFetchOptions {
  maxBytes?: number;
  timeoutMs?: number;
  fetch?: FetchLike;
}

/** A fetch that reads the whole answer within the deadline and refuses one larger than maxBytes. */
export function limitedFetch(options: LimitedFetchOptions = {}): FetchLike {
  const inner: FetchLike = options.fetch ?? ((input, init) => fetch(input, init));
  const maxBytes = options.maxBytes ?? MAX_AUTH_RESPONSE_BYTES;
  const timeoutMs = options.timeoutMs ?? AUTH_REQUEST_TIMEOUT_MS;
  return async (input, init) => {
    const where = describeUrl(input);
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    try {
      const response = await inner(input, { ...init, signal });
      const body = await readBounded(response, maxBytes, where);
      return new Response(nullBodyStatus(response.status) ? null : body, { status: response.status, statusText: response.statusText, headers: response.headers });
    } catch (error) {
      if (deadline.aborted) throw new SignInError(`${where}: no complete answer within ${timeoutMs / 1000} s`, { cause: error });
      throw error;
    }
  };
}

/**
 * Routes each request of a transport: to `mcp` for the MCP server's own traffic, to `auth`
 * for what the SDK's authorization code sends (well-known documents, other origins, form posts).
 * Authorization traffic to another origin than the server's goes only to https, or to http on
 * this machine's loopback: a plain-http authorization server elsewhere is refused before the
 * first request to it (its metadata), not at the code exchange.
 */
export function splitFetch(serverUrl: string, mcp: FetchLike, auth: FetchLike): FetchLike {
  const server = new URL(serverUrl);
  return async (input, init) => {
    const url = new URL(String(input));
    const isAuth = url.origin !== server.origin || url.pathname.startsWith('/.well-known/') || init?.body instanceof URLSearchParams;
    if (!isAuth) return mcp(input, init);
    const refusal = url.origin === server.origin ? undefined : endpointRefusal(url);
    if (refusal !== undefined) throw new SignInError(`the authorization server at ${shownAddress(url.origin)} ${refusal}; refused before any request to it`);
    return auth(input, withoutAccessToken(init));
  };
}

/**
 * The access token is for the MCP server alone: a wrapper that adds it to every request of a
 * transport (the SDK's DPoP wrapper does) must not carry it to the authorization server. Client
 * authentication (Basic) passes.
 */
function withoutAccessToken(init: RequestInit | undefined): RequestInit | undefined {
  if (init?.headers === undefined) return init;
  const headers = new Headers(init.headers);
  const authorization = headers.get('authorization') ?? '';
  if (!/^(bearer|dpop)\s/i.test(authorization)) return init;
  headers.delete('authorization');
  headers.delete('dpop');
  return { ...init, headers };
}

async function readBounded(response: Response, maxBytes: number, where: string): Promise<Uint8Array> {
  if (!response.body) return new Uint8Array();
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body.cancel().catch(() => undefined);
    throw new SignInError(`${where}: the answer is ${declared} bytes, more than the ${maxBytes} an authorization document may be`);
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new SignInError(`${where}: the answer is over ${maxBytes} bytes, more than an authorization document may be`);
    }
    chunks.push(value);
  }
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.length;
  }
  return body;
}

function nullBodyStatus(status: number): boolean {
  return status === 101 || status === 204 || status === 205 || status === 304;
}

/** An endpoint for messages: origin and path, never the query (which may carry a code or state). */
export function describeUrl(input: string | URL): string {
  try {
    const url = new URL(String(input));
    return `${url.origin}${url.pathname}`;
  } catch {
    return 'an authorization endpoint';
  }
}
