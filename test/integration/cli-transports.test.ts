// Configured HTTP servers end to end up to the MCP client: a config file with a bearer
// token from the environment reaches a server over Streamable HTTP and legacy SSE.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMountConfig } from '../../src/config/config.js';
import { McpSkillSource } from '../../src/mcp/mcp-skill-source.js';
import { startAuthServer, type AuthServer } from '../support/cli-auth-server.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

const EXAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../examples/skills');
const TOKEN = 'token-from-the-environment';

describe('HTTP servers from a config file, with auth headers', () => {
  let server: AuthServer;
  let dir: string;
  beforeAll(async () => {
    server = await startAuthServer(EXAMPLES, TOKEN);
    dir = await makeTempDir('skills-mount-cli-transports-');
  });
  afterAll(async () => {
    await server?.close();
    await removeDir(dir);
  });

  async function sourcesFor(document: unknown, env: NodeJS.ProcessEnv): Promise<McpSkillSource[]> {
    const file = path.join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(file, JSON.stringify(document));
    const config = await loadMountConfig({ configPath: file, env });
    return config.servers.map(({ label, config: serverConfig }) => new McpSkillSource(label, serverConfig, { timeoutMs: 5_000, log: () => {}, minBackoffMs: 60_000 }));
  }

  it('Claude Code .mcp.json: "http" and "sse" servers both list the skills with the expanded bearer token', async () => {
    const sources = await sourcesFor(
      {
        mcpServers: {
          streamable: { type: 'http', url: `${server.origin}/mcp`, headers: { Authorization: 'Bearer ${SKILLS_TOKEN}' } },
          legacy: { type: 'sse', url: `${server.origin}/sse`, headers: { Authorization: 'Bearer ${SKILLS_TOKEN}' } },
        },
      },
      { SKILLS_TOKEN: TOKEN },
    );
    try {
      for (const source of sources) {
        await source.start();
        expect(source.connection(), source.label).toMatchObject({ status: 'connected' });
        const listing = await source.listSkills();
        expect(listing.items.map((skill) => skill.uri)).toContain('skill://hello-mount/SKILL.md');
      }
    } finally {
      await Promise.all(sources.map((source) => source.close()));
    }
    expect(server.seen.filter((header) => header !== `Bearer ${TOKEN}`)).toEqual([]);
  });

  it('a wrong token fails the connection with a reason, and nothing else is sent in its place', async () => {
    const before = server.seen.length;
    const [source] = await sourcesFor({ servers: { docs: { type: 'http', url: `${server.origin}/mcp`, headers: { Authorization: 'Bearer ${env:WRONG}' } } } }, { WRONG: 'nope' });
    try {
      await source!.start();
      expect(source!.connection()).toMatchObject({ status: 'failed', reason: expect.stringMatching(/401|unauthorized/i) });
    } finally {
      await source!.close();
    }
    expect(server.seen.slice(before).every((header) => header === 'Bearer nope')).toBe(true);
  });
});
