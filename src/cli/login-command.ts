// `skills-mount login LABEL...` and `logout LABEL...`: signs in to HTTP servers that ask for
// authorization and keeps the tokens in the user's private token store, where a running mount
// finds them (src/auth/). login connects as the mount would; when the server asks for a
// sign-in, the person is sent to the authorization server (a browser, or the printed address
// with --no-browser and the redirect pasted back) and the redirect comes back to 127.0.0.1.
// Exit status: 0 signed in, 1 a sign-in failed (the reason is printed), 2 usage.
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import {
  Client,
  OAuthError,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type FetchLike,
} from '@modelcontextprotocol/client';
import { z } from 'zod';
import { AuthServerUnreachableError, errorIn, needsLoginIn, RegistrationUnsupportedError, SignInError, TokenRefusedError, type TokenRefusal } from '../auth/auth-errors.js';
import { describeUrl, limitedFetch, splitFetch } from '../auth/auth-fetch.js';
import { openInBrowser } from '../auth/browser.js';
import { defaultTokenStore, namingUnreachable, refusalOf, secretsRedactor } from '../auth/connection-auth.js';
import { registeredCallbackPort } from '../auth/client-registration.js';
import { revokeSignIn } from '../auth/revocation.js';
import { LoopbackReceiver } from '../auth/loopback-receiver.js';
import { StoredOAuthProvider } from '../auth/stored-provider.js';
import type { AuthEntry, TokenStore } from '../auth/token-store.js';
import { ConfigError } from '../errors.js';
import { escapeForLog } from '../format/escape.js';
import { redactSdkLinesWith } from '../log.js';
import { jsonRpcAnswerIn } from '../mcp/error-mapping.js';
import type { HttpServerConfig, SseServerConfig } from '../config/server-config.js';
import { loadMountConfig } from '../config/config.js';
import { type LoginOptions, type LogoutOptions } from './command-options.js';

export type { LoginOptions, LogoutOptions } from './command-options.js';

/** What login and logout use of the process, injectable for tests. */
export interface LoginIo {
  env: NodeJS.ProcessEnv;
  /** One line to the person (stderr). */
  say(line: string): void;
  /** The next line typed on stdin; undefined at end of input. */
  readLine(): Promise<string | undefined>;
  store?: TokenStore | undefined;
}

/** Sign-ins in a row for one server (a step-up asks for another): past this, the server is refusing whatever is granted. */
const MAX_SIGN_INS = 3;
const CLIENT_INFO = { name: 'skills-mount', version: '0.2.0' };

/** The process's own I/O: stderr for the person, stdin lines for a pasted redirect. */
export function processLoginIo(): LoginIo {
  let lines: AsyncIterator<string> | undefined;
  return {
    env: process.env,
    say: (line) => process.stderr.write(`${line}\n`),
    async readLine() {
      lines ??= createInterface({ input: process.stdin, terminal: false })[Symbol.asyncIterator]();
      const next = await lines.next();
      return next.done ? undefined : next.value;
    },
  };
}

/** Signs in to each server in turn; 0 when all succeeded, 1 when one failed, 2 for a usage error. */
export async function runLogin(options: LoginOptions, io: LoginIo): Promise<number> {
  let servers;
  try {
    const config = await loadMountConfig({ configPath: options.configPath, serverFlags: options.serverFlags, only: options.labels, env: io.env });
    servers = config.servers;
  } catch (error) {
    if (error instanceof ConfigError) {
      io.say(`skills-mount login: ${error.message.replace(/^--only: /, '')}`);
      return 2;
    }
    throw error;
  }
  for (const { label, config } of servers) {
    if (config.kind === 'stdio') {
      io.say(`skills-mount login: ${label} is a stdio server: there is nothing to sign in to`);
      return 2;
    }
    if (Object.keys(config.headers).some((name) => name.toLowerCase() === 'authorization')) {
      io.say(`skills-mount login: ${label} sends the Authorization header its config gives; remove that header to sign in instead`);
      return 2;
    }
  }
  let failed = false;
  for (const { label, config } of servers) {
    if (config.kind === 'stdio') continue;
    try {
      io.say(await signIn(label, config, options, io));
    } catch (error) {
      failed = true;
      io.say(`skills-mount login: ${label}: sign-in failed: ${describeFailure(error, config.url)}`);
    }
  }
  return failed ? 1 : 0;
}

