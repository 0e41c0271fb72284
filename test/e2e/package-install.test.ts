// The package as users install it (issue 40): `npm pack` of the checkout (its prepack builds the
// prebuilt addons), checked for what it holds and its size; then `npm install -g` of the tarball
// with scripts off into an empty prefix, with no compiler reachable (CC/CXX are `false`, no cc, gcc,
// make or node-gyp on PATH), its dependencies from a registry on 127.0.0.1 holding the locked
// versions. The installed CLI mounts the demo on the prebuilt addon (the log names which loaded),
// and, with FUSE unusable, runs snapshot, verify, approve --config and link without loading it.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalRegistry } from '../support/local-registry.mjs';
import { REPO } from '../support/mount-harness.js';
import { requireFuse } from '../support/require-fuse.js';

requireFuse();

const MAX_PACKED_BYTES = 5 * 1024 * 1024;
/** What a machine without a compiler lacks. */
const COMPILERS = /^(cc|c\+\+|gcc.*|g\+\+.*|cpp.*|clang.*|make|node-gyp|.*-gcc.*|.*-g\+\+.*|fusermount.*)$/;

interface Packed {
  filename: string;
  size: number;
  files: Array<{ path: string; size: number }>;
}

let dir: string;
let packed: Packed;
let prefix: string;
let env: NodeJS.ProcessEnv;
let installMs: number;
let daemon: ChildProcess | undefined;
let mountpoint: string;

function run(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(command, args, { env: options.env ?? process.env, cwd: options.cwd, timeout: options.timeoutMs ?? 120_000, maxBuffer: 1 << 26 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    ),
  );
}

beforeAll(async () => {
  dir = await mkdtemp('/tmp/skills-mount-test-package-');
  const pack = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: REPO, timeoutMs: 300_000 });
  expect(pack.code, pack.stderr.slice(-3000)).toBe(0);
  packed = (JSON.parse(pack.stdout.slice(pack.stdout.lastIndexOf('\n[') + 1)) as Packed[])[0]!;

  // A PATH with every tool of this machine but compilers, make, node-gyp and fusermount.
  const bin = path.join(dir, 'bin');
  await mkdir(bin);
  await chmod(bin, 0o755);
  for (const from of ['/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin']) {
    for (const name of await readdir(from).catch(() => [] as string[])) {
      if (COMPILERS.test(name)) continue;
      await symlink(path.join(from, name), path.join(bin, name)).catch(() => undefined);
    }
  }
  const home = path.join(dir, 'home');
  await mkdir(home, { mode: 0o700 });
  env = {
    ...process.env,
    PATH: bin,
    CC: 'false',
    CXX: 'false',
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    npm_config_cache: path.join(dir, 'npm-cache'),
  };
  delete env['SKILLS_FUSE_ADDON'];
  prefix = path.join(dir, 'prefix');
  const registry = await startLocalRegistry(path.join(REPO, 'package-lock.json'));
  try {
    const started = Date.now();
    const install = await run('npm', ['install', '-g', '--prefix', prefix, '--ignore-scripts', '--registry', registry.url, '--no-audit', '--no-fund', path.join(dir, packed.filename)], { env });
    installMs = Date.now() - started;
    expect(install.code, install.stderr.slice(-3000)).toBe(0);
  } finally {
    await registry.close();
  }
}, 360_000);

