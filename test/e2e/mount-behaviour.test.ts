// What a user of a real kernel mount notices: verification failures cost only the bad
// file an EIO and a log line (and are never remembered as answers), writes fail with EROFS,
// modes and xattrs tell origin, skills.json shows every skill, ls -l costs no content reads,
// and a mount that cannot start says why and exits 2.
import { sha256 } from '../support/digest.mjs';
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childPids } from '../support/fault-harness.js';
import { mountsUnder, run, runBytes, waitFor } from '../support/fuse-harness.js';
import { requestCount } from '../support/hostile-scenario.js';
import { CORPUS_DIR, REPO, SKILLS_MOUNT, makeTestDir, serveEntry, startMount, type RunningMount } from '../support/mount-harness.js';
import { requireFuse } from '../support/require-fuse.js';

requireFuse();

const SCRIPTED = path.join(REPO, 'test', 'support', 'scripted-server.mjs');

function skill(name: string, description: string, files: Record<string, Record<string, unknown>> = {}, extra: Record<string, unknown> = {}) {
  const uri = `skill://${name}/SKILL.md`;
  const text = `---\nname: ${name.split('/').pop()}\ndescription: ${description}\n---\n# ${name}\n`;
  return {
    uri,
    frontmatter: { name: name.split('/').pop(), description },
    files: { [uri]: { text }, ...files },
    ...extra,
  };
}

function scenarioEntry(file: string) {
  return { command: process.execPath, args: [SCRIPTED, file] };
}

async function writeScenario(dir: string, name: string, scenario: unknown): Promise<string> {
  const file = path.join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(scenario));
  return file;
}