/** Removes every sign-in of each label, revoking the tokens where the authorization server offers it. */
export async function runLogout(options: LogoutOptions, io: LoginIo): Promise<number> {
  const store = io.store ?? defaultTokenStore(io.env);
  for (const label of options.labels) {
    const removed = await store.removeLabel(label);
    if (removed.length === 0) {
      io.say(`${label}: no sign-in stored`);
      continue;
    }
    const revoked: string[] = [];
    const configured = await configuredClient(options, label, io.env);
    for (const entry of removed) revoked.push(...(await revokeSignIn(entry, undefined, configured)));
    io.say(`${label}: signed out (${removed.length} sign-in${removed.length === 1 ? '' : 's'} removed${revoked.length > 0 ? `; ${revoked.join('; ')}` : ''})`);
  }
  return 0;
}

/** One server: connect as the mount does; a sign-in when it asks; done once a request is answered with the stored token. */
async function signIn(label: string, config: HttpServerConfig | SseServerConfig, options: LoginOptions, io: LoginIo): Promise<string> {
  const store = io.store ?? defaultTokenStore(io.env);
  const settings = config.oauth;
  const interactive = (settings?.grantType ?? 'authorization_code') === 'authorization_code';
  const authFetch = namingUnreachable(limitedFetch({ timeoutMs: options.authTimeoutMs }), config.url, settings?.idpTokenEndpoint);
  /** The server's last refusal (401 or 403) and whether this login has stored tokens since. */
  const seen: { refusal?: TokenRefusal | undefined; signedIn: boolean } = { signedIn: false };
  /** The server refused the token this login just got: another round in the browser would get the same kind. */
  const refusedFresh = async (): Promise<TokenRefusedError | undefined> => {
    if (!seen.signedIn || seen.refusal?.status !== 401) return undefined;
    const tokens = (await store.get(label, config.url))?.tokens;
    return new TokenRefusedError(label, seen.refusal, tokens?.issuer, tokens?.resource);
  };
  const receiver = interactive ? await startReceiver(label, settings?.callbackPort, registeredCallbackPort(await store.get(label, config.url)), (what) => io.say(`${label}: ${escapeForLog(what)}`)) : undefined;
  let redirect: Promise<URLSearchParams> | undefined;
  // A mount was refused for a scope the stored sign-in lacks: sign in anew, asking for it too.
  const wantsScope = interactive && (await store.get(label, config.url))?.wantedScope !== undefined;
  const provider = new StoredOAuthProvider({
    label,
    serverUrl: config.url,
    settings,
    store,
    fetch: authFetch,
    freshSignIn: wantsScope,
    interactive: receiver && {
      redirectUrl: receiver.redirectUrl,
      open: async (url) => {
        const refused = await refusedFresh();
        if (refused !== undefined) throw refused;
        if (options.noBrowser) {
          io.say(`${label}: open this address in a browser to sign in:\n  ${url.href}`);
          io.say(`then paste here the address the browser ends on (it starts with ${receiver.redirectUrl}):`);
          redirect = readPastedRedirect(io, receiver.redirectUrl, provider.expectedState);
          redirect.catch(() => undefined); // awaited once the request fails; not unhandled meanwhile
          return;
        }
        // Listening before the browser starts: a fast browser must find someone waiting.
        redirect = receiver.wait(provider.expectedState ?? '', options.waitMs);
        redirect.catch(() => undefined); // awaited once the request fails; not unhandled meanwhile
        const opened = await openInBrowser(url, io.env, (line) => io.say(`${label}: ${line}`));
        if (opened.kind === 'printed') io.say(`${label}: waiting for the sign-in (up to ${Math.round(options.waitMs / 1000)} s)`);
      },
    },
  });
  const redact = secretsRedactor(provider);
  // The SDK's own lines (a refused client, a failed refresh) may quote what the authorization server said.
  redactSdkLinesWith(redact);
  try {
    // A new sign-in finds the resource's authorization server afresh (it may have moved).
    await provider.forgetDiscovery();
    for (let signIns = 0; ; signIns++) {
      const transport = httpTransport(config, provider, authFetch, (refusal) => (seen.refusal = refusal));
      // Negotiated as the mount does (2026-07-28 first, then the 2025 handshake).
      const client = new Client(CLIENT_INFO, { capabilities: {}, versionNegotiation: { mode: 'auto', probe: { timeoutMs: options.timeoutMs } } });
      try {
        await client.connect(transport, { timeout: options.timeoutMs });
        // What the mount asks first; any JSON-RPC answer (an error too) means the token was accepted.
        await client.request({ method: 'resources/list', params: {} }, z.looseObject({}), { timeout: options.timeoutMs }).catch((error: unknown) => {
          if (isJsonRpcAnswer(error)) return undefined;
          throw error;
        });
        const entry = await store.get(label, config.url);
        return `${label}: signed in${describeSignIn(entry)}`;
      } catch (error) {
        const waiting = redirect;
        redirect = undefined;
        const refused = errorIn(error, TokenRefusedError) ?? (await refusedFresh());
        if (refused !== undefined) {
          // Refused tokens are of no use to a mount: not kept, so nothing says "signed in".
          await provider.invalidateCredentials('tokens');
          throw refused;
        }
        if (/does not support dynamic client registration/.test((error as Error | undefined)?.message ?? '')) {
          const issuer = (await store.get(label, config.url))?.discovery?.authorizationServerUrl;
          throw new RegistrationUnsupportedError(label, config.url, issuer, settings?.callbackPort);
        }
        if (waiting === undefined || needsLoginIn(error) !== undefined) throw error;
        if (signIns + 1 >= MAX_SIGN_INS) throw new SignInError(`the server still refuses after ${MAX_SIGN_INS} sign-ins in a row (it asks for a scope the authorization server does not grant)`);
        const params = await waiting;
        await transport.finishAuth(params);
        // What the server says from now on is about the tokens just stored.
        seen.signedIn = true;
        seen.refusal = undefined;
      } finally {
        await client.close().catch(() => undefined);
      }
    }
  } catch (error) {
    // The whole cause chain: describeFailure shows a cause's message too.
    for (let link: unknown = error, depth = 0; link instanceof Error && depth < 6; link = link.cause, depth++) {
      // A DOMException's message is a getter: defined anew on the object instead.
      Object.defineProperty(link, 'message', { value: redact(link.message), configurable: true, writable: true });
    }
    throw error;
  } finally {
    await receiver?.close();
  }
}

