// A catalog of 2,000 generated skills: paging over skills/list covers every skill exactly
// once, with complete manifests, in a few seconds.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../support/digest.mjs';
import { connectInMemory, listAllSkills, REPO_ROOT, type Connected } from '../support/server-harness.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

const SKILLS = 2000;
const FILES = 3;

describe(`${SKILLS} generated skills`, () => {
  let root: string;
  let connected: Connected;

  beforeAll(async () => {
    // tmpfs when there is one: creating thousands of files on a VM's ext4 alone takes seconds.
    root = await makeTempDir('skills-serve-scale-', existsSync('/dev/shm') ? '/dev/shm' : tmpdir());
    execFileSync(process.execPath, [join(REPO_ROOT, 'scripts/gen-skills.mjs'), root, '--skills', String(SKILLS), '--files', String(FILES)], {
      stdio: 'ignore',
    });
    connected = await connectInMemory({ root, watch: false, pageSize: 250 });
  });
  afterAll(async () => {
    await connected?.close();
    await removeDir(root);
  });

  it('lists every skill once across pages, each with its complete manifest', async () => {
    const started = performance.now();
    const { skills, pages } = await listAllSkills(connected.client);
    const elapsedMs = performance.now() - started;
    expect(pages).toBe(SKILLS / 250);
    expect(new Set(skills.map((s) => s.uri)).size).toBe(SKILLS);
    expect(skills.every((s) => s.resources.length === FILES)).toBe(true);
    expect(elapsedMs).toBeLessThan(10_000);

    const sample = skills[1234]!;
    for (const resource of sample.resources) {
      expect(resource.digest).toBe(sha256(await readFile(join(root, resource.uri.slice('skill://'.length)))));
    }
  });
});
