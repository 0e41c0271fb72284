// Parses the command line into one of: mount, snapshot, verify, status, unmount, cache, approve,
// revoke, approvals, link, unlink, lock, unlock, outdated, update, doctor, login, logout, help, version. Subcommands
// are recognized only as the first argument and only by their exact name, so any other
// spelling of a path (./status) mounts.
import { ConfigError } from '../errors.js';
import { givenGrants, GRANT_OPTIONS, parseArguments as parse, positiveNumber, SERVER_SELECTION_OPTIONS } from './arguments.js';
import { PROTOCOL_VERSION_CHOICES, parseProtocolVersionChoice, type ProtocolVersionChoice } from '../protocol/revisions.js';
import { HARNESSES, harnessNamed } from '../link/harness-roots.js';
import type { LinkOptions } from './link-command.js';
import { parseServe, type ServeOptions } from './serve-options.js';
import {
  parseDoctor,
  parseLock,
  parseLogin,
  parseLogout,
  parseOutdated,
  parseUnlock,
  parseUpdate,
  type DoctorOptions,
  type LockOptions,
  type LoginOptions,
  type LogoutOptions,
  type OutdatedOptions,
  type UpdateOptions,
} from './command-options.js';
import { metricsAddress } from './arguments.js';
import { mountOptionFlags } from './fstab-options.js';
import { labelledSkillPath, type ServerSelection } from '../config/server-selection.js';

const MIB = 1024 * 1024;
/** With libfuse 3 every change the mount learns of is invalidated at once: names may be kept for long. */
export const DEFAULT_LIBFUSE3_METADATA_TTL_SECONDS = 600;

export interface MountOptions {
  mountpoint: string;
  configPath: string | undefined;
  serverFlags: string[];
  only: string[];
  timeoutMs: number;
  /** The mount appears by then even if servers are still connecting or listing. */
  startupTimeoutMs: number;
  cacheBytes: number;
  /** The verified disk cache: its root (undefined: the default), this mount's bound and the whole root's; undefined with --no-disk-cache. */
  diskCache: { root: string | undefined; limitBytes: number; rootLimitBytes: number } | undefined;
  /** How long the kernel may reuse names and attributes without asking; undefined: the backend's default. */
  metadataTtlSeconds: number | undefined;
  hideDynamic: boolean;
  /** --approved-only labels: served only in the approved view, whatever their config entry says. */
  approvedOnly: string[];
  /** --protocol-version: for every server, over its config entry's "protocolVersion". */
  protocolVersion: ProtocolVersionChoice | undefined;
  /** --allow-user: a user name or numeric uid who may read the mount (allow_other); undefined: host-private. */
  allowUser: string | undefined;
  /** --metrics [HOST:]PORT: Prometheus /metrics and /healthz; host 127.0.0.1 unless given. */
  metrics: { host: string; port: number } | undefined;
  verbose: boolean;
  /** --lock FILE: the approved view shows a project lockfile's versions instead of the person's approvals. */
  lockfile: string | undefined;
  /** The fstab form (CONFIG MOUNTPOINT) without --foreground: return once mounted, the daemon in the background. */
  background: boolean;
  /**
   * The fstab form: `umount MOUNTPOINT` is how it is stopped, so the daemon ends with its mount.
   * Otherwise a mount taken away from outside leaves the daemon running, its /healthz and
   * watchdog saying so, for the supervisor (systemd, Kubernetes) to restart it.
   */
  stopWhenUnmounted: boolean;
  /** --log-file FILE (-o log=FILE): where a background daemon's lines go. */
  logFile: string | undefined;
}