/** The transport login signs in through; `refused` hears each 401 and 403 of the server with its challenge. */
function httpTransport(config: HttpServerConfig | SseServerConfig, provider: StoredOAuthProvider, authFetch: FetchLike, refused: (refusal: TokenRefusal) => void): StreamableHTTPClientTransport | SSEClientTransport {
  const mcp: FetchLike = async (input, init) => {
    const response = await globalThis.fetch(input, init);
    if (response.status === 401 || response.status === 403) refused(refusalOf(response));
    return response;
  };
  const fetch = splitFetch(config.url, mcp, authFetch);
  const url = new URL(config.url);
  const options = { requestInit: { headers: config.headers }, fetch, authProvider: provider };
  return config.kind === 'http' ? new StreamableHTTPClientTransport(url, options) : new SSEClientTransport(url, options);
}

/** --no-browser: the address the browser ended on, pasted; it must be this sign-in's loopback redirect with its state. */
async function readPastedRedirect(io: LoginIo, redirectUrl: string, state: string | undefined): Promise<URLSearchParams> {
  const line = (await io.readLine())?.trim();
  if (line === undefined || line === '') throw new SignInError('no redirect address was pasted');
  let url: URL;
  try {
    url = new URL(line);
  } catch {
    throw new SignInError('what was pasted is not an address (paste the whole address from the browser\'s address bar)');
  }
  const expected = new URL(redirectUrl);
  if (url.origin !== expected.origin || url.pathname !== expected.pathname) {
    throw new SignInError(`the pasted address is not this sign-in's redirect (${expected.origin}${expected.pathname}); it goes to ${describeUrl(url)}, so nothing was stored`);
  }
  if (state === undefined || url.searchParams.get('state') !== state) throw new SignInError('the pasted address carries a state that does not match this sign-in (a stale or forged redirect); nothing was stored');
  return url.searchParams;
}

