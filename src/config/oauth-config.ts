// The "oauth" object of an HTTP or SSE server entry, in every config format: read as raw
// strings (variables not yet expanded), then expanded and checked into OAuthSettings. Errors
// name the server and the field, never a secret's value.
import { ConfigError } from '../errors.js';
import { GRANT_TYPES, type GrantType, type OAuthSettings } from './server-config.js';
import { isLoopbackHost } from '../server/loopback.js';

/** The fields as written (Claude Code's clientId, callbackPort, authServerMetadataUrl, scopes, and skills-mount's own). */
export interface RawOAuth {
  clientId?: string;
  clientSecret?: string;
  clientMetadataUrl?: string;
  callbackPort?: string;
  authServerMetadataUrl?: string;
  scopes?: string;
  grantType?: string;
  privateKeyFile?: string;
  privateKeyAlgorithm?: string;
  assertionFile?: string;
  idpTokenEndpoint?: string;
  idpClientId?: string;
  idpClientSecret?: string;
  idTokenFile?: string;
}

const STRING_FIELDS = [
  'clientId',
  'clientSecret',
  'clientMetadataUrl',
  'authServerMetadataUrl',
  'grantType',
  'privateKeyFile',
  'privateKeyAlgorithm',
  'assertionFile',
  'idpTokenEndpoint',
  'idpClientId',
  'idpClientSecret',
  'idTokenFile',
] as const;
const KNOWN_FIELDS = new Set<string>([...STRING_FIELDS, 'callbackPort', 'scopes']);
/** What jose signs a private_key_jwt with (the SDK's createPrivateKeyJwtAuth accepts these for PEM keys). */
const KEY_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'] as const;

/** Reads an entry's "oauth" value; undefined when there is none. */
export function readRawOAuth(value: unknown, where: string): RawOAuth | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw new ConfigError(`${where}: "oauth" must be an object (fields: ${[...KNOWN_FIELDS].join(', ')})`);
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!KNOWN_FIELDS.has(key)) throw new ConfigError(`${where}: "oauth"."${key}" is not a field skills-mount knows; use ${[...KNOWN_FIELDS].join(', ')}`);
  }
  const raw: RawOAuth = {};
  for (const key of STRING_FIELDS) {
    const item = record[key];
    if (item === undefined || item === null) continue;
    if (typeof item !== 'string') throw new ConfigError(`${where}: "oauth"."${key}" must be a string`);
    raw[key] = item;
  }
  const port = record.callbackPort;
  if (port !== undefined && port !== null) {
    if (typeof port === 'number') raw.callbackPort = String(port);
    else if (typeof port === 'string') raw.callbackPort = port;
    else throw new ConfigError(`${where}: "oauth"."callbackPort" must be a port number`);
  }
  const scopes = record.scopes;
  if (scopes !== undefined && scopes !== null) {
    if (typeof scopes === 'string') raw.scopes = scopes;
    else if (Array.isArray(scopes) && scopes.every((scope) => typeof scope === 'string')) raw.scopes = scopes.join(' ');
    else throw new ConfigError(`${where}: "oauth"."scopes" must be a string of space-separated scopes or an array of strings`);
  }
  return raw;
}

