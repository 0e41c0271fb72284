// `skills-mount serve`: the verified, approved view re-served as one SEP-2640 server, on stdio
// (a host starts it as its MCP server) or Streamable HTTP. Starts the configured servers in this
// process as `snapshot` does, builds the same filesystem core, and hands the gateway's view of it
// (src/serve/) to the reference server's SkillsService. Parses, wires and stops; decides little.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { ApprovalLedger, type ApprovalsSource } from '../approvals/approval-ledger.js';
import { defaultApprovalsPath } from '../approvals/approval-store.js';
import { CacheLockedError, DiskCache, defaultCacheRoot } from '../cache/disk-cache.js';
import { loadMountConfig, PACKAGE_ROOT } from '../config/config.js';
import { ConfigError } from '../errors.js';
import { escapeForLog } from '../format/escape.js';
import { startServerCore, type ServerCore } from '../in-process/server-core.js';
import type { Log } from '../log.js';
import { MountMetrics, startMetricsServer, warnIfExposed, type MetricsServer } from '../metrics/index.js';
import { errorCode } from '../private-files.js';
import { DEFAULT_TTL_MS, serveHttp, SkillsService } from '../server/index.js';
import { isLoopbackHost } from '../server/loopback.js';
import { activationRecorder, AuditFile } from '../serve/activations.js';
import { GatewayTree, type ServedMode } from '../serve/gateway-tree.js';
import { ServeMetrics } from '../serve/serve-metrics.js';
import { identityOf, LockfileError, lockfilePath } from '../team/lockfile.js';
import { loadPolicy } from '../team/policy.js';
import { approvedSource, mountableServers } from '../team/view-approvals.js';
import { MIB, type ServeOptions } from './serve-options.js';

export type { ServeOptions } from './serve-options.js';

/** How often the approvals file is looked at again and listings past their ttlMs are read again (a reader of the mount does this). */
const TICK_MS = 500;
/** A stdio server is stopped in at most three 1 s steps (stdin, SIGTERM, SIGKILL). */
const CLOSE_BOUND_MS = 4_000;