afterAll(async () => {
  if (daemon && daemon.exitCode === null) daemon.kill('SIGKILL');
  if (mountpoint) await run('fusermount3', ['-uz', mountpoint]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('holds the prebuilt addons, the native sources and dist; no test, bench or object files; under 5 MB; no install script', async () => {
    const paths = packed.files.map((file) => file.path);
    console.log(`packed ${packed.filename}: ${packed.size} bytes, ${paths.length} files; installed with scripts off in ${installMs} ms`);
    expect(packed.size).toBeLessThan(MAX_PACKED_BYTES);
    for (const arch of ['x64', 'arm64']) expect(paths).toContain(`prebuilds/linux-${arch}/skills_fuse.node`);
    expect(paths).toContain('native/binding.gyp');
    expect(paths).toContain('dist/cli/skills-mount.js');
    expect(paths.filter((p) => /^(test|bench|native\/build)/.test(p) || /\.(o|a|obj|tgz)$/.test(p))).toEqual([]);
    expect(paths.filter((p) => p.endsWith('.node'))).toEqual(['prebuilds/linux-arm64/skills_fuse.node', 'prebuilds/linux-x64/skills_fuse.node']);
    const manifest = JSON.parse(await readFile(path.join(prefix, 'lib', 'node_modules', 'skills-mount', 'package.json'), 'utf8')) as { scripts?: Record<string, string>; dependencies: Record<string, string> };
    for (const script of ['preinstall', 'install', 'postinstall']) expect(manifest.scripts?.[script], script).toBeUndefined();
    expect(manifest.dependencies['fuse-native']).toBeUndefined();
  });

  it('mounts the demo on the prebuilt addon, with nothing compiled', async () => {
    const installed = path.join(prefix, 'lib', 'node_modules', 'skills-mount');
    await expect(readdir(path.join(installed, 'native'))).resolves.not.toContain('build');
    mountpoint = path.join(dir, 'mnt');
    // fusermount3 is the one FUSE tool the mount needs: back on PATH for it.
    daemon = spawn(path.join(prefix, 'bin', 'skills-mount'), [mountpoint, '--verbose'], { env: { ...env, PATH: `${env['PATH']}:/usr/bin` }, stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not mounted within 20 s:\n${log}`)), 20_000);
      daemon!.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
        log += chunk;
        if (/mounted /.test(log)) {
          clearTimeout(timer);
          resolve();
        }
      });
      daemon!.on('exit', (code) => reject(new Error(`exited ${code}:\n${log}`)));
    });
    expect(log).toContain(`libfuse 3 addon: prebuild ${path.join(installed, 'prebuilds', `linux-${process.arch}`, 'skills_fuse.node')}`);
    const cat = await run('cat', [path.join(mountpoint, 'demo', 'hello-mount', 'SKILL.md')]);
    expect(cat.stdout).toMatch(/^---\nname: hello-mount\n/);
    const exited = new Promise((resolve) => daemon!.once('exit', resolve));
    daemon.kill('SIGTERM');
    await exited;
    expect((await readFile('/proc/self/mounts', 'utf8')).includes(mountpoint)).toBe(false);
  }, 60_000);

  it('with FUSE unusable: snapshot, verify, approve --config and link work, and the addon is never loaded', async () => {
    const installed = path.join(prefix, 'lib', 'node_modules', 'skills-mount');
    const marks = path.join(dir, 'marks');
    await mkdir(marks);
    const tripwire = path.join(dir, 'tripwire.cjs');
    await writeFile(tripwire, "require('fs').writeFileSync(require('path').join(process.env.TRIPWIRE_MARKS, String(process.pid)), 'loaded');\nthrow new Error('tripwire');\n");
    const config = path.join(dir, 'config.json');
    await writeFile(config, JSON.stringify({ mcpServers: { demo: { command: path.join(prefix, 'bin', 'skills-serve'), args: [path.join(installed, 'examples', 'skills')] } } }));
    const noFuse = { ...env, SKILLS_MOUNT_NO_FUSE: '1', SKILLS_FUSE_ADDON: tripwire, TRIPWIRE_MARKS: marks };
    const cli = path.join(prefix, 'bin', 'skills-mount');
    const snapshot = path.join(dir, 'snap');
    for (const args of [
      ['snapshot', snapshot, '--config', config, '--no-disk-cache'],
      ['verify', snapshot],
      ['approve', 'demo/hello-mount', '--config', config, '--yes'],
      ['link', 'claude-code', '--config', config],
    ]) {
      const result = await run(cli, args, { env: noFuse });
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(0);
    }
    expect(await readdir(path.join(env['HOME']!, '.claude', 'skills'))).toContain('hello-mount');
    const { version } = JSON.parse(await readFile(path.join(REPO, 'package.json'), 'utf8')) as { version: string };
    expect((await run(cli, ['--version'], { env: noFuse })).stdout).toBe(`skills-mount ${version}\n`);
    const mount = await run(cli, [path.join(dir, 'mnt-nofuse')], { env: noFuse });
    expect(mount.code).toBe(2);
    expect(await readdir(marks)).toEqual([]);
  }, 120_000);
});
