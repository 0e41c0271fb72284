// The errors of signing in to servers: a server that needs a person to sign in, a sign-in that
// failed, a token the server refuses however fresh, an authorization server out of reach, and a
// token store that cannot be used. Each names the server, what happened and what to do.
// Messages never quote a token, code or secret; what a server said is escaped.
import { LockHeldError } from '../lock-file.js';
import { SkillsMountError } from '../errors.js';
import { escapeForLog } from '../format/escape.js';

/** The command that signs in to a server, as shown wherever "needs login" is. */
export function loginCommand(label: string): string {
  return `skills-mount login ${label}`;
}

/** The server wants a token this process cannot get without a person at a browser. */
export class NeedsLoginError extends SkillsMountError {
  override name = 'NeedsLoginError';
  readonly code = 'NEEDS_LOGIN';

  constructor(
    readonly label: string,
    /** Why, in words ("no sign-in stored", "the authorization server refused the refresh token"). */
    readonly reason: string,
  ) {
    super(`needs login: ${reason}; run: ${loginCommand(label)}`);
  }
}

/** `skills-mount login` could not complete a sign-in. */
export class SignInError extends SkillsMountError {
  override name = 'SignInError';
  readonly code = 'SIGN_IN';
}

/** What the MCP server said when it refused a token: its status and WWW-Authenticate challenge. */
export interface TokenRefusal {
  status: number;
  /** The challenge's `error` (invalid_token, ...). */
  error?: string | undefined;
  /** The challenge's `error_description`: the server's own reason, as it wrote it. */
  description?: string | undefined;
}

/**
 * The MCP server refused a token the authorization server had just issued or renewed: signing
 * in again gets another such token, so only the authorization server's or the server's setup
 * can help (an audience it does not accept, a kind of token it cannot check).
 */
export class TokenRefusedError extends SkillsMountError {
  override name = 'TokenRefusedError';
  readonly code = 'TOKEN_REFUSED';

  constructor(
    readonly label: string,
    readonly refusal: TokenRefusal,
    /** Who issued it and for which resource, when known. */
    readonly issuer: string | undefined,
    readonly resource: string | undefined,
  ) {
    super(describeRefusal(refusal, issuer, resource));
  }
}

/** "the server refused the token ISSUER issued (401 invalid_token: "why"): what to do". */
export function describeRefusal(refusal: TokenRefusal, issuer: string | undefined, resource: string | undefined): string {
  const said = [refusal.error, refusal.description === undefined ? undefined : `"${refusal.description}"`].filter(Boolean).join(': ');
  const from = issuer === undefined ? 'the authorization server' : escapeForLog(issuer);
  const what = `the server refused the token ${from} issued for it (HTTP ${refusal.status}${said === '' ? '' : ` ${escapeForLog(said)}`})`;
  const description = refusal.description ?? '';
  if (/another resource|audience|\baud\b/i.test(description)) {
    return `${what}: the authorization server seems to ignore the resource indicator (RFC 8707) and issue tokens for another audience; have it issue tokens whose "aud" is ${resource === undefined ? 'this server\'s URL' : escapeForLog(resource)}, or ask the server's operator which audience it accepts`;
  }
  if (/not a JWT/i.test(description)) {
    return `${what}: the authorization server issues tokens the server cannot verify; have it issue JWT access tokens for this server, or ask the server's operator which authorization server to use`;
  }
  return `${what}: signing in again would get the same kind of token; ask the server's operator why it refuses tokens from ${from}`;
}

/** An authorization server (or identity provider) that cannot be reached: the sign-in cannot go on, the MCP server itself may be fine. */
export class AuthServerUnreachableError extends SkillsMountError {
  override name = 'AuthServerUnreachableError';
  readonly code = 'AUTH_SERVER_UNREACHABLE';

  constructor(
    /** Who it is, in words: "the authorization server", "the identity provider", ... */
    readonly role: string,
    /** Origin and path asked (never the query). */
    readonly endpoint: string,
    /** The network error's code (ECONNREFUSED, ENOTFOUND, ...) or a short reason. */
    readonly reason: string,
  ) {
    super(`cannot reach ${role} at ${escapeForLog(endpoint)} (${escapeForLog(reason)}): check that it is up and reachable from this machine (the MCP server's metadata names it${role === 'the identity provider' ? '; "oauth"."idpTokenEndpoint" here' : ', or "oauth"."authServerMetadataUrl"'})`);
  }
}

/** The authorization server offers no dynamic client registration: a client must be registered there by hand. */
export class RegistrationUnsupportedError extends SkillsMountError {
  override name = 'RegistrationUnsupportedError';
  readonly code = 'REGISTRATION_UNSUPPORTED';

  constructor(
    readonly label: string,
    readonly serverUrl: string,
    readonly issuer: string | undefined,
    /** The callback port configured, if any (else one is suggested). */
    readonly callbackPort: number | undefined,
  ) {
    const port = callbackPort ?? 8765;
    const at = issuer === undefined ? 'the authorization server' : `the authorization server ${escapeForLog(issuer)}`;
    super(
      `${at} does not let clients register themselves (it has no registration endpoint): register skills-mount there as a client with the redirect URI http://127.0.0.1:${port}/callback, then give its client ID: ` +
        `"oauth": { "clientId": "ID", "callbackPort": ${port} } on "${label}" in the config file, or --server '${label}=${escapeForLog(serverUrl)} oauth.clientId=ID oauth.callbackPort=${port}'`,
    );
  }
}

/** The error of class `type` somewhere in an error's cause chain. */
export function errorIn<T extends Error>(error: unknown, type: abstract new (...args: never[]) => T): T | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 8; current = current.cause, depth++) {
    if (current instanceof type) return current;
  }
  return undefined;
}

/** The token store (or its directory) cannot be used: unreadable, corrupt, hostile or not ours. */
export class TokenStoreError extends SkillsMountError {
  override name = 'TokenStoreError';
  readonly code = 'TOKEN_STORE';

  constructor(
    message: string,
    readonly file: string,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? {} : { cause });
  }
}

/** Another process held the token store's lock for longer than the wait. */
export class TokenStoreLockedError extends LockHeldError {
  override name = 'TokenStoreLockedError';
  readonly code = 'TOKEN_STORE_LOCKED';
}

/** The NeedsLoginError somewhere in an error's cause chain (the SDK passes provider errors on as they are). */
export function needsLoginIn(error: unknown): NeedsLoginError | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 8; current = current.cause, depth++) {
    if (current instanceof NeedsLoginError) return current;
  }
  return undefined;
}
