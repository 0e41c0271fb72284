// Builds the mount's configuration: which servers to mount under which labels, from a
// config file in any supported format, --server flags and --only. Falls back to the
// bundled demo (skills-serve on examples/skills) when there is nothing else.
import { readFile } from 'node:fs/promises';
import { parseEnv } from 'node:util';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../errors.js';
import type { ServerConfig } from './server-config.js';
import type { ProtocolVersionChoice } from '../protocol/revisions.js';
import { FORMAT_NAMES, readConfigDocument, type RawServer } from './config-formats.js';
import { expandVariables, type ExpansionContext } from './env-expansion.js';
import { JsoncSyntaxError, parseJsonc } from './jsonc.js';
import { resolveOAuth } from './oauth-config.js';
import { appDir, platformPath } from '../user-dirs.js';
import { isValidLabel, normalizeLabel } from './labels.js';
import { parseServerFlag } from './server-flags.js';

export interface LabelledServer {
  label: string;
  config: ServerConfig;
  /** The server entry's "protocolVersion"; undefined: negotiate (or what --protocol-version says). */
  protocolVersion?: ProtocolVersionChoice | undefined;
  /** The entry's "approvedOnly": its skills appear only in the approved view. */
  approvedOnly?: boolean | undefined;
}

export interface MountConfig {
  /** Where the configuration came from: a file path and its format, the command line, or "the bundled demo". */
  origin: string;
  servers: LabelledServer[];
  /** Things the user should know but that do not stop the mount (renamed labels, skipped servers). */
  notes: string[];
}

export interface ConfigRequest {
  /** --config FILE */
  configPath?: string | undefined;
  /** --server values */
  serverFlags?: readonly string[];
  /** --only labels (or original keys) */
  only?: readonly string[];
  env?: NodeJS.ProcessEnv;
}

export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The default config file: `<config>/skills-mount/config.json` (user-dirs.ts: $XDG_CONFIG_HOME when absolute, else ~/.config; %APPDATA% on Windows). */
export function defaultConfigPath(env: NodeJS.ProcessEnv = process.env, home: string = homedir(), platform: NodeJS.Platform = process.platform): string {
  return platformPath(platform).join(appDir('config', 'skills-mount', { env, home, platform }), 'config.json');
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
    notes: [],
  };
}

interface Candidate {
  label: string;
  /** The name as the user wrote it (config key or --server label). */
  key: string;
  where: string;
  raw: RawServer;
  context: ExpansionContext;
}

/**
 * The servers to mount: `--config FILE` (or the default file) plus `--server` flags, narrowed
 * by `--only`. With neither a file nor flags, the demo. Throws ConfigError saying what to fix.
 */
export async function loadMountConfig(request: ConfigRequest = {}): Promise<MountConfig> {
  const env = request.env ?? process.env;
  const flags = request.serverFlags ?? [];
  const notes: string[] = [];
  const candidates: Candidate[] = [];
  const origins: string[] = [];

  const file = request.configPath ?? (flags.length === 0 ? defaultConfigPath(env) : undefined);
  if (file !== undefined) {
    const text = await readConfigText(file, request.configPath !== undefined);
    if (text === undefined) {
      const demo = demoConfig();
      return request.only?.length ? { ...demo, servers: select(demo.servers.map((server) => ({ ...server, key: server.label })), request.only, demo.origin).map(({ label, config }) => ({ label, config })) } : demo;
    }
    const parsed = parseConfigText(text, file, env);
    origins.push(`${file} (${parsed.formatName})`);
    notes.push(...parsed.notes);
    candidates.push(...parsed.candidates);
  }
  if (flags.length > 0) origins.push('the command line');
  const flagContext = expansionContext(env, process.cwd(), new Map());
  for (const value of flags) {
    const { label, server } = parseServerFlag(value);
    candidates.push({ label, key: label, where: `--server ${label}`, raw: server, context: flagContext });
  }
  rejectDuplicateLabels(candidates);

  const origin = origins.join(' and ');
  const selected = request.only?.length ? select(candidates, request.only, origin) : candidates;
  if (selected.length === 0) throw new ConfigError(`${origin}: no servers to mount (every server is disabled)`);
  const servers: LabelledServer[] = [];
  for (const candidate of selected) {
    servers.push({ label: candidate.label, config: await resolveServer(candidate), protocolVersion: candidate.raw.protocolVersion, approvedOnly: candidate.raw.approvedOnly || undefined });
  }
  return { origin, servers, notes };
}