describe('verification through the mount', () => {
  let mount: RunningMount;
  let root: string;

  beforeAll(async () => {
    const dir = await makeTestDir();
    const bigSkillFiles: Record<string, Record<string, unknown>> = {};
    // 512 supporting files plus SKILL.md: one over the limit.
    for (let i = 0; i < 512; i++) bigSkillFiles[`skill://too-many/f${i}.txt`] = { text: `${i}\n` };
    const lying = await writeScenario(dir, 'lying', {
      listing: true,
      skills: [
        skill('good', 'Fine', { 'skill://good/ref.md': { text: 'reference\n' } }),
        skill('tampered', 'Bytes differ', { 'skill://tampered/ref.md': { text: 'evil\n', listedText: 'good\n' } }),
        skill('wrong-digest', 'Digest differs', { 'skill://wrong-digest/ref.md': { text: 'x\n', listedDigest: sha256('y\n') } }),
        skill('wrong-size', 'Size differs', { 'skill://wrong-size/ref.md': { text: 'abc\n', listedSize: 5 } }),
        { ...skill('fm-mismatch', 'Listed description'), files: { 'skill://fm-mismatch/SKILL.md': { text: '---\nname: fm-mismatch\ndescription: Served description\n---\n' } } },
        {
          ...skill('updated', 'Updated since the listing', { 'skill://updated/ref.md': { text: 'new\n', listedText: 'old\n' } }),
          getFiles: {
            'skill://updated/SKILL.md': { text: '---\nname: updated\ndescription: Updated since the listing\n---\n# updated\n' },
            'skill://updated/ref.md': { text: 'new\n' },
          },
        },
        skill('dyn', 'Dynamic', { 'skill://dyn/data.txt': { text: 'generated\n' } }, { dynamic: true }),
        skill('too-many', 'Over the limit', bigSkillFiles),
        skill('hidden', 'Not in the listing', { 'skill://hidden/notes.md': { text: 'found by path\n' } }, { inListing: false }),
      ],
    });
    // A second, honest server in the same daemon: what the lies must not reach.
    const bystander = await writeScenario(dir, 'bystander', { listing: true, skills: [skill('notes', 'Honest', { 'skill://notes/ref.md': { text: 'bystander reference\n' } })] });
    mount = await startMount({ dir, config: { lying: scenarioEntry(lying), bystander: scenarioEntry(bystander) } });
    root = path.join(mount.mountpoint, 'lying');
  });
  afterAll(async () => {
    await mount?.stop();
  });

  it('serves verified files byte for byte, with origin xattrs', async () => {
    expect((await run('cat', [path.join(root, 'good/ref.md')])).stdout).toBe('reference\n');
    const xattrs = await run('python3', ['-c', 'import os,sys,json; p=sys.argv[1]; print(json.dumps({n: os.getxattr(p,n).decode() for n in os.listxattr(p)}))', path.join(root, 'good/ref.md')]);
    expect(JSON.parse(xattrs.stdout)).toEqual({
      'user.mcp.server': 'lying',
      'user.mcp.uri': 'skill://good/ref.md',
      'user.mcp.digest': sha256('reference\n'),
      'user.mcp.verified': 'true',
    });
    // Other namespaces do not exist here: ENOTSUP, so ls -l stops asking for each entry.
    const selinux = await run('python3', ['-c', 'import os,sys; os.getxattr(sys.argv[1], "security.selinux")', path.join(root, 'good/ref.md')]);
    expect(selinux.stderr).toMatch(/Operation not supported/);
  });

  for (const [name, what] of [
    ['tampered', 'digest mismatch'],
    ['wrong-digest', 'digest mismatch'],
    ['wrong-size', 'size mismatch'],
  ] as const) {
    it(`${name}: EIO for that file only, and a log line with server, URI, expected and actual`, async () => {
      const result = await run('cat', [path.join(root, name, 'ref.md')]);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/Input\/output error/);
      expect(mount.log()).toMatch(new RegExp(`lying: skill://${name}/ref.md: ${what}: expected \\S+.*, got \\S+`));
      // The skill's other file and other skills are unaffected.
      expect((await run('cat', [path.join(root, name, 'SKILL.md')])).code).toBe(0);
      expect((await run('cat', [path.join(root, 'good/ref.md')])).stdout).toBe('reference\n');
    });
  }

  it('a SKILL.md whose frontmatter differs from the listing is EIO', async () => {
    const result = await run('cat', [path.join(root, 'fm-mismatch/SKILL.md')]);
    expect(result.stderr).toMatch(/Input\/output error/);
    expect(mount.log()).toMatch(/skill:\/\/fm-mismatch\/SKILL.md: frontmatter field "description" mismatch: expected "Listed description", got "Served description"/);
  });

  it('skills.json shows the daemon, its cache and the latest failures', async () => {
    const skillsJson = JSON.parse((await run('cat', [path.join(mount.mountpoint, 'skills.json')])).stdout);
    expect(skillsJson.mount.pid).toBe(mount.child.pid);
    expect(skillsJson.mount.cache.usedBytes).toBeGreaterThan(0);
    expect(skillsJson.mount.cache.limitBytes).toBe(256 * 1024 * 1024);
    expect(skillsJson.mount.recentErrors.join('\n')).toMatch(/(open|read) \/lying\/tampered\/ref.md: IntegrityError: lying: skill:\/\/tampered\/ref.md: digest mismatch/);
  });

  it('a skill updated since the listing verifies after one skills/get refresh', async () => {
    expect((await run('cat', [path.join(root, 'updated/ref.md')])).stdout).toBe('new\n');
    expect(mount.log()).toMatch(/request skills\/get skill:\/\/updated\/SKILL.md/);
  });

  it('dynamic skills are served, marked unverified', async () => {
    expect((await run('cat', [path.join(root, 'dyn/data.txt')])).stdout).toBe('generated\n');
    const verified = await run('python3', ['-c', 'import os,sys; print(os.getxattr(sys.argv[1], "user.mcp.verified").decode())', path.join(root, 'dyn/data.txt')]);
    expect(verified.stdout.trim()).toBe('false');
  });

  it('a skill over the per-skill limits is declined: absent from the tree, reason in skills.json', async () => {
    expect((await run('ls', [root])).stdout.split('\n')).not.toContain('too-many');
    expect((await run('cat', [path.join(root, 'too-many/f1.txt')])).code).not.toBe(0);
    const skillsJson = JSON.parse((await run('cat', [path.join(mount.mountpoint, 'skills.json')])).stdout);
    const lyingServer = skillsJson.servers.find((server: { label: string }) => server.label === 'lying');
    const declined = lyingServer.skills.find((entry: { name: string }) => entry.name === 'too-many');
    expect(declined.declined).toMatch(/over the per-skill limits \(513 files/);
  });

  it('a skill nobody listed is reachable by path; a path that does not exist is ENOENT', async () => {
    expect((await run('ls', [root])).stdout.split('\n')).not.toContain('hidden');
    expect((await run('cat', [path.join(root, 'hidden/SKILL.md')])).code).toBe(0);
    expect((await run('cat', [path.join(root, 'hidden/notes.md')])).stdout).toBe('found by path\n');
    const missing = await run('cat', [path.join(root, 'nope/SKILL.md')]);
    expect(missing.stderr).toMatch(/No such file or directory/);
  });

  it("after all of it the daemon still serves: another server's file it never read before, byte for byte, from a new request", async () => {
    expect(mount.child.exitCode).toBeNull();
    const reads = () => requestCount(mount.log(), 'bystander', 'resources/read', 'skill://notes/ref.md');
    expect(reads()).toBe(0);
    const result = await run('cat', [path.join(mount.mountpoint, 'bystander', 'notes', 'ref.md')]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('bystander reference\n');
    // The daemon answered (the kernel had nothing cached for it): one request reached the server.
    await waitFor(() => reads() === 1, 5_000, 'the read to reach the bystander server');
    expect((await run('cat', [path.join(root, 'good/ref.md')])).stdout).toBe('reference\n');
  });
});

describe('a failure is never cached', () => {
  it('a file whose bytes fail verification is EIO at every read, each asking the server again; once the server serves the listed bytes, the same path serves them', async () => {
    const dir = await makeTestDir();
    // Same length, other bytes: a digest mismatch, the server's answer on every read.
    const scenarioServing = (text: string) => ({ listing: true, skills: [skill('flaky', 'Wrong bytes, then right ones', { 'skill://flaky/ref.md': { text, listedText: 'good bytes\n' } })] });
    const scenarioFile = await writeScenario(dir, 'flaky', scenarioServing('evil bytes\n'));
    const mount = await startMount({ dir, config: { flaky: scenarioEntry(scenarioFile) } });
    const file = path.join(mount.mountpoint, 'flaky', 'flaky', 'ref.md');
    const reads = () => requestCount(mount.log(), 'flaky', 'resources/read', 'skill://flaky/ref.md');
    try {
      for (let attempt = 1; attempt <= 2; attempt++) {
        const failed = await run('cat', [file]);
        expect(failed.stderr, `attempt ${attempt}`).toMatch(/Input\/output error/);
        expect(failed.stdout, `attempt ${attempt}`).toBe('');
        // Not answered from memory: each failed read went to the server.
        await waitFor(() => reads() === attempt, 5_000, `failed read ${attempt} to reach the server`);
      }
      expect(mount.log()).toMatch(/flaky: skill:\/\/flaky\/ref.md: digest mismatch: expected sha256:\S+, got sha256:\S+/);

      // The server is fixed (it reads its scenario at start) and restarted; the mount reconnects and re-lists.
      await writeScenario(dir, 'flaky', scenarioServing('good bytes\n'));
      const [serverPid] = await childPids(mount.child.pid!, /flaky\.json/);
      expect(serverPid).toBeGreaterThan(0);
      process.kill(serverPid!, 'SIGKILL');
      await waitFor(() => (mount.log().match(/\[flaky\] listing generation: 1 skills/g) ?? []).length === 2, 20_000, 'the restarted server to be listed');

      const served = await run('cat', [file]);
      expect(served.stderr).toBe('');
      expect(served.stdout).toBe('good bytes\n');
      await waitFor(() => reads() === 3, 5_000, 'the successful read to reach the server');
    } finally {
      await mount.stop();
    }
  });
});

describe('discovery', () => {
  it('a server with neither skills/list nor an index: skills are reachable by path only', async () => {
    const dir = await makeTestDir();
    const scenario = await writeScenario(dir, 'none', {
      listing: false,
      index: false,
      skills: [skill('plain', 'Found by path', { 'skill://plain/references/guide.md': { text: 'guide\n' } })],
    });
    const mount = await startMount({ dir, config: { srv: scenarioEntry(scenario) } });
    try {
      // Nothing is listed, and nothing is invented.
      expect((await run('ls', [path.join(mount.mountpoint, 'srv')])).stdout).toBe('');
      expect((await run('cat', [path.join(mount.mountpoint, 'srv/plain/SKILL.md')])).stdout).toMatch(/name: plain/);
      // Relative references from the SKILL.md resolve, subdirectories included.
      expect((await run('cat', [path.join(mount.mountpoint, 'srv/plain/references/guide.md')])).stdout).toBe('guide\n');
      expect((await run('cat', [path.join(mount.mountpoint, 'srv/missing/SKILL.md')])).stderr).toMatch(/No such file or directory/);
      const skillsJson = JSON.parse((await run('cat', [path.join(mount.mountpoint, 'skills.json')])).stdout);
      expect(skillsJson.servers[0]).toMatchObject({ label: 'srv', state: 'connected', generation: 'none', skills: [] });
      // It asked for the listing (-32601) and the index (-32602) once, then only for what was named.
      expect(mount.log()).toMatch(/request skills\/list \(not offered\)/);
      expect(mount.log()).toMatch(/request resources\/read skill:\/\/index.json/);
    } finally {
      await mount.stop();
    }
  });
});

describe('other URI schemes', () => {
  it('a github:// skill lives under <label>/github:/..., and its xattrs give the URI back', async () => {
    const dir = await makeTestDir();
    const uri = 'github://owner/repo/refunds/SKILL.md';
    const text = '---\nname: refunds\ndescription: Refunds from GitHub\n---\n';
    const scenario = await writeScenario(dir, 'schemes', {
      listing: true,
      skills: [
        { uri, frontmatter: { name: 'refunds', description: 'Refunds from GitHub' }, files: { [uri]: { text }, 'github://owner/repo/refunds/notes.md': { text: 'notes\n' } } },
        skill('refunds', 'Refunds over skill://'),
      ],
    });
    const mount = await startMount({ dir, config: { srv: scenarioEntry(scenario) } });
    try {
      const label = path.join(mount.mountpoint, 'srv');
      expect((await run('ls', [label])).stdout.split('\n').filter(Boolean).sort()).toEqual(['github:', 'refunds']);
      expect((await run('cat', [path.join(label, 'github:/owner/repo/refunds/SKILL.md')])).stdout).toBe(text);
      expect((await run('cat', [path.join(label, 'github:/owner/repo/refunds/notes.md')])).stdout).toBe('notes\n');
      expect((await run('cat', [path.join(label, 'refunds/SKILL.md')])).stdout).toMatch(/Refunds over skill/);
      const origin = await run('python3', ['-c', 'import os,sys; print(os.getxattr(sys.argv[1], "user.mcp.uri").decode())', path.join(label, 'github:/owner/repo/refunds/notes.md')]);
      expect(origin.stdout.trim()).toBe('github://owner/repo/refunds/notes.md');
    } finally {
      await mount.stop();
    }
  });
});

describe('manifests and directory reads', () => {
  it('a file a directory read shows but the manifest lacks is neither listed nor readable', async () => {
    const dir = await makeTestDir();
    const scenario = await writeScenario(dir, 'dirread', {
      listing: true,
      directoryRead: true,
      skills: [skill('strict', 'Manifest is authoritative', { 'skill://strict/listed.md': { text: 'listed\n' } })],
      extraFiles: { 'skill://strict/extra.md': { text: 'not in the manifest\n' } },
    });
    const mount = await startMount({ dir, config: { srv: scenarioEntry(scenario) } });
    try {
      const listing = await run('ls', [path.join(mount.mountpoint, 'srv/strict')]);
      expect(listing.stdout.split('\n').filter(Boolean).sort()).toEqual(['SKILL.md', 'listed.md']);
      const extra = await run('cat', [path.join(mount.mountpoint, 'srv/strict/extra.md')]);
      expect(extra.stderr).toMatch(/No such file or directory/);
      // Looking for it refreshed the entry with skills/get, and never read the unlisted bytes.
      expect(mount.log()).toMatch(/request skills\/get skill:\/\/strict\/SKILL.md/);
      expect(mount.log()).not.toMatch(/request resources\/read skill:\/\/strict\/extra.md/);
    } finally {
      await mount.stop();
    }
  });

  it('never calls resources/directory/read on a server that did not declare directoryRead', async () => {
    const dir = await makeTestDir();
    const scenario = await writeScenario(dir, 'nodirread', {
      listing: true,
      directoryRead: false,
      skills: [skill('plain', 'No directory reads', { 'skill://plain/sub/file.md': { text: 'x\n' } })],
    });
    const mount = await startMount({ dir, config: { srv: scenarioEntry(scenario) } });
    try {
      expect((await run('ls', ['-R', path.join(mount.mountpoint, 'srv')])).stdout).toMatch(/file\.md/);
      await run('ls', [path.join(mount.mountpoint, 'srv/plain/nothing-here')]);
      expect(mount.log()).not.toMatch(/resources\/directory\/read/);
    } finally {
      await mount.stop();
    }
  });
});

describe('a read-only, host-private filesystem', () => {
  let mount: RunningMount;
  let skillDir: string;

  beforeAll(async () => {
    mount = await startMount({ config: { corpus: serveEntry(CORPUS_DIR) }, args: ['--verbose'] });
    skillDir = path.join(mount.mountpoint, 'corpus', 'data-pipeline');
  });
  afterAll(async () => {
    await mount?.stop();
  });

  it('mounts ro,nosuid,nodev,noexec without allow_other', async () => {
    const line = (await readFile('/proc/mounts', 'utf8')).split('\n').find((entry) => entry.split(' ')[1] === mount.mountpoint);
    expect(line).toBeDefined();
    const options = line!.split(' ')[3]!.split(',');
    expect(options).toEqual(expect.arrayContaining(['ro', 'nosuid', 'nodev', 'noexec']));
    expect(options).not.toContain('allow_other');
  });

  it('files are 0400 and directories 0500, owned by the mounting user', async () => {
    const uid = String(process.getuid!());
    const stat = await run('stat', ['-c', '%a %u %F', skillDir, path.join(skillDir, 'SKILL.md'), path.join(skillDir, 'scripts', 'run.sh')]);
    expect(stat.stdout.trim().split('\n')).toEqual([`500 ${uid} directory`, `400 ${uid} regular file`, `400 ${uid} regular file`]);
  });

  it('nothing executes', async () => {
    const result = await run('sh', ['-c', `"${path.join(skillDir, 'scripts', 'run.sh')}"`]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/Permission denied/);
  });

  it('every write operation fails with EROFS', async () => {
    const file = path.join(skillDir, 'SKILL.md');
    const attempts: Array<[string, string[]]> = [
      ['sh', ['-c', `echo x > "${file}"`]],
      ['sh', ['-c', `echo x >> "${file}"`]],
      ['touch', [path.join(skillDir, 'new-file')]],
      ['truncate', ['-s', '0', file]],
      ['rm', ['-f', file]],
      ['mkdir', [path.join(skillDir, 'new-dir')]],
      ['rmdir', [path.join(mount.mountpoint, 'corpus', 'pdf-forms', 'references')]],
      ['mv', [file, path.join(skillDir, 'moved.md')]],
      ['ln', [file, path.join(skillDir, 'hard-link')]],
      ['ln', ['-s', file, path.join(skillDir, 'sym-link')]],
      ['chmod', ['700', file]],
      ['chown', ['1:1', file]],
      ['touch', ['-d', '2001-01-01', file]],
      ['mknod', [path.join(skillDir, 'fifo'), 'p']],
      ['python3', ['-c', 'import os,sys; os.setxattr(sys.argv[1], "user.x", b"1")', file]],
      ['python3', ['-c', 'import os,sys; os.removexattr(sys.argv[1], "user.mcp.uri")', file]],
    ];
    for (const [command, args] of attempts) {
      const result = await run(command, args);
      expect(result.code, `${command} ${args.join(' ')}`).not.toBe(0);
      expect(result.stderr, `${command} ${args.join(' ')}`).toMatch(/Read-only file system/);
    }
    // And nothing changed.
    expect((await runBytes('cat', [file])).stdout.equals(await readFile(path.join(CORPUS_DIR, 'data-pipeline', 'SKILL.md')))).toBe(true);
  });

  it('ls -lR costs zero content reads; a cold cat one, plus one for the SKILL.md of a skill not loaded yet; a warm cat none', async () => {
    const reads = () => (mount.log().match(/\] resources\/read /g) ?? []).length;
    const before = reads();
    const listing = await run('ls', ['-lR', path.join(mount.mountpoint, 'corpus')]);
    expect(listing.code).toBe(0);
    expect(listing.stdout).toMatch(/LICENSE\.txt/);
    expect(reads()).toBe(before);
    const file = path.join(mount.mountpoint, 'corpus', 'pdf-forms', 'assets', 'w9-template.pdf');
    const cold = await runBytes('cat', [file]);
    expect(cold.stdout.equals(await readFile(path.join(CORPUS_DIR, 'pdf-forms', 'assets', 'w9-template.pdf')))).toBe(true);
    // The held entry: a supporting file is served only once its skill's SKILL.md verified.
    expect(reads()).toBe(before + 2);
    await runBytes('cat', [file]);
    await run('cat', [path.join(mount.mountpoint, 'corpus', 'pdf-forms', 'SKILL.md')]);
    await run('stat', [file]);
    expect(reads()).toBe(before + 2);
    await run('cat', [path.join(mount.mountpoint, 'corpus', 'commit-message', 'SKILL.md')]);
    expect(reads()).toBe(before + 3);
  });
});

