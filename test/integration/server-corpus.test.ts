// The real corpus served whole over an in-memory link: every byte, every directory,
// every digest checked against the files on disk, independently of the server's code.
// Runs when SKILLS_MOUNT_CORPUS names a copy of the anthropic-skills corpus.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectInMemory,
  copyCorpus,
  CORPUS,
  listAllSkills,
  readBytes,
  readDirectoryAll,
  type Connected,
  type Entry,
} from '../support/server-harness.js';
import { sha256 } from '../support/digest.mjs';
import { removeDir } from '../support/temp-dir.js';

/** Every regular file under dir, as paths relative to it. */
async function filesUnder(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await filesUnder(dir, rel)));
    else if (entry.isFile()) out.push(rel);
  }
  return out;
}

async function dirsUnder(dir: string, prefix: string): Promise<string[]> {
  const out = [prefix];
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    if (entry.isDirectory()) out.push(...(await dirsUnder(dir, `${prefix}/${entry.name}`)));
  }
  return out;
}

// Its description has 1,068 characters: over the Agent Skills limit, refused unless --lenient.
const OVER_LONG = 'claude-api';

describe.skipIf(!CORPUS)('skills-serve on the anthropic-skills corpus', () => {
  let root: string;
  let connected: Connected;
  let entries: Entry[];
  let files: string[];
  let skillDirs: string[];

  beforeAll(async () => {
    root = await copyCorpus();
    connected = await connectInMemory({ root });
    const all = (await filesUnder(root)).sort();
    expect(all.filter((f) => f.endsWith('/SKILL.md'))).toHaveLength(12);
    files = all.filter((f) => !f.startsWith(`${OVER_LONG}/`));
    skillDirs = files.filter((f) => f.endsWith('/SKILL.md')).map((f) => f.slice(0, -'/SKILL.md'.length));
    entries = (await listAllSkills(connected.client)).skills;
  });
  afterAll(async () => {
    await connected?.close();
    await removeDir(root);
  });

  it('lists eleven skills of twelve: claude-api, whose description is over 1024 characters, is refused with a warning', () => {
    expect(skillDirs).toHaveLength(11);
    expect(entries.map((e) => e.uri).sort()).toEqual(skillDirs.map((d) => `skill://${d}/SKILL.md`).sort());
    expect(connected.logs.some((line) => line.includes(`${OVER_LONG}/SKILL.md`) && line.includes('not served') && line.includes('1024'))).toBe(true);
  });

  it('with --lenient, lists all twelve, claude-api with its full description', async () => {
    const lenient = await connectInMemory({ root, watch: false, lenient: true });
    try {
      const { skills } = await listAllSkills(lenient.client);
      expect(skills).toHaveLength(12);
      const claude = skills.find((e) => e.uri === `skill://${OVER_LONG}/SKILL.md`)!;
      expect(String(claude.frontmatter.description).length).toBeGreaterThan(1024);
    } finally {
      await lenient.close();
    }
  });

  it('publishes complete manifests whose digests and sizes match the bytes on disk', async () => {
    for (const entry of entries) {
      const dir = entry.uri.slice('skill://'.length, -'/SKILL.md'.length);
      const expected = files.filter((f) => f.startsWith(`${dir}/`)).map((f) => `skill://${f}`).sort();
      expect(entry.resources.map((r) => r.uri).sort()).toEqual(expected);
      for (const resource of entry.resources) {
        const bytes = await readFile(join(root, resource.uri.slice('skill://'.length)));
        expect(resource.digest).toBe(sha256(bytes));
        expect(resource.size).toBe(bytes.length);
      }
    }
  });

  it('reads every file back byte-identical, text as text and binaries as blobs', async () => {
    let checked = 0;
    for (const rel of files) {
      const onDisk = await readFile(join(root, rel));
      const read = await readBytes(connected.client, `skill://${rel}`);
      expect(read.bytes.equals(onDisk), rel).toBe(true);
      if (rel.endsWith('.ttf') || rel.endsWith('.pdf')) expect(read.kind, rel).toBe('blob');
      if (rel.endsWith('.md')) {
        expect(read.kind, rel).toBe('text');
        expect(read.mimeType, rel).toBe('text/markdown');
      }
      checked++;
    }
    expect(checked).toBe(files.length);
    expect(checked).toBe(195 - 66); // the corpus has 195 files, 66 of them in claude-api
  });

  it('answers resources/directory/read for every directory exactly as the folder lists it', async () => {
    for (const skillDir of skillDirs) {
      for (const dir of await dirsUnder(root, skillDir)) {
        const children = await readDirectoryAll(connected.client, `skill://${dir}`);
        const onDisk = await readdir(join(root, dir), { withFileTypes: true });
        expect(children.map((c) => c.name).sort(), dir).toEqual(onDisk.map((d) => d.name).sort());
        for (const child of children) {
          const real = onDisk.find((d) => d.name === child.name)!;
          expect(child.uri).toBe(`skill://${dir}/${child.name}`);
          if (real.isDirectory()) expect(child.mimeType).toBe('inode/directory');
          else expect(child.size).toBe((await readFile(join(root, dir, child.name))).length);
        }
      }
    }
  });

  it('serves skill://index.json with each SKILL.md digest and its frontmatter', async () => {
    const read = await readBytes(connected.client, 'skill://index.json');
    expect(read.mimeType).toBe('application/json');
    const index = JSON.parse(read.bytes.toString('utf8')) as { skills: Array<{ url: string; digest: string; frontmatter: Record<string, unknown> }> };
    expect(index.skills.map((s) => s.url).sort()).toEqual(entries.map((e) => e.uri).sort());
    for (const skill of index.skills) {
      const bytes = await readFile(join(root, skill.url.slice('skill://'.length)));
      expect(skill.digest).toBe(sha256(bytes));
      expect(skill.frontmatter).toEqual(entries.find((e) => e.uri === skill.url)!.frontmatter);
      expect(skill.frontmatter.name).toBe(skill.url.split('/').at(-2));
    }
  });

  it('lists SKILL.md resources with name, description and size in resources/list', async () => {
    const { resources } = await connected.client.listResources();
    const skills = resources.filter((r) => r.uri !== 'skill://index.json');
    expect(skills).toHaveLength(11);
    const brand = skills.find((r) => r.uri === 'skill://brand-guidelines/SKILL.md')!;
    expect(brand.name).toBe('brand-guidelines');
    expect(brand.mimeType).toBe('text/markdown');
    expect(brand.description).toBe(entries.find((e) => e.uri === brand.uri)!.frontmatter.description);
  });

  it('declares the skills extension with directoryRead and resource subscriptions', () => {
    const capabilities = connected.client.getServerCapabilities() as Record<string, unknown> & { extensions?: Record<string, unknown> };
    expect(capabilities.extensions?.['io.modelcontextprotocol/skills']).toEqual({ directoryRead: true });
    expect(capabilities.resources).toEqual({ subscribe: true, listChanged: true });
  });
});
