// A skill edited while being served: listings, digests and reads follow the disk, and
// connected clients are told (list_changed to all, updated for what they subscribed to).
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  connectInMemory,
  errorOf,
  GetResult,
  listAllSkills,
  makeTempDir,
  readBytes,
  removeDir,
  sha256,
  skillMd,
  writeTree,
  type Connected,
  type Entry,
} from '../support/server-harness.js';

async function until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('changes while serving', () => {
  let root: string;
  let connected: Connected;
  let listChanged: number;
  let updated: string[];

  beforeEach(async () => {
    root = await makeTempDir('watch');
    await writeTree(root, {
      'w/SKILL.md': skillMd('w'),
      'w/other.md': 'unchanged\n',
      'w/data.txt': 'version 1\n',
    });
    connected = await connectInMemory({ root, debounceMs: 50 });
    listChanged = 0;
    updated = [];
    connected.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      listChanged++;
    });
    connected.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      updated.push(notification.params.uri);
    });
  });
  afterEach(async () => {
    await connected.close();
    await removeDir(root);
  });

  const getEntry = async (uri: string): Promise<Entry> =>
    (await connected.client.request({ method: 'skills/get', params: { uri } }, GetResult)).skill as Entry;

  it('reflects an edited file in skills/get, resources/read and notifications', async () => {
    await connected.client.subscribeResource({ uri: 'skill://w/data.txt' });
    await connected.client.subscribeResource({ uri: 'skill://w/other.md' });
    const before = await getEntry('skill://w/SKILL.md');
    const digestBefore = before.resources.find((r) => r.uri === 'skill://w/data.txt')!.digest;
    expect(digestBefore).toBe(sha256('version 1\n'));

    await writeFile(join(root, 'w/data.txt'), 'version 2, longer\n');
    await until(() => listChanged > 0 && updated.length > 0, 'notifications');

    expect(updated).toEqual(['skill://w/data.txt']);
    const after = await getEntry('skill://w/SKILL.md');
    const file = after.resources.find((r) => r.uri === 'skill://w/data.txt')!;
    expect(file.digest).toBe(sha256('version 2, longer\n'));
    expect(file.size).toBe(18);
    expect((await readBytes(connected.client, 'skill://w/data.txt')).bytes.toString()).toBe('version 2, longer\n');
  });

  it('updates the index and frontmatter when SKILL.md changes, and notifies index subscribers', async () => {
    await connected.client.subscribeResource({ uri: 'skill://index.json' });
    const changed = skillMd('w', 'A new description');
    await writeFile(join(root, 'w/SKILL.md'), changed);
    await until(() => updated.includes('skill://index.json'), 'index update');
    const index = JSON.parse((await readBytes(connected.client, 'skill://index.json')).bytes.toString()) as {
      skills: Array<{ url: string; digest: string; frontmatter: { description: string } }>;
    };
    expect(index.skills[0]!.digest).toBe(sha256(changed));
    expect(index.skills[0]!.frontmatter.description).toBe('A new description');
    expect((await getEntry('skill://w/SKILL.md')).frontmatter.description).toBe('A new description');
  });

  it('adds and removes skills as their folders come and go', async () => {
    await writeTree(root, { 'fresh/SKILL.md': skillMd('fresh'), 'fresh/extra/deep.md': 'deep\n' });
    await until(() => listChanged > 0, 'list_changed after adding');
    await until(() => connected.tree.snapshot.skills.length === 2, 'rescan');
    expect((await listAllSkills(connected.client)).skills.map((s) => s.uri)).toEqual(['skill://fresh/SKILL.md', 'skill://w/SKILL.md']);
    expect((await readBytes(connected.client, 'skill://fresh/extra/deep.md')).bytes.toString()).toBe('deep\n');

    await connected.client.subscribeResource({ uri: 'skill://fresh/extra/deep.md' });
    const seen = listChanged;
    await rm(join(root, 'fresh'), { recursive: true });
    await until(() => listChanged > seen, 'list_changed after removing');
    expect(updated).toContain('skill://fresh/extra/deep.md');
    expect((await listAllSkills(connected.client)).skills.map((s) => s.uri)).toEqual(['skill://w/SKILL.md']);
    expect((await errorOf(connected.client.readResource({ uri: 'skill://fresh/extra/deep.md' }))).code).toBe(-32602);
  });

  it('stops serving a skill whose SKILL.md becomes invalid, and serves it again once fixed', async () => {
    await writeFile(join(root, 'w/SKILL.md'), '---\nname: renamed\ndescription: d\n---\n');
    await until(() => connected.tree.snapshot.skills.length === 0, 'skill withdrawn');
    expect(connected.logs.some((l) => l.includes('w/SKILL.md') && l.includes('must equal the directory name'))).toBe(true);
    expect((await errorOf(connected.client.request({ method: 'skills/get', params: { uri: 'skill://w/SKILL.md' } }, GetResult))).code).toBe(-32602);
    await writeFile(join(root, 'w/SKILL.md'), skillMd('w'));
    await until(() => connected.tree.snapshot.skills.length === 1, 'skill restored');
  });

  it('refuses to subscribe to a URI it does not serve', async () => {
    const error = await errorOf(connected.client.subscribeResource({ uri: 'skill://w/../../etc/passwd' }));
    expect(error.code).toBe(-32602);
  });
});
