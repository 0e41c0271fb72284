// --metrics through a real daemon on a real kernel mount: reads done with cat show up at
// /metrics (FUSE reads, MCP resources/read), promtool accepts the text, a real Prometheus
// scrapes it (up 1, MCP requests above 0), status names the address, /healthz is 200 while
// mounted and 503 naming the detach soon after `umount -l` from outside (the daemon still
// running), and SIGTERM still ends it cleanly. A port in use stops the daemon before it mounts.
// A non-root daemon serving another user (whose 0500 root it cannot enter) probes with stat.
// Every mount is served by a child process and removed however a test ends; the test process
// reaches the mount only through child processes (cat, stat, umount).
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonEnv, stopChild } from '../support/children.js';
import { run } from '../support/fuse-harness.js';
import { freePort } from '../support/http-server.js';
import { REPO, SKILLS_MOUNT, SKILLS_SERVE, makeTestDir, serveEntry, startMount, type RunningMount } from '../support/mount-harness.js';
import { pollUntil } from '../support/poll.js';
import { envArgs, reachableInstall, type ReachableInstall } from '../support/reachable-install.js';
import { failIfMissing, promtoolCheck, skipWithoutTools } from '../support/prometheus-tools.js';
import { requireFuse } from '../support/require-fuse.js';
import { writeSkill } from '../support/skill-builder.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';
import { seriesSum } from '../support/prometheus-text.js';

requireFuse();

const EXAMPLES = path.join(REPO, 'examples', 'skills');
/** A --server value running the reference server on the examples; quoted, so any checkout path works. */
const demoServer = (label: string) => `${label}=${[process.execPath, SKILLS_SERVE, EXAMPLES].map((word) => JSON.stringify(word)).join(' ')}`;
const cli = (...args: string[]) => run(process.execPath, [SKILLS_MOUNT, ...args], 15_000);
const TOOLS = ['promtool', 'prometheus'];

async function get(url: string): Promise<{ status: number; body: string }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.text() };
}

