// `skills-mount doctor`: what this machine offers and what to do about each piece, one line per
// check: the FUSE device, fusermount3, user_allow_other (for --allow-user), the libfuse 3 addon and
// where it loads from, the kernel, the config and its servers (each reached within a short
// deadline), sign-in state, and the link store's filesystem. Exit 1 when something a mount or link
// needs is missing. Every probe is injected (DoctorProbes), so each missing piece is testable.
import { readFile, stat } from 'node:fs/promises';
import { homedir, release } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError } from '../errors.js';
import { escapeForLog } from '../format/escape.js';
import { FUSE_DEVICE, deviceState, probeAddon, systemProbes, type AddonReport, type PlatformProbes } from '../fuse/index.js';
import { defaultLinkStore, storeFilesystem } from '../link/link-state.js';
import { loadPolicy, type PolicyDescription } from '../team/policy.js';
import { McpSkillSource } from '../mcp/mcp-skill-source.js';
import { loadMountConfig, type LabelledServer, type MountConfig } from '../config/config.js';
import { SERVER_DEADLINE_MS, type DoctorOptions } from './command-options.js';

export type { DoctorOptions } from './command-options.js';

/** The kernel the mount's FUSE features need (zero-message opendir, FOPEN_CACHE_DIR: 5.1). */
const KERNEL_NEEDED = [5, 1] as const;


/** ok: in place; fail: needed and missing (exit 1); warn: only some uses need it; skip: not checked here. */
export type CheckStatus = 'ok' | 'fail' | 'warn' | 'skip';

export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  /** What was found, and (when not ok) what to do. */
  detail: string;
}

/** A server reached (or not) within its deadline. */
export type ServerReach =
  | { reached: true; skills: number; protocolVersion: string }
  | {
      reached: false;
      reason: string;
      /** True: nothing came back before the deadline; false: it failed sooner (with `elapsedMs`); undefined: not known. */
      timedOut?: boolean | undefined;
      elapsedMs?: number | undefined;
      /** The server wants a (new) sign-in, or refuses the token of the one stored: it is not "signed in". */
      signInRefused?: boolean | undefined;
    };

/** Sign-in as the auth module reports it; undefined: this build has none. */
export interface SignInState {
  /** Labels with stored tokens. */
  signedIn: string[];
  /** HTTP labels without. */
  signedOut: string[];
}

/** Everything doctor looks at, injectable. */
export interface DoctorProbes extends PlatformProbes {
  /** The kernel release (uname -r). */
  kernelRelease: string;
  /** A text file's contents, undefined when unreadable. */
  readText(file: string): Promise<string | undefined>;
  /** Whether `file` is setuid and owned by root. */
  setuidRoot(file: string): Promise<boolean>;
  addon(): Promise<AddonReport>;
  loadConfig(options: DoctorOptions): Promise<MountConfig>;
  reach(server: LabelledServer, deadlineMs: number): Promise<ServerReach>;
  signIn(config: MountConfig): Promise<SignInState | undefined>;
  linkStore(): string;
  /** The filesystem the link store is on (link-state.ts storeFilesystem: the one link reports from). */
  storeFilesystem(store: string): Promise<{ mountpoint: string; noexec: boolean } | undefined>;
  /** The policy files in force (team/policy.ts). */
  policy(): Promise<PolicyDescription>;
}

/** Parses `doctor [--config FILE] [--server LABEL=...]... [--only LABEL,...] [--json]`. */

/** Runs every check; the config's checks after the machine's. */
export async function runDoctorChecks(options: DoctorOptions, probes: DoctorProbes): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const linux = probes.platform === 'linux';
  if (!linux) {
    const what = probes.platform === 'darwin' ? 'macOS has FUSE only through macFUSE, and this release mounts on Linux only' : `${probes.platform} has no FUSE this release can use`;
    checks.push({ name: 'platform', status: 'fail', detail: `${probes.platform}-${probes.arch}: ${what}; snapshot, verify, approve and link work here` });
  } else {
    checks.push(await deviceCheck(probes));
    checks.push(await fusermountCheck(probes));
    checks.push(await allowOtherCheck(probes));
    checks.push(await addonCheck(probes));
    checks.push(kernelCheck(probes.kernelRelease));
  }
  let config: MountConfig | undefined;
  try {
    config = await probes.loadConfig(options);
    checks.push({ name: 'config', status: 'ok', detail: `${config.origin}: ${config.servers.length} server${config.servers.length === 1 ? '' : 's'} (${config.servers.map((s) => s.label).join(', ')})` });
  } catch (error) {
    checks.push({ name: 'config', status: 'fail', detail: `${(error as Error).message}` });
  }
  if (config) {
    const reached = await Promise.all(config.servers.map((server) => probes.reach(server, options.serverDeadlineMs)));
    config.servers.forEach((server, i) => checks.push(serverCheck(server, reached[i]!, options.serverDeadlineMs)));
    const refused = config.servers.filter((_, i) => { const reach = reached[i]!; return !reach.reached && reach.signInRefused === true; }).map((server) => server.label);
    checks.push(await signInCheck(probes, config, refused));
  }
  checks.push(await linkStoreCheck(probes));
  checks.push(policyCheck(await probes.policy()));
  return checks;
}