/** `snapshot DEST`: the mount's view written as read-only files (src/snapshot/). */
export interface SnapshotOptions {
  dest: string;
  configPath: string | undefined;
  serverFlags: string[];
  only: string[];
  timeoutMs: number;
  /** The verified disk cache, as for the mount; undefined with --no-disk-cache. */
  diskCache: { root: string | undefined; limitBytes: number } | undefined;
  /** Only the approved view (`_approved/`). */
  approved: boolean;
  includeDynamic: boolean;
  watch: boolean;
  /** --allow-shared-parent: DEST's folder may be writable by others (a Kubernetes emptyDir is 0777). */
  allowSharedParent: boolean;
  protocolVersion: ProtocolVersionChoice | undefined;
  verbose: boolean;
  /** --project DIR: the approved view shows exactly DIR/skills-lock.json's versions. */
  projectDir: string | undefined;
  /** --oci: DEST is an OCI image layout of the view; with `harness` (--for), laid out as that harness's skills root. */
  oci: { harness: string | undefined } | undefined;
}

/** `verify DEST`: a snapshot (the link or a copy) re-hashed against its manifest. */
export interface VerifyOptions {
  dest: string;
  json: boolean;
  /** --expect sha256:<hex>: the digest of the manifest `snapshot` printed when it published. */
  expectDigest: string | undefined;
  /** --against-server, with the servers to list (--config, --server, --only) and --timeout; undefined without it. */
  againstServer: { configPath: string | undefined; serverFlags: string[]; only: string[]; timeoutMs: number } | undefined;
}

export type Command =
  | { command: 'mount'; options: MountOptions }
  | { command: 'snapshot'; options: SnapshotOptions }
  | { command: 'verify'; options: VerifyOptions }
  | { command: 'verify-links'; json: boolean }
  | { command: 'verify-project'; projectDir: string; json: boolean; againstServer: ServerSelection | undefined }
  | { command: 'status'; mountpoint: string | undefined; json: boolean }
  | { command: 'unmount'; mountpoint: string }
  | { command: 'cache'; action: CacheAction; label: string | undefined; cacheDir: string | undefined; configPath: string | undefined; json: boolean }
  | { command: 'approve'; paths: string[]; yes: boolean; grantAllowedTools: boolean; grantExec: boolean; servers: ServerSelection | undefined }
  | { command: 'revoke'; paths: string[]; label: string | undefined; uri: string | undefined; servers: ServerSelection | undefined }
  | { command: 'approvals'; json: boolean }
  | { command: 'link'; options: LinkOptions }
  | { command: 'unlink'; harnesses: string[]; projectDir: string | undefined }
  | { command: 'lock'; options: LockOptions }
  | { command: 'serve'; options: ServeOptions }
  | { command: 'unlock'; paths: string[]; projectDir: string }
  | { command: 'outdated'; options: OutdatedOptions }
  | { command: 'update'; options: UpdateOptions }
  | { command: 'doctor'; options: DoctorOptions }
  | { command: 'login'; options: LoginOptions }
  | { command: 'logout'; options: LogoutOptions }
  | { command: 'help' }
  | { command: 'version' };

export const CACHE_ACTIONS = ['status', 'prune', 'clear'] as const;
export type CacheAction = (typeof CACHE_ACTIONS)[number];

/** Throws ConfigError for anything the user should fix; the caller prints usage. */
export function parseCommandLine(argv: readonly string[]): Command {
  const [first, ...rest] = argv;
  if (first === 'status') return parseStatus(rest);
  if (first === 'unmount') return parseUnmount(rest);
  if (first === 'cache') return parseCache(rest);
  if (first === 'approve') return parseApprove(rest);
  if (first === 'revoke') return parseRevoke(rest);
  if (first === 'approvals') return parseApprovals(rest);
  if (first === 'link') return parseLink(rest);
  if (first === 'unlink') return parseUnlink(rest);
  if (first === 'snapshot') return parseSnapshot(rest);
  if (first === 'verify') return parseVerify(rest);
  if (first === 'lock') return parseLock(rest);
  if (first === 'serve') return parseServe(rest);
  if (first === 'unlock') return parseUnlock(rest);
  if (first === 'outdated') return parseOutdated(rest);
  if (first === 'update') return parseUpdate(rest);
  if (first === 'doctor') return parseDoctor(rest);
  if (first === 'login') return parseLogin(rest);
  if (first === 'logout') return parseLogout(rest);
  return parseMount(argv);
}

