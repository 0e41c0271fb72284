// The errors of signing in to servers: a server that needs a person to sign in, a sign-in that
// failed, and a token store that cannot be used. Messages never quote a token, code or secret.
import { LockHeldError } from '../lock-file.js';
import { SkillsMountError } from '../errors.js';

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
