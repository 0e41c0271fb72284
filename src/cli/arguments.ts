// The pieces every command's parser shares: node:util's parseArgs with messages a person can act
// on, positive numbers, and the flags that name servers to start in this process.
import { parseArgs } from 'node:util';
import type { ServerSelection } from '../config/server-selection.js';
import { ConfigError } from '../errors.js';

export type OptionSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;

/** Strict parsing (unknown options refused); throws ConfigError with node:util's first sentence. */
export function parseArguments(argv: readonly string[], options: OptionSpec): { values: Record<string, unknown>; positionals: string[] } {
  try {
    return parseArgs({ args: [...argv], allowPositionals: true, strict: true, options });
  } catch (error) {
    // node:util's messages carry a code prefix and long advice; keep the first sentence.
    const message = (error as Error).message.split('. ')[0] ?? 'invalid arguments';
    throw new ConfigError(message.replace(/^Unknown option '(.*)'$/, 'unknown option $1'));
  }
}

export function positiveNumber(text: string, flag: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new ConfigError(`${flag} must be a positive number, got "${text}"`);
  return value;
}

/** The flags that name servers to start in this process (approve and revoke without a mount, lock, outdated, update). */
export const SERVER_SELECTION_OPTIONS: OptionSpec = {
  config: { type: 'string' },
  server: { type: 'string', multiple: true },
  only: { type: 'string', multiple: true },
};

/** --config/--server/--only as given (neither: the default configuration). */
export function givenServers(values: Record<string, unknown>): ServerSelection {
  return { configPath: values.config as string | undefined, serverFlags: (values.server as string[] | undefined) ?? [], only: (values.only as string[] | undefined) ?? [] };
}

/** --project DIR, which the team commands require. */
export function projectOption(values: Record<string, unknown>, command: string): string {
  const project = values.project as string | undefined;
  if (project === undefined || project === '') throw new ConfigError(`${command} needs --project DIR: the folder whose skills-lock.json it reads`);
  return project;
}

/** --yes, --grant-allowed-tools and --grant-exec (approve, lock): grants go with --yes, since on a terminal the command asks. */
export const GRANT_OPTIONS: OptionSpec = {
  yes: { type: 'boolean', short: 'y' },
  'grant-allowed-tools': { type: 'boolean' },
  'grant-exec': { type: 'boolean' },
};

export function givenGrants(values: Record<string, unknown>, command: string): { yes: boolean; grantAllowedTools: boolean; grantExec: boolean } {
  const yes = (values.yes as boolean | undefined) ?? false;
  const grantAllowedTools = (values['grant-allowed-tools'] as boolean | undefined) ?? false;
  const grantExec = (values['grant-exec'] as boolean | undefined) ?? false;
  for (const [flag, given] of [['--grant-allowed-tools', grantAllowedTools], ['--grant-exec', grantExec]] as const) {
    if (given && !yes) throw new ConfigError(`${flag} goes with --yes; on a terminal, ${command} asks`);
  }
  return { yes, grantAllowedTools, grantExec };
}

/** "9464", ":9464", "127.0.0.1:9464", "[::1]:9464" or "0.0.0.0:9464"; loopback unless a host is given. */
export function metricsAddress(text: string | undefined): { host: string; port: number } | undefined {
  if (text === undefined) return undefined;
  const match = /^(?:(\[[0-9a-f:.]+\]|[a-z0-9.-]*):)?([0-9]{1,5})$/i.exec(text);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port < 1 || port > 65535) throw new ConfigError(`--metrics takes [HOST:]PORT (e.g. 9464 or 127.0.0.1:9464), got "${text}"`);
  const host = match[1] ? match[1].replace(/^\[|\]$/g, '') : '127.0.0.1';
  return { host, port };
}
