// The daemon's Prometheus registry (its own, never prom-client's global one): FUSE operations,
// MCP requests, verification failures and cache lookups counted as the layers report them, and
// each server's state and skills read from its catalog at scrape time. Every label value is
// a configured server label or a word of metric-labels.ts, so the series stay bounded.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CatalogHealth, VerificationFailureReason } from '../catalog/server-catalog.js';
import type { AddonAnswers, AddonTableSize, OperationObserver } from '../fuse/operation-observer.js';
import type { RequestObserver, RequestOutcome } from '../mcp/request-observer.js';
import { FUSE_OPERATIONS, MCP_METHODS, MCP_OUTCOMES, OTHER, SERVER_STATES, VERIFICATION_REASONS, bounded, errnoName } from './metric-labels.js';

export type CacheName = 'memory' | 'disk';

export interface MountMetricsOptions {
  /** The configured server labels: the only values the `server` label takes (anything else is "other"). */
  servers: readonly string[];
  /** Node's process metrics too (CPU, memory, file descriptors, event loop lag, GC); default true. */
  processMetrics?: boolean;
}

/** What a scrape reads of one server: its catalog's counts (ServerCatalog is one). */
export interface WatchedCatalog {
  health(): Pick<CatalogHealth, 'label' | 'connection' | 'offline' | 'skills' | 'declined' | 'rejected'>;
}

export interface CacheUse {
  usedBytes: number;
  limitBytes: number;
}

export interface Watched {
  catalogs: () => readonly WatchedCatalog[];
  /** The caches' sizes now; no disk entry with --no-disk-cache. */
  caches: () => Partial<Record<CacheName, CacheUse>>;
  /** Opens, releases and reads the libfuse 3 addon answered itself since mounting (counted opens); undefined before mounting. */
  answeredByAddon?: () => AddonAnswers | undefined;
}

/** FUSE operations take microseconds when answered from memory, up to the MCP deadline when not. */
const FUSE_BUCKETS_SECONDS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const MCP_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** One scrape asks every gauge in turn: the catalogs are read once for all of them. */
const SNAPSHOT_MS = 250;
/** prom-client gauges whose names end in _total, which promtool rejects for a gauge; their unsuffixed twins stay. */
const REASONS: ReadonlySet<string> = new Set(VERIFICATION_REASONS);
const LINT_FAILING_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

export class MountMetrics {
  readonly registry = new Registry();
  /** Pass as `observer` to mountFilesystem. */
  readonly fuseObserver: OperationObserver;
  /** Pass as `observer` in the connection options of every server. */
  readonly requestObserver: RequestObserver;

  private readonly servers: ReadonlySet<string>;
  private readonly verificationFailures: Counter<'server' | 'reason'>;
  private readonly cacheHits: Counter<'cache'>;
  private readonly cacheMisses: Counter<'cache'>;
  private watched: Watched | undefined;
  private snapshot: { atMs: number; servers: Array<ReturnType<WatchedCatalog['health']>> } | undefined;