/** Serves until a signal (or, on stdio, the end of stdin); resolves the exit code. */
export async function runServe(options: ServeOptions): Promise<number> {
  // Whatever a server put into a line, no control character survives; stdout is the protocol's on stdio.
  const log: Log = (line) => process.stderr.write(`skills-mount: ${escapeForLog(line)}\n`);
  const policy = await loadPolicy({ env: process.env, home: homedir() });
  const config = mountableServers(await loadMountConfig({ configPath: options.servers.configPath, serverFlags: options.servers.serverFlags, only: options.servers.only }), policy, log, 'not served');
  for (const note of config.notes) log(note);
  const labels = config.servers.map((server) => server.label);
  const mode: ServedMode = options.view.kind === 'all' ? 'all' : 'approved';

  const stops: Array<() => Promise<unknown> | void> = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.splice(0).reverse()) await Promise.resolve(stop()).catch((error: unknown) => log(`while stopping: ${(error as Error).message}`));
  };
  try {
    const approvals = await ApprovalLedger.open(defaultApprovalsPath(process.env, homedir()), log);
    stops.push(() => approvals.idle(), () => approvals.close());
    await approvals.watch();
    const lockfile = options.view.kind === 'project' ? lockfilePath(options.view.dir) : undefined;
    const viewed: ApprovalsSource = await approvedSource(lockfile, approvals, config.servers, policy, log, '--project').catch((error: unknown) => {
      // A lockfile the command line names that cannot be used is bad input, as a missing one is.
      throw error instanceof LockfileError ? new ConfigError(`--project ${error.message}`, { cause: error }) : error;
    });
    if ('close' in viewed && typeof viewed.close === 'function') stops.push(() => (viewed as { close(): void }).close());

    const audit = options.audit === undefined ? undefined : await AuditFile.open(path.resolve(options.audit), log);
    if (audit) stops.push(() => audit.close());
    const diskCache = options.diskCache && (await openDiskCache(options.diskCache, options, config.origin, log));
    if (diskCache) stops.push(() => diskCache.close());

    const mountMetrics = options.metrics && new MountMetrics({ servers: labels });
    log(`serving ${describeView(options, lockfile)} of ${labels.length} server${labels.length === 1 ? '' : 's'} from ${config.origin}`);
    const core: ServerCore = await startServerCore({
      servers: config.servers,
      timeoutMs: options.timeoutMs,
      protocolVersion: undefined,
      verbose: options.verbose,
      hideDynamic: !options.includeDynamic,
      log,
      approvals: viewed,
      diskCache,
      cacheBytes: options.cacheBytes,
      metrics: mountMetrics && { observer: mountMetrics.requestObserver, verificationFailed: (label, reason) => mountMetrics.verificationFailed(label, reason), cacheLookup: (hit) => mountMetrics.cacheLookup('memory', hit) },
    });
    stops.push(() => Promise.race([core.close(), delay(CLOSE_BOUND_MS)]));
    const identities = new Map(config.servers.map((server) => [server.label, identityOf(server.config)]));
    const tree = await GatewayTree.open({ core: core.filesystem, catalogs: core.catalogs, identities, mode, includeDynamic: options.includeDynamic, log });
    stops.push(() => tree.close());
    const served = mountMetrics && new ServeMetrics(mountMetrics, labels, () => tree.snapshot.skills.length, () => core.catalogs);
    let metricsServer: MetricsServer | undefined;
    if (mountMetrics && served && options.metrics) {
      mountMetrics.cacheEnabled('memory');
      if (diskCache) mountMetrics.cacheEnabled('disk');
      mountMetrics.watch({ catalogs: () => core.catalogs, caches: () => (diskCache ? { disk: { usedBytes: diskCache.totalBytes, limitBytes: diskCache.limitBytes } } : {}) });
      metricsServer = await startMetricsServer({ ...options.metrics, metrics: () => mountMetrics.text(), contentType: mountMetrics.contentType, health: async () => served.health() });
      const listening = metricsServer;
      stops.push(() => listening.close());
      log(`metrics at ${metricsServer.url}/metrics`);
      warnIfExposed(metricsServer, { servers: labels, mountpoint: 'serve' }, log);
    }
    // What a reader of a mount does: the approvals file looked at again, listings past their ttlMs read again.
    const ticker = setInterval(() => {
      void core.filesystem.approvedView?.refresh().catch(() => {});
      for (const catalog of core.catalogs) void catalog.lookup('').catch(() => {});
    }, TICK_MS);
    ticker.unref();
    stops.push(() => clearInterval(ticker));

    const service = new SkillsService(tree, {
      protocol: 'both',
      directoryRead: true,
      ttlMs: options.ttlMs ?? DEFAULT_TTL_MS,
      cacheScope: 'private',
      verbose: options.verbose,
      log,
      serverInfo: { name: 'skills-mount', version: packageVersion() },
      onServed: activationRecorder(tree, options.http ? 'http' : 'stdio', { log, audit, count: served && ((activation) => served.activated(activation.label)) }),
    });
    stops.push(() => service.close());
    log(`${tree.snapshot.skills.length} skill${tree.snapshot.skills.length === 1 ? '' : 's'} served`);

    let stopServing: () => Promise<void>;
    if (options.http) {
      const serving = await listen(options, service);
      stopServing = () => serving.close();
      // The URL alone on stdout for scripts; the log line for people.
      process.stdout.write(`${serving.url}\n`);
      log(`listening on ${serving.url}${options.auth ? ` (tokens from ${options.auth.issuer})` : options.unauthenticatedNetwork && !isLoopbackHost(options.http.host) ? ' WITHOUT SIGN-IN (--unauthenticated-network)' : ''}`);
    } else {
      const serving = service.serveStdio();
      stopServing = () => serving.close();
    }
    served?.serving();
    return await untilStopped(options.http === undefined, log, async () => {
      served?.stopping();
      await stopServing();
      await stopAll();
    });
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** Listens; a port in use or an address not of this host is a ConfigError naming it. */
async function listen(options: ServeOptions, service: SkillsService) {
  const { host, port } = options.http!;
  try {
    return await serveHttp({ service, host, port, sessions: options.sessions, ...(options.auth && { auth: options.auth }) });
  } catch (error) {
    const code = errorCode(error);
    const where = `--http ${host.includes(':') ? `[${host}]` : host}:${port}`;
    if (code === 'EADDRINUSE') throw new ConfigError(`${where}: the port is in use`);
    if (code === 'EADDRNOTAVAIL') throw new ConfigError(`${where}: no address of this machine`);
    if (code === 'EACCES') throw new ConfigError(`${where}: not permitted (a port below 1024 needs privilege)`);
    throw error;
  }
}

/** Resolves once SIGINT, SIGTERM or (stdio) the end of stdin has stopped everything; a second signal exits at once. */
function untilStopped(stdio: boolean, log: Log, stop: () => Promise<void>): Promise<number> {
  return new Promise((resolve) => {
    let stopping = false;
    const begin = (reason: string): void => {
      if (stopping) {
        log(`${reason} again: exiting now`);
        process.exit(1);
      }
      stopping = true;
      log(`${reason}: stopping`);
      // Bounded: a stuck close must not keep a host waiting on a gone server.
      setTimeout(() => resolve(0), CLOSE_BOUND_MS + 1_000).unref();
      void stop().finally(() => resolve(0));
    };
    process.on('SIGINT', () => begin('SIGINT'));
    process.on('SIGTERM', () => begin('SIGTERM'));
    if (stdio) process.stdin.once('end', () => begin('stdin closed'));
  });
}

/**
 * The verified disk cache, a subtree of its own per configuration and view (a mount's is per
 * mountpoint): a second `serve` of the same view, whose subtree is held, runs from memory.
 */
async function openDiskCache(settings: { root: string | undefined; limitBytes: number }, options: ServeOptions, origin: string, log: Log): Promise<DiskCache | undefined> {
  const root = path.resolve(settings.root ?? defaultCacheRoot(process.env, homedir()));
  const view = options.view.kind === 'project' ? `project ${path.resolve(options.view.dir)}` : options.view.kind;
  // Not a directory anyone mounts: the key the cache root records this subtree under.
  const key = `/skills-mount-serve/${createHash('sha256').update(`${origin}\0${view}`).digest('hex').slice(0, 16)}`;
  try {
    const cache = await DiskCache.open({ root, mountpoint: key, limitBytes: settings.limitBytes, log });
    log(`disk cache ${cache.subtree} (${Math.round(cache.totalBytes / MIB)} of ${Math.round(settings.limitBytes / MIB)} MiB used)`);
    return cache;
  } catch (error) {
    if (!(error instanceof CacheLockedError)) throw error;
    log(`disk cache: ${error.message}; serving from memory only`);
    return undefined;
  }
}

function describeView(options: ServeOptions, lockfile: string | undefined): string {
  if (options.view.kind === 'project') return `the skills locked in ${lockfile}`;
  if (options.view.kind === 'all') return `every verified skill${options.includeDynamic ? ' (and "dynamic" ones, marked)' : ''}`;
  return 'the approved skills';
}

function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: string };
  return manifest.version ?? 'unknown';
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
