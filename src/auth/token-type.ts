// The token types this client can present (RFC 6749 §7.1: a client must not use a token whose
// type it does not understand): Bearer (RFC 6750) and DPoP (RFC 9449), in any case.
import { escapeForLog } from '../format/escape.js';
import { SignInError } from './auth-errors.js';

/** Whether a token of this type can be sent. */
export function isKnownTokenType(tokenType: unknown): boolean {
  return typeof tokenType === 'string' && /^(bearer|dpop)$/i.test(tokenType);
}

/** Throws SignInError when the token endpoint issued a token of a type this client cannot send. */
export function assertKnownTokenType(tokenType: unknown, label: string): void {
  if (isKnownTokenType(tokenType)) return;
  const shown = typeof tokenType === 'string' ? `"${escapeForLog(tokenType.slice(0, 100))}"` : 'none';
  throw new SignInError(`${label}: the authorization server issued a token of type ${shown}, which skills-mount cannot use (only Bearer and DPoP); nothing was stored`);
}
