// `skills-mount serve`'s command line: its options, parsed and checked. Kept apart from the
// command itself (serve-command.ts), which loads the server and client stacks: parsing any
// command line must not.
import type { ServerSelection } from '../config/server-selection.js';
import { ConfigError } from '../errors.js';
import { DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_MS } from '../server/http-sessions.js';
import type { ResourceAuthOptions } from '../server/auth.js';
import { isLoopbackHost } from '../server/loopback.js';
import { givenServers, metricsAddress, parseArguments, positiveNumber, SERVER_SELECTION_OPTIONS } from './arguments.js';
import { parseAuth, parseHostPort } from './http-options.js';

export interface ServeOptions {
  /** Streamable HTTP at http://HOST:PORT/mcp; undefined: stdio. */
  http: { host: string; port: number } | undefined;
  servers: ServerSelection;
  /** The person's approvals, exactly a project's lock, or every verified skill. */
  view: { kind: 'approved' } | { kind: 'project'; dir: string } | { kind: 'all' };
  includeDynamic: boolean;
  auth: ResourceAuthOptions | undefined;
  /** Listen on a non-loopback address with no sign-in: said in the flag's name. */
  unauthenticatedNetwork: boolean;
  metrics: { host: string; port: number } | undefined;
  audit: string | undefined;
  /** ttlMs on cacheable 2026-07-28 results; undefined: the reference server's default. */
  ttlMs: number | undefined;
  /** Deadline of every upstream MCP request. */
  timeoutMs: number;
  /** undefined: --no-disk-cache. */
  diskCache: { root: string | undefined; limitBytes: number } | undefined;
  cacheBytes: number;
  sessions: { idleMs: number; maxSessions: number };
  verbose: boolean;
}

export const MIB = 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_DISK_CACHE_BYTES = 1024 * MIB;
const DEFAULT_CACHE_BYTES = 256 * MIB;

export function parseServe(argv: readonly string[]): { command: 'serve'; options: ServeOptions } | { command: 'help' } {
  const { values, positionals } = parseArguments(argv, {
    http: { type: 'string' },
    ...SERVER_SELECTION_OPTIONS,
    project: { type: 'string' },
    all: { type: 'boolean' },
    'include-dynamic': { type: 'boolean' },
    'auth-issuer': { type: 'string' },
    'auth-audience': { type: 'string' },
    'auth-scope': { type: 'string', multiple: true },
    'unauthenticated-network': { type: 'boolean' },
    metrics: { type: 'string' },
    audit: { type: 'string' },
    ttl: { type: 'string' },
    timeout: { type: 'string' },
    'cache-size': { type: 'string' },
    'cache-dir': { type: 'string' },
    'disk-cache-size': { type: 'string' },
    'no-disk-cache': { type: 'boolean' },
    'session-idle': { type: 'string' },
    'max-sessions': { type: 'string' },
    verbose: { type: 'boolean', short: 'v' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return { command: 'help' };
  if (positionals.length > 0) throw new ConfigError(`serve takes no arguments but options, got "${positionals[0]}"`);
  const project = values.project as string | undefined;
  const all = (values.all as boolean | undefined) ?? false;
  if (project !== undefined && all) throw new ConfigError('serve takes --project DIR or --all, not both: the lock decides, or every verified skill is served');
  if (project === '') throw new ConfigError('--project needs a DIR: the folder whose skills-lock.json decides what is served');
  const includeDynamic = (values['include-dynamic'] as boolean | undefined) ?? false;
  if (includeDynamic && !all) throw new ConfigError('--include-dynamic goes with --all: approvals and locks bind digests, and a "dynamic" skill has none');
  const http = values.http === undefined ? undefined : parseHostPort(values.http as string, '--http');
  const auth = parseAuth(values['auth-issuer'] as string | undefined, values['auth-audience'] as string | undefined, values['auth-scope'] as string[] | undefined);
  const unauthenticatedNetwork = (values['unauthenticated-network'] as boolean | undefined) ?? false;
  if (!http && (auth || unauthenticatedNetwork)) throw new ConfigError(`${auth ? '--auth-issuer' : '--unauthenticated-network'} needs --http: over stdio the host that started serve is its only client`);
  if (http && !isLoopbackHost(http.host) && !auth && !unauthenticatedNetwork) {
    throw new ConfigError(`--http ${http.host}: not a loopback address; anyone who reaches it would read the approved skills: add --auth-issuer URL (clients present its tokens), or --unauthenticated-network to serve them to anyone who can connect`);
  }
  const noDiskCache = (values['no-disk-cache'] as boolean | undefined) ?? false;
  if (noDiskCache && (values['cache-dir'] !== undefined || values['disk-cache-size'] !== undefined)) throw new ConfigError('--no-disk-cache goes with neither --cache-dir nor --disk-cache-size');
  return {
    command: 'serve',
    options: {
      http,
      servers: givenServers(values),
      view: project !== undefined ? { kind: 'project', dir: project } : all ? { kind: 'all' } : { kind: 'approved' },
      includeDynamic,
      auth,
      unauthenticatedNetwork,
      metrics: metricsAddress(values.metrics as string | undefined),
      audit: values.audit as string | undefined,
      ttlMs: values.ttl === undefined ? undefined : wholeSeconds(values.ttl as string, '--ttl') * 1000,
      timeoutMs: values.timeout === undefined ? DEFAULT_TIMEOUT_MS : positiveNumber(values.timeout as string, '--timeout') * 1000,
      diskCache: noDiskCache ? undefined : { root: values['cache-dir'] as string | undefined, limitBytes: mebibytes(values['disk-cache-size'], '--disk-cache-size', DEFAULT_DISK_CACHE_BYTES) },
      cacheBytes: mebibytes(values['cache-size'], '--cache-size', DEFAULT_CACHE_BYTES),
      sessions: {
        idleMs: values['session-idle'] === undefined ? DEFAULT_SESSION_IDLE_MS : wholeSeconds(values['session-idle'] as string, '--session-idle', 1) * 1000,
        maxSessions: values['max-sessions'] === undefined ? DEFAULT_MAX_SESSIONS : wholeSeconds(values['max-sessions'] as string, '--max-sessions', 1),
      },
      verbose: (values.verbose as boolean | undefined) ?? false,
    },
  };
}

function wholeSeconds(text: string, flag: string, least = 0): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value * 1000) || value < least) throw new ConfigError(`${flag} takes a whole number${least > 0 ? ` of at least ${least}` : ''}, got "${text}"`);
  return value;
}

function mebibytes(text: unknown, flag: string, fallback: number): number {
  return text === undefined ? fallback : Math.round(positiveNumber(text as string, `${flag} (MiB)`) * MIB);
}
