// A corpus through a real kernel mount, for every discovery mode the reference server can
// offer: what a person sees with diff -r, cat and ls -l. The project's generated corpus
// always; a real one too when SKILLS_MOUNT_CORPUS names it (served --lenient, since real
// published skills break length limits: the mount shows them, marked).
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { run, runBytes } from '../support/fuse-harness.js';
import { startHttpServe } from '../support/http-server.js';
import { serveEntry, startMount, type RunningMount } from '../support/mount-harness.js';
import { corpusDirs } from '../support/test-corpus.mjs';
import { requireFuse } from '../support/require-fuse.js';

requireFuse();

let mount: RunningMount | undefined;
afterEach(async () => {
  await mount?.stop();
  mount = undefined;
});

async function corpusFiles(dir: string, prefix = ''): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const relative = path.join(prefix, entry.name);
    if (entry.isDirectory()) files.push(...(await corpusFiles(path.join(dir, entry.name), relative)));
    else files.push(relative);
  }
  return files;
}

const enumerable = [
  { protocol: 'both', directoryRead: true },
  { protocol: 'both', directoryRead: false },
  { protocol: 'listing', directoryRead: true },
  { protocol: 'listing', directoryRead: false },
  { protocol: 'index', directoryRead: true },
] as const;

for (const corpus of corpusDirs()) describe(`the ${corpus.name} corpus through the mount`, () => {
  let CORPUS_DIR: string;
  let skillCount: number;
  const lenient = corpus.name === 'external' ? ['--lenient'] : [];
  beforeAll(async () => {
    CORPUS_DIR = await corpus.dir();
    skillCount = (await corpusFiles(CORPUS_DIR)).filter((file) => path.basename(file) === 'SKILL.md').length;
  });

  for (const { protocol, directoryRead } of enumerable) {
    it(`diff -r is empty: --protocol ${protocol}, directoryRead ${directoryRead}`, async () => {
      const flags = ['--protocol', protocol, ...(directoryRead ? [] : ['--no-directory-read']), ...lenient];
      mount = await startMount({ config: { corpus: serveEntry(CORPUS_DIR, ...flags) } });
      const served = path.join(mount.mountpoint, 'corpus');
      // index.json is the index generation's catalog, served as a file of its own.
      const diff = await run('diff', ['-r', '-x', 'index.json', CORPUS_DIR, served], 60_000);
      expect(diff.stdout + diff.stderr).toBe('');
      expect(diff.code).toBe(0);
      const expectedGeneration = protocol === 'index' ? 'index' : 'listing';
      const skillsJson = JSON.parse((await runBytes('cat', [path.join(mount.mountpoint, 'skills.json')])).stdout.toString());
      expect(skillsJson.servers[0]).toMatchObject({ label: 'corpus', state: 'connected', generation: expectedGeneration });
      expect(skillsJson.servers[0].skills).toHaveLength(skillCount);
      // A skill that breaks only a length limit is mounted when its bytes verify, and marked.
      for (const skill of skillsJson.servers[0].skills) {
        expect(skill.state, skill.uri).toBe('ok');
        if (skill.description.length > 1024) expect(skill.breaks, skill.uri).toMatch(/description must be at most 1024 characters/);
      }
    });
  }

  it('over Streamable HTTP: diff -r is empty', async () => {
    const server = await startHttpServe([CORPUS_DIR, ...lenient]);
    try {
      mount = await startMount({ config: { corpus: { url: server.url } } });
      const diff = await run('diff', ['-r', CORPUS_DIR, path.join(mount.mountpoint, 'corpus')], 60_000);
      expect(diff.stdout + diff.stderr).toBe('');
      expect(diff.code).toBe(0);
    } finally {
      await server.stop();
    }
  });

  it('index only, no directoryRead: every file is reachable by path, byte-identical', async () => {
    mount = await startMount({ config: { corpus: serveEntry(CORPUS_DIR, '--protocol', 'index', '--no-directory-read', ...lenient) } });
    const served = path.join(mount.mountpoint, 'corpus');
    const files = await corpusFiles(CORPUS_DIR);
    expect(files.length).toBeGreaterThan(150);
    for (const file of files) {
      const { stdout, code } = await runBytes('cat', [path.join(served, file)]);
      expect(code, file).toBe(0);
      expect(stdout.equals(await readFile(path.join(CORPUS_DIR, file))), file).toBe(true);
    }
    // Only what the index names (and what was looked up) is listed; nothing is invented.
    const listing = await run('ls', [served]);
    expect(listing.stdout.split('\n').filter(Boolean).sort()).toEqual([...(await readdir(CORPUS_DIR)), 'index.json'].sort());
  });
});
