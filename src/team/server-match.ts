// Which servers a policy's server rule names: an http or sse server by URL origin and path
// prefix, a stdio server by command and leading arguments. URLs are compared in one normal form,
// so a spelling the server would read the same way (a trailing dot, an escaped letter, "//")
// can never step around a rule. Knows server configs, not policy files.
import type { ServerConfig } from '../config/server-config.js';
import { platformPath } from '../user-dirs.js';

/** A URL as the rules compare it: `https://host[:port]` and a path with no trailing "/". */
export interface NormalUrl {
  origin: string;
  /** "" for the root, else "/a/b" (no trailing "/"). */
  path: string;
}

/** The normal form of an http(s) URL, or why it has none. */
export function normalUrl(text: string): NormalUrl | { problem: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: 'is not a URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { problem: `has scheme ${url.protocol.slice(0, -1)}, not http or https` };
  // "example.com." names the same host as "example.com" in DNS.
  const host = url.hostname.endsWith('.') ? url.hostname.slice(0, -1) : url.hostname;
  const origin = `${url.protocol}//${host}${url.port === '' ? '' : `:${url.port}`}`;
  const path = url.pathname
    .replace(/%[0-9a-fA-F]{2}/g, decodeUnreserved)
    .replace(/\/{2,}/g, '/')
    .replace(/\/$/, '');
  return { origin, path };
}

/** The URL as shown in a message: origin and path, never the query (it may hold a token) nor a user name. */
export function shownUrl(text: string): string {
  try {
    const url = new URL(text);
    return `${url.origin}${url.pathname}`;
  } catch {
    return text;
  }
}

// RFC 3986 6.2.2.2: an escaped unreserved character is the character; other escapes get upper-case hex.
function decodeUnreserved(escape: string): string {
  const char = String.fromCharCode(Number.parseInt(escape.slice(1), 16));
  return /^[A-Za-z0-9\-._~]$/.test(char) ? char : escape.toUpperCase();
}

/** Whether `rule` (normal) covers `server` (normal): same origin, and the rule's path is a whole-segment prefix of the server's. */
export function urlCovers(rule: NormalUrl, server: NormalUrl): boolean {
  if (rule.origin !== server.origin) return false;
  return rule.path === '' || server.path === rule.path || server.path.startsWith(`${rule.path}/`);
}

/** A stdio rule: the command (a bare name matches that basename anywhere) and, when given, the leading arguments. */
export interface CommandPattern {
  command: string;
  args?: readonly string[] | undefined;
}

/** Whether `pattern` names the stdio server `config`; path rules follow `platform` (for the basename and what a separator is). */
export function commandCovers(pattern: CommandPattern, config: ServerConfig, platform: NodeJS.Platform = process.platform): boolean {
  if (config.kind !== 'stdio') return false;
  const p = platformPath(platform);
  const bare = !pattern.command.includes('/') && !(platform === 'win32' && pattern.command.includes('\\'));
  if (config.command !== pattern.command && !(bare && p.basename(config.command) === pattern.command)) return false;
  const args = pattern.args ?? [];
  return args.length <= config.args.length && args.every((arg, index) => config.args[index] === arg);
}

/** Whether a URL rule could ever match `config` (http and sse servers have URLs; stdio ones do not). */
export function serverUrl(config: ServerConfig): NormalUrl | undefined {
  if (config.kind === 'stdio') return undefined;
  const normal = normalUrl(config.url);
  return 'problem' in normal ? undefined : normal;
}
