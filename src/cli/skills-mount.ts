#!/usr/bin/env node
// skills-mount MOUNTPOINT: mounts every configured server's skills read-only under
// MOUNTPOINT/<label>/ and serves until SIGINT or SIGTERM. The only place that builds
// concrete I/O (connections, caches, the kernel mount) and wires it together.
import { parseArgs } from 'node:util';
import { ContentCache } from '../catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../catalog/server-catalog.js';
import { ConfigError } from '../errors.js';
import { SkillsFilesystem } from '../fs/skills-filesystem.js';
import { mountFilesystem, prepareMountpoint, type MountHandle } from '../fuse/mount.js';
import { McpSkillSource } from '../mcp/mcp-skill-source.js';
import { loadMountConfig } from './config.js';

const USAGE = `usage: skills-mount MOUNTPOINT [--config FILE] [--timeout SECONDS] [--cache-size MIB] [--no-dynamic] [--verbose]

Mounts the skills of every MCP server in the config file read-only at MOUNTPOINT/<label>/.
Config: $XDG_CONFIG_HOME/skills-mount/config.json (default ~/.config/skills-mount/config.json);
without one, mounts the bundled demo server as "demo".

  --config FILE       servers to mount: {"mcpServers": {"<label>": {"command": ..., "args": [...]} | {"url": ...}}}
  --timeout SECONDS   deadline for every MCP request (default 10)
  --cache-size MIB    memory for verified file contents (default 256)
  --no-dynamic        hide skills whose files carry no digests ("resources": "dynamic")
  --verbose           log every MCP request with its duration
`;

/** Slack between our MCP deadline and fuse-native's, so our error (not ETIMEDOUT) reaches the caller. */
const FUSE_DEADLINE_MARGIN_MS = 5_000;
const MIB = 1024 * 1024;

interface Options {
  mountpoint: string;
  configPath: string | undefined;
  timeoutMs: number;
  cacheBytes: number;
  hideDynamic: boolean;
  verbose: boolean;
}

function log(line: string): void {
  process.stderr.write(`skills-mount: ${line}\n`);
}

const MAX_RECENT_ERRORS = 20;
const recentErrors: string[] = [];

/** Failures reported to callers: logged, and kept for skills.json and `status`. */
function logError(line: string): void {
  log(line);
  recentErrors.push(`${new Date().toISOString()} ${line}`);
  if (recentErrors.length > MAX_RECENT_ERRORS) recentErrors.shift();
}

function parseOptions(argv: string[]): Options {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string' },
      timeout: { type: 'string' },
      'cache-size': { type: 'string' },
      'no-dynamic': { type: 'boolean' },
      verbose: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  if (positionals.length !== 1) throw new ConfigError(positionals.length === 0 ? 'MOUNTPOINT is required' : `one MOUNTPOINT expected, got ${positionals.length}`);
  const timeoutSeconds = positiveNumber(values.timeout ?? '10', '--timeout');
  const cacheMiB = positiveNumber(values['cache-size'] ?? '256', '--cache-size');
  return {
    mountpoint: positionals[0]!,
    configPath: values.config,
    timeoutMs: Math.round(timeoutSeconds * 1000),
    cacheBytes: Math.round(cacheMiB * MIB),
    hideDynamic: values['no-dynamic'] ?? false,
    verbose: values.verbose ?? false,
  };
}

function positiveNumber(text: string, flag: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new ConfigError(`${flag} must be a positive number, got "${text}"`);
  return value;
}

async function main(argv: string[]): Promise<void> {
  let options: Options;
  try {
    options = parseOptions(argv);
  } catch (error) {
    process.stderr.write(`skills-mount: ${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  const config = await loadMountConfig(options.configPath);
  // Fail on a bad mountpoint before starting any server.
  const mountpoint = await prepareMountpoint(options.mountpoint);

  const cache = new ContentCache(options.cacheBytes);
  const sources = config.servers.map(
    ({ label, config: serverConfig }) => new McpSkillSource(label, serverConfig, { timeoutMs: options.timeoutMs, log, verbose: options.verbose }),
  );
  const catalogs = sources.map(
    (source) => new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log, cache, hideDynamic: options.hideDynamic }),
  );
  log(`starting ${sources.length} server${sources.length === 1 ? '' : 's'} from ${config.origin}`);
  // The mount appears once every first connection attempt has ended, so the first ls sees the catalogs.
  await Promise.all(
    sources.map(async (source, i) => {
      await source.start();
      if (source.connection().status === 'connected') await catalogs[i]!.refresh();
    }),
  );

  let mount: MountHandle | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      log(`${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    log(`${signal}: unmounting ${mountpoint}`);
    await mount?.unmount().catch((error: unknown) => log(`unmount failed: ${(error as Error).message}`));
    await Promise.race([Promise.all(sources.map((source) => source.close())), delay(1_000)]);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  const startedAt = new Date().toISOString();
  const filesystem = new SkillsFilesystem(catalogs, {
    mountStatus: () => ({
      pid: process.pid,
      startedAt,
      cache: { usedBytes: cache.sizeBytes, limitBytes: options.cacheBytes },
      recentErrors: [...recentErrors],
    }),
  });
  mount = await mountFilesystem(filesystem, mountpoint, { operationTimeoutMs: options.timeoutMs + FUSE_DEADLINE_MARGIN_MS, log: logError });
  const connected = sources.filter((source) => source.connection().status === 'connected').length;
  log(`mounted ${mountpoint} (${connected}/${sources.length} servers connected: ${sources.map((source) => source.label).join(', ')}); Ctrl-C to unmount`);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`skills-mount: ${message}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