/** A Prometheus of the test's own, scraping `target` every second; its data in a temp dir. */
async function startPrometheus(target: string): Promise<{ child: ChildProcess; api: string; dataDir: string; log: () => string }> {
  const dataDir = await makeTempDir('skills-mount-test-prometheus-', '/tmp');
  const config = path.join(dataDir, 'prometheus.yml');
  await writeFile(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'scrape_configs:',
      '  - job_name: skills-mount',
      '    scrape_interval: 1s',
      '    scrape_timeout: 1s',
      '    static_configs:',
      `      - targets: ['${target}']`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const child = spawn('prometheus', [`--config.file=${config}`, `--storage.tsdb.path=${path.join(dataDir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return { child, api: `http://127.0.0.1:${port}`, dataDir, log: () => stderr };
}

/** The value of a PromQL instant query's first result, or undefined while it has none. */
async function query(api: string, promql: string): Promise<number | undefined> {
  const response = await fetch(`${api}/api/v1/query?query=${encodeURIComponent(promql)}`).catch(() => undefined);
  if (!response?.ok) return undefined;
  const answer = (await response.json()) as { data?: { result?: Array<{ value?: [number, string] }> } };
  const value = answer.data?.result?.[0]?.value?.[1];
  return value === undefined ? undefined : Number(value);
}

const skipped = skipWithoutTools(TOOLS);

describe.skipIf(skipped)('--metrics on a real mount', () => {
  let mount: RunningMount | undefined;
  let prometheus: Awaited<ReturnType<typeof startPrometheus>> | undefined;
  let port = 0;
  let base = '';

  beforeAll(async () => {
    failIfMissing(TOOLS);
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    mount = await startMount({ args: ['--server', demoServer('demo'), '--metrics', `127.0.0.1:${port}`] });
  });
  afterAll(async () => {
    if (prometheus) await stopChild(prometheus.child);
    await removeDir(prometheus?.dataDir);
    await mount?.stop();
  });

  it('logs the address once; /metrics counts the reads done with cat; promtool accepts it', async () => {
    expect(mount!.log().split('\n').filter((line) => line === `skills-mount: metrics at ${base}/metrics`)).toHaveLength(1);
    for (const file of ['hello-mount/SKILL.md', 'hello-mount/references/checklist.md', 'pdf-tools/SKILL.md']) {
      const read = await run('cat', [path.join(mount!.mountpoint, 'demo', file)]);
      expect(read.code, file).toBe(0);
    }
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await metrics.text();
    // Each file's first open reaches the daemon, which hands the bytes that open pinned to the
    // kernel's page cache with its reply: cat's reads reach nobody, and the stores are counted.
    expect(seriesSum(text, 'skills_mount_fuse_operations_total', { op: 'open', errno: 'OK' })).toBeGreaterThanOrEqual(3);
    expect(seriesSum(text, 'skills_mount_fuse_opens_stored_total', {})).toBeGreaterThanOrEqual(3);
    expect(seriesSum(text, 'skills_mount_fuse_operations_total', { op: 'read' }) + seriesSum(text, 'skills_mount_fuse_answered_by_addon_total', { op: 'read' })).toBe(0);
    expect(seriesSum(text, 'skills_mount_mcp_requests_total', { server: 'demo', method: 'resources/read', outcome: 'ok' })).toBeGreaterThanOrEqual(3);
    expect(seriesSum(text, 'skills_mount_server_up', { server: 'demo' })).toBe(1);
    expect(seriesSum(text, 'skills_mount_server_skills', { server: 'demo' })).toBe(5);
    expect(await promtoolCheck(text)).toEqual({ code: 0, output: '' });
  });

  it('status names the metrics address, in text and in --json', async () => {
    const text = await cli('status', mount!.mountpoint);
    expect(text.code).toBe(0);
    expect(text.stdout.split('\n')[0]).toMatch(new RegExp(`, metrics ${base.replace(/[.]/g, '\\.')}/metrics$`));
    const json = JSON.parse((await cli('status', mount!.mountpoint, '--json')).stdout) as { mounts: Array<{ metrics: string | null }> };
    expect(json.mounts[0]!.metrics).toBe(base);
  });

  it('a real Prometheus scrapes it: up is 1 and the MCP requests are more than 0', async () => {
    prometheus = await startPrometheus(`127.0.0.1:${port}`);
    const api = prometheus.api;
    const within = (what: string) => ({ timeoutMs: 30_000, intervalMs: 500, timeoutError: () => new Error(`Prometheus never saw ${what}; its log:\n${prometheus!.log()}`) });
    expect(await pollUntil(() => query(api, 'up{job="skills-mount"}'), (value) => value === 1, within('up == 1'))).toBe(1);
    expect(await pollUntil(() => query(api, 'sum(skills_mount_mcp_requests_total)'), (value) => value !== undefined && value > 0, within('MCP requests'))).toBeGreaterThan(0);
  });

  it('/healthz is 200 while mounted, and 503 naming the detach within seconds of umount -l; the daemon keeps running, and SIGTERM still ends it with 0', async () => {
    expect(await get(`${base}/healthz`)).toEqual({ status: 200, body: 'ok\n' });
    const detached = await run('umount', ['-l', mount!.mountpoint]);
    if (detached.code !== 0) expect((await run('fusermount3', ['-u', '-z', mount!.mountpoint])).code).toBe(0);
    const startedAt = performance.now();
    const down = await pollUntil(() => get(`${base}/healthz`), (answer) => answer.status === 503, {
      timeoutMs: 5_000,
      intervalMs: 200,
      timeoutError: (last) => new Error(`/healthz still answered ${last.status} ${last.body}`),
    });
    expect(down.body).toBe(`mount ${mount!.mountpoint} is gone (detached)\n`);
    expect(performance.now() - startedAt).toBeLessThan(5_000);
    expect(mount!.child.exitCode).toBeNull();
    expect(await mount!.stop('SIGTERM')).toBe(0);
  });
});

describe('--metrics: a port in use', () => {
  let taken: Server | undefined;
  afterAll(async () => {
    await new Promise((resolve) => (taken ? taken.close(resolve) : resolve(undefined)));
  });

  it('stops the daemon with exit 2 naming the address, before any server starts or anything is mounted', async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken!.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    const dir = await makeTestDir();
    const mountpoint = path.join(dir, 'mnt');
    const result = await run(process.execPath, [SKILLS_MOUNT, mountpoint, '--no-disk-cache', '--server', demoServer('demo'), '--metrics', `127.0.0.1:${port}`], 20_000);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`skills-mount: --metrics 127.0.0.1:${port}: the address is in use`);
    expect(result.stderr).not.toMatch(/starting 1 server/);
    expect((await readFile('/proc/self/mountinfo', 'utf8')).includes(mountpoint)).toBe(false);
    await removeDir(dir);
  });
});

describe.skipIf(skipped)('--metrics from a daemon that is not root, serving another user', () => {
  const FUSE_CONF = '/etc/fuse.conf';
  const AS_NOBODY = ['--reuid=nobody', '--regid=nogroup', '--clear-groups'];
  const THIRD_UID = '65533';

  it('probes with stat MOUNTPOINT (it cannot enter the mount): /healthz 200, and 503 once detached', async () => {
    failIfMissing(TOOLS);
    // As test/e2e/allow-user.test.ts: user_allow_other and /dev/fuse open to users for the test, then put back.
    const original = await readFile(FUSE_CONF, 'utf8').catch(() => undefined);
    const deviceMode = (await stat('/dev/fuse')).mode & 0o777;
    const lines = (original ?? '').split('\n').filter((line) => line.trim() !== 'user_allow_other');
    await writeFile(FUSE_CONF, [...lines, 'user_allow_other', ''].join('\n'));
    await chmod('/dev/fuse', 0o666);
    let mount: RunningMount | undefined;
    let install: ReachableInstall | undefined;
    try {
      const dir = await makeTestDir();
      await chmod(dir, 0o755);
      const skills = path.join(dir, 'skills');
      await writeSkill(skills, 'alpha');
      await run('chown', ['-R', 'nobody:nogroup', dir]);
      const preload = daemonEnv({})['LD_PRELOAD'];
      const port = await freePort();
      install = await reachableInstall();
      mount = await startMount({
        dir,
        config: { s: { command: install.node, args: [install.skillsServe, skills] } },
        args: ['--allow-user', THIRD_UID, '--metrics', `127.0.0.1:${port}`],
        env: { ...process.env, ...install.env, HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_CACHE_HOME: path.join(dir, 'cache') },
        command: ['setpriv', ...AS_NOBODY, '--', 'env', ...(preload ? [`LD_PRELOAD=${preload}`] : []), ...envArgs(install), install.node, install.skillsMount],
      });
      // The daemon's own user cannot read its mount: a cat probe would fail with EACCES.
      expect((await run('setpriv', [...AS_NOBODY, '--', 'cat', path.join(mount.mountpoint, 'status.json')])).stderr).toMatch(/Permission denied/);
      expect(await get(`http://127.0.0.1:${port}/healthz`)).toEqual({ status: 200, body: 'ok\n' });
      expect((await run('umount', ['-l', mount.mountpoint])).code).toBe(0);
      const down = await pollUntil(() => get(`http://127.0.0.1:${port}/healthz`), (answer) => answer.status === 503, {
        timeoutMs: 5_000,
        intervalMs: 200,
        timeoutError: (last) => new Error(`/healthz still answered ${last.status} ${last.body}`),
      });
      expect(down.body).toBe(`mount ${mount.mountpoint} is gone (detached)\n`);
    } finally {
      await mount?.stop();
      await install?.remove();
      if (original === undefined) await writeFile(FUSE_CONF, '');
      else await writeFile(FUSE_CONF, original);
      await chmod('/dev/fuse', deviceMode);
    }
  });
});
