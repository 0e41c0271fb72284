#!/usr/bin/env node
// skills-serve: serves a directory of Agent Skills over MCP (SEP-2640), on stdio or
// Streamable HTTP. Argument parsing, wiring and signals only; the server lives in src/server.
import { parseArgs } from 'node:util';
import { ConfigError } from '../errors.js';
import { routeSdkLines } from '../log.js';
import { parseAuth, parseHostPort } from './http-options.js';
import { exitAfterDrain, watchOutputStreams } from './process-exit.js';
import { checkAuthBinding, DEFAULT_CACHE_SCOPE, DEFAULT_MAX_SESSIONS, DEFAULT_PAGE_SIZE, DEFAULT_SESSION_IDLE_MS, DEFAULT_TTL_MS, serveHttp, SkillsService, SkillTree, type DiscoveryProtocol, type Log, type ResourceAuthOptions } from '../server/index.js';

const USAGE = `usage: skills-serve DIR [options]

Serves every skill (a directory holding SKILL.md) under DIR as skill:// resources, to
MCP 2026-07-28 clients (server/discover) and 2025 ones (initialize) alike.

options:
  --http [HOST:]PORT       serve Streamable HTTP at http://HOST:PORT/mcp (default host 127.0.0.1;
                           port 0 picks a free one) instead of stdio
  --protocol P             index | listing | both (default both): skill://index.json,
                           skills/list + skills/get, or both
  --page-size N            items per page of skills/list and directory reads (default ${DEFAULT_PAGE_SIZE})
  --no-directory-read      do not offer resources/directory/read
  --lenient                also serve skills that break only a length limit (description over
                           1024 or compatibility over 500 characters), with the warning; by
                           default they are refused, as the Agent Skills rules say (--strict,
                           the old opposite, is gone: refusing is now the default)
  --ttl SECONDS            ttlMs on every cacheable 2026-07-28 result (default ${DEFAULT_TTL_MS / 1000})
  --cache-scope S          public | private (default ${DEFAULT_CACHE_SCOPE}): cacheScope on those results
  --session-idle SECONDS   with --http: close a 2025 session idle this long (default ${DEFAULT_SESSION_IDLE_MS / 1000})
  --max-sessions N         with --http: most 2025 sessions open at once; the longest idle makes room (default ${DEFAULT_MAX_SESSIONS})
  --auth-issuer URL        with --http: an OAuth protected resource (MCP authorization): every
                           request needs a bearer JWT from this issuer (its identifier, exactly as
                           its metadata says; https, or http on loopback), checked against the
                           issuer's keys; protected resource metadata at
                           /.well-known/oauth-protected-resource[/mcp]
  --auth-audience URL      with --auth-issuer: the resource tokens must be issued for (their aud),
                           the MCP endpoint's URL as clients see it (default the URL listened on;
                           required when bound to 0.0.0.0 or ::, or behind a proxy)
  --auth-scope SCOPE       with --auth-issuer: a scope every token must carry (403 otherwise);
                           repeat or space-separate for several
  --verbose                log every request
  -h, --help               show this help
`;

const log: Log = (line) => process.stderr.write(`skills-serve: ${line}\n`);

interface Options {
  dir: string;
  http?: { host: string; port: number };
  protocol: DiscoveryProtocol;
  pageSize: number;
  directoryRead: boolean;
  lenient: boolean;
  ttlMs: number;
  cacheScope: 'public' | 'private';
  sessions: { idleMs: number; maxSessions: number };
  auth?: ResourceAuthOptions;
  verbose: boolean;
}

