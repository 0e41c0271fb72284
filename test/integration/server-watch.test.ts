// A skill edited while being served: listings, digests and reads follow the disk, and
// connected clients are told (list_changed to all, updated for what they subscribed to),
// in both eras: resources/subscribe (2025) and subscriptions/listen (2026-07-28).
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  connectInMemory,
  errorOf,
  GetResult,
  listAllSkills,
  readBytes,
  type ClientEra,
  type Entry,
} from '../support/server-harness.js';
import { sha256 } from '../support/digest.mjs';
import { skillMd, writeSkill } from '../support/skill-builder.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

const POLL = { timeout: 5000, interval: 20 };

describe.each(['legacy', 'modern'] as ClientEra[])('changes while serving (%s)', (era) => {
  let root: string;
  let connected: Awaited<ReturnType<typeof connectInMemory>>;
  let listChanged: number;
  let updated: string[];
  let listens: Array<{ close(): Promise<void> }>;

  /** Subscribes to `uris` the era's way; 2026-07-28 listens for list changes only when asked to. */
  const subscribe = async (...uris: string[]): Promise<void> => {
    if (era === 'legacy') {
      for (const uri of uris) await connected.client.subscribeResource({ uri });
      return;
    }
    listens.push(await connected.client.listen({ resourcesListChanged: true, resourceSubscriptions: uris }));
  };

  beforeEach(async () => {
    root = await makeTempDir('skills-serve-watch-');
    await writeSkill(root, 'w', { files: { 'other.md': 'unchanged\n', 'data.txt': 'version 1\n' } });
    connected = await connectInMemory({ root, debounceMs: 50, era });
    listChanged = 0;
    updated = [];
    listens = [];
    connected.client.setNotificationHandler('notifications/resources/list_changed', () => {
      listChanged++;
    });
    connected.client.setNotificationHandler('notifications/resources/updated', (notification) => {
      updated.push(notification.params.uri);
    });
    // 2025 clients get list_changed unasked; a 2026 client listens for it.
    if (era === 'modern') await subscribe();
  });
  afterEach(async () => {
    await Promise.allSettled(listens.map((listen) => listen.close()));
    await connected.close();
    await removeDir(root);
  });

  const getEntry = async (uri: string): Promise<Entry> =>
    (await connected.client.request({ method: 'skills/get', params: { uri } }, GetResult)).skill as Entry;

  it('reflects an edited file in skills/get, resources/read and notifications', async () => {
    await subscribe('skill://w/data.txt', 'skill://w/other.md');
    const before = await getEntry('skill://w/SKILL.md');
    const digestBefore = before.resources.find((r) => r.uri === 'skill://w/data.txt')!.digest;
    expect(digestBefore).toBe(sha256('version 1\n'));

    await writeFile(join(root, 'w/data.txt'), 'version 2, longer\n');
    await expect.poll(() => listChanged > 0 && updated.length > 0, POLL).toBe(true);

    expect([...new Set(updated)]).toEqual(['skill://w/data.txt']);
    const after = await getEntry('skill://w/SKILL.md');
    const file = after.resources.find((r) => r.uri === 'skill://w/data.txt')!;
    expect(file.digest).toBe(sha256('version 2, longer\n'));
    expect(file.size).toBe(18);
    expect((await readBytes(connected.client, 'skill://w/data.txt')).bytes.toString()).toBe('version 2, longer\n');
  });

  it('updates the index and frontmatter when SKILL.md changes, and notifies index subscribers', async () => {
    await subscribe('skill://index.json');
    const changed = skillMd('w', 'A new description');
    await writeFile(join(root, 'w/SKILL.md'), changed);
    await expect.poll(() => updated, POLL).toContain('skill://index.json');
    expect(updated).not.toContain('skill://w/SKILL.md'); // not subscribed to
    const index = JSON.parse((await readBytes(connected.client, 'skill://index.json')).bytes.toString()) as {
      skills: Array<{ url: string; digest: string; frontmatter: { description: string } }>;
    };
    expect(index.skills[0]!.digest).toBe(sha256(changed));
    expect(index.skills[0]!.frontmatter.description).toBe('A new description');
    expect((await getEntry('skill://w/SKILL.md')).frontmatter.description).toBe('A new description');
  });

  it('adds and removes skills as their folders come and go', async () => {
    await writeSkill(root, 'fresh', { files: { 'extra/deep.md': 'deep\n' } });
    await expect.poll(() => listChanged, POLL).toBeGreaterThan(0);
    await expect.poll(() => connected.tree.snapshot.skills.length, POLL).toBe(2);
    expect((await listAllSkills(connected.client)).skills.map((s) => s.uri)).toEqual(['skill://fresh/SKILL.md', 'skill://w/SKILL.md']);
    expect((await readBytes(connected.client, 'skill://fresh/extra/deep.md')).bytes.toString()).toBe('deep\n');

    await subscribe('skill://fresh/extra/deep.md');
    const seen = listChanged;
    await rm(join(root, 'fresh'), { recursive: true });
    await expect.poll(() => listChanged, POLL).toBeGreaterThan(seen);
    await expect.poll(() => updated, POLL).toContain('skill://fresh/extra/deep.md');
    expect((await listAllSkills(connected.client)).skills.map((s) => s.uri)).toEqual(['skill://w/SKILL.md']);
    expect((await errorOf(connected.client.readResource({ uri: 'skill://fresh/extra/deep.md' }))).code).toBe(-32602);
  });

  it('stops serving a skill whose SKILL.md becomes invalid, and serves it again once fixed', async () => {
    await writeFile(join(root, 'w/SKILL.md'), '---\nname: renamed\ndescription: d\n---\n');
    await expect.poll(() => connected.tree.snapshot.skills.length, POLL).toBe(0);
    expect(connected.logs.some((l) => l.includes('w/SKILL.md') && l.includes('must equal the directory name'))).toBe(true);
    expect((await errorOf(connected.client.request({ method: 'skills/get', params: { uri: 'skill://w/SKILL.md' } }, GetResult))).code).toBe(-32602);
    await writeFile(join(root, 'w/SKILL.md'), skillMd('w'));
    await expect.poll(() => connected.tree.snapshot.skills.length, POLL).toBe(1);
  });

  it.runIf(era === 'legacy')('refuses to subscribe to a URI it does not serve', async () => {
    const error = await errorOf(connected.client.subscribeResource({ uri: 'skill://w/../../etc/passwd' }));
    expect(error.code).toBe(-32602);
  });
});
