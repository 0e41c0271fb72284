// Reads the mount's configuration: which servers to mount under which labels.
// Falls back to the bundled demo (skills-serve on examples/skills) when there is none.
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../errors.js';
import type { ServerConfig } from '../mcp/server-config.js';

export interface LabelledServer {
  label: string;
  config: ServerConfig;
}

export interface MountConfig {
  /** Where the configuration came from: a file path, or "the bundled demo". */
  origin: string;
  servers: LabelledServer[];
}

const LABEL_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;
const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The default config file: $XDG_CONFIG_HOME/skills-mount/config.json, else ~/.config/skills-mount/config.json. */
export function defaultConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(homedir(), '.config');
  return path.join(base, 'skills-mount', 'config.json');
}

/** The zero-config first run: the bundled reference server on the bundled example skills, as "demo". */
export function demoConfig(): MountConfig {
  return {
    origin: 'the bundled demo (skills-serve examples/skills)',
    servers: [
      {
        label: 'demo',
        config: {
          kind: 'stdio',
          command: process.execPath,
          args: [path.join(PACKAGE_ROOT, 'dist', 'cli', 'skills-serve.js'), path.join(PACKAGE_ROOT, 'examples', 'skills')],
          env: {},
          cwd: undefined,
        },
      },
    ],
  };
}

/** Loads `explicitPath`, else the default file, else the demo. Throws ConfigError with what to fix. */
export async function loadMountConfig(explicitPath: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<MountConfig> {
  const file = explicitPath ?? defaultConfigPath(env);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && explicitPath === undefined) return demoConfig();
    throw new ConfigError(`cannot read config ${file}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
  return { origin: file, servers: parseMountConfig(text, file) };
}

/** Parses and validates a config document. */
export function parseMountConfig(text: string, file: string): LabelledServer[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`config ${file}: not valid JSON${jsonErrorLocation(text, error as Error)}: ${(error as Error).message}`);
  }
  if (!isObject(document) || !isObject(document.mcpServers)) {
    throw new ConfigError(`config ${file}: expected {"mcpServers": {"<label>": {...}}}`);
  }
  const servers: LabelledServer[] = [];
  for (const [label, entry] of Object.entries(document.mcpServers)) {
    const where = `config ${file}: server "${label}"`;
    if (!LABEL_PATTERN.test(label)) {
      throw new ConfigError(`${where}: labels must match [a-z0-9][a-z0-9_-]* (they name the server's directory under the mount)`);
    }
    if (!isObject(entry)) throw new ConfigError(`${where}: expected an object with "command" or "url"`);
    servers.push({ label, config: parseServer(entry, where) });
  }
  if (servers.length === 0) throw new ConfigError(`config ${file}: "mcpServers" is empty; nothing to mount`);
  return servers;
}

function parseServer(entry: Record<string, unknown>, where: string): ServerConfig {
  if (typeof entry.url === 'string') {
    if (entry.command !== undefined) throw new ConfigError(`${where}: has both "command" and "url"; choose one`);
    let url: URL;
    try {
      url = new URL(entry.url);
    } catch {
      throw new ConfigError(`${where}: "url" is not a URL: ${entry.url}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${where}: "url" must be http:// or https://`);
    return { kind: 'http', url: url.toString(), headers: stringRecord(entry.headers, `${where}: "headers"`) };
  }
  if (typeof entry.command !== 'string' || entry.command === '') {
    throw new ConfigError(`${where}: needs "command" (a stdio server) or "url" (a Streamable HTTP server)`);
  }
  const args = entry.args ?? [];
  if (!Array.isArray(args) || !args.every((arg) => typeof arg === 'string')) {
    throw new ConfigError(`${where}: "args" must be an array of strings`);
  }
  if (entry.cwd !== undefined && typeof entry.cwd !== 'string') throw new ConfigError(`${where}: "cwd" must be a string`);
  return { kind: 'stdio', command: entry.command, args, env: stringRecord(entry.env, `${where}: "env"`), cwd: entry.cwd };
}

function stringRecord(value: unknown, where: string): Record<string, string> {
  if (value === undefined) return {};
  if (!isObject(value) || !Object.values(value).every((item) => typeof item === 'string')) {
    throw new ConfigError(`${where} must be an object of strings`);
  }
  return value as Record<string, string>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function jsonErrorLocation(text: string, error: Error): string {
  const position = /position (\d+)/.exec(error.message)?.[1];
  if (position === undefined) return '';
  const before = text.slice(0, Number(position));
  return ` at line ${before.split('\n').length}`;
}
