// The command lines of the commands whose modules load the client stacks (lock, unlock, outdated,
// update, doctor, login, logout): parsed here, so that parsing any command line loads none of them
// (the dispatcher loads a command's module only when it runs).
import { parseArgs } from 'node:util';
import type { ServerSelection } from '../config/server-selection.js';
import { ConfigError } from '../errors.js';
import { givenGrants, givenServers, GRANT_OPTIONS, parseArguments, projectOption, SERVER_SELECTION_OPTIONS, type OptionSpec } from './arguments.js';

/** How long doctor waits for each server to connect and list. */
export const SERVER_DEADLINE_MS = 5_000;
const DEFAULT_WAIT_SECONDS = 300;

export interface LockOptions {
  paths: string[];
  projectDir: string;
  yes: boolean;
  grantAllowedTools: boolean;
  grantExec: boolean;
  servers: ServerSelection;
}

export function parseLock(argv: readonly string[]): { command: 'lock'; options: LockOptions } | { command: 'help' } {
  const { values, positionals } = parseArguments(argv, { project: { type: 'string' }, ...GRANT_OPTIONS, ...SERVER_SELECTION_OPTIONS, help: { type: 'boolean', short: 'h' } });
  if (values.help) return { command: 'help' };
  if (positionals.length === 0) throw new ConfigError('lock takes one or more LABEL/SKILLDIR: a skill directory under its server\'s label');
  return { command: 'lock', options: { paths: positionals, projectDir: projectOption(values, 'lock'), ...givenGrants(values, 'lock'), servers: givenServers(values) } };
}

export function parseUnlock(argv: readonly string[]): { command: 'unlock'; paths: string[]; projectDir: string } | { command: 'help' } {
  const { values, positionals } = parseArguments(argv, { project: { type: 'string' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) return { command: 'help' };
  if (positionals.length === 0) throw new ConfigError('unlock takes one or more LABEL/SKILLDIR of locked skills');
  return { command: 'unlock', paths: positionals, projectDir: projectOption(values, 'unlock') };
}

export interface OutdatedOptions {
  projectDir: string;
  json: boolean;
  /** Every line of the text report: no file's diff and no report cut short. */
  full: boolean;
  servers: ServerSelection;
}

export interface UpdateOptions {
  /** LABEL/SKILLDIR of locked skills; empty with `all`. */
  paths: string[];
  all: boolean;
  projectDir: string;
  yes: boolean;
  /** Every line of each skill's changes, as for outdated. */
  full: boolean;
  servers: ServerSelection;
}

export function parseOutdated(argv: readonly string[]): { command: 'outdated'; options: OutdatedOptions } | { command: 'help' } {
  const { values, positionals } = parseArguments(argv, { project: { type: 'string' }, json: { type: 'boolean' }, full: { type: 'boolean' }, ...SERVER_SELECTION_OPTIONS, help: { type: 'boolean', short: 'h' } });
  if (values.help) return { command: 'help' };
  if (positionals.length > 0) throw new ConfigError(`outdated takes no PATH (it checks every locked skill), got ${positionals.join(' ')}`);
  return { command: 'outdated', options: { projectDir: projectOption(values, 'outdated'), json: (values.json as boolean | undefined) ?? false, full: (values.full as boolean | undefined) ?? false, servers: givenServers(values) } };
}

export function parseUpdate(argv: readonly string[]): { command: 'update'; options: UpdateOptions } | { command: 'help' } {
  const { values, positionals } = parseArguments(argv, { project: { type: 'string' }, all: { type: 'boolean' }, yes: { type: 'boolean', short: 'y' }, full: { type: 'boolean' }, ...SERVER_SELECTION_OPTIONS, help: { type: 'boolean', short: 'h' } });
  if (values.help) return { command: 'help' };
  const all = (values.all as boolean | undefined) ?? false;
  if (all === (positionals.length > 0)) throw new ConfigError('update takes LABEL/SKILLDIR... of locked skills, or --all (not both)');
  return { command: 'update', options: { paths: positionals, all, projectDir: projectOption(values, 'update'), yes: (values.yes as boolean | undefined) ?? false, full: (values.full as boolean | undefined) ?? false, servers: givenServers(values) } };
}

export interface DoctorOptions {
  configPath: string | undefined;
  serverFlags: string[];
  only: string[];
  json: boolean;
  /** Each server's deadline. */
  serverDeadlineMs: number;
}

export function parseDoctor(argv: readonly string[]): { command: 'doctor'; options: DoctorOptions } | { command: 'help' } {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        config: { type: 'string' },
        server: { type: 'string', multiple: true },
        only: { type: 'string', multiple: true },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: false,
    });
  } catch (error) {
    throw new ConfigError(`doctor: ${(error as Error).message}`);
  }
  const { values } = parsed;
  if (values.help) return { command: 'help' };
  return {
    command: 'doctor',
    options: {
      configPath: values.config,
      serverFlags: values.server ?? [],
      only: (values.only ?? []).flatMap((list) => list.split(',')).map((label) => label.trim()).filter(Boolean),
      json: values.json ?? false,
      serverDeadlineMs: SERVER_DEADLINE_MS,
    },
  };
}

