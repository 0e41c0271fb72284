#!/usr/bin/env node
// The client command the conformance suite's SEP-2640 host scenarios run: `host-adapter.mjs URL`.
// It mounts the suite's server with skills-mount (a child process: never read a mount from
// the process that serves it) and reads as an agent would: `ls -lR`; for the verify
// scenarios also `cat SKILL.md`, then `cat references/FORMS.md` whatever happened. The
// mount is always unmounted before exiting. Exit 0 unless the mount itself failed.
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SKILLS_MOUNT = path.join(REPO, 'dist', 'cli', 'skills-mount.js');
const MOUNT_NODE = process.env.SKILLS_MOUNT_NODE || 'node';
const url = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const log = (line) => process.stderr.write(`host-adapter: ${line}\n`);

if (!url || !/^https?:\/\//.test(url)) {
  log(`usage: host-adapter.mjs URL (got ${JSON.stringify(url)})`);
  process.exit(2);
}

const home = await mkdtemp(path.join(os.tmpdir(), 'skills-mount-conformance-'));
const mountpoint = path.join(home, 'mnt');
let daemon;
let exitCode = 0;
try {
  daemon = spawn(MOUNT_NODE, [SKILLS_MOUNT, mountpoint, '--server', `suite=${url}`, '--timeout', '5', '--verbose'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, XDG_CONFIG_HOME: home, XDG_CACHE_HOME: home },
  });
  let daemonLog = '';
  daemon.stderr.on('data', (chunk) => {
    daemonLog += chunk;
    process.stderr.write(chunk);
  });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('skills-mount did not mount within 20 s')), 20_000);
    const check = () => {
      if (/mounted /.test(daemonLog)) {
        clearTimeout(timer);
        resolve();
      }
    };
    daemon.stderr.on('data', check);
    daemon.once('exit', (code) => reject(new Error(`skills-mount exited with ${code} before mounting`)));
  });
  const agent = async (command, args) => {
    try {
      const { stdout } = await run(command, args, { timeout: 15_000, maxBuffer: 16 << 20 });
      log(`${command} ${args.join(' ')}: ok (${stdout.length} bytes)`);
    } catch (error) {
      log(`${command} ${args.join(' ')}: failed: ${String(error.stderr || error.message).trim()}`);
    }
  };
  await agent('ls', ['-lR', mountpoint]);
  if (scenario !== 'sep-2640-client-no-prefetch') {
    const skill = path.join(mountpoint, 'suite', 'pdf-processing');
    await agent('cat', [path.join(skill, 'SKILL.md')]);
    await agent('cat', [path.join(skill, 'references', 'FORMS.md')]);
  }
} catch (error) {
  log(String(error.message ?? error));
  exitCode = 1;
} finally {
  if (daemon && daemon.exitCode === null) {
    const exited = new Promise((resolve) => daemon.once('exit', resolve));
    daemon.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    if (daemon.exitCode === null) daemon.kill('SIGKILL');
  }
  await run('fusermount', ['-uz', mountpoint]).catch(() => undefined);
  await rm(home, { recursive: true, force: true }).catch(() => undefined);
}
process.exit(exitCode);