/** " (token for RESOURCE from ISSUER, valid for N min, refreshable)": no token, ever. */
function describeSignIn(entry: AuthEntry | undefined): string {
  const tokens = entry?.tokens;
  if (tokens === undefined) return ' (the server asked for no sign-in)';
  const facts = [`for ${escapeForLog(tokens.resource)}`, `from ${escapeForLog(tokens.issuer)}`];
  if (tokens.expiresAtMs !== undefined) facts.push(`valid for ${Math.max(0, Math.round((tokens.expiresAtMs - Date.now()) / 60_000))} min`);
  if (tokens.refresh_token !== undefined) facts.push('renewed automatically');
  if (tokens.scope) facts.push(`scope ${escapeForLog(tokens.scope)}`);
  return ` (${facts.join(', ')})`;
}

/**
 * The client the configuration registered beforehand for `label` (oauth.clientId and its secret),
 * for revoking with its credentials; undefined without one. A configuration that cannot be read
 * takes nothing away from logout: the sign-in is removed all the same.
 */
async function configuredClient(options: LogoutOptions, label: string, env: NodeJS.ProcessEnv): Promise<{ client_id: string; client_secret?: string | undefined } | undefined> {
  const config = await loadMountConfig({ configPath: options.configPath, serverFlags: options.serverFlags ?? [], env }).catch(() => undefined);
  const server = config?.servers.find((candidate) => candidate.label === label)?.config;
  const oauth = server !== undefined && server.kind !== 'stdio' ? server.oauth : undefined;
  return oauth?.clientId === undefined ? undefined : { client_id: oauth.clientId, client_secret: oauth.clientSecret };
}

/**
 * The loopback receiver: on the configured port; else on the port the stored client was registered
 * with, when it is free (that client is reused: servers that match redirect URIs exactly accept no
 * other); else on any free port (the login then registers a client for it).
 */
async function startReceiver(label: string, configured: number | undefined, registered: number | undefined, refused: (what: string) => void): Promise<LoopbackReceiver> {
  if (configured !== undefined || registered === undefined) return LoopbackReceiver.start({ port: configured, label, refused });
  try {
    return await LoopbackReceiver.start({ port: registered, label, refused });
  } catch (error) {
    if (!(error instanceof SignInError)) throw error;
    return LoopbackReceiver.start({ label, refused });
  }
}

/** Why a sign-in failed, in words; the authorization server's own text escaped. */
function describeFailure(error: unknown, serverUrl: string): string {
  if (error instanceof OAuthError) return `the authorization server answered ${error.code}${error.message && error.message !== error.code ? `: ${escapeForLog(error.message)}` : ''}`;
  if (!(error instanceof Error)) return escapeForLog(String(error));
  // Ours say who, what and what to do already (escaped where a server's text is quoted).
  const ours = errorIn(error, TokenRefusedError) ?? errorIn(error, AuthServerUnreachableError) ?? errorIn(error, RegistrationUnsupportedError);
  if (ours !== undefined) return ours.message;
  // A network failure names its errno deep in the cause chain (fetch failed <- ECONNREFUSED): the MCP server's own address.
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 6; cause = cause.cause, depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return `cannot reach the server at ${escapeForLog(describeUrl(serverUrl))} (${code}): check that it is up and the URL is right: ${escapeForLog(error.message)}`;
  }
  const cause = error.cause instanceof Error && !error.message.includes(error.cause.message) ? ` (${escapeForLog(error.cause.message)})` : '';
  return `${escapeForLog(error.message)}${cause}`;
}

function isJsonRpcAnswer(error: unknown): boolean {
  return (error instanceof Error && error.name === 'ProtocolError') || jsonRpcAnswerIn(error) !== undefined;
}

type OptionSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;