describe('several servers', () => {
  it('two servers serving the same URIs stay apart; skills.json shows the collision', async () => {
    const dir = await makeTestDir();
    const first = await writeScenario(dir, 'first', { listing: true, skills: [skill('refunds', 'First server refunds')] });
    const second = await writeScenario(dir, 'second', { listing: true, skills: [skill('refunds', 'Second server refunds')] });
    const mount = await startMount({ dir, config: { alpha: scenarioEntry(first), beta: scenarioEntry(second) } });
    try {
      expect((await run('cat', [path.join(mount.mountpoint, 'alpha/refunds/SKILL.md')])).stdout).toMatch(/First server/);
      expect((await run('cat', [path.join(mount.mountpoint, 'beta/refunds/SKILL.md')])).stdout).toMatch(/Second server/);
      const skillsJson = JSON.parse((await run('cat', [path.join(mount.mountpoint, 'skills.json')])).stdout);
      const alpha = skillsJson.servers.find((server: { label: string }) => server.label === 'alpha').skills[0];
      expect(alpha).toMatchObject({ name: 'refunds', qualifiedName: 'alpha/refunds', path: 'alpha/refunds', collidesWith: ['beta/refunds'] });
    } finally {
      await mount.stop();
    }
  });

  it('a server that cannot start leaves an empty directory and does not stop the others', async () => {
    const dir = await makeTestDir();
    const good = await writeScenario(dir, 'good', { listing: true, skills: [skill('ok', 'Works')] });
    const mount = await startMount({ dir, config: { broken: { command: '/nonexistent/server' }, good: scenarioEntry(good) } });
    try {
      expect((await run('ls', [path.join(mount.mountpoint, 'broken')])).stdout).toBe('');
      expect((await run('cat', [path.join(mount.mountpoint, 'good/ok/SKILL.md')])).stdout).toBe('---\nname: ok\ndescription: Works\n---\n# ok\n');
      const skillsJson = JSON.parse((await run('cat', [path.join(mount.mountpoint, 'skills.json')])).stdout);
      const broken = skillsJson.servers.find((server: { label: string }) => server.label === 'broken');
      expect(['failed', 'connecting']).toContain(broken.state);
      expect(broken.reason).toMatch(/ENOENT|not found|cannot connect/i);
      expect(mount.log()).toMatch(/\[broken\] cannot connect/);
    } finally {
      await mount.stop();
    }
  });
});