  constructor(options: MountMetricsOptions) {
    this.servers = new Set(options.servers);
    const registers = [this.registry];
    const ops = new Set(FUSE_OPERATIONS);
    const methods = new Set(MCP_METHODS);
    const outcomes = new Set(MCP_OUTCOMES);

    const fuseOperations = new Counter({
      name: 'skills_mount_fuse_operations_total',
      help: 'FUSE operations answered, by operation and errno of the answer (OK for success).',
      labelNames: ['op', 'errno'] as const,
      registers,
    });
    const fuseDuration = new Histogram({
      name: 'skills_mount_fuse_operation_duration_seconds',
      help: 'Time from a FUSE request reaching the daemon to its answer, by operation.',
      labelNames: ['op'] as const,
      buckets: FUSE_BUCKETS_SECONDS,
      registers,
    });
    const fuseInFlight = new Gauge({ name: 'skills_mount_fuse_operations_in_flight', help: 'FUSE operations started and not answered yet.', registers });
    this.fuseObserver = {
      started: () => fuseInFlight.inc(),
      finished: (op, errno, seconds) => {
        fuseInFlight.dec();
        const operation = bounded(op, ops);
        fuseOperations.inc({ op: operation, errno: errnoName(errno) });
        fuseDuration.observe({ op: operation }, seconds);
      },
    };

    const mcpRequests = new Counter({
      name: 'skills_mount_mcp_requests_total',
      help: 'MCP requests sent, by server, method and outcome.',
      labelNames: ['server', 'method', 'outcome'] as const,
      registers,
    });
    const mcpDuration = new Histogram({
      name: 'skills_mount_mcp_request_duration_seconds',
      help: 'Time from sending an MCP request to its answer or failure, by server and method.',
      labelNames: ['server', 'method'] as const,
      buckets: MCP_BUCKETS_SECONDS,
      registers,
    });
    const mcpInFlight = new Gauge({
      name: 'skills_mount_mcp_requests_in_flight',
      help: 'MCP requests sent and not answered yet, by server.',
      labelNames: ['server'] as const,
      registers,
    });
    for (const server of this.servers) mcpInFlight.set({ server }, 0);
    this.requestObserver = {
      started: (server) => mcpInFlight.inc({ server: this.serverLabel(server) }),
      finished: (server, method, outcome: RequestOutcome, seconds) => {
        const labels = { server: this.serverLabel(server), method: bounded(method, methods) };
        mcpInFlight.dec({ server: labels.server });
        mcpRequests.inc({ ...labels, outcome: bounded(outcome, outcomes) });
        mcpDuration.observe(labels, seconds);
      },
    };

    this.verificationFailures = new Counter({
      name: 'skills_mount_verification_failures_total',
      help: 'Bytes from a server refused: size, digest or frontmatter did not match the listing, or a listed file was gone.',
      labelNames: ['server', 'reason'] as const,
      registers,
    });
    // Zero from the start, so increase() sees the first failure.
    for (const server of this.servers) for (const reason of VERIFICATION_REASONS) this.verificationFailures.inc({ server, reason }, 0);

    this.cacheHits = new Counter({ name: 'skills_mount_cache_hits_total', help: 'Content cache lookups that found the bytes, by cache.', labelNames: ['cache'] as const, registers });
    this.cacheMisses = new Counter({ name: 'skills_mount_cache_misses_total', help: 'Content cache lookups that did not, by cache.', labelNames: ['cache'] as const, registers });
    this.cacheGauge('skills_mount_cache_bytes', 'Bytes held by the content cache, by cache.', (use) => use.usedBytes);
    this.cacheGauge('skills_mount_cache_limit_bytes', 'The most bytes the content cache may hold, by cache.', (use) => use.limitBytes);

    this.serverGauge('skills_mount_server_up', 'Whether the server is connected and answering (1) or not (0).', (server) => (server.connection.status === 'connected' ? 1 : 0));
    this.serverGauge('skills_mount_server_offline', 'Whether the server is unreachable while its skills are shown from the disk cache.', (server) => (server.offline ? 1 : 0));
    this.serverGauge('skills_mount_server_skills', 'Skills the mount shows for the server.', (server) => server.skills);
    this.serverGauge('skills_mount_server_declined_skills', 'Skills of the server declined (over a limit or not valid), so not shown.', (server) => server.declined);
    this.serverGauge('skills_mount_server_rejected_skills', 'Skills of the server whose SKILL.md failed verification, so nothing of them is served.', (server) => server.rejected);
    const state = new Gauge({
      name: 'skills_mount_server_state',
      help: 'The server connection state: 1 for the state it is in, 0 for the others.',
      labelNames: ['server', 'state'] as const,
      registers,
      collect: () => {
        for (const server of this.serverFacts()) {
          const label = this.serverLabel(server.label);
          for (const each of SERVER_STATES) state.set({ server: label, state: each }, server.connection.status === each ? 1 : 0);
        }
      },
    });

    // Warm opens, releases and the reads of a pinned version never reach the daemon's JavaScript
    // (the addon answers them from replies prepared at the first open), nor lookups, getattrs and
    // listings of names the edge pushed to the addon: counted apart, read from the addon at each scrape.
    const seen = { open: 0, release: 0, read: 0, lookup: 0, getattr: 0, readdir: 0 };
    const addonAnswers: Counter<'op'> = new Counter({
      name: 'skills_mount_fuse_answered_by_addon_total',
      help: 'FUSE requests the libfuse 3 addon answered itself (opens, releases and reads of a pinned version; lookups, getattrs and listings of pushed names), not in skills_mount_fuse_operations_total.',
      labelNames: ['op'] as const,
      registers,
      collect: () => {
        const now = this.watched?.answeredByAddon?.();
        if (now === undefined) return;
        const totals = [['open', now.opens], ['release', now.releases], ['read', now.reads], ['lookup', now.lookups], ['getattr', now.getattrs], ['readdir', now.readdirs]] as const;
        for (const [op, total] of totals) {
          if (total === undefined) continue;
          addonAnswers.inc({ op }, Math.max(0, total - seen[op]));
          seen[op] = Math.max(seen[op], total);
        }
      },
    });
    /** A counter following a total the addon keeps (read at each scrape; never counted back down). */
    const addonTotal = (name: string, help: string, totalNow: () => number | undefined) => {
      let seenTotal = 0;
      const counter: Counter = new Counter({
        name,
        help,
        registers,
        collect: () => {
          const total = totalNow();
          if (total === undefined) return;
          counter.inc(Math.max(0, total - seenTotal));
          seenTotal = Math.max(seenTotal, total);
        },
      });
    };
    addonTotal(
      'skills_mount_fuse_opens_stored_total',
      "First opens whose version's bytes (up to 1 MiB) went to the kernel's page cache with the reply: reads of them reach neither the addon nor JavaScript.",
      () => this.watched?.answeredByAddon?.()?.stored,
    );
    const tableGauge = (name: string, help: string, pick: (table: AddonTableSize) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          const table = watchedTable();
          if (table !== undefined) this.set(pick(table));
        },
      });
    const watchedTable = () => this.watched?.answeredByAddon?.()?.table;
    tableGauge('skills_mount_fuse_addon_table_entries', 'Names (with attributes) the libfuse 3 addon holds to answer lookups, getattrs and listings itself.', (table) => table.entries);
    tableGauge('skills_mount_fuse_addon_table_entries_limit', 'The most names the libfuse 3 addon holds; over it the least recently used directories are dropped.', (table) => table.limit);
    tableGauge('skills_mount_fuse_addon_table_entries_peak', 'The most names the libfuse 3 addon held at once since mounting.', (table) => table.peakEntries);
    addonTotal('skills_mount_fuse_addon_table_evictions_total', 'Directories whose names the libfuse 3 addon dropped to stay within its limit.', () => watchedTable()?.evictions);

    if (options.processMetrics ?? true) {
      collectDefaultMetrics({ register: this.registry });
      for (const name of LINT_FAILING_DEFAULTS) this.registry.removeSingleMetric(name);
    }
  }

  /** The Content-Type of `text()`: the Prometheus text format. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Every metric in the Prometheus text format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** Reads the catalogs and caches at every scrape from now on. */
  watch(watched: Watched): void {
    this.watched = watched;
  }

  /** One refusal of a server's bytes (wire as the catalog's onVerificationFailure). */
  verificationFailed(server: string, reason: VerificationFailureReason): void {
    this.verificationFailures.inc({ server: this.serverLabel(server), reason: bounded(reason, REASONS) });
  }

  /** One content cache lookup (wire as the caches' onLookup). */
  cacheLookup(cache: CacheName, hit: boolean): void {
    (hit ? this.cacheHits : this.cacheMisses).inc({ cache });
  }

  /** Counts the cache's lookups from zero, so a rate exists before the first miss. */
  cacheEnabled(cache: CacheName): void {
    this.cacheHits.inc({ cache }, 0);
    this.cacheMisses.inc({ cache }, 0);
  }

  private serverLabel(server: string): string {
    return this.servers.has(server) ? server : OTHER;
  }

  /** Each catalog's counts, read at most once per scrape. */
  private serverFacts(): Array<ReturnType<WatchedCatalog['health']>> {
    const nowMs = performance.now();
    if (this.snapshot && nowMs - this.snapshot.atMs < SNAPSHOT_MS) return this.snapshot.servers;
    const servers = (this.watched?.catalogs() ?? []).map((catalog) => catalog.health());
    this.snapshot = { atMs: nowMs, servers };
    return servers;
  }

  private cacheGauge(name: string, help: string, value: (use: CacheUse) => number): void {
    const gauge: Gauge<'cache'> = new Gauge({
      name,
      help,
      labelNames: ['cache'] as const,
      registers: [this.registry],
      collect: () => {
        const caches = this.watched?.caches() ?? {};
        for (const cache of ['memory', 'disk'] as const) {
          const use = caches[cache];
          if (use) gauge.set({ cache }, value(use));
        }
      },
    });
  }

  private serverGauge(name: string, help: string, value: (server: ReturnType<WatchedCatalog['health']>) => number): void {
    const gauge: Gauge<'server'> = new Gauge({
      name,
      help,
      labelNames: ['server'] as const,
      registers: [this.registry],
      collect: () => {
        for (const server of this.serverFacts()) gauge.set({ server: this.serverLabel(server.label) }, value(server));
      },
    });
  }
}
