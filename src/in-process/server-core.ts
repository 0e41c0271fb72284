// Starts the configured servers and builds over them the filesystem core the mount serves, in
// this process (no kernel): what `snapshot` walks and writes, and what `verify --against-server`
// compares a snapshot with. Wires; decides little.
import type { ApprovalsSource } from '../approvals/approval-ledger.js';
import type { DiskCache } from '../cache/disk-cache.js';
import { ContentCache } from '../catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog, type VerificationFailureReason } from '../catalog/server-catalog.js';
import type { RequestObserver } from '../mcp/request-observer.js';
import { SkillsFilesystem } from '../fs/skills-filesystem.js';
import type { Log } from '../log.js';
import { McpSkillSource } from '../mcp/mcp-skill-source.js';
import type { ProtocolVersionChoice } from '../protocol/revisions.js';
import { commandProblem } from '../config/command-check.js';
import type { LabelledServer } from '../config/config.js';

/** Memory for verified contents (the disk cache and earlier snapshots hold the rest). */
const CONTENT_CACHE_BYTES = 64 * 1024 * 1024;

export interface ServerCoreOptions {
  servers: readonly LabelledServer[];
  timeoutMs: number;
  /** --protocol-version, over each server's own; undefined: its own, else negotiate. */
  protocolVersion: ProtocolVersionChoice | undefined;
  verbose: boolean;
  /** Hide skills whose files carry no digests (as --no-dynamic does). */
  hideDynamic: boolean;
  log: Log;
  approvals: ApprovalsSource;
  /** Kept listings and verified files across runs; undefined: memory only, and an unreachable server shows nothing. */
  diskCache?: DiskCache | undefined;
  /** Hears each server connect or fail, and list (the terminal's startup line). */
  progress?: { serverConnected(): void; serverFailed(): void; serverListed(skills: number): void } | undefined;
  /** Memory for verified contents (default 64 MiB). */
  cacheBytes?: number | undefined;
  /** The metrics' hooks: each MCP request, each refusal of a server's bytes, each memory cache lookup. */
  metrics?: { observer: RequestObserver; verificationFailed(label: string, reason: VerificationFailureReason): void; cacheLookup(hit: boolean): void } | undefined;
}

/** The core over the servers, listed once; close() stops them. */
export interface ServerCore {
  filesystem: SkillsFilesystem;
  catalogs: ServerCatalog[];
  sources: McpSkillSource[];
  /** Stops every server (a stdio one in at most three 1 s steps). */
  close(): Promise<void>;
}

/** Connects to every server and lists it once (a server that cannot be reached shows its kept listing, if any). */
export async function startServerCore(options: ServerCoreOptions): Promise<ServerCore> {
  const { log } = options;
  const approvedOnly = new Set(options.servers.filter((server) => server.approvedOnly).map((server) => server.label));
  const { metrics } = options;
  const cache = new ContentCache(options.cacheBytes ?? CONTENT_CACHE_BYTES, { onLookup: metrics && ((hit) => metrics.cacheLookup(hit)) });
  const sources = options.servers.map(
    ({ label, config, protocolVersion }) =>
      new McpSkillSource(label, config, {
        timeoutMs: options.timeoutMs,
        protocolVersion: options.protocolVersion ?? protocolVersion ?? 'negotiate',
        log,
        verbose: options.verbose,
        ...(metrics && { observer: metrics.observer }),
      }),
  );
  const catalogs = sources.map(
    (source) =>
      new ServerCatalog(source, {
        ...DEFAULT_CATALOG_TIMINGS,
        log,
        cache,
        durable: options.diskCache?.server(source.label),
        hideDynamic: options.hideDynamic,
        onVerificationFailure: metrics && ((reason) => metrics.verificationFailed(source.label, reason)),
      }),
  );
  const close = async (): Promise<void> => {
    for (const catalog of catalogs) catalog.close();
    await Promise.all(sources.map((source) => source.close()));
  };
  try {
    for (const { label, config } of options.servers) {
      if (config.kind !== 'stdio') continue;
      const problem = await commandProblem(config.command, config.cwd, { ...process.env, ...config.env });
      if (problem) log(`[${label}] ${problem}`);
    }
    await Promise.all(
      sources.map(async (source, i) => {
        await source.start();
        if (source.connection().status !== 'connected') {
          await catalogs[i]!.restoreKeptListing();
          return options.progress?.serverFailed();
        }
        options.progress?.serverConnected();
        await catalogs[i]!.refresh();
        options.progress?.serverListed(catalogs[i]!.health().skills);
      }),
    );
  } catch (error) {
    await close();
    throw error;
  }
  const filesystem = new SkillsFilesystem(catalogs, { approvals: options.approvals, approvedOnly, log });
  return { filesystem, catalogs, sources, close };
}
