// Recognizes the MCP config formats people already have, from their content, and reads
// each server entry into one raw shape (variables not yet expanded):
//   Claude Desktop / Cursor  {"mcpServers": {"name": {"command", "args", "env"} | {"url", "headers"}}}
//   Claude Code .mcp.json    {"mcpServers": {"name": {"type": "stdio" | "http" | "sse", ...}}}
//   VS Code mcp.json         {"inputs": [...], "servers": {"name": {"type": ..., ...}}}, or settings.json {"mcp": {...}}
// An HTTP or SSE entry may carry an "oauth" object in each of them (oauth-config.ts).
import { ConfigError } from '../errors.js';
import { readRawOAuth, type RawOAuth } from './oauth-config.js';
import { PROTOCOL_VERSION_CHOICES, parseProtocolVersionChoice, type ProtocolVersionChoice } from '../protocol/revisions.js';

export type ConfigFormat = 'mcp-servers' | 'claude-code' | 'vscode';

export const FORMAT_NAMES: Record<ConfigFormat, string> = {
  'mcp-servers': 'mcpServers (Claude Desktop / Cursor)',
  'claude-code': 'Claude Code .mcp.json',
  vscode: 'VS Code mcp.json',
};

export type RawServer = (
  | { kind: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd: string | undefined; envFile: string | undefined }
  | { kind: 'http' | 'sse'; url: string; headers: Record<string, string>; oauth?: RawOAuth | undefined }
) & {
  /** skills-mount's own field: which MCP revision to speak with this server. */
  protocolVersion: ProtocolVersionChoice | undefined;
  /** skills-mount's own field: show this server's skills only in the approved view (docs/agents.md). */
  approvedOnly: boolean;
};

export interface RawEntry {
  /** The key as written in the file. */
  key: string;
  /** undefined when the entry says `"disabled": true`. */
  server: RawServer | undefined;
}

export interface RawConfig {
  format: ConfigFormat;
  entries: RawEntry[];
  /** VS Code `inputs` by id. */
  inputs: Map<string, { description: string | undefined }>;
}

const HTTP_TYPES = new Set(['http', 'streamable-http', 'streamableHttp', 'streamable_http']);

/** Reads a parsed document; `where(key)` prefixes errors about one server (it adds the line). */
export function readConfigDocument(document: unknown, file: string, where: (key: string) => string): RawConfig {
  if (!isObject(document)) throw new ConfigError(`config ${file}: expected a JSON object with "mcpServers" or "servers"`);
  let format: ConfigFormat;
  let servers: unknown;
  let inputsValue: unknown;
  if (document.mcpServers !== undefined) {
    servers = document.mcpServers;
    format = isObject(servers) && Object.values(servers).some((entry) => isObject(entry) && entry.type !== undefined) ? 'claude-code' : 'mcp-servers';
  } else if (document.servers !== undefined) {
    servers = document.servers;
    inputsValue = document.inputs;
    format = 'vscode';
  } else if (isObject(document.mcp) && document.mcp.servers !== undefined) {
    servers = document.mcp.servers;
    inputsValue = document.mcp.inputs;
    format = 'vscode';
  } else {
    throw new ConfigError(
      `config ${file}: no servers found: expected "mcpServers" (Claude Desktop, Cursor, Claude Code) or "servers" (VS Code mcp.json)`,
    );
  }
  const section = document.mcpServers !== undefined ? 'mcpServers' : 'servers';
  if (!isObject(servers)) throw new ConfigError(`config ${file}: "${section}" must be an object of servers by name`);
  const entries = Object.entries(servers).map(([key, entry]) => ({ key, server: readEntry(entry, where(key)) }));
  return { format, entries, inputs: readInputs(inputsValue, file) };
}