async function deviceCheck(probes: PlatformProbes): Promise<DoctorCheck> {
  const state = await deviceState(probes);
  const name = 'fuse device';
  switch (state) {
    case 'usable':
      return { name, status: 'ok', detail: `${FUSE_DEVICE} ${probes.uid === 0 ? 'present (root opens it whatever its mode)' : 'readable and writable by this user'}` };
    case 'disabled':
      return { name, status: 'fail', detail: `${FUSE_DEVICE} treated as unusable (SKILLS_MOUNT_NO_FUSE=1): unset it to mount` };
    case 'missing':
      return { name, status: 'fail', detail: `${FUSE_DEVICE} does not exist: sudo modprobe fuse; in a container, docker run --device /dev/fuse --cap-add SYS_ADMIN` };
    case 'no-access':
      return { name, status: 'fail', detail: `${FUSE_DEVICE} is not readable and writable by this user: sudo chmod 0666 /dev/fuse (Debian's udev rule sets 0666), or mount as root` };
  }
}

async function fusermountCheck(probes: DoctorProbes): Promise<DoctorCheck> {
  const name = 'fusermount3';
  const found = await probes.which('fusermount3');
  if (found === undefined) return { name, status: 'fail', detail: 'not on PATH: sudo apt-get install fuse3 (it mounts and unmounts for a user who is not root, and unmounts a dead daemon\'s mount)' };
  if (probes.uid !== 0 && !(await probes.setuidRoot(found))) {
    return { name, status: 'fail', detail: `${found} is not setuid root, so a user who is not root cannot mount: sudo chmod u+s ${found} (reinstalling fuse3 restores it)` };
  }
  return { name, status: 'ok', detail: found };
}

async function allowOtherCheck(probes: DoctorProbes): Promise<DoctorCheck> {
  const name = 'user_allow_other';
  if (probes.uid === 0) return { name, status: 'ok', detail: 'not needed: root may use --allow-user without it' };
  const text = await probes.readText('/etc/fuse.conf');
  if (text !== undefined && text.split('\n').some((line) => line.trim() === 'user_allow_other')) return { name, status: 'ok', detail: '/etc/fuse.conf allows --allow-user' };
  return { name, status: 'warn', detail: 'not in /etc/fuse.conf: needed only for --allow-user; add the line user_allow_other there as root' };
}

async function addonCheck(probes: DoctorProbes): Promise<DoctorCheck> {
  const found = await probes.addon();
  if (found.loaded) return { name: 'addon', status: 'ok', detail: `libfuse 3 addon: ${found.origin} ${found.path}` };
  return {
    name: 'addon',
    status: 'fail',
    detail: `${found.reason}; in a checkout: scripts/setup.sh; installed: npm explore -g skills-mount -- npm run build-native (needs libfuse3-dev, pkg-config, a C compiler)`,
  };
}

function kernelCheck(kernel: string): DoctorCheck {
  const match = /^(\d+)\.(\d+)/.exec(kernel);
  if (!match) return { name: 'kernel', status: 'skip', detail: `release "${kernel}" not understood` };
  const [major, minor] = [Number(match[1]), Number(match[2])];
  const enough = major > KERNEL_NEEDED[0] || (major === KERNEL_NEEDED[0] && minor >= KERNEL_NEEDED[1]);
  const needed = `${KERNEL_NEEDED[0]}.${KERNEL_NEEDED[1]}`;
  // The FUSE protocol version is negotiated at INIT, i.e. only by a mount; the release bounds it.
  return enough
    ? { name: 'kernel', status: 'ok', detail: `${kernel}: has every FUSE feature the mount uses (>= ${needed}; the FUSE protocol version is known only once mounted: the mount's --verbose logs it)` }
    : { name: 'kernel', status: 'warn', detail: `${kernel}: older than ${needed}, so directory opens and listings reach the daemon every time (slower, still correct); a newer kernel removes them` };
}

