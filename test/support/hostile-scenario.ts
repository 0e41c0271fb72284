// Builders for test/support/hostile-server.mjs scenarios: skills, files with faults, and
// the config entry that runs the server. Shared by the hostile-* tests.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { StdioServerConfig } from '../../src/config/server-config.js';
import { REPO } from './mount-harness.js';
import { skillMd } from './skill-builder.js';

export const HOSTILE_SERVER = path.join(REPO, 'test', 'support', 'hostile-server.mjs');
export const SCRIPTED_SERVER = path.join(REPO, 'test', 'support', 'scripted-server.mjs');

export interface HostileFile {
  text?: string;
  blob?: string;
  repeat?: number;
  listedText?: string;
  listedDigest?: string;
  listedSize?: number;
  fault?: string;
  delayMs?: number;
}

export interface HostileSkill {
  uri: string;
  frontmatter: Record<string, unknown>;
  files: Record<string, HostileFile>;
  dynamic?: boolean;
  inListing?: boolean;
}

/** A skill at skill://<skillPath>/SKILL.md with a good SKILL.md and the given supporting files (relative names). */
export function hostileSkill(skillPath: string, description: string, files: Record<string, HostileFile> = {}, extra: Partial<HostileSkill> = {}): HostileSkill {
  const name = skillPath.split('/').pop()!;
  const uri = `skill://${skillPath}/SKILL.md`;
  const all: Record<string, HostileFile> = { [uri]: { text: skillMd(name, description) } };
  for (const [relative, file] of Object.entries(files)) all[`skill://${skillPath}/${relative}`] = file;
  return { uri, frontmatter: { name, description }, files: all, ...extra };
}

/** Writes the scenario and returns the config entry that serves it over stdio. */
export async function hostileEntry(dir: string, name: string, scenario: Record<string, unknown>) {
  const file = path.join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(scenario));
  return { command: process.execPath, args: [HOSTILE_SERVER, file] };
}

/** How many times the daemon's log shows the server receiving `method` for `uri`. */
export function requestCount(log: string, label: string, method: string, uri?: string): number {
  const line = `[${label}] server: request ${method}${uri ? ` ${uri}` : ''}`;
  // Without a URI, requests of that method for any URI count.
  return log.split('\n').filter((entry) => entry.endsWith(line) || (uri === undefined && entry.includes(`${line} `))).length;
}

/** Writes the scenario and returns the stdio server config that runs `server` (hostile or scripted) on it, for a source without a mount. */
export async function scriptedServer(dir: string, name: string, scenario: Record<string, unknown>, server: string = SCRIPTED_SERVER): Promise<StdioServerConfig> {
  const file = path.join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(scenario));
  return { kind: 'stdio', command: process.execPath, args: [server, file], env: {}, cwd: undefined };
}