describe('lifecycle', () => {
  it('SIGTERM unmounts and exits 0 within 2 s', async () => {
    const mount = await startMount({ config: { corpus: serveEntry(CORPUS_DIR) } });
    const exited = new Promise<number | null>((resolve) => mount.child.once('exit', (code) => resolve(code)));
    const startedAt = Date.now();
    mount.child.kill('SIGTERM');
    const code = await exited;
    const elapsedMs = Date.now() - startedAt;
    await mount.stop();
    expect(code).toBe(0);
    expect(elapsedMs).toBeLessThan(2_000);
    expect(await readFile('/proc/mounts', 'utf8')).not.toContain(mount.mountpoint);
  });

  it('a mount that cannot start (a non-empty directory) exits 2 with a message naming the directory, before starting any server', async () => {
    const dir = await makeTestDir();
    const mountpoint = path.join(dir, 'mnt');
    await mkdir(mountpoint);
    await writeFile(path.join(mountpoint, 'keep.txt'), 'mine');
    const configPath = path.join(dir, 'config.json');
    await writeFile(configPath, JSON.stringify({ mcpServers: { corpus: serveEntry(CORPUS_DIR) } }));
    const result = await run(process.execPath, [SKILLS_MOUNT, mountpoint, '--config', configPath], 30_000);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`skills-mount: mountpoint ${await realpath(mountpoint)} is not empty; skills-mount mounts only on an empty directory`);
    expect(result.stderr).not.toMatch(/starting \d+ server|\[corpus\]/);
    // Nothing hidden under a mount, nothing touched.
    expect(await mountsUnder(mountpoint)).toEqual([]);
    expect(await readFile(path.join(mountpoint, 'keep.txt'), 'utf8')).toBe('mine');
  });

  it('recovers a stale mount left by a daemon killed with SIGKILL', async () => {
    const first = await startMount({ config: { corpus: serveEntry(CORPUS_DIR) } });
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    const second = await startMount({ dir: first.dir, config: { corpus: serveEntry(CORPUS_DIR) } });
    try {
      expect((await run('cat', [path.join(second.mountpoint, 'corpus/commit-message/SKILL.md')])).code).toBe(0);
    } finally {
      await second.stop();
      await first.stop();
    }
  });

  it('scripts/run.sh with no config file mounts the bundled demo; Ctrl-C (SIGINT) unmounts and exits 0', async () => {
    const dir = await makeTestDir();
    const mount = await startMount({
      dir,
      command: ['bash', path.join(REPO, 'scripts', 'run.sh')],
      env: { ...process.env, XDG_CONFIG_HOME: path.join(dir, 'empty-config') },
      readyTimeoutMs: 120_000,
    });
    try {
      const listing = await run('ls', [path.join(mount.mountpoint, 'demo')]);
      expect(listing.code).toBe(0);
      expect(listing.stdout.trim().split('\n').length).toBeGreaterThanOrEqual(3);
      expect((await run('cat', [path.join(mount.mountpoint, 'demo/acme/billing/refunds/SKILL.md')])).stdout).toMatch(/name: refunds/);
      // A nested skill is a file of its encloser and an entry of its own, published flat.
      expect((await run('cat', [path.join(mount.mountpoint, 'demo/pdf-tools/forms/SKILL.md')])).stdout).toMatch(/name: forms/);
      const skillsJson = JSON.parse((await run('cat', [path.join(mount.mountpoint, 'skills.json')])).stdout);
      expect(skillsJson.servers[0].skills.map((entry: { path: string }) => entry.path)).toEqual(
        expect.arrayContaining(['demo/pdf-tools', 'demo/pdf-tools/forms', 'demo/acme/billing/refunds']),
      );
      const exited = new Promise<number | null>((resolve) => mount.child.once('exit', (code) => resolve(code)));
      mount.child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(await readFile('/proc/mounts', 'utf8')).not.toContain(mount.mountpoint);
    } finally {
      await mount.stop();
    }
  });
});