function serverCheck(server: LabelledServer, reach: ServerReach, deadlineMs: number): DoctorCheck {
  const name = `server ${server.label}`;
  const where = server.config.kind === 'stdio' ? `stdio ${server.config.command}` : `http ${server.config.url}`;
  if (reach.reached) return { name, status: 'ok', detail: escapeForLog(`${where}: ${reach.skills} skill${reach.skills === 1 ? '' : 's'} listed (protocol ${reach.protocolVersion})`) };
  // Only a server that said nothing before the deadline was "not reached"; one that failed
  // sooner is shown with its reason and how long it took.
  if (reach.timedOut !== false) return { name, status: 'fail', detail: escapeForLog(`${where}: not reached within ${deadlineMs} ms: ${reach.reason}`) };
  const after = reach.elapsedMs === undefined ? '' : ` (after ${(reach.elapsedMs / 1000).toFixed(1)} s)`;
  // The MCP server answered; the sign-in's other party did not (named in the reason).
  if (/cannot reach (the authorization server|the identity provider)/.test(reach.reason)) {
    return { name, status: 'fail', detail: escapeForLog(`${where}: the server answered, but signing in to it cannot go on: ${reach.reason.replace(/^cannot connect: /, '')}${after}`) };
  }
  return { name, status: 'fail', detail: escapeForLog(`${where}: ${reach.reason}${after}`) };
}

/** Sign-ins stored and not; one the server just refused (`refused`: labels whose check says needs login) is not "signed in". */
async function signInCheck(probes: DoctorProbes, config: MountConfig, refused: readonly string[] = []): Promise<DoctorCheck> {
  const state = await probes.signIn(config);
  if (state === undefined) return { name: 'sign-in', status: 'skip', detail: 'this build has no sign-in' };
  if (state.signedIn.length === 0 && state.signedOut.length === 0) return { name: 'sign-in', status: 'ok', detail: 'no HTTP server to sign in to' };
  const signedIn = state.signedIn.filter((label) => !refused.includes(label));
  const refusedStored = state.signedIn.filter((label) => refused.includes(label));
  const parts = [
    signedIn.length > 0 ? `signed in: ${signedIn.join(', ')}` : '',
    refusedStored.length > 0 ? `stored but refused by the server: ${refusedStored.join(', ')} (its server line says why)` : '',
    state.signedOut.length > 0 ? `no sign-in stored: ${state.signedOut.join(', ')} (skills-mount login LABEL, where the server asks for it)` : '',
  ];
  return { name: 'sign-in', status: refusedStored.length > 0 ? 'warn' : 'ok', detail: escapeForLog(parts.filter(Boolean).join('; ')) };
}

/** The policy in force: its files and rules; a file that cannot be honoured refuses everything, and fails here. */
function policyCheck(policy: PolicyDescription): DoctorCheck {
  const notHonoured = policy.files.filter((file) => file.state.startsWith('not honoured'));
  if (notHonoured.length > 0) return { name: 'policy', status: 'fail', detail: escapeForLog(`${notHonoured.map((file) => `${file.path}: ${file.state}`).join('; ')}: every mount, approval, lock and link is refused until it is fixed`) };
  if (!policy.inForce) return { name: 'policy', status: 'ok', detail: 'none in force: every server may be mounted, approved, locked and linked' };
  return { name: 'policy', status: 'ok', detail: escapeForLog(policy.lines.map((line) => line.trim()).join('; ')) };
}

async function linkStoreCheck(probes: DoctorProbes): Promise<DoctorCheck> {
  const store = probes.linkStore();
  const mount = await probes.storeFilesystem(store);
  if (mount === undefined) return { name: 'link store', status: 'skip', detail: `${store}: its filesystem is not known (no mount table)` };
  if (mount.noexec) {
    return {
      name: 'link store',
      status: 'fail',
      detail: `${store} is on a noexec filesystem (${mount.mountpoint}): linked skills' scripts could not run; set XDG_DATA_HOME to a folder on another filesystem, or remount ${mount.mountpoint} without noexec`,
    };
  }
  return { name: 'link store', status: 'ok', detail: `${store} (on ${mount.mountpoint}, exec allowed)` };
}

/** The report: one line per check, then a closing line; exit 1 when a check failed. */
export function renderDoctor(checks: readonly DoctorCheck[]): { text: string; exitCode: number } {
  const mark: Record<CheckStatus, string> = { ok: 'ok  ', fail: 'FAIL', warn: 'warn', skip: 'skip' };
  const width = Math.max(...checks.map((check) => check.name.length));
  const lines = checks.map((check) => `${mark[check.status]}  ${check.name.padEnd(width)}  ${check.detail}`);
  const failed = checks.filter((check) => check.status === 'fail');
  lines.push(failed.length === 0 ? 'doctor: everything the mount and link need is in place' : `doctor: ${failed.length} needed piece${failed.length === 1 ? ' is' : 's are'} missing: ${failed.map((check) => check.name).join(', ')}`);
  return { text: `${lines.join('\n')}\n`, exitCode: failed.length === 0 ? 0 : 1 };
}