function readEntry(entry: unknown, where: string): RawServer | undefined {
  if (!isObject(entry)) throw new ConfigError(`${where}: expected an object with "command" or "url"`);
  if (entry.disabled === true) return undefined;
  const type = entry.type ?? entry.transport;
  const url = entry.url ?? entry.serverUrl;
  if (type !== undefined && typeof type !== 'string') throw new ConfigError(`${where}: "type" must be a string`);
  if (url !== undefined && entry.command !== undefined) throw new ConfigError(`${where}: has both "command" and "url"; choose one`);
  const kind = type === undefined ? (url !== undefined ? 'http' : 'stdio') : type === 'stdio' ? 'stdio' : type === 'sse' ? 'sse' : HTTP_TYPES.has(type) ? 'http' : undefined;
  if (kind === undefined) {
    throw new ConfigError(`${where}: "type": "${String(type)}" is not a transport skills-mount knows; use "stdio", "http" (Streamable HTTP) or "sse"`);
  }
  const protocolVersion = readProtocolVersion(entry.protocolVersion, where);
  if (entry.approvedOnly !== undefined && typeof entry.approvedOnly !== 'boolean') throw new ConfigError(`${where}: "approvedOnly" must be true or false`);
  const approvedOnly = entry.approvedOnly === true;
  if (kind === 'stdio') {
    if (typeof entry.command !== 'string' || entry.command === '') {
      throw new ConfigError(`${where}: needs "command" (a stdio server) or "url" (an HTTP server)`);
    }
    const args = entry.args ?? [];
    if (!Array.isArray(args) || !args.every((arg) => typeof arg === 'string')) throw new ConfigError(`${where}: "args" must be an array of strings`);
    if (entry.cwd !== undefined && typeof entry.cwd !== 'string') throw new ConfigError(`${where}: "cwd" must be a string`);
    if (entry.envFile !== undefined && typeof entry.envFile !== 'string') throw new ConfigError(`${where}: "envFile" must be a string`);
    if (entry.oauth !== undefined) throw new ConfigError(`${where}: "oauth" is for HTTP servers ("url"); a stdio server is not signed in to`);
    return { kind, command: entry.command, args, env: stringRecord(entry.env, `${where}: "env"`), cwd: entry.cwd, envFile: entry.envFile, protocolVersion, approvedOnly };
  }
  if (typeof url !== 'string' || url === '') throw new ConfigError(`${where}: "type": "${String(type)}" needs "url"`);
  const oauth = readRawOAuth(entry.oauth, where);
  return { kind, url, headers: stringRecord(entry.headers, `${where}: "headers"`), ...(oauth ? { oauth } : {}), protocolVersion, approvedOnly };
}

function readProtocolVersion(value: unknown, where: string): ProtocolVersionChoice | undefined {
  if (value === undefined) return undefined;
  const choice = parseProtocolVersionChoice(value);
  if (choice === undefined) {
    throw new ConfigError(`${where}: "protocolVersion" must be one of ${PROTOCOL_VERSION_CHOICES.map((c) => `"${c}"`).join(', ')}, not ${JSON.stringify(value)}`);
  }
  return choice;
}

function readInputs(value: unknown, file: string): Map<string, { description: string | undefined }> {
  const inputs = new Map<string, { description: string | undefined }>();
  if (value === undefined) return inputs;
  if (!Array.isArray(value)) throw new ConfigError(`config ${file}: "inputs" must be an array`);
  for (const input of value) {
    if (!isObject(input) || typeof input.id !== 'string') throw new ConfigError(`config ${file}: every entry of "inputs" needs an "id"`);
    inputs.set(input.id, { description: typeof input.description === 'string' ? input.description : undefined });
  }
  return inputs;
}

function stringRecord(value: unknown, where: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw new ConfigError(`${where} must be an object of strings`);
  const record: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    // Numbers and booleans are common in hand-written env blocks; they mean their text.
    if (typeof item === 'string') record[key] = item;
    else if (typeof item === 'number' || typeof item === 'boolean') record[key] = String(item);
    else throw new ConfigError(`${where}: "${key}" must be a string`);
  }
  return record;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