/** Parses a config document of any supported format; exported for tests. */
export function parseConfigText(
  text: string,
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): { formatName: string; candidates: Candidate[]; notes: string[] } {
  let document: unknown;
  try {
    document = parseJsonc(text);
  } catch (error) {
    // Anything but a JsoncSyntaxError is the parser giving up (e.g. nesting too deep for the stack).
    const at = error instanceof JsoncSyntaxError ? ` at line ${error.position.line}, column ${error.position.column}` : '';
    throw new ConfigError(`config ${file}: not valid JSON${at}: ${(error as Error).message}`, { cause: error });
  }
  const where = (key: string) => `config ${file}${lineOf(text, key)}: server "${key}"`;
  const raw = readConfigDocument(document, file, where);
  const context = expansionContext(env, workspaceFolderFor(file), raw.inputs);
  const notes: string[] = [];
  const candidates: Candidate[] = [];
  for (const { key, server } of raw.entries) {
    if (server === undefined) {
      notes.push(`server "${key}" is disabled in ${file}; skipped`);
      continue;
    }
    const label = isValidLabel(key) ? key : normalizeLabel(key);
    if (label === '') {
      throw new ConfigError(`${where(key)}: no usable directory name can be made from this name; rename it using letters, digits, '-' or '_'`);
    }
    if (label !== key) notes.push(`server "${key}" is mounted as "${label}" (labels are lowercase directory names)`);
    candidates.push({ label, key, where: where(key), raw: server, context });
  }
  if (raw.entries.length === 0) throw new ConfigError(`config ${file}: no servers in it; nothing to mount`);
  return { formatName: FORMAT_NAMES[raw.format], candidates, notes };
}

/** VS Code's ${workspaceFolder}: the folder holding `.vscode/`, else the config file's folder. */
export function workspaceFolderFor(file: string): string {
  const dir = path.dirname(path.resolve(file));
  return path.basename(dir) === '.vscode' ? path.dirname(dir) : dir;
}

async function readConfigText(file: string, explicit: boolean): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !explicit) return undefined;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : (error as Error).message;
    throw new ConfigError(`cannot read config ${file}: ${why}`);
  }
}

function select<T extends { label: string; key: string }>(candidates: T[], only: readonly string[], origin: string): T[] {
  const wanted = only.flatMap((item) => item.split(',')).map((item) => item.trim()).filter((item) => item !== '');
  const selected = new Set<T>();
  for (const name of wanted) {
    const match = candidates.find((candidate) => candidate.label === name || candidate.key === name);
    if (!match) {
      const available = candidates.map((candidate) => candidate.label).join(', ') || 'none';
      throw new ConfigError(`--only: no server "${name}" in ${origin}; available: ${available}`);
    }
    selected.add(match);
  }
  return candidates.filter((candidate) => selected.has(candidate));
}

function rejectDuplicateLabels(candidates: Candidate[]): void {
  const seen = new Map<string, Candidate>();
  for (const candidate of candidates) {
    const earlier = seen.get(candidate.label);
    if (earlier) {
      throw new ConfigError(
        `${candidate.where}: its label "${candidate.label}" is already used by ${earlier.where}; ` +
          'labels name directories and must be unique (after lowercasing): rename one of them',
      );
    }
    seen.set(candidate.label, candidate);
  }
}

