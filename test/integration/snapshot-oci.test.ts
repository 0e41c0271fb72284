// `skills-mount snapshot DEST --oci` as a team's CI runs it (the built CLI over a real
// skills-serve of examples/skills), and the image through Debian's real registry tools: pushed
// with skopeo to a docker-registry this test starts on loopback, pulled back, unpacked by umoci,
// and verified; a layer changed by one byte in the registry refused at pull and by verify. The
// same view built twice, in two folders at two times (and on Node 24), has the same digests;
// `--for` lays out exactly what `link` writes; `--project` exactly the lock; bad DESTs refused.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, cp, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeReadOnlyTree } from '../../src/read-only-tree.js';
import { gunzipLayer, readLayerTar } from '../../src/snapshot/layer-tar.js';
import { stopChild } from '../support/children.js';
import { SKILLS_MOUNT, SKILLS_SERVE } from '../support/mount-harness.js';
import { waitFor } from '../support/poll.js';
import { EXAMPLES } from '../support/server-harness.js';
import { makeTempDir } from '../support/temp-dir.js';

const TOOLS = ['skopeo', 'umoci', 'docker-registry'] as const;
const missingTools = TOOLS.filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
if (missingTools.length > 0 && process.env.CI) throw new Error(`the OCI registry tests need ${missingTools.join(', ')} (scripts/oci-tools.sh installs them); CI requires them`);

const made: string[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children.splice(0)) await stopChild(child);
  for (const dir of made.splice(0)) await removeReadOnlyTree(dir);
});

