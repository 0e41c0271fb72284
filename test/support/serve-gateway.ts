// `skills-mount serve` as the client tests start it: the built CLI in a person's own HOME
// (team-lock-world's person), in front of upstream servers named in a config file, over Streamable
// HTTP (the URL it prints) or as a host's stdio server; and every skill of its --all view approved
// with `skills-mount approve`, so the default (approved) view serves the same skills.
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startListening, SKILLS_SERVE, type ListeningServer } from './http-server.js';
import { connectStdioNode, listAllSkills, type ClientEra, type Connected } from './server-harness.js';
import { cli, person, SKILLS_MOUNT, writeConfig, type Person } from './team-lock-world.js';
import type { TempDirs } from './temp-dir.js';

export interface GatewayWorld {
  who: Person;
  /** The config file naming the upstream servers. */
  config: string;
}

/** A person in `base` whose config names one `skills-serve DIR` per label (`upstreams`: label -> DIR), or any stdio command (label -> argv after node). */
export async function gatewayWorld(base: string, upstreams: Record<string, string | string[]>): Promise<GatewayWorld> {
  const who = await person(base, 'gateway');
  const servers: Record<string, unknown> = {};
  for (const [label, upstream] of Object.entries(upstreams)) {
    servers[label] = { command: process.execPath, args: typeof upstream === 'string' ? [SKILLS_SERVE, upstream] : upstream };
  }
  await writeConfig(who, servers);
  return { who, config: who.configFile };
}

/** `skills-mount serve --config CFG ...args --http 127.0.0.1:0`, once it listens. */
export function startServeHttp(world: GatewayWorld, args: readonly string[] = []): Promise<ListeningServer> {
  // Upstreams start before serve listens: a loaded machine may need more than the default 15 s.
  return startListening([SKILLS_MOUNT, 'serve', '--config', world.config, ...args, '--http', '127.0.0.1:0'], { env: world.who.env, timeoutMs: 45_000 });
}

/** `skills-mount serve --config CFG ...args` on stdio, a v2 client of `era` connected to it. */
export function connectServeStdio(world: GatewayWorld, args: readonly string[] = [], era: ClientEra = 'legacy'): Promise<Connected> {
  return connectStdioNode([SKILLS_MOUNT, 'serve', '--config', world.config, ...args], era, definedOnly(world.who.env));
}

/** The command line and environment a host (the Inspector) starts serve on stdio with. */
export function serveCommand(world: GatewayWorld, args: readonly string[] = []): { argv: string[]; env: Record<string, string> } {
  return { argv: [process.execPath, SKILLS_MOUNT, 'serve', '--config', world.config, ...args], env: definedOnly(world.who.env) };
}

/**
 * Approves, with the CLI, every skill serve's --all view lists (LABEL/SKILLDIR each); resolves
 * the approved paths. Throws with the CLI's output when approve fails.
 */
export async function approveEverything(world: GatewayWorld): Promise<string[]> {
  const listed = await connectServeStdio(world, ['--all']);
  let uris: string[];
  try {
    uris = (await listAllSkills(listed.client)).skills.map((skill) => skill.uri);
  } finally {
    await listed.close();
  }
  // skill://LABEL/P/SKILL.md is the skill P of server LABEL: LABEL/P.
  const paths = uris.map((uri) => path.posix.dirname(uri.slice('skill://'.length)));
  const result = await cli(world.who, ['approve', ...paths, '--config', world.config, '--yes'], { timeoutMs: 120_000 });
  if (result.code !== 0) throw new Error(`approve ${paths.join(' ')} exited ${result.code}:\n${result.stdout}${result.stderr}`);
  return paths;
}

/** The views the client tests serve: --all, and the default one with every skill approved by the CLI. */
export const SERVED_VIEWS: ReadonlyArray<{ view: string; args: readonly string[]; approve: boolean }> = [
  { view: '--all', args: ['--all'], approve: false },
  { view: 'the approved view, every skill approved', args: [], approve: true },
];

/**
 * In the enclosing describe: a world in a new temp dir whose server "docs" is `skills-serve DIR`,
 * every skill approved when `approve`, and serve (`args`) on HTTP from before its tests to after.
 */
export function gatewayForDescribe(temps: TempDirs, dir: string, { args, approve }: { args: readonly string[]; approve: boolean }): { world(): GatewayWorld; served(): ListeningServer } {
  let world: GatewayWorld | undefined;
  let served: ListeningServer | undefined;
  beforeAll(async () => {
    world = await gatewayWorld(await temps.make(), { docs: dir });
    if (approve) await approveEverything(world);
    served = await startServeHttp(world, args);
  }, 180_000);
  afterAll(async () => {
    await served?.stop();
  });
  return { world: () => world!, served: () => served! };
}

function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}
