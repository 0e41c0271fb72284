// `skills-mount MOUNTPOINT`: starts every configured server, mounts their skills read-only
// and serves until SIGINT or SIGTERM. The only place that builds concrete I/O
// (connections, caches, the kernel mount) and wires it together.
import { homedir } from 'node:os';
import path from 'node:path';
import { configurationOf } from '../link/judged-roots.js';
import { LinkKeeper } from '../link/link-keeper.js';
import { defaultLinkStore } from '../link/link-state.js';
import { catalogContent } from '../link/catalog-content.js';
import { ApprovalLedger } from '../approvals/approval-ledger.js';
import { defaultApprovalsPath } from '../approvals/approval-store.js';
import { DiskCache, defaultCacheRoot } from '../cache/disk-cache.js';
import { discoveryFolderProblem } from '../cache/discovery-folders.js';
import { ContentCache } from '../catalog/content-cache.js';
import { ConfigError } from '../errors.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../catalog/server-catalog.js';
import { SkillsFilesystem } from '../fs/skills-filesystem.js';
import { APPROVED_DIR, STATUS_JSON } from '../fs/mount-layout.js';
import { checkUserAllowOther, chooseBackend, findMount, mountFilesystem, prepareMountpoint, type MountHandle } from '../fuse/index.js';
import { McpSkillSource } from '../mcp/mcp-skill-source.js';
import { MountHealth, MountMetrics, startMetricsServer, statProbe, warnIfExposed, type MountProbe } from '../metrics/index.js';
import { resolveAllowedUser, unreachableAncestor, type AllowedUser } from '../config/allowed-user.js';
import { commandProblem } from '../config/command-check.js';
import { DEFAULT_LIBFUSE3_METADATA_TTL_SECONDS, type MountOptions } from './command-line.js';
import { loadMountConfig } from '../config/config.js';
import { LockLedger } from '../team/lock-ledger.js';
import { approvedSource, mountableServers } from '../team/view-approvals.js';
import { lockedApprovals } from '../team/locked-approvals.js';
import { permittedApprovals } from '../team/policed-approvals.js';
import { loadPolicy } from '../team/policy.js';
import { defaultSkillTexts, keptSkillTextsIn } from '../team/skill-texts.js';
import { readMountFile } from '../fuse/mount-read.js';
import { serviceNotifier } from '../fuse/service-notify.js';
import { signalReady } from './background-mount.js';
import { StartupProgress } from './progress.js';
import { exitAfterDrain } from './process-exit.js';
import { escapeForLog } from '../format/escape.js';
import { warmUpFrontmatterParser } from '../format/frontmatter.js';

/** Slack between our MCP deadline and the FUSE edge's, so our error (not ETIMEDOUT) reaches the caller. */
const FUSE_DEADLINE_MARGIN_MS = 5_000;
const MAX_RECENT_ERRORS = 20;
/** How long /healthz's probe through the mount may take before the mount counts as not answering. */
const HEALTH_PROBE_TIMEOUT_MS = 2_000;
const LABELS_IN_SUMMARY = 6;