function parseMount(given: readonly string[]): Command {
  // The fstab form's -o OPTIONS, as the flags they name (fstab-options.ts), then parsed as if typed.
  const { rest, lists } = takeOptionLists(given);
  const argv = [...rest, ...mountOptionFlags(lists)];
  const { values, positionals } = parse(argv, {
    config: { type: 'string' },
    server: { type: 'string', multiple: true },
    only: { type: 'string', multiple: true },
    timeout: { type: 'string' },
    'startup-timeout': { type: 'string' },
    'cache-size': { type: 'string' },
    'cache-dir': { type: 'string' },
    'disk-cache-size': { type: 'string' },
    'disk-cache-total-size': { type: 'string' },
    'no-disk-cache': { type: 'boolean' },
    'metadata-ttl': { type: 'string' },
    'fuse-backend': { type: 'string' },
    'no-dynamic': { type: 'boolean' },
    'approved-only': { type: 'string', multiple: true },
    lock: { type: 'string' },
    'protocol-version': { type: 'string' },
    'allow-user': { type: 'string' },
    metrics: { type: 'string' },
    'log-file': { type: 'string' },
    foreground: { type: 'boolean' },
    verbose: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'V' },
  });
  if (values.help) return { command: 'help' };
  if (values.version) return { command: 'version' };
  const serverFlags = (values.server as string[] | undefined) ?? [];
  // CONFIG MOUNTPOINT: how mount.fuse3 runs it for `mount -t fuse.skills-mount` (fstab): CONFIG is --config.
  // With --server, two words are far more often an unquoted --server command than the fstab form.
  const fstabForm = positionals.length === 2 && serverFlags.length === 0;
  if (fstabForm) {
    if (values.config !== undefined) throw new ConfigError(`CONFIG MOUNTPOINT (the fstab form) names its servers by CONFIG: drop --config`);
    values.config = positionals.shift();
  }
  if (values['log-file'] !== undefined && !fstabForm) throw new ConfigError('--log-file goes with the fstab form (CONFIG MOUNTPOINT), whose daemon runs in the background');
  if (positionals.length !== 1) {
    if (positionals.length === 0) throw new ConfigError('MOUNTPOINT is required');
    const hint = serverFlags.length > 0 ? ` (quote the whole --server value: --server 'label=command arg ...')` : '';
    throw new ConfigError(`one MOUNTPOINT expected, got ${positionals.length}: ${positionals.join(' ')}${hint}`);
  }
  const timeoutSeconds = positiveNumber((values.timeout as string | undefined) ?? '10', '--timeout');
  const startupSeconds = positiveNumber((values['startup-timeout'] as string | undefined) ?? '30', '--startup-timeout');
  const cacheMiB = positiveNumber((values['cache-size'] as string | undefined) ?? '256', '--cache-size');
  const diskCacheMiB = positiveNumber((values['disk-cache-size'] as string | undefined) ?? '1024', '--disk-cache-size');
  // The whole root's bound never cuts a mount's own below what was asked for with --disk-cache-size.
  const diskCacheTotalMiB = positiveNumber((values['disk-cache-total-size'] as string | undefined) ?? String(Math.max(2048, diskCacheMiB)), '--disk-cache-total-size');
  const noDiskCache = (values['no-disk-cache'] as boolean | undefined) ?? false;
  if (noDiskCache && (values['cache-dir'] !== undefined || values['disk-cache-size'] !== undefined || values['disk-cache-total-size'] !== undefined)) {
    throw new ConfigError('--no-disk-cache cannot be combined with --cache-dir, --disk-cache-size or --disk-cache-total-size');
  }
  const metadataTtlText = values['metadata-ttl'] as string | undefined;
  const metadataTtlSeconds = metadataTtlText === undefined ? undefined : Number(metadataTtlText);
  if (metadataTtlSeconds !== undefined && (!Number.isFinite(metadataTtlSeconds) || metadataTtlSeconds < 0 || metadataTtlSeconds > 86_400)) {
    throw new ConfigError(`--metadata-ttl must be a number of seconds from 0 to 86400, got "${metadataTtlText}"`);
  }
  // --fuse-backend libfuse3 is still accepted, as scripts of 0.1 pass it; it chooses nothing: libfuse 3 is the only backend.
  const backendText = values['fuse-backend'] as string | undefined;
  if (backendText === 'libfuse2') {
    throw new ConfigError('--fuse-backend libfuse2 is gone: the libfuse 2 fallback (fuse-native) was removed in 0.2.0; the mount runs on the libfuse 3 addon (drop the option)');
  }
  if (backendText !== undefined && backendText !== 'libfuse3') throw new ConfigError(`--fuse-backend must be libfuse3 (the only backend; the option can be dropped), got "${backendText}"`);
  const protocolText = values['protocol-version'] as string | undefined;
  const protocolVersion = protocolText === undefined ? undefined : parseProtocolVersionChoice(protocolText);
  if (protocolText !== undefined && protocolVersion === undefined) {
    throw new ConfigError(`--protocol-version must be one of ${PROTOCOL_VERSION_CHOICES.join(', ')}, got "${protocolText}"`);
  }
  return {
    command: 'mount',
    options: {
      mountpoint: positionals[0]!,
      configPath: values.config as string | undefined,
      serverFlags,
      only: (values.only as string[] | undefined) ?? [],
      timeoutMs: Math.round(timeoutSeconds * 1000),
      startupTimeoutMs: Math.round(startupSeconds * 1000),
      cacheBytes: Math.round(cacheMiB * MIB),
      diskCache: noDiskCache
        ? undefined
        : { root: values['cache-dir'] as string | undefined, limitBytes: Math.round(diskCacheMiB * MIB), rootLimitBytes: Math.round(diskCacheTotalMiB * MIB) },
      metadataTtlSeconds,
      hideDynamic: (values['no-dynamic'] as boolean | undefined) ?? false,
      approvedOnly: ((values['approved-only'] as string[] | undefined) ?? []).flatMap((list) => list.split(',')).filter((label) => label !== ''),
      lockfile: values.lock as string | undefined,
      protocolVersion,
      allowUser: allowUserOption(values['allow-user'] as string | undefined),
      metrics: metricsAddress(values.metrics as string | undefined),
      verbose: (values.verbose as boolean | undefined) ?? false,
      // As mount(8) expects of a helper: it returns once the mount is ready, the daemon going on in the background.
      background: fstabForm && !((values.foreground as boolean | undefined) ?? false),
      stopWhenUnmounted: fstabForm,
      logFile: values['log-file'] as string | undefined,
    },
  };
}