async function tempDir(): Promise<string> {
  const dir = await makeTempDir('skills-mount-oci-');
  made.push(dir);
  return dir;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env, cwd?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A user of their own: HOME and the XDG folders in a temp dir (approvals, links, caches). */
async function userEnv(): Promise<NodeJS.ProcessEnv> {
  const home = path.join(await tempDir(), 'home');
  await mkdir(home, { mode: 0o700 });
  return { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_DATA_HOME: path.join(home, '.local', 'share'), XDG_CACHE_HOME: path.join(home, '.cache') };
}

const SERVER = `ex=${process.execPath} ${SKILLS_SERVE} ${EXAMPLES}`;

function skillsMount(env: NodeJS.ProcessEnv, ...args: string[]): Promise<Run> {
  return run(process.execPath, [SKILLS_MOUNT, ...args], env);
}

/** snapshot --oci over the examples; resolves the index digest it printed. */
async function buildImage(env: NodeJS.ProcessEnv, dest: string, ...flags: string[]): Promise<string> {
  const result = await skillsMount(env, 'snapshot', dest, '--oci', '--no-disk-cache', '--server', SERVER, ...flags);
  expect(result.code, result.stderr).toBe(0);
  const digest = result.stdout.trim();
  expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  return digest;
}

async function json<T>(file: string): Promise<T> {
  return JSON.parse(await readFile(file, 'utf8')) as T;
}

interface Descriptor {
  digest: string;
  annotations?: Record<string, string>;
}

/** The image index of a layout, its first manifest, and that manifest's layer. */
async function imageOf(layout: string): Promise<{ index: { manifests: Descriptor[]; annotations: Record<string, string> }; layerDigest: string; annotations: Record<string, string> }> {
  const blob = (digest: string) => path.join(layout, 'blobs', 'sha256', digest.slice('sha256:'.length));
  const top = await json<{ manifests: Descriptor[] }>(path.join(layout, 'index.json'));
  const index = await json<{ manifests: Descriptor[]; annotations: Record<string, string> }>(blob(top.manifests[0]!.digest));
  const manifest = await json<{ layers: Descriptor[]; annotations: Record<string, string> }>(blob(index.manifests[0]!.digest));
  return { index, layerDigest: manifest.layers[0]!.digest, annotations: manifest.annotations };
}

async function layerFiles(layout: string, layerDigest: string): Promise<Map<string, { mode: number; bytes?: Buffer }>> {
  const gzipped = await readFile(path.join(layout, 'blobs', 'sha256', layerDigest.slice('sha256:'.length)));
  return new Map(readLayerTar(gunzipLayer(gzipped, 1 << 30)).map((entry) => [entry.path, { mode: entry.mode, ...(entry.kind === 'file' ? { bytes: entry.bytes } : {}) }]));
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe.skipIf(missingTools.length > 0)('an image pushed to a real registry and pulled back', () => {
  let env: NodeJS.ProcessEnv;
  let work: string;
  let storage: string;
  let registry: string;
  let image: string;

  beforeAll(async () => {
    env = await userEnv();
    work = await tempDir();
    storage = path.join(work, 'registry');
    await mkdir(storage);
    const port = await freePort();
    const config = path.join(work, 'registry.yml');
    await writeFile(config, `version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: ${storage}\nhttp:\n  addr: 127.0.0.1:${port}\n`);
    const child = spawn('docker-registry', ['serve', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    children.push(child);
    registry = `127.0.0.1:${port}`;
    await waitFor(() => fetch(`http://${registry}/v2/`).then((response) => response.ok, () => false), 20_000, 'the registry to answer');
    image = await buildImage(env, path.join(work, 'image'));
  });

  it('skopeo pushes it with its digest; pulled back it verifies; unpacked by umoci, the rootfs verifies and holds the examples', async () => {
    const layout = path.join(work, 'image');
    const verified = await skillsMount(env, 'verify', layout, '--expect', image);
    expect(verified.code, verified.stdout).toBe(0);
    expect(verified.stdout).toContain(`OCI image ${image}, as --expect says`);

    const pushed = await run('skopeo', ['copy', '--all', '--dest-tls-verify=false', `oci:${layout}`, `docker://${registry}/skills:test`]);
    expect(pushed.code, pushed.stderr).toBe(0);
    process.stdout.write(`registry round trip: skopeo copy --all oci:DEST docker://${registry}/skills:test\n${pushed.stdout}`);
    // The registry names it by the digest snapshot printed: what a pod pins.
    const raw = await run('skopeo', ['inspect', '--raw', '--tls-verify=false', `docker://${registry}/skills:test`]);
    expect(`sha256:${createHash('sha256').update(raw.stdout).digest('hex')}`).toBe(image);

    const pulled = path.join(work, 'pulled');
    const pull = await run('skopeo', ['copy', '--all', '--src-tls-verify=false', `docker://${registry}/skills@${image}`, `oci:${pulled}:test`]);
    expect(pull.code, pull.stderr).toBe(0);
    const again = await skillsMount(env, 'verify', pulled, '--expect', image);
    expect(again.code, again.stdout).toBe(0);
    process.stdout.write(`pulled back: ${again.stdout}`);

    // umoci unpacks one platform (an index of two is "ambiguous" to it): what a node's runtime does.
    const single = path.join(work, 'single');
    const one = await run('skopeo', ['copy', '--override-os', 'linux', '--override-arch', 'amd64', '--src-tls-verify=false', `docker://${registry}/skills@${image}`, `oci:${single}:test`]);
    expect(one.code, one.stderr).toBe(0);
    const unpacked = await run('umoci', ['unpack', '--rootless', '--image', `${single}:test`, 'bundle'], process.env, work);
    expect(unpacked.code, unpacked.stderr).toBe(0);
    const rootfs = path.join(work, 'bundle', 'rootfs');
    const { annotations } = await imageOf(layout);
    const manifestDigest = annotations['io.github.skills-mount.snapshot.digest']!;
    const onDisk = await skillsMount(env, 'verify', rootfs, '--expect', manifestDigest);
    expect(onDisk.code, onDisk.stdout).toBe(0);
    process.stdout.write(`unpacked: ${onDisk.stdout}`);
    for (const file of ['hello-mount/SKILL.md', 'pdf-tools/scripts/page-count.sh', 'brand-kit/assets/logo.png']) {
      expect((await readFile(path.join(rootfs, 'ex', file))).equals(await readFile(path.join(EXAMPLES, file))), file).toBe(true);
    }
    expect((await stat(path.join(rootfs, 'ex', 'pdf-tools', 'scripts', 'page-count.sh'))).mode & 0o777).toBe(0o444);
    expect(JSON.parse(annotations['io.github.skills-mount.skills']!).map((skill: { path: string }) => skill.path)).toContain('ex/hello-mount');
  });

  it('a layer with one byte changed in the registry is refused at pull, and a layout holding it fails verify', async () => {
    const layout = path.join(work, 'image');
    const { layerDigest } = await imageOf(layout);
    const hex = layerDigest.slice('sha256:'.length);
    const data = path.join(storage, 'docker', 'registry', 'v2', 'blobs', 'sha256', hex.slice(0, 2), hex, 'data');
    const bytes = await readFile(data);
    bytes[bytes.length - 10]! ^= 0x01;
    await writeFile(data, bytes);
    const pull = await run('skopeo', ['copy', '--all', '--src-tls-verify=false', `docker://${registry}/skills@${image}`, `oci:${path.join(work, 'tampered-pull')}:test`]);
    expect(pull.code).not.toBe(0);
    expect(pull.stderr).toMatch(/digest/i);

    const copy = path.join(work, 'tampered');
    await cp(layout, copy, { recursive: true });
    const blob = path.join(copy, 'blobs', 'sha256', hex);
    await chmod(blob, 0o644);
    await writeFile(blob, bytes);
    const verified = await skillsMount(env, 'verify', copy, '--expect', image);
    expect(verified.code).toBe(1);
    expect(verified.stdout).toContain(`blobs/sha256/${hex}: hashes to sha256:`);
    expect(verified.stdout).toMatch(/layer: the blob sha256:\w+ is not in the layout/);
  });
});

describe('the same view, built twice', () => {
  it('in two folders, a second apart, and on Node 24: the same index, manifest, config and layer digests', async () => {
    const env = await userEnv();
    const first = path.join(await tempDir(), 'a');
    const second = path.join(await tempDir(), 'deeper', 'b');
    await mkdir(path.dirname(second), { mode: 0o700 });
    const one = await buildImage(env, first);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const two = await buildImage(env, second);
    expect(two).toBe(one);
    const blobs = async (layout: string) => (await readdir(path.join(layout, 'blobs', 'sha256'))).sort();
    expect(await blobs(second)).toEqual(await blobs(first));
    process.stdout.write(`reproducible: ${one} twice\n`);
    const node24 = spawnSync('scripts/node24.sh', { cwd: path.resolve(SKILLS_MOUNT, '..', '..', '..'), encoding: 'utf8' });
    if (node24.status !== 0) {
      if (process.env.CI) throw new Error(`scripts/node24.sh failed: ${node24.stderr}`);
      return;
    }
    const third = path.join(await tempDir(), 'c');
    const result = await run(node24.stdout.trim(), [SKILLS_MOUNT, 'snapshot', third, '--oci', '--no-disk-cache', '--server', SERVER], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(one);
  });
});

describe('what the image holds', () => {
  it('--for claude-code: one entry per approved skill at depth 1, byte for byte and mode for mode what link writes; nothing of ours', async () => {
    const env = await userEnv();
    const approve = await skillsMount(env, 'approve', 'ex/pdf-tools', '--server', SERVER, '--yes', '--grant-exec');
    expect(approve.code, approve.stderr).toBe(0);
    expect((await skillsMount(env, 'approve', 'ex/hello-mount', '--server', SERVER, '--yes')).code).toBe(0);
    const layout = path.join(await tempDir(), 'image');
    const digest = await buildImage(env, layout, '--for', 'claude-code');
    const verified = await skillsMount(env, 'verify', layout, '--expect', digest);
    expect(verified.code, verified.stdout).toBe(0);
    expect(verified.stdout).toContain('a claude-code skills root');

    const linked = await skillsMount(env, 'link', 'claude-code', '--server', SERVER);
    expect(linked.code, linked.stdout + linked.stderr).toBe(0);
    const root = path.join(env.HOME!, '.claude', 'skills');
    const { layerDigest, annotations } = await imageOf(layout);
    const files = await layerFiles(layout, layerDigest);
    const entries = [...files.keys()].filter((name) => name !== '' && !name.includes('/')).sort();
    expect(entries).toEqual((await readdir(root)).sort());
    expect(entries).toEqual(['hello-mount', 'pdf-tools']);
    for (const [name, entry] of files) {
      if (entry.bytes === undefined) continue;
      const there = path.join(root, name);
      expect((await readFile(there)).equals(entry.bytes), name).toBe(true);
      expect(entry.mode, name).toBe((await stat(there)).mode & 0o777);
    }
    expect(files.get('pdf-tools/scripts/page-count.sh')!.mode).toBe(0o555);
    expect(files.get('pdf-tools/SKILL.md')!.bytes!.toString('utf8')).toContain('[from MCP server ex]');
    expect([...files.keys()].some((name) => name.includes('.snapshot.json') || name.includes('skills.json'))).toBe(false);
    expect(annotations['io.github.skills-mount.harness']).toBe('claude-code');
  });

  it('--project DIR: exactly the locked skills, and the lockfile\'s digest annotated', async () => {
    const env = await userEnv();
    const project = await tempDir();
    const locked = await skillsMount(env, 'lock', 'ex/hello-mount', '--project', project, '--server', SERVER, '--yes');
    expect(locked.code, locked.stderr).toBe(0);
    const layout = path.join(await tempDir(), 'image');
    const digest = await buildImage(env, layout, '--project', project);
    expect((await skillsMount(env, 'verify', layout, '--expect', digest)).code).toBe(0);
    const { layerDigest, annotations, index } = await imageOf(layout);
    const files = await layerFiles(layout, layerDigest);
    const skillMds = [...files.keys()].filter((name) => name.endsWith('/SKILL.md'));
    expect(skillMds).toEqual(['_approved/ex/hello-mount/SKILL.md']);
    const lockDigest = `sha256:${createHash('sha256').update(await readFile(path.join(project, 'skills-lock.json'))).digest('hex')}`;
    expect(annotations['io.github.skills-mount.lockfile.digest']).toBe(lockDigest);
    expect(index.annotations['io.github.skills-mount.view']).toBe('project');
    // No path of this machine in the image: the lockfile is named by its file name.
    expect(files.get('_approved/skills.json')!.bytes!.toString('utf8')).not.toContain(project);
  });
});

describe('refused', () => {
  it('a DEST that exists and is not an image layout, an unknown harness, a DEST in a folder others can write: exit 2, by name', async () => {
    const env = await userEnv();
    const dir = await tempDir();
    const taken = path.join(dir, 'notes');
    await mkdir(taken);
    await writeFile(path.join(taken, 'todo.txt'), 'mine\n');
    const notLayout = await skillsMount(env, 'snapshot', taken, '--oci', '--no-disk-cache', '--server', SERVER);
    expect(notLayout.code).toBe(2);
    expect(notLayout.stderr).toContain(`${taken} exists and is not an OCI image layout`);
    expect(await readdir(taken)).toEqual(['todo.txt']);

    const harness = await skillsMount(env, 'snapshot', path.join(dir, 'img'), '--oci', '--for', 'emacs', '--server', SERVER);
    expect(harness.code).toBe(2);
    expect(harness.stderr).toContain('unknown harness "emacs": one of claude-code, codex');

    const open = path.join(dir, 'open');
    await mkdir(open);
    await chmod(open, 0o777);
    const shared = await skillsMount(env, 'snapshot', path.join(open, 'img'), '--oci', '--no-disk-cache', '--server', SERVER);
    expect(shared.code).toBe(2);
    expect(shared.stderr).toContain(`refusing DEST ${path.join(open, 'img')}`);
    expect(await readdir(open)).toEqual([]);
  });
});