export interface LoginOptions {
  labels: string[];
  configPath: string | undefined;
  serverFlags: string[];
  /** Print the address and read the redirect pasted on stdin (SSH, no display). */
  noBrowser: boolean;
  /** How long to wait for the person to finish in the browser. */
  waitMs: number;
  /** Deadline for each MCP request of the check that the sign-in works. */
  timeoutMs: number;
  /** Deadline for each request to the authorization server (default AUTH_REQUEST_TIMEOUT_MS). */
  authTimeoutMs?: number | undefined;
}

export interface LogoutOptions {
  labels: string[];
  /** --config / --server: where a client registered beforehand is configured (its credentials revoke); default the usual config file. */
  configPath?: string | undefined;
  serverFlags?: string[] | undefined;
}

export function parseLogin(argv: readonly string[]): { command: 'login'; options: LoginOptions } | { command: 'help' } {
  const values = parseOptions('login', argv, {
    config: { type: 'string' },
    server: { type: 'string', multiple: true },
    'no-browser': { type: 'boolean' },
    wait: { type: 'string' },
    timeout: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.values.help) return { command: 'help' };
  const labels = labelsOf('login', values.positionals);
  const seconds = (flag: string, fallback: number): number => {
    const text = values.values[flag] as string | undefined;
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isFinite(value) || value <= 0) throw new ConfigError(`login: --${flag} must be a positive number of seconds, got "${text}"`);
    return value;
  };
  return {
    command: 'login',
    options: {
      labels,
      configPath: values.values.config as string | undefined,
      serverFlags: (values.values.server as string[] | undefined) ?? [],
      noBrowser: (values.values['no-browser'] as boolean | undefined) ?? false,
      waitMs: seconds('wait', DEFAULT_WAIT_SECONDS) * 1000,
      timeoutMs: seconds('timeout', 10) * 1000,
    },
  };
}

export function parseLogout(argv: readonly string[]): { command: 'logout'; options: LogoutOptions } | { command: 'help' } {
  const values = parseOptions('logout', argv, { config: { type: 'string' }, server: { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } });
  if (values.values.help) return { command: 'help' };
  return {
    command: 'logout',
    options: { labels: labelsOf('logout', values.positionals), configPath: values.values.config as string | undefined, serverFlags: (values.values.server as string[] | undefined) ?? [] },
  };
}

function parseOptions(command: string, argv: readonly string[], options: OptionSpec): { values: Record<string, unknown>; positionals: string[] } {
  try {
    return parseArgs({ args: [...argv], allowPositionals: true, strict: true, options });
  } catch (error) {
    throw new ConfigError(`${command}: ${(error as Error).message.split('. ')[0] ?? 'invalid arguments'}`);
  }
}

function labelsOf(command: string, positionals: string[]): string[] {
  const labels = positionals.flatMap((item) => item.split(',')).map((item) => item.trim()).filter((item) => item !== '');
  if (labels.length === 0) throw new ConfigError(`${command} takes the LABEL of at least one server: skills-mount ${command} LABEL...`);
  return labels;
}
