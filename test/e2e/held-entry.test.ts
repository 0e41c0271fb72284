// The held entry through a real kernel mount: every byte served belongs to a skill whose
// SKILL.md verified against the entry the mount holds. The server's own request log
// (relayed by the mount) proves which requests were, and were not, made.
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, runBytes } from '../support/fuse-harness.js';
import { hostileEntry, hostileSkill, requestCount } from '../support/hostile-scenario.js';
import { makeTestDir, serveEntry, startMount, type RunningMount } from '../support/mount-harness.js';
import { delay } from '../support/poll.js';
import { requireFuse } from '../support/require-fuse.js';
import { skillMd } from '../support/skill-builder.js';

requireFuse();

const EXAMPLES = fileURLToPath(new URL('../../examples/skills', import.meta.url));

async function skillsJsonSkill(mount: RunningMount, label: string, name: string) {
  const document = JSON.parse((await runBytes('cat', [path.join(mount.mountpoint, 'skills.json')])).stdout.toString());
  const server = document.servers.find((entry: { label: string }) => entry.label === label);
  return server.skills.find((entry: { name: string }) => entry.name === name);
}

describe('the held entry, against a server that lies', () => {
  let mount: RunningMount;
  const at = (...parts: string[]) => path.join(mount.mountpoint, 'srv', ...parts);
  const reads = (uri: string) => requestCount(mount.log(), 'srv', 'resources/read', uri);

  beforeAll(async () => {
    const dir = await makeTestDir();
    const bad = hostileSkill('bad', 'Its SKILL.md is not what the entry says', { 'ref.md': { text: 'never served\n' }, 'more.md': { text: 'nor this\n' } });
    // The entry's digest and size describe another text than the one served.
    bad.files['skill://bad/SKILL.md'] = { text: skillMd('bad', 'Its SKILL.md is not what the entry says'), listedText: skillMd('bad', 'Its SKILL.md is not what the entry says, truly') };
    const skills = [
      hostileSkill('good', 'Honest', { 'one.md': { text: 'one\n' }, 'two.md': { text: 'two\n' } }),
      bad,
      hostileSkill('gone', 'Lists a file it no longer serves', { 'kept.md': { text: 'kept\n' }, 'removed.md': { text: 'x\n', fault: 'not-found' } }),
    ];
    mount = await startMount({ dir, config: { srv: await hostileEntry(dir, 'srv', { listing: true, skills }) }, args: ['--verbose'] });
  }, 60_000);

  afterAll(async () => {
    await mount?.stop();
  });

  it('ls -lR reads no content', async () => {
    expect((await run('ls', ['-lR', path.join(mount.mountpoint, 'srv')])).code).toBe(0);
    expect(requestCount(mount.log(), 'srv', 'resources/read')).toBe(0);
  });

  it('a supporting file of a skill not loaded yet first loads its SKILL.md: one extra read per skill, never per file', async () => {
    expect((await run('cat', [at('good', 'one.md')])).stdout).toBe('one\n');
    expect((await run('cat', [at('good', 'two.md')])).stdout).toBe('two\n');
    expect(reads('skill://good/SKILL.md')).toBe(1);
    expect(reads('skill://good/one.md')).toBe(1);
    const lines = mount.log().split('\n');
    const skillMdAt = lines.findIndex((line) => line.endsWith('request resources/read skill://good/SKILL.md'));
    const fileAt = lines.findIndex((line) => line.endsWith('request resources/read skill://good/one.md'));
    expect(skillMdAt).toBeGreaterThan(-1);
    expect(skillMdAt).toBeLessThan(fileAt);
    // A warm cat asks nothing.
    await run('cat', [at('good', 'one.md')]);
    await run('cat', [at('good', 'SKILL.md')]);
    expect(reads('skill://good/SKILL.md') + reads('skill://good/one.md')).toBe(2);
  });

  it('a SKILL.md that fails verification rejects the whole skill: EIO for every file, none of them requested', async () => {
    const ref = await run('cat', [at('bad', 'ref.md')]);
    expect(ref.stderr).toMatch(/Input\/output error/);
    expect((await run('cat', [at('bad', 'more.md')])).stderr).toMatch(/Input\/output error/);
    expect((await run('cat', [at('bad', 'SKILL.md')])).stderr).toMatch(/Input\/output error/);
    expect(reads('skill://bad/ref.md')).toBe(0);
    expect(reads('skill://bad/more.md')).toBe(0);
    // One refresh of the entry after the failure, as the spec's recovery from staleness.
    expect(requestCount(mount.log(), 'srv', 'skills/get', 'skill://bad/SKILL.md')).toBe(1);
    const skill = await skillsJsonSkill(mount, 'srv', 'bad');
    expect(skill).toMatchObject({ state: 'rejected' });
    expect(skill.rejected).toMatch(/size mismatch|digest mismatch/);
    // The other skills are untouched.
    expect((await run('cat', [at('good', 'two.md')])).stdout).toBe('two\n');
  });

  it('a listed file the server no longer serves is an error for that file, and refreshes the entry', async () => {
    expect((await run('cat', [at('gone', 'kept.md')])).stdout).toBe('kept\n');
    const before = requestCount(mount.log(), 'srv', 'skills/get', 'skill://gone/SKILL.md');
    expect((await run('cat', [at('gone', 'removed.md')])).stderr).toMatch(/Input\/output error/);
    expect(requestCount(mount.log(), 'srv', 'skills/get', 'skill://gone/SKILL.md')).toBe(before + 1);
    expect(mount.log()).toMatch(/srv: skill:\/\/gone\/removed.md: listed in the skill's entry but not served: resources\/read answered not found, and the refreshed entry still lists it/);
  });
});

describe('the held entry, against a server whose skill changes', () => {
  let mount: RunningMount;
  let served: string;
  const relative = 'acme/billing/refunds/examples/email.md';

  beforeAll(async () => {
    const dir = await makeTestDir();
    served = path.join(dir, 'skills');
    await cp(EXAMPLES, served, { recursive: true });
    mount = await startMount({ dir, config: { demo: serveEntry(served) }, args: ['--metadata-ttl', '1'] });
  }, 60_000);

  afterAll(async () => {
    await mount?.stop();
  });

  it('a refreshed entry with another resources set is adopted for new opens, shown as changed; an open handle keeps its version', async () => {
    const file = path.join(mount.mountpoint, 'demo', relative);
    const before = await readFile(path.join(served, relative));
    const held = await skillsJsonSkill(mount, 'demo', 'refunds');
    expect(held).toMatchObject({ state: 'ok' });
    expect(held.resourcesDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect((await runBytes('cat', [file])).stdout.equals(before)).toBe(true);

    // A reader that opened the file before the change and reads after it.
    const go = path.join(mount.dir, 'go');
    const reader = runBytes('bash', ['-c', `exec 3<"$0"; while [ ! -e "$1" ]; do sleep 0.05; done; cat <&3`, file, go], 30_000);
    await delay(300);
    const after = Buffer.concat([before, Buffer.from('\nP.S. Keep the receipt.\n')]);
    await writeFile(path.join(served, relative), after);

    await expect.poll(async () => (await skillsJsonSkill(mount, 'demo', 'refunds')).state, { timeout: 15_000, interval: 200 }).toBe('changed');
    const changed = await skillsJsonSkill(mount, 'demo', 'refunds');
    expect(Date.parse(changed.changedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(changed.resourcesDigest).not.toBe(held.resourcesDigest);
    await writeFile(go, '');
    expect((await reader).stdout.equals(before)).toBe(true);
    await expect.poll(async () => (await runBytes('cat', [file])).stdout.equals(after), { timeout: 10_000, interval: 200 }).toBe(true);
  });
});
