// The token requests of the grants that need no person (client credentials, jwt-bearer with an
// assertion file or an ID-JAG the identity provider exchanges an ID token for) and
// private_key_jwt client authentication: what the stored provider hands the SDK's auth() for
// them. Key, assertion and ID token files are read at every use, so a rotated file is picked up
// without a restart; errors name the file and field, never its contents.
import { readFile } from 'node:fs/promises';
import { createPrivateKeyJwtAuth, requestJwtAuthorizationGrant, type AddClientAuthentication, type FetchLike } from '@modelcontextprotocol/client';
import type { GrantType, OAuthSettings } from '../config/server-config.js';
import { SignInError } from './auth-errors.js';

export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** What an unattended token request needs of the provider. */
export interface GrantContext {
  label: string;
  /** The authorization server auth() resolved (the ID-JAG's audience); undefined: not yet known. */
  audience: string | undefined;
  /** The RFC 8707 resource the tokens are for. */
  resource: string;
  fetch?: FetchLike | undefined;
  /** Told every secret read or received (an ID token, an ID-JAG), for redaction. */
  remember(secret: string): void;
}

/** private_key_jwt client authentication (RFC 7523) where the settings name a key file and a client; else undefined. */
export function privateKeyJwtAuthentication(settings: OAuthSettings): AddClientAuthentication | undefined {
  const keyFile = settings.privateKeyFile;
  const clientId = settings.clientId;
  if (keyFile === undefined || clientId === undefined) return undefined;
  const alg = settings.privateKeyAlgorithm ?? 'RS256';
  return async (headers, params, url, metadata) => {
    const privateKey = await readSecretFile(keyFile, 'oauth.privateKeyFile');
    await createPrivateKeyJwtAuth({ issuer: clientId, subject: clientId, privateKey, alg })(headers, params, url, metadata);
  };
}

/** The token request's parameters for an unattended grant; undefined for the authorization code grant (the SDK's own). */
export function unattendedTokenRequest(grant: GrantType, settings: OAuthSettings, scope: string | undefined, context: GrantContext): Promise<URLSearchParams> | undefined {
  if (grant === 'client_credentials') {
    const params = new URLSearchParams({ grant_type: 'client_credentials' });
    if (scope) params.set('scope', scope);
    return Promise.resolve(params);
  }
  if (grant === JWT_BEARER_GRANT) {
    return assertion(settings, scope, context).then((jwt) => {
      const params = new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion: jwt });
      if (scope) params.set('scope', scope);
      return params;
    });
  }
  return undefined;
}

/** The jwt-bearer grant's JWT: the assertion file's, or an ID-JAG the identity provider exchanges the ID token for. */
async function assertion(settings: OAuthSettings, scope: string | undefined, context: GrantContext): Promise<string> {
  const { idTokenFile, idpTokenEndpoint, idpClientId, idpClientSecret } = settings;
  if (idTokenFile === undefined || idpTokenEndpoint === undefined || idpClientId === undefined) {
    return (await readSecretFile(settings.assertionFile!, 'oauth.assertionFile')).trim();
  }
  const idToken = (await readSecretFile(idTokenFile, 'oauth.idTokenFile')).trim();
  context.remember(idToken);
  if (context.audience === undefined) throw new SignInError(`${context.label}: the authorization server is not known yet; cannot ask the identity provider for a grant`);
  const grant = await requestJwtAuthorizationGrant({
    tokenEndpoint: idpTokenEndpoint,
    audience: context.audience,
    resource: context.resource,
    idToken,
    clientId: idpClientId,
    ...(idpClientSecret !== undefined ? { clientSecret: idpClientSecret } : {}),
    ...(scope ? { scope } : {}),
    ...(context.fetch ? { fetchFn: context.fetch } : {}),
  });
  context.remember(grant.jwtAuthGrant);
  return grant.jwtAuthGrant;
}

/** A key or assertion file's text; errors name the file and field, never its contents. */
async function readSecretFile(file: string, field: string): Promise<string> {
  try {
    const text = await readFile(file, 'utf8');
    if (text.trim() === '') throw new SignInError(`${field} ${file} is empty`);
    return text;
  } catch (error) {
    if (error instanceof SignInError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new SignInError(`${field} ${file} cannot be read (${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? 'error')})`);
  }
}