/** Runs the mount until a signal; resolves once the mount is ready (the process keeps serving). */
export async function runMount(options: MountOptions): Promise<void> {
  let progress: StartupProgress | undefined;
  const log = (line: string): void => {
    // The one sink of every log line: whatever a server put into it (URIs, names, messages),
    // no control character or line separator survives, so no server can forge a line.
    const text = `skills-mount: ${escapeForLog(line)}`;
    if (progress) progress.log(text);
    else process.stderr.write(`${text}\n`);
  };
  const recentErrors: string[] = [];
  /** Failures reported to callers: logged, and kept for skills.json and `status`. */
  const logError = (line: string): void => {
    log(line);
    recentErrors.push(`${new Date().toISOString()} ${line}`);
    if (recentErrors.length > MAX_RECENT_ERRORS) recentErrors.shift();
  };

  // First: a platform without FUSE is told in one line what it needs (exit 2), before anything starts.
  await chooseBackend({ log, verbose: options.verbose });
  // Read (and taken out of the environment the servers inherit) before any server starts.
  const service = serviceNotifier(process.env, { log });
  const policy = await loadPolicy({ env: process.env, home: homedir() });
  const config = mountableServers(await loadMountConfig({ configPath: options.configPath, serverFlags: options.serverFlags, only: options.only }), policy, log);
  // Fail on a bad mountpoint before starting any server.
  const mountpoint = await prepareMountpoint(options.mountpoint);
  for (const note of config.notes) log(note);
  const mountpointProblem = await discoveryFolderProblem(mountpoint, { home: homedir() });
  if (mountpointProblem !== undefined) throw new ConfigError(`mountpoint ${mountpoint}: ${mountpointProblem}`);
  const allowedUser = options.allowUser === undefined ? undefined : await resolveAllowedUser(options.allowUser);
  if (allowedUser) {
    // Before any server starts: fusermount would refuse the mount only at the end.
    await checkUserAllowOther();
    const blocked = await unreachableAncestor(mountpoint, allowedUser);
    if (blocked !== undefined) log(`--allow-user ${allowedUser.name}: ${blocked}, so they cannot reach ${mountpoint}; open that directory to them or mount elsewhere`);
  }
  // Declared before the metrics are wired: a scrape may come before the mount exists.
  let mount: MountHandle | undefined;
  // Declared before the signal handlers: a signal may come before it exists.
  let links: LinkKeeper | undefined;
  // Listening before any server starts: a port in use stops the mount at once.
  // What /healthz notes of the servers, once there are catalogs to ask.
  let healthNotes: () => string[] = () => [];
  const served = options.metrics && (await serveMetrics(options.metrics, mountpoint, allowedUser, config.servers.map((server) => server.label), () => healthNotes(), log));
  const metrics = served?.metrics;
  const health = served?.health;
  const diskCache = options.diskCache && (await openDiskCache(options.diskCache, mountpoint, log, metrics ? (hit) => metrics.cacheLookup('disk', hit) : undefined));
  // Content of servers no longer configured goes (spec: SHOULD remove it with the server); not
  // for an --only subset, whose other servers are still configured.
  if (diskCache && options.only.length === 0) {
    const removed = await diskCache.prune(config.servers.map((server) => server.label));
    if (removed.length > 0) log(`disk cache: removed the content of ${removed.join(', ')} (no longer configured)`);
  }

  const approvedOnly = approvedOnlyLabels(config.servers, options.approvedOnly);
  const approvals = await ApprovalLedger.open(defaultApprovalsPath(process.env, homedir()), log);
  await approvals.watch();
  if (approvedOnly.size > 0) log(`served only in the approved view (${mountpoint}/${APPROVED_DIR}): ${[...approvedOnly].join(', ')}`);
  // What the approved view shows: a project's lockfile (--lock), or the person's approvals, each as the policy allows.
  const viewed = await approvedSource(options.lockfile, approvals, config.servers, policy, log);

  const cache = new ContentCache(options.cacheBytes, { onLookup: metrics ? (hit) => metrics.cacheLookup('memory', hit) : undefined });
  const sources = config.servers.map(
    ({ label, config: serverConfig, protocolVersion }) =>
      new McpSkillSource(label, serverConfig, {
        timeoutMs: options.timeoutMs,
        protocolVersion: options.protocolVersion ?? protocolVersion ?? 'negotiate',
        log,
        verbose: options.verbose,
        ...(metrics ? { observer: metrics.requestObserver } : {}),
      }),
  );
  const catalogs = sources.map(
    (source) =>
      new ServerCatalog(source, {
        ...DEFAULT_CATALOG_TIMINGS,
        log,
        cache,
        durable: diskCache?.server(source.label),
        hideDynamic: options.hideDynamic,
        onVerificationFailure: metrics ? (reason) => metrics.verificationFailed(source.label, reason) : undefined,
      }),
  );
  healthNotes = () =>
    catalogs.flatMap((catalog) => (catalog.health().connection.status === 'needs-login' ? [`${catalog.label}: needs login; run: skills-mount login ${catalog.label}`] : []));
  if (metrics) {
    metrics.cacheEnabled('memory');
    if (diskCache) metrics.cacheEnabled('disk');
    metrics.watch({
      catalogs: () => catalogs,
      caches: () => ({
        memory: { usedBytes: cache.sizeBytes, limitBytes: options.cacheBytes },
        ...(diskCache ? { disk: { usedBytes: diskCache.totalBytes, limitBytes: diskCache.limitBytes } } : {}),
      }),
      answeredByAddon: () => mount?.answeredByAddon?.(),
    });
  }
  log(`starting ${sources.length} server${sources.length === 1 ? '' : 's'} from ${config.origin}`);
  for (const { label, config: serverConfig } of config.servers) {
    if (serverConfig.kind !== 'stdio') continue;
    const problem = await commandProblem(serverConfig.command, serverConfig.cwd, { ...process.env, ...serverConfig.env });
    if (problem) log(`[${label}] ${problem}; its directory stays empty until it starts (retried with backoff)`);
  }
  progress = new StartupProgress(process.stderr, sources.length);
  // The mount appears once every first connection attempt and listing has ended, so the
  // first ls sees the catalogs; but never later than the startup deadline: a server still
  // connecting or listing then goes on in the background, its directory filling in.
  let connected = 0;
  if (service.active) service.status(`starting ${sources.length} server${sources.length === 1 ? '' : 's'}; mounting ${mountpoint}`);
  const firstListings = Promise.all(
    sources.map(async (source, i) => {
      await source.start();
      if (source.connection().status !== 'connected') {
        // Unreachable now: its last listing from the disk cache, until it answers.
        await catalogs[i]!.restoreKeptListing();
        return progress?.serverFailed();
      }
      progress?.serverConnected();
      service.status(`${++connected}/${sources.length} servers connected; mounting ${mountpoint}`);
      await catalogs[i]!.refresh();
      // Counts, not summary(): a summary builds an object per skill (200,000 of them for a hostile listing).
      progress?.serverListed(catalogs[i]!.health().skills);
    }),
  );
  const onTime = await Promise.race([firstListings.then(() => true), delay(options.startupTimeoutMs).then(() => false)]);
  if (!onTime) {
    log(`startup deadline (${options.startupTimeoutMs / 1000} s) passed; mounting now, servers still connecting or listing go on in the background`);
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      log(`${signal} again: exiting now`);
      return exitAfterDrain(1, { hurried: true });
    }
    stopping = true;
    progress?.finish();
    health?.stopping();
    service.stopping();
    log(`${signal}: unmounting ${mountpoint}`);
    await mount?.unmount().catch((error: unknown) => log(`unmount failed: ${(error as Error).message}`));
    // A stdio server is stopped in at most three 1 s steps (stdin, SIGTERM, SIGKILL): exit only once they are gone.
    approvals.close();
    if (viewed instanceof LockLedger) viewed.close();
    links?.close();
    for (const catalog of catalogs) catalog.close();
    await Promise.race([Promise.all([...sources.map((source) => source.close()), diskCache?.close(), approvals.idle()]), delay(4_000)]);
    return exitAfterDrain(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  const startedAt = new Date().toISOString();
  const metadataTtlSeconds = options.metadataTtlSeconds ?? DEFAULT_LIBFUSE3_METADATA_TTL_SECONDS;
  const filesystem = new SkillsFilesystem(catalogs, {
    // libfuse3 gives each version its own inode: a size the kernel holds is that version's, never clipping another.
    metadataTtlMs: 0,
    approvals: viewed,
    approvedOnly,
    log: logError,
    mountStatus: () => ({
      pid: process.pid,
      startedAt,
      cache: { usedBytes: cache.sizeBytes, limitBytes: options.cacheBytes },
      diskCache: diskCache ? { dir: diskCache.subtree, usedBytes: diskCache.totalBytes, limitBytes: diskCache.limitBytes } : null,
      metrics: served?.url ?? null,
      recentErrors: [...recentErrors],
    }),
  });
  links = new LinkKeeper({
    store: defaultLinkStore(process.env, homedir()),
    approvals: () => permittedApprovals(approvals.all(), config.servers, policy).approvals,
    lockedApprovals: { configuration: configurationOf(options, { env: process.env, home: homedir() }), read: (file) => lockedApprovals(file, config.servers, policy, 'link') },
    content: catalogContent(catalogs, keptSkillTextsIn(defaultSkillTexts(process.env, homedir()))),
    log,
  });
  approvals.onChange(() => links?.changed());
  for (const catalog of catalogs) catalog.onChange(() => links?.changed());
  try {
    mount = await mountFilesystem(filesystem, mountpoint, {
      operationTimeoutMs: options.timeoutMs + FUSE_DEADLINE_MARGIN_MS,
      verbose: options.verbose,
      kernelCacheSeconds: metadataTtlSeconds,
      // The versions kept open between opens count against --cache-size, not beside it.
      pinnedBytesLimit: options.cacheBytes,
      // As long as the daemon itself remembers a miss, so a new skill appears as soon as it would.
      negativeTimeoutSeconds: Math.min(metadataTtlSeconds, DEFAULT_CATALOG_TIMINGS.negativeTtlMs / 1000),
      ...(allowedUser ? { allowOther: { uid: allowedUser.uid, gid: allowedUser.gid } } : {}),
      ...(metrics ? { observer: metrics.fuseObserver } : {}),
      // `umount MOUNTPOINT` (the fstab form's way to stop it) stops the daemon as Ctrl-C does.
      ...(options.stopWhenUnmounted ? { onUnmounted: () => void stop('unmounted') } : {}),
      log: logError,
    });
  } finally {
    progress.finish();
  }
  if (health) health.mounted(await findMount(mountpoint));
  const seconds = progress.elapsedSeconds();
  progress = undefined;
  // Counted from the catalogs: skills shown from a kept listing count too.
  const servers = catalogs.map((catalog, i) => ({
    label: catalog.label,
    connected: sources[i]!.connection().status === 'connected',
    offline: catalog.offline() !== null,
    skills: catalog.health().skills,
  }));
  if (allowedUser) log(`readable by uid ${allowedUser.uid} (${allowedUser.name}) and root only: every file theirs, 0400; directories 0500`);
  const summary = startupSummary(servers, approvedOnly, seconds);
  log(`mounted ${mountpoint} (${summary}); Ctrl-C to unmount`);
  // Ready means mounted: a unit ordered after this one starts only now. The watchdog is fed while a look through the mount answers.
  const probe = healthProbe(mountpoint, allowedUser);
  service.ready(`mounted ${mountpoint}: ${summary}`, async () => {
    const outcome = await probe();
    return outcome.kind === 'ok' ? undefined : outcome.kind === 'timeout' ? 'timed out' : outcome.message;
  });
  // The fstab form's helper waits for this (background-mount.ts).
  signalReady();
  // The skills roots `skills-mount link` made follow the approvals and the servers from here on.
  links.start();
  setImmediate(warmUpFrontmatterParser);
}

/** Labels whose config entry says "approvedOnly", and those --approved-only names (each must be configured). */
function approvedOnlyLabels(servers: ReadonlyArray<{ label: string; approvedOnly?: boolean | undefined }>, flagged: readonly string[]): Set<string> {
  const labels = new Set(servers.filter((server) => server.approvedOnly).map((server) => server.label));
  for (const label of flagged) {
    if (!servers.some((server) => server.label === label)) {
      throw new ConfigError(`--approved-only ${label}: no server has that label (configured: ${servers.map((server) => server.label).join(', ')})`);
    }
    labels.add(label);
  }
  return labels;
}

/** --metrics: the registry the layers feed, the mount's health, and the endpoint serving both, listening. */
async function serveMetrics(
  address: { host: string; port: number },
  mountpoint: string,
  allowedUser: AllowedUser | undefined,
  servers: string[],
  notes: () => string[],
  log: (line: string) => void,
): Promise<{ metrics: MountMetrics; health: MountHealth; url: string }> {
  const metrics = new MountMetrics({ servers });
  const health = new MountHealth({ mountpoint, findMount: () => findMount(mountpoint), probe: healthProbe(mountpoint, allowedUser), probeTimeoutMs: HEALTH_PROBE_TIMEOUT_MS });
  const report = async () => {
    const checked = await health.check();
    const noted = checked.healthy ? notes() : [];
    return noted.length > 0 ? { healthy: true as const, notes: noted } : checked;
  };
  const server = await startMetricsServer({ ...address, metrics: () => metrics.text(), contentType: metrics.contentType, health: report });
  log(`metrics at ${server.url}/metrics`);
  warnIfExposed(server, { servers, mountpoint }, log);
  return { metrics, health, url: server.url };
}

/**
 * /healthz's look through the mount, from a child: status.json (generated, never cached by the
 * kernel, so it reaches the daemon), or, for a non-root daemon serving another user (whose 0500
 * root it cannot enter), a stat of the root, whose attributes need no permission on it.
 */
function healthProbe(mountpoint: string, allowedUser: AllowedUser | undefined): MountProbe {
  const uid = process.getuid?.();
  if (allowedUser && uid !== 0 && uid !== allowedUser.uid) return statProbe(mountpoint, HEALTH_PROBE_TIMEOUT_MS);
  return () => readMountFile(path.join(mountpoint, STATUS_JSON), HEALTH_PROBE_TIMEOUT_MS);
}

/** The disk cache at its root (never inside the mount: the daemon would read its own mount and hang). */
async function openDiskCache(
  settings: { root: string | undefined; limitBytes: number; rootLimitBytes: number },
  mountpoint: string,
  log: (line: string) => void,
  onLookup: ((hit: boolean) => void) | undefined,
): Promise<DiskCache> {
  const root = path.resolve(settings.root ?? defaultCacheRoot(process.env, homedir()));
  if (root === mountpoint || root.startsWith(`${mountpoint}/`)) throw new ConfigError(`--cache-dir ${root} is inside the mountpoint ${mountpoint}`);
  const cache = await DiskCache.open({ root, mountpoint, limitBytes: settings.limitBytes, rootLimitBytes: settings.rootLimitBytes, log, onLookup });
  log(`disk cache ${cache.subtree} (${Math.round(cache.totalBytes / 2 ** 20)} of ${Math.round(cache.limitBytes / 2 ** 20)} MiB used)`);
  return cache;
}

/** One server as the startup summary counts it: its skills are those shown (declined ones are not). */
export interface StartupServer {
  label: string;
  connected: boolean;
  /** Its skills are shown although it cannot be reached (from the disk cache). */
  offline: boolean;
  skills: number;
}

/**
 * "2/3 servers connected: a, b; not connected: c; 1,234 skills; ready in 2.1 s". The skills are
 * the ones the mount shows; an approvedOnly server's are counted apart, as its directory is not.
 */
export function startupSummary(servers: readonly StartupServer[], approvedOnly: ReadonlySet<string>, seconds: number): string {
  const connected = servers.filter((server) => server.connected).map((server) => server.label);
  const failed = servers.filter((server) => !server.connected).map((server) => server.label);
  const offline = servers.filter((server) => server.offline).map((server) => server.label);
  const parts = [`${connected.length}/${servers.length} servers connected${connected.length ? `: ${labels(connected)}` : ''}`];
  if (failed.length > 0) parts.push(`not connected: ${labels(failed)}`);
  if (offline.length > 0) parts.push(`offline, shown from the disk cache: ${labels(offline)}`);
  let shown = 0;
  let approvedViewOnly = 0;
  for (const server of servers) {
    if (approvedOnly.has(server.label)) approvedViewOnly += server.skills;
    else shown += server.skills;
  }
  parts.push(`${countOf(shown, 'skill')}${approvedViewOnly > 0 ? ` (and ${countOf(approvedViewOnly, 'skill')} served only in ${APPROVED_DIR}/ once approved)` : ''}`);
  parts.push(`ready in ${seconds.toFixed(1)} s`);
  return parts.join('; ');
}

function countOf(count: number, noun: string): string {
  return `${count.toLocaleString('en-US')} ${noun}${count === 1 ? '' : 's'}`;
}

function labels(list: readonly string[]): string {
  const shown = list.slice(0, LABELS_IN_SUMMARY).join(', ');
  return list.length > LABELS_IN_SUMMARY ? `${shown} and ${list.length - LABELS_IN_SUMMARY} more` : shown;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