/** Expands every field with `expand(text, field)` and checks the result; throws ConfigError naming the field. */
export function resolveOAuth(raw: RawOAuth, expand: (text: string, field: string) => string, where: string): OAuthSettings {
  const get = (key: keyof RawOAuth): string | undefined => {
    const text = raw[key];
    if (text === undefined) return undefined;
    const value = expand(text, `"oauth"."${key}"`);
    return value === '' ? undefined : value;
  };
  const fail = (field: string, problem: string): never => {
    throw new ConfigError(`${where}: "oauth"."${field}" ${problem}`);
  };
  const grantText = get('grantType') ?? 'authorization_code';
  if (!(GRANT_TYPES as readonly string[]).includes(grantText)) fail('grantType', `must be one of ${GRANT_TYPES.map((g) => `"${g}"`).join(', ')}, not ${JSON.stringify(grantText)}`);
  const grantType = grantText as GrantType;
  const settings: OAuthSettings = { grantType };
  const clientId = get('clientId');
  const clientSecret = get('clientSecret');
  if (clientSecret !== undefined && clientId === undefined) fail('clientSecret', 'needs "clientId" (a secret belongs to a registered client)');
  settings.clientId = clientId;
  settings.clientSecret = clientSecret;
  const metadataUrl = get('clientMetadataUrl');
  if (metadataUrl !== undefined) {
    const url = parseUrl(metadataUrl);
    if (url === undefined || url.protocol !== 'https:' || url.pathname === '/') fail('clientMetadataUrl', 'must be an https URL with a path (the client ID metadata document)');
    settings.clientMetadataUrl = metadataUrl;
  }
  const asMetadata = get('authServerMetadataUrl');
  if (asMetadata !== undefined) {
    const url = parseUrl(asMetadata);
    if (url === undefined || (url.protocol !== 'https:' && !isLoopbackHost(url.hostname))) fail('authServerMetadataUrl', 'must be an https URL (http only on a loopback address)');
    settings.authServerMetadataUrl = asMetadata;
  }
  const port = get('callbackPort');
  if (port !== undefined) {
    const number = /^\d{1,5}$/.test(port) ? Number(port) : NaN;
    if (!(number >= 1 && number <= 65535)) fail('callbackPort', `must be a port number from 1 to 65535, not ${JSON.stringify(port)}`);
    settings.callbackPort = number;
  }
  const scopes = get('scopes');
  if (scopes !== undefined) {
    // RFC 6749 §3.3: scope tokens are printable ASCII without space, '"' or '\'.
    const words = scopes.split(/\s+/).filter((word) => word !== '');
    const bad = words.find((word) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(word));
    if (bad !== undefined) fail('scopes', `has ${JSON.stringify(bad)}, which is not a valid scope (printable ASCII, no quotes or backslashes)`);
    settings.scopes = words.length > 0 ? words.join(' ') : undefined;
  }
  const keyFile = get('privateKeyFile');
  const algorithm = get('privateKeyAlgorithm');
  const assertionFile = get('assertionFile');
  if (algorithm !== undefined && keyFile === undefined) fail('privateKeyAlgorithm', 'needs "privateKeyFile"');
  if (keyFile !== undefined) {
    if (grantType !== 'client_credentials') fail('privateKeyFile', 'is used only with "grantType": "client_credentials" (private_key_jwt client authentication)');
    if (clientSecret !== undefined) fail('privateKeyFile', 'and "clientSecret" are two ways for the client to authenticate; give one');
    const alg = algorithm ?? 'RS256';
    if (!(KEY_ALGORITHMS as readonly string[]).includes(alg)) fail('privateKeyAlgorithm', `must be one of ${KEY_ALGORITHMS.join(', ')}, not ${JSON.stringify(alg)}`);
    settings.privateKeyFile = keyFile;
    settings.privateKeyAlgorithm = alg;
  }
  if (assertionFile !== undefined && grantType !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
    fail('assertionFile', 'is used only with "grantType": "urn:ietf:params:oauth:grant-type:jwt-bearer"');
  }
  if (grantType === 'client_credentials') {
    if (clientId === undefined) fail('grantType', '"client_credentials" needs "clientId" and either "clientSecret" or "privateKeyFile"');
    if (clientSecret === undefined && keyFile === undefined) fail('grantType', '"client_credentials" needs "clientSecret" or "privateKeyFile" to authenticate the client');
  }
  const idp = { idpTokenEndpoint: get('idpTokenEndpoint'), idpClientId: get('idpClientId'), idpClientSecret: get('idpClientSecret'), idTokenFile: get('idTokenFile') };
  const idpGiven = (Object.keys(idp) as Array<keyof typeof idp>).filter((key) => idp[key] !== undefined);
  if (idpGiven.length > 0 && grantType !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
    fail(idpGiven[0]!, 'is used only with "grantType": "urn:ietf:params:oauth:grant-type:jwt-bearer" (enterprise-managed authorization)');
  }
  if (grantType === 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
    if (clientId === undefined) fail('grantType', '"urn:ietf:params:oauth:grant-type:jwt-bearer" needs "clientId" (the client registered with the authorization server)');
    if (idpGiven.length > 0) {
      // Enterprise-managed: the ID token is exchanged at the identity provider for the grant.
      if (assertionFile !== undefined) fail('assertionFile', 'and "idTokenFile" are two sources of the grant; give one');
      for (const field of ['idpTokenEndpoint', 'idpClientId', 'idTokenFile'] as const) {
        if (idp[field] === undefined) fail(field, 'is needed for enterprise-managed authorization (with "idpTokenEndpoint", "idpClientId" and "idTokenFile")');
      }
      const url = parseUrl(idp.idpTokenEndpoint!);
      if (url === undefined || (url.protocol !== 'https:' && !isLoopbackHost(url.hostname))) fail('idpTokenEndpoint', 'must be an https URL (http only on a loopback address)');
      Object.assign(settings, idp);
    } else {
      if (assertionFile === undefined) fail('grantType', '"urn:ietf:params:oauth:grant-type:jwt-bearer" needs "assertionFile" (the file holding the JWT, e.g. a projected service-account token), or "idTokenFile" with "idpTokenEndpoint" and "idpClientId"');
      settings.assertionFile = assertionFile;
    }
  }
  if (grantType !== 'authorization_code') {
    if (settings.callbackPort !== undefined) fail('callbackPort', `is for signing in with a browser; "grantType" is ${JSON.stringify(grantType)}`);
  }
  return settings;
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}
