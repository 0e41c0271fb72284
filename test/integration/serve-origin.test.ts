// Each entry `skills-mount serve` lists names its origin in `_meta` (issue 51): the upstream
// label, the upstream URI of its SKILL.md (the served one is skill://LABEL/<that path>), and the
// server as a lock records it; the skill's name and last path segment are the upstream's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLES, listAllSkills } from '../support/server-harness.js';
import { connectServeStdio, gatewayWorld, type GatewayWorld } from '../support/serve-gateway.js';
import { SKILLS_SERVE } from '../support/http-server.js';
import { TempDirs } from '../support/temp-dir.js';

const temps = new TempDirs('serve-origin-');
let world: GatewayWorld;

beforeAll(async () => {
  world = await gatewayWorld(await temps.make(), { docs: EXAMPLES });
});
afterAll(() => temps.removeAll());

describe('serve: each entry says where it comes from', () => {
  it('_meta["io.github.skills-mount/origin"] names the label, the upstream URI and the server; the URI keeps the upstream path under the label', async () => {
    const connected = await connectServeStdio(world, ['--all'], 'modern');
    try {
      const { skills } = await listAllSkills(connected.client);
      expect(skills.length).toBe(5);
      for (const skill of skills) {
        const origin = ((skill as { _meta?: Record<string, unknown> })._meta)?.['io.github.skills-mount/origin'] as { label: string; uri: string; server: unknown } | undefined;
        expect(origin, skill.uri).toBeDefined();
        expect(origin!.label).toBe('docs');
        expect(skill.uri).toBe(`skill://docs/${origin!.uri.slice('skill://'.length)}`);
        expect(origin!.server).toEqual({ command: process.execPath, args: [SKILLS_SERVE, EXAMPLES] });
        expect(skill.uri.split('/').at(-2)).toBe((skill.frontmatter as { name: string }).name);
      }
    } finally {
      await connected.close();
    }
  });
});
