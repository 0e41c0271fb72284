// The flags an MCP server over Streamable HTTP takes, shared by skills-serve and `skills-mount
// serve`: where it listens, and the OAuth protected resource it may be.
import { checkIssuerUrl } from '../server/auth-issuer.js';
import type { ResourceAuthOptions } from '../server/auth.js';
import { ConfigError } from '../errors.js';

/** `[HOST:]PORT` (default host 127.0.0.1; port 0 picks a free one); `flag` names it in the error. */
export function parseHostPort(value: string, flag: string): { host: string; port: number } {
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]]+):)?(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  if (!match || port > 65535) throw new ConfigError(`${flag} must be [HOST:]PORT (e.g. 127.0.0.1:0), not "${value}"`);
  const host = match[1] ?? '127.0.0.1';
  return { host: host.startsWith('[') ? host.slice(1, -1) : host, port };
}

/** --auth-issuer, --auth-audience and --auth-scope as given: undefined without an issuer. */
export function parseAuth(issuer: string | undefined, audience: string | undefined, scopes: string[] | undefined): ResourceAuthOptions | undefined {
  if (issuer === undefined) {
    if (audience !== undefined || scopes !== undefined) throw new ConfigError(`${audience !== undefined ? '--auth-audience' : '--auth-scope'} needs --auth-issuer`);
    return undefined;
  }
  checkIssuerUrl(issuer);
  if (audience !== undefined && !/^https?:\/\/[^#]+$/.test(audience)) throw new ConfigError(`--auth-audience must be an http(s) URL without a fragment, not "${audience}"`);
  const scope = (scopes ?? []).flatMap((value) => value.split(' ')).filter(Boolean);
  // RFC 6749 scope-token: printable ASCII but space, '"' and '\\'.
  const bad = scope.find((token) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(token));
  if (bad !== undefined) throw new ConfigError(`--auth-scope: "${bad}" is not a scope (printable ASCII, no quote or backslash)`);
  return { issuer, ...(audience !== undefined && { audience }), scopes: scope };
}
