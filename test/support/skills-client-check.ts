// The SDK v2's own SkillsClient as a third-party host: lists every skill of a connected server
// and reads every listed file through it (it verifies size, digest and frontmatter), comparing
// the bytes with the file on disk the served URI stands for. Nothing of ours on the client side.
import { readFile } from 'node:fs/promises';
import type { Client } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { expect } from 'vitest';

/** Lists with SkillsClient and reads every listed file through it; `fileOf(uri)` is the file on disk it must equal. Resolves the counts. */
export async function listAndVerify(client: Client, fileOf: (uri: string) => string): Promise<{ skills: number; files: number }> {
  const skills = new SkillsClient(client);
  expect(skills.supported).toBe(true);
  expect(skills.directoryRead).toBe(true);
  const listing = await skills.list();
  expect(listing.invalid).toEqual([]);
  let files = 0;
  for (const skill of listing.skills) {
    const root = skill.uri.slice(0, -'SKILL.md'.length);
    expect(skill.resources).not.toBe('dynamic');
    for (const resource of skill.resources === 'dynamic' ? [] : skill.resources) {
      const ref = resource.uri.slice(root.length);
      const file = ref === 'SKILL.md' ? await skills.read(skill) : await skills.read(skill, ref);
      expect(file.verified, resource.uri).toBe(true);
      const onDisk = await readFile(fileOf(resource.uri));
      expect(Buffer.from(file.bytes).equals(onDisk), resource.uri).toBe(true);
      files++;
    }
  }
  return { skills: listing.skills.length, files };
}