/** `-o LIST`, `-oLIST` and `--options LIST` taken out of argv (until `--`). */
function takeOptionLists(argv: readonly string[]): { rest: string[]; lists: string[] } {
  const rest: string[] = [];
  const lists: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (token === '-o' || token === '--options') {
      if (i + 1 >= argv.length) throw new ConfigError(`${token} needs a list of mount options`);
      lists.push(argv[++i]!);
    } else if (token.startsWith('-o') && !token.startsWith('--')) lists.push(token.slice(2));
    else rest.push(token);
  }
  return { rest, lists };
}

/** A user name (as in /etc/passwd) or a uid; resolved to uid and gid when mounting. */
function allowUserOption(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  if (!/^(?:[0-9]+|[a-z_][a-z0-9_.-]*\$?)$/i.test(text)) throw new ConfigError(`--allow-user takes a user name or a numeric uid, got "${text}"`);
  return text;
}


function parseStatus(argv: readonly string[]): Command {
  const { values, positionals } = parse(argv, { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) return { command: 'help' };
  if (positionals.length > 1) throw new ConfigError(`status takes at most one MOUNTPOINT, got ${positionals.length}`);
  return { command: 'status', mountpoint: positionals[0], json: (values.json as boolean | undefined) ?? false };
}

function parseUnmount(argv: readonly string[]): Command {
  const { values, positionals } = parse(argv, { help: { type: 'boolean', short: 'h' } });
  if (values.help) return { command: 'help' };
  if (positionals.length !== 1) throw new ConfigError('unmount takes exactly one MOUNTPOINT');
  return { command: 'unmount', mountpoint: positionals[0]! };
}

function parseCache(argv: readonly string[]): Command {
  const { values, positionals } = parse(argv, {
    'cache-dir': { type: 'string' },
    config: { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return { command: 'help' };
  const [action, label, ...extra] = positionals;
  if (!CACHE_ACTIONS.includes(action as CacheAction)) throw new ConfigError(`cache takes one of ${CACHE_ACTIONS.join(', ')}, got ${action === undefined ? 'nothing' : `"${action}"`}`);
  if (extra.length > 0 || (label !== undefined && action !== 'clear')) throw new ConfigError(`cache ${action} takes ${action === 'clear' ? 'at most one LABEL' : 'no LABEL'}`);
  return {
    command: 'cache',
    action: action as CacheAction,
    label,
    cacheDir: values['cache-dir'] as string | undefined,
    configPath: values.config as string | undefined,
    json: (values.json as boolean | undefined) ?? false,
  };
}

/** --config/--server/--only of approve or revoke: undefined without --config and --server (PATHs are on a mount); then every PATH must be LABEL/SKILLDIR. */
function serverSelection(values: Record<string, unknown>, paths: readonly string[]): ServerSelection | undefined {
  const configPath = values.config as string | undefined;
  const serverFlags = (values.server as string[] | undefined) ?? [];
  const only = (values.only as string[] | undefined) ?? [];
  if (configPath === undefined && serverFlags.length === 0) {
    if (only.length > 0) throw new ConfigError('--only goes with --config or --server');
    return undefined;
  }
  for (const given of paths) {
    const skill = labelledSkillPath(given);
    if (typeof skill === 'string') throw new ConfigError(`with --config or --server, each PATH is LABEL/SKILLDIR (the skill's directory under its server's label, as on a mount): ${skill}`);
  }
  return { configPath, serverFlags, only };
}

function parseApprove(argv: readonly string[]): Command {
  const { values, positionals } = parse(argv, { ...GRANT_OPTIONS, ...SERVER_SELECTION_OPTIONS, help: { type: 'boolean', short: 'h' } });
  if (values.help) return { command: 'help' };
  if (positionals.length === 0) {
    throw new ConfigError('approve takes one or more skill directories: MOUNTPOINT/LABEL/SKILL on a mount, or LABEL/SKILL with --config or --server');
  }
  const grants = givenGrants(values, 'approve');
  return { command: 'approve', paths: positionals, ...grants, servers: serverSelection(values, positionals) };
}

function parseRevoke(argv: readonly string[]): Command {
  const { values, positionals } = parse(argv, { label: { type: 'string' }, uri: { type: 'string' }, ...SERVER_SELECTION_OPTIONS, help: { type: 'boolean', short: 'h' } });
  if (values.help) return { command: 'help' };
  const label = values.label as string | undefined;
  const uri = values.uri as string | undefined;
  if ((label === undefined) !== (uri === undefined)) throw new ConfigError('revoke --label and --uri go together');
  if (label !== undefined && positionals.length > 0) throw new ConfigError('revoke takes skill directories or --label with --uri, not both');
  if (label === undefined && positionals.length === 0) {
    throw new ConfigError('revoke takes one or more skill directories (MOUNTPOINT/LABEL/SKILL on a mount, or LABEL/SKILL with --config or --server), or --label LABEL --uri URI');
  }
  // --label with --uri needs no server: the approval is removed by its key.
  const selecting = ['config', 'server', 'only'].find((flag) => values[flag] !== undefined);
  if (label !== undefined && selecting !== undefined) throw new ConfigError(`revoke --label and --uri need no server: --${selecting} goes with LABEL/SKILL arguments`);
  return { command: 'revoke', paths: positionals, label, uri, servers: serverSelection(values, positionals) };
}

function parseApprovals(argv: readonly string[]): Command {
  const { values, positionals } = parse(argv, { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) return { command: 'help' };
  if (positionals.length > 0) throw new ConfigError('approvals takes no arguments');
  return { command: 'approvals', json: (values.json as boolean | undefined) ?? false };
}

function parseLink(argv: readonly string[]): Command {
  const { values, positionals } = parse(argv, {
    project: { type: 'string' },
    config: { type: 'string' },
    server: { type: 'string', multiple: true },
    only: { type: 'string', multiple: true },
    timeout: { type: 'string' },
    watch: { type: 'boolean' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return { command: 'help' };
  const harnesses = harnessArguments('link', positionals);
  return {
    command: 'link',
    options: {
      harnesses,
      projectDir: values.project as string | undefined,
      configPath: values.config as string | undefined,
      serverFlags: (values.server as string[] | undefined) ?? [],
      only: (values.only as string[] | undefined) ?? [],
      timeoutMs: Math.round(positiveNumber((values.timeout as string | undefined) ?? '10', '--timeout') * 1000),
      watch: (values.watch as boolean | undefined) ?? false,
      json: (values.json as boolean | undefined) ?? false,
    },
  };
}

function parseUnlink(argv: readonly string[]): Command {
  const { values, positionals } = parse(argv, { project: { type: 'string' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) return { command: 'help' };
  return { command: 'unlink', harnesses: harnessArguments('unlink', positionals), projectDir: values.project as string | undefined };
}

/** The harness names given, each one known (harnessNamed throws ConfigError naming the known ones). */
function harnessArguments(command: string, positionals: string[]): string[] {
  if (positionals.length === 0) throw new ConfigError(`${command} takes one or more harnesses: ${HARNESSES.map((harness) => harness.name).join(', ')}`);
  for (const name of positionals) harnessNamed(name);
  return [...new Set(positionals)];
}

function parseSnapshot(argv: readonly string[]): Command {
  const { values, positionals } = parse(argv, {
    config: { type: 'string' },
    server: { type: 'string', multiple: true },
    only: { type: 'string', multiple: true },
    approved: { type: 'boolean' },
    'include-dynamic': { type: 'boolean' },
    watch: { type: 'boolean' },
    'allow-shared-parent': { type: 'boolean' },
    timeout: { type: 'string' },
    'cache-dir': { type: 'string' },
    'disk-cache-size': { type: 'string' },
    'no-disk-cache': { type: 'boolean' },
    'protocol-version': { type: 'string' },
    verbose: { type: 'boolean' },
    project: { type: 'string' },
    oci: { type: 'boolean' },
    for: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return { command: 'help' };
  const oci = (values.oci as boolean | undefined) ?? false;
  const harness = values.for as string | undefined;
  if (harness !== undefined && !oci) throw new ConfigError('--for HARNESS goes with --oci: it lays the image\'s layer out as that harness\'s skills root');
  if (harness !== undefined) harnessNamed(harness);
  if (oci && values.watch) throw new ConfigError('--oci writes one image; --watch keeps a snapshot folder current: run snapshot --oci again when the view changes (CI does it when the lockfile changes)');
  const projectDir = values.project as string | undefined;
  if (projectDir === '') throw new ConfigError('--project needs a DIR: the folder whose skills-lock.json decides what is written');
  if (positionals.length !== 1) throw new ConfigError(positionals.length === 0 ? 'snapshot takes a DEST: skills-mount snapshot DEST' : `snapshot takes one DEST, got ${positionals.length}: ${positionals.join(' ')}`);
  const noDiskCache = (values['no-disk-cache'] as boolean | undefined) ?? false;
  if (noDiskCache && (values['cache-dir'] !== undefined || values['disk-cache-size'] !== undefined)) {
    throw new ConfigError('--no-disk-cache cannot be combined with --cache-dir or --disk-cache-size');
  }
  const protocolText = values['protocol-version'] as string | undefined;
  const protocolVersion = protocolText === undefined ? undefined : parseProtocolVersionChoice(protocolText);
  if (protocolText !== undefined && protocolVersion === undefined) {
    throw new ConfigError(`--protocol-version must be one of ${PROTOCOL_VERSION_CHOICES.join(', ')}, got "${protocolText}"`);
  }
  const diskCacheMiB = positiveNumber((values['disk-cache-size'] as string | undefined) ?? '1024', '--disk-cache-size');
  return {
    command: 'snapshot',
    options: {
      dest: positionals[0]!,
      configPath: values.config as string | undefined,
      serverFlags: (values.server as string[] | undefined) ?? [],
      only: (values.only as string[] | undefined) ?? [],
      timeoutMs: Math.round(positiveNumber((values.timeout as string | undefined) ?? '10', '--timeout') * 1000),
      diskCache: noDiskCache ? undefined : { root: values['cache-dir'] as string | undefined, limitBytes: Math.round(diskCacheMiB * MIB) },
      // A lock, and a harness's root, are approved views: only what was approved (or locked) is in them.
      approved: values.approved === true || projectDir !== undefined || harness !== undefined,
      includeDynamic: (values['include-dynamic'] as boolean | undefined) ?? false,
      watch: (values.watch as boolean | undefined) ?? false,
      allowSharedParent: (values['allow-shared-parent'] as boolean | undefined) ?? false,
      protocolVersion,
      verbose: (values.verbose as boolean | undefined) ?? false,
      projectDir,
      oci: oci ? { harness } : undefined,
    },
  };
}

function parseVerify(argv: readonly string[]): Command {
  const { values, positionals } = parse(argv, {
    json: { type: 'boolean' },
    expect: { type: 'string' },
    'against-server': { type: 'boolean' },
    config: { type: 'string' },
    server: { type: 'string', multiple: true },
    only: { type: 'string', multiple: true },
    timeout: { type: 'string' },
    links: { type: 'boolean' },
    project: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return { command: 'help' };
  if (values.project !== undefined) {
    const others = ['expect', 'links', 'timeout'].filter((flag) => values[flag] !== undefined);
    if (positionals.length > 0 || others.length > 0) throw new ConfigError('verify --project takes no DEST and no option but --json, --against-server (with --config, --server, --only)');
    const selection = ['config', 'server', 'only'].filter((flag) => values[flag] !== undefined);
    if (!values['against-server'] && selection.length > 0) throw new ConfigError(`--${selection[0]} goes with --against-server`);
    const againstServer = values['against-server'] ? { configPath: values.config as string | undefined, serverFlags: (values.server as string[] | undefined) ?? [], only: (values.only as string[] | undefined) ?? [] } : undefined;
    return { command: 'verify-project', projectDir: values.project as string, json: (values.json as boolean | undefined) ?? false, againstServer };
  }
  if (values.links) {
    const others = ['expect', 'against-server', 'config', 'server', 'only', 'timeout'].filter((flag) => values[flag] !== undefined);
    if (positionals.length > 0 || others.length > 0) throw new ConfigError('verify --links takes no DEST and no other option but --json');
    return { command: 'verify-links', json: (values.json as boolean | undefined) ?? false };
  }
  if (positionals.length !== 1) throw new ConfigError('verify takes exactly one DEST: skills-mount verify DEST (or --links: the entries skills-mount link made)');
  const expect = values.expect as string | undefined;
  if (expect !== undefined && !/^sha256:[0-9a-f]{64}$/i.test(expect)) {
    throw new ConfigError(`--expect takes the manifest digest snapshot printed (sha256: and 64 hex digits), got "${expect}"`);
  }
  const servers = ['config', 'server', 'only', 'timeout'].filter((flag) => values[flag] !== undefined);
  if (!values['against-server'] && servers.length > 0) throw new ConfigError(`--${servers[0]} goes with --against-server: verify lists servers only to compare with them`);
  const againstServer = values['against-server']
    ? {
        configPath: values.config as string | undefined,
        serverFlags: (values.server as string[] | undefined) ?? [],
        only: (values.only as string[] | undefined) ?? [],
        timeoutMs: Math.round(positiveNumber((values.timeout as string | undefined) ?? '10', '--timeout') * 1000),
      }
    : undefined;
  return { command: 'verify', options: { dest: positionals[0]!, json: (values.json as boolean | undefined) ?? false, expectDigest: expect?.toLowerCase(), againstServer } };
}