async function resolveServer({ raw, where, context }: Candidate): Promise<ServerConfig> {
  const expand = (text: string, field: string) => expandVariables(text, context, `${where}: ${field}`);
  const expandRecord = (record: Record<string, string>, field: string) =>
    Object.fromEntries(Object.entries(record).map(([key, value]) => [key, expand(value, `${field}.${key}`)]));
  if (raw.kind === 'stdio') {
    const fileEnv = raw.envFile === undefined ? {} : await readEnvFile(expand(raw.envFile, '"envFile"'), context.workspaceFolder, where);
    const command = expand(raw.command, '"command"');
    const args = raw.args.map((arg, i) => expand(arg, `"args"[${i}]`));
    const expanded = command !== raw.command || args.some((arg, i) => arg !== raw.args[i]);
    return {
      kind: 'stdio',
      command,
      args,
      env: { ...fileEnv, ...expandRecord(raw.env, '"env"') },
      cwd: raw.cwd === undefined ? undefined : expand(raw.cwd, '"cwd"'),
      ...(expanded ? { written: { command: raw.command, args: [...raw.args] } } : {}),
    };
  }
  const text = expand(raw.url, '"url"');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(`${where}: "url" is not a URL: ${text}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${where}: "url" must be http:// or https://, got ${url.protocol}`);
  const headers = expandRecord(raw.headers, '"headers"');
  for (const [name, value] of Object.entries(headers)) checkHeader(name, value, where);
  const oauth = raw.oauth === undefined ? undefined : resolveOAuth(raw.oauth, expand, where);
  return { kind: raw.kind, url: url.toString(), headers, ...(oauth ? { oauth } : {}) };
}

/** RFC 9110 token characters: what a header name may be made of. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Refuses, at start, a header that no HTTP request could carry (a line break in an expanded
 * variable, say): naming the server and the header, never the value, which may be a secret.
 */
function checkHeader(name: string, value: string, where: string): void {
  if (!HEADER_NAME.test(name)) {
    throw new ConfigError(`${where}: "headers": ${JSON.stringify(name)} is not a valid HTTP header name (letters, digits and !#$%&'*+-.^_\`|~ only)`);
  }
  const problem = /[\r\n]/.test(value) ? 'contains a line break' : value.includes('\0') ? 'contains a NUL character' : [...value].some((c) => c.codePointAt(0)! > 0xff) ? 'contains a character outside Latin-1' : undefined;
  let refused = problem;
  if (refused === undefined) {
    try {
      new Headers().append(name, value);
    } catch {
      // The library's own words quote the value: say only that it refused it.
      refused = 'is refused by the HTTP library';
    }
  }
  if (refused !== undefined) {
    throw new ConfigError(`${where}: "headers"."${name}": the value (after expanding variables; not shown) ${refused}, so no request could carry it`);
  }
}

/** A dotenv file (KEY=VALUE lines, # comments, quotes), as VS Code and Cursor read `envFile`. */
async function readEnvFile(file: string, baseDir: string, where: string): Promise<Record<string, string>> {
  const resolved = path.resolve(baseDir, file);
  let text: string;
  try {
    text = await readFile(resolved, 'utf8');
  } catch (error) {
    throw new ConfigError(`${where}: "envFile" ${resolved}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
  // Node's own dotenv reader: quotes, `export`, inline comments (`TOKEN="x" # c` is x), escapes.
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(parseEnv(text))) if (value !== undefined) env[key] = value;
  return env;
}

function expansionContext(env: NodeJS.ProcessEnv, workspaceFolder: string, inputs: ExpansionContext['inputs']): ExpansionContext {
  return { env, userHome: env.HOME ?? homedir(), workspaceFolder, inputs };
}

/** " line N" for the first `"key":` in the text, so an error points into the file. */
function lineOf(text: string, key: string): string {
  const pattern = new RegExp(`${escapeRegExp(JSON.stringify(key))}\\s*:`);
  const match = pattern.exec(text);
  return match ? ` line ${text.slice(0, match.index).split('\n').length}` : '';
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
