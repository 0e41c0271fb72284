// What a daemon run as another user (nobody) needs, at a path that user can reach. A clone often
// sits under a folder only its owner may enter (root's home, a `mktemp -d` folder), where
// `setpriv --reuid=nobody node <clone>/dist/cli/skills-mount.js` fails with "Cannot find
// module". Where the clone and the Node running the tests are reachable, they are used as they
// are; else the test gets hard links of them (instant, no space) under /tmp, or copies where the
// files themselves are closed to others, made by the test and removed by it.
import { access, chmod, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { run } from './fuse-harness.js';
import { REPO } from './mount-harness.js';
import { makeTempDir } from './temp-dir.js';

export interface ReachableInstall {
  /** The Node binary. */
  node: string;
  skillsMount: string;
  skillsServe: string;
  /** To add to the daemon's environment: the sanitizer pass's addon, where it was moved. */
  env: Record<string, string>;
  /** Removes the copy, if one was made. */
  remove(): Promise<void>;
}

const AS_NOBODY = ['--reuid=nobody', '--regid=nogroup', '--clear-groups'];

/** The clone's dist and the test's Node, where nobody can run them. */
export async function reachableInstall(): Promise<ReachableInstall> {
  const addon = process.env['SKILLS_FUSE_ADDON'];
  const inPlace: ReachableInstall = {
    node: process.execPath,
    skillsMount: path.join(REPO, 'dist', 'cli', 'skills-mount.js'),
    skillsServe: path.join(REPO, 'dist', 'cli', 'skills-serve.js'),
    env: {},
    remove: async () => undefined,
  };
  if ((await runsAsNobody(inPlace)) && (addon === undefined || (await readableByNobody(addon)))) return inPlace;

  const root = await makeTempDir('skills-mount-test-install-', '/tmp');
  await chmod(root, 0o755);
  const copy: ReachableInstall = {
    node: path.join(root, 'bin', 'node'),
    skillsMount: path.join(root, 'app', 'dist', 'cli', 'skills-mount.js'),
    skillsServe: path.join(root, 'app', 'dist', 'cli', 'skills-serve.js'),
    env: addon === undefined ? {} : { SKILLS_FUSE_ADDON: path.join(root, 'addon', path.basename(addon)) },
    remove: () => rm(root, { recursive: true, force: true }),
  };
  const parts: Array<[string, string]> = [
    [process.execPath, copy.node],
    [path.join(REPO, 'package.json'), path.join(root, 'app', 'package.json')],
    [path.join(REPO, 'dist'), path.join(root, 'app', 'dist')],
    [path.join(REPO, 'node_modules'), path.join(root, 'app', 'node_modules')],
    [path.join(REPO, 'native', 'build'), path.join(root, 'app', 'native', 'build')],
    ...(addon === undefined ? [] : [[addon, copy.env['SKILLS_FUSE_ADDON']!] as [string, string]]),
  ];
  for (const mode of ['link', 'copy'] as const) {
    await rm(path.join(root, 'bin'), { recursive: true, force: true });
    await rm(path.join(root, 'app'), { recursive: true, force: true });
    await rm(path.join(root, 'addon'), { recursive: true, force: true });
    for (const [from, to] of parts) {
      await mkdir(path.dirname(to), { recursive: true, mode: 0o755 });
      if (!(await exists(from))) continue;
      // Links keep the clone's modes; a copy under umask 022 opens the files to others.
      const result = mode === 'link' ? await run('cp', ['-al', from, to]) : await run('sh', ['-c', 'umask 022 && cp -r -- "$0" "$1"', from, to]);
      if (result.code !== 0 && mode === 'copy') throw new Error(`cannot copy ${from} to ${to}: ${result.stderr}`);
    }
    if (await runsAsNobody(copy)) return copy;
  }
  await copy.remove();
  throw new Error(`nobody cannot run a copy of ${REPO}/dist under ${root}`);
}

async function runsAsNobody(install: ReachableInstall): Promise<boolean> {
  const result = await run('setpriv', [...AS_NOBODY, '--', install.node, install.skillsMount, '--version']);
  return result.code === 0;
}

async function readableByNobody(file: string): Promise<boolean> {
  return (await run('setpriv', [...AS_NOBODY, '--', 'test', '-r', file])).code === 0;
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/** The install's environment as `env` arguments (setpriv passes the caller's environment, not additions). */
export function envArgs(install: ReachableInstall): string[] {
  return Object.entries(install.env).map(([name, value]) => `${name}=${value}`);
}