/** `skills-mount doctor`: prints the report (or JSON) and returns the exit code. */
export async function runDoctor(options: DoctorOptions, probes: DoctorProbes = doctorProbes()): Promise<{ text: string; exitCode: number }> {
  const checks = await runDoctorChecks(options, probes);
  const rendered = renderDoctor(checks);
  return options.json ? { text: `${JSON.stringify({ checks, ok: rendered.exitCode === 0 }, null, 2)}\n`, exitCode: rendered.exitCode } : rendered;
}

/** The probes of this machine and process. */
export function doctorProbes(env: NodeJS.ProcessEnv = process.env): DoctorProbes {
  return {
    ...systemProbes(env),
    kernelRelease: release(),
    readText: (file) => readFile(file, 'utf8').catch(() => undefined),
    setuidRoot: async (file) => {
      const info = await stat(file).catch(() => undefined);
      return info !== undefined && info.uid === 0 && (info.mode & 0o4000) !== 0;
    },
    addon: probeAddon,
    loadConfig: (options) => loadMountConfig({ configPath: options.configPath, serverFlags: options.serverFlags, only: options.only }),
    reach: reachServer,
    signIn: (config) => signInState(config, env),
    linkStore: () => defaultLinkStore(env, homedir()),
    storeFilesystem,
    policy: async () => (await loadPolicy({ env, home: homedir() })).describe(),
  };
}

/** Connects and lists once within `deadlineMs`; the server is stopped either way. */
async function reachServer(server: LabelledServer, deadlineMs: number): Promise<ServerReach> {
  const reasons: string[] = [];
  const source = new McpSkillSource(server.label, server.config, {
    timeoutMs: deadlineMs,
    protocolVersion: server.protocolVersion ?? 'negotiate',
    log: (line) => reasons.push(line),
    verbose: false,
  });
  let timer: NodeJS.Timeout | undefined;
  const startedMs = performance.now();
  const deadline = new Promise<ServerReach>((resolve) => {
    timer = setTimeout(() => resolve({ reached: false, reason: 'no answer', timedOut: true }), deadlineMs);
  });
  // A token the server refused (the auth module's TokenRefusedError, by its words) is no sign-in either.
  const failed = (reason: string, needsLogin = false): ServerReach => ({ reached: false, reason, timedOut: false, elapsedMs: performance.now() - startedMs, signInRefused: needsLogin || /the server refused the token/.test(reason) });
  const attempt = (async (): Promise<ServerReach> => {
    await source.start();
    const connection = source.connection();
    if (connection.status !== 'connected' && connection.status !== 'degraded') {
      return failed('reason' in connection && connection.reason ? connection.reason : (reasons.at(-1) ?? connection.status), connection.status === 'needs-login');
    }
    const listing = await source.listSkills();
    return { reached: true, skills: listing.items.length, protocolVersion: connection.protocolVersion };
  })().catch((error: unknown): ServerReach => failed((error as Error).message));
  try {
    return await Promise.race([attempt, deadline]);
  } finally {
    clearTimeout(timer);
    await source.close().catch(() => undefined);
  }
}

/** Labels of HTTP servers with and without stored tokens; undefined when this build has no token store. */
async function signInState(config: MountConfig, env: NodeJS.ProcessEnv): Promise<SignInState | undefined> {
  // The sign-in module arrives in its own change: looked up by name so doctor works without it.
  const specifier = '../auth/token-store.js';
  let store: { get(label: string, url: string): Promise<{ tokens?: unknown } | undefined> };
  try {
    const auth = (await import(specifier)) as { TokenStore?: new (file: string) => typeof store; defaultTokenStorePath?: (env: NodeJS.ProcessEnv, home: string) => string };
    if (auth.TokenStore === undefined || auth.defaultTokenStorePath === undefined) return undefined;
    store = new auth.TokenStore(auth.defaultTokenStorePath(env, homedir()));
  } catch {
    return undefined;
  }
  const state: SignInState = { signedIn: [], signedOut: [] };
  for (const server of config.servers) {
    if (server.config.kind !== 'http') continue;
    const entry = await store.get(server.label, server.config.url).catch(() => undefined);
    (entry?.tokens ? state.signedIn : state.signedOut).push(server.label);
  }
  return state;
}