function parseOptions(argv: string[]): Options | 'help' {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      http: { type: 'string' },
      protocol: { type: 'string' },
      'page-size': { type: 'string' },
      'no-directory-read': { type: 'boolean' },
      lenient: { type: 'boolean' },
      ttl: { type: 'string' },
      'cache-scope': { type: 'string' },
      'session-idle': { type: 'string' },
      'max-sessions': { type: 'string' },
      'auth-issuer': { type: 'string' },
      'auth-audience': { type: 'string' },
      'auth-scope': { type: 'string', multiple: true },
      verbose: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  if (positionals.length !== 1) throw new ConfigError(positionals.length === 0 ? 'DIR is required' : `exactly one DIR expected, got ${positionals.length}`);
  const protocol = values.protocol ?? 'both';
  if (protocol !== 'index' && protocol !== 'listing' && protocol !== 'both') {
    throw new ConfigError(`--protocol must be index, listing or both, not "${protocol}"`);
  }
  let pageSize = DEFAULT_PAGE_SIZE;
  if (values['page-size'] !== undefined) {
    pageSize = Number(values['page-size']);
    if (!/^\d+$/.test(values['page-size']) || !Number.isSafeInteger(pageSize) || pageSize < 1) {
      throw new ConfigError(`--page-size must be a positive integer, not "${values['page-size']}"`);
    }
  }
  let ttlMs = DEFAULT_TTL_MS;
  if (values.ttl !== undefined) {
    if (!/^\d+$/.test(values.ttl) || !Number.isSafeInteger(Number(values.ttl) * 1000)) {
      throw new ConfigError(`--ttl must be a whole number of seconds, not "${values.ttl}"`);
    }
    ttlMs = Number(values.ttl) * 1000;
  }
  const cacheScope = values['cache-scope'] ?? DEFAULT_CACHE_SCOPE;
  if (cacheScope !== 'public' && cacheScope !== 'private') throw new ConfigError(`--cache-scope must be public or private, not "${cacheScope}"`);
  const http = values.http === undefined ? undefined : parseHostPort(values.http, '--http');
  const auth = parseAuth(values['auth-issuer'], values['auth-audience'], values['auth-scope']);
  if (auth) {
    if (!http) throw new ConfigError('--auth-issuer needs --http: over stdio there is no one to authorize');
    checkAuthBinding(http.host, auth);
  }
  return {
    dir: positionals[0]!,
    ...(http && { http }),
    ...(auth && { auth }),
    protocol,
    pageSize,
    directoryRead: !values['no-directory-read'],
    lenient: values.lenient ?? false,
    ttlMs,
    cacheScope,
    sessions: {
      idleMs: positiveInteger('--session-idle', values['session-idle'], DEFAULT_SESSION_IDLE_MS / 1000) * 1000,
      maxSessions: positiveInteger('--max-sessions', values['max-sessions'], DEFAULT_MAX_SESSIONS),
    },
    verbose: values.verbose ?? false,
  };
}

function positiveInteger(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value) * 1000) || Number(value) < 1) throw new ConfigError(`${flag} must be a positive integer, not "${value}"`);
  return Number(value);
}

async function main(): Promise<void> {
  // The SDK writes its own lines to the console: from the start, they go through the same redaction and escaping.
  routeSdkLines();
  watchOutputStreams('skills-serve');
  let options: Options | 'help';
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`skills-serve: error: ${(error as Error).message}\n\n${USAGE}`);
    return exitAfterDrain(2);
  }
  if (options === 'help') {
    process.stdout.write(USAGE);
    return;
  }

  let tree: SkillTree;
  try {
    tree = await SkillTree.open({ root: options.dir, lenient: options.lenient, log });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`skills-serve: error: ${error.message}\n`);
    return exitAfterDrain(2);
  }
  const service = new SkillsService(tree, {
    protocol: options.protocol,
    pageSize: options.pageSize,
    directoryRead: options.directoryRead,
    lenient: options.lenient,
    ttlMs: options.ttlMs,
    cacheScope: options.cacheScope,
    verbose: options.verbose,
    log,
  });

  let closing = false;
  let stop: () => Promise<void> = async () => {};
  const shutdown = (reason: string): void => {
    if (closing) return;
    closing = true;
    log(`${reason}; shutting down`);
    // The promise is within 1 s; a stuck close must not break it.
    setTimeout(() => process.exit(0), 800).unref();
    void stop()
      .catch((error: unknown) => log(`error while closing: ${(error as Error).message}`))
      .finally(() => {
        service.close();
        tree.close();
        void exitAfterDrain(0);
      });
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  if (options.http) {
    const serving = await serveHttp({ service, host: options.http.host, port: options.http.port, sessions: options.sessions, ...(options.auth && { auth: options.auth }) });
    stop = () => serving.close();
    log(`listening on ${serving.url}`);
  } else {
    // stdout carries the protocol; every log line goes to stderr.
    const serving = service.serveStdio();
    stop = () => serving.close();
    process.stdin.once('end', () => shutdown('stdin closed'));
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`skills-serve: fatal: ${(error as Error).stack ?? String(error)}\n`);
  void exitAfterDrain(1);
});
