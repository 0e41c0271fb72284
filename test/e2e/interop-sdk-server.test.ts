// The mount against the SDK v2's own skills server (SkillsExtension over nodeSkillFiles, the
// way its documentation builds one), through a real kernel mount, on every transport it
// offers: `diff -r` against the served folder is empty, and a file changed on the server
// (reload(), ttlMs 3 s published) is served with all of its new bytes within the bound
// docs/protocol.md states — never a truncated or mixed version in between.
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LISTING_TTL_RANGE_MS } from '../../src/catalog/server-catalog.js';
import { run, runBytes } from '../support/fuse-harness.js';
import { startListening, type ListeningServer } from '../support/http-server.js';
import { makeTestDir, startMount, type RunningMount } from '../support/mount-harness.js';
import { delay } from '../support/poll.js';
import { requireFuse } from '../support/require-fuse.js';

requireFuse();

const SDK_SERVER = fileURLToPath(new URL('../support/sdk-skills-server.mjs', import.meta.url));
const EXAMPLES = fileURLToPath(new URL('../../examples/skills', import.meta.url));
const TTL_MS = 3_000;
const METADATA_TTL_S = 1;
// docs/protocol.md: held time (ttlMs clamped to 5 s..1 h) + --metadata-ttl + one listing.
const BOUND_MS = Math.max(TTL_MS, LISTING_TTL_RANGE_MS.min) + METADATA_TTL_S * 1000 + 1_000;

const transports = ['stdio', 'http-default', 'http-modern'] as const;

/** The SDK v2 server on `served` over `transport` (ttl: its TTL argument), mounted with `args`; how to signal it. */
async function mountSdkServer(dir: string, served: string, transport: (typeof transports)[number], ttl: string, args: string[]) {
  if (transport === 'stdio') {
    const mount = await startMount({ dir, config: { sdk: { command: process.execPath, args: [SDK_SERVER, served, 'stdio', ttl] } }, args });
    // The daemon's child: the only process whose command line names this test's folder.
    const serverPid = async () => Number((await run('pgrep', ['-f', `${SDK_SERVER} ${served}`])).stdout.trim().split('\n')[0]);
    return { mount, server: undefined, serverPid };
  }
  const server = await startListening([SDK_SERVER, served, transport, ttl]);
  const mount = await startMount({ dir, config: { sdk: { url: server.url } }, args });
  return { mount, server, serverPid: async () => server.child.pid! };
}

describe.each(transports)('the SDK v2 skills server over %s', (transport) => {
  let dir: string;
  let served: string;
  let server: ListeningServer | undefined;
  let mount: RunningMount;
  let serverPid: () => Promise<number>;

  beforeAll(async () => {
    dir = await makeTestDir();
    served = path.join(dir, 'skills');
    await cp(EXAMPLES, served, { recursive: true });
    const args = ['--metadata-ttl', String(METADATA_TTL_S), '--verbose'];
    ({ mount, server, serverPid } = await mountSdkServer(dir, served, transport, String(TTL_MS), args));
  }, 60_000);

  afterAll(async () => {
    await mount?.stop();
    await server?.stop();
  });

  it('negotiates 2026-07-28 and diff -r against the served folder is empty', async () => {
    expect(mount.log()).toMatch(/\[sdk\] connected \(protocol 2026-07-28\)/);
    const diff = await run('diff', ['-r', served, path.join(mount.mountpoint, 'sdk')], 60_000);
    expect(diff.stdout + diff.stderr).toBe('');
    expect(diff.code).toBe(0);
  });

  it('a file changed on the server is served whole, in its new version, within the documented bound', async () => {
    const relative = 'acme/billing/refunds/examples/email.md';
    const file = path.join(mount.mountpoint, 'sdk', relative);
    const before = await readFile(path.join(served, relative));
    expect((await runBytes('cat', [file])).stdout.equals(before)).toBe(true);
    // A different size, so a stale size held anywhere would show as a truncated read.
    const after = Buffer.concat([before, Buffer.from('\nP.S. Refunds over $500 need a second approval.\n')]);
    await writeFile(path.join(served, relative), after);
    process.kill(await serverPid(), 'SIGUSR2');
    const startedMs = performance.now();
    let seenNewAtMs: number | undefined;
    while (performance.now() - startedMs < BOUND_MS + 5_000) {
      const read = await runBytes('cat', [file]);
      if (read.code === 0) {
        // Every read is one whole version: the old bytes or the new, never a mix or a prefix.
        expect(read.stdout.equals(before) || read.stdout.equals(after), `read ${read.stdout.length} bytes`).toBe(true);
        if (read.stdout.equals(after)) {
          seenNewAtMs = performance.now() - startedMs;
          break;
        }
      }
      await delay(250);
    }
    expect(seenNewAtMs, mount.log().slice(-3000)).toBeDefined();
    expect(seenNewAtMs!).toBeLessThan(BOUND_MS);
  }, 30_000);
});


// The SDK v2 server as it comes: skills/list says ttlMs 0, and reload() after a supporting file
// changed sends no notification. The mount with its defaults (libfuse3: the kernel holds names
// and attributes for 10 minutes, so no reader asks the daemon anything) still shows the change in
// cat, ls and skills.json within the held time (0, clamped to 5 s) + 2 s: the daemon re-lists on
// its own clock and tells the kernel what changed.
const QUIET_ARGS = ['--verbose'];
const QUIET_BOUND_MS = LISTING_TTL_RANGE_MS.min + 2_000;

describe.each(transports)('the SDK v2 skills server over %s, as it comes (ttlMs 0, no event), with the mount\'s defaults', (transport) => {
  let dir: string;
  let served: string;
  let server: ListeningServer | undefined;
  let mount: RunningMount;
  let serverPid: () => Promise<number>;

  beforeAll(async () => {
    dir = await makeTestDir();
    served = path.join(dir, 'skills');
    await cp(EXAMPLES, served, { recursive: true });
    ({ mount, server, serverPid } = await mountSdkServer(dir, served, transport, 'default', QUIET_ARGS));
  }, 60_000);

  afterAll(async () => {
    await mount?.stop();
    await server?.stop();
  });

  it('a changed and an added file are in cat, ls and skills.json within the held time + 2 s', async () => {
    const skill = 'acme/billing/refunds';
    const relative = `${skill}/examples/email.md`;
    const file = path.join(mount.mountpoint, 'sdk', relative);
    const examples = path.join(mount.mountpoint, 'sdk', skill, 'examples');
    const resourcesDigest = async () => {
      const document = JSON.parse((await run('cat', [path.join(mount.mountpoint, 'skills.json')])).stdout) as { servers: Array<{ skills: Array<{ path: string; resourcesDigest: string }> }> };
      return document.servers[0]!.skills.find((entry) => entry.path === `sdk/${skill}`)!.resourcesDigest;
    };
    // Read once: from now on the kernel holds the name, the attributes and the pages.
    const before = await readFile(path.join(served, relative));
    expect((await runBytes('cat', [file])).stdout.equals(before)).toBe(true);
    expect((await run('ls', [examples])).stdout).not.toMatch(/added\.md/);
    const digestBefore = await resourcesDigest();
    const after = Buffer.concat([before, Buffer.from('\nP.S. A change that no event announced.\n')]);
    await writeFile(path.join(served, relative), after);
    await writeFile(path.join(served, skill, 'examples', 'added.md'), 'added\n');
    process.kill(await serverPid(), 'SIGUSR2');
    await delay(300); // the reload itself
    const startedMs = performance.now();
    const seen: Record<'cat' | 'ls' | 'skills.json', number | undefined> = { cat: undefined, ls: undefined, 'skills.json': undefined };
    while (performance.now() - startedMs < QUIET_BOUND_MS + 5_000 && Object.values(seen).some((at) => at === undefined)) {
      const at = performance.now() - startedMs;
      const read = await runBytes('cat', [file]);
      expect(read.stdout.equals(before) || read.stdout.equals(after), `read ${read.stdout.length} bytes`).toBe(true);
      if (seen.cat === undefined && read.stdout.equals(after)) seen.cat = at;
      if (seen.ls === undefined && /added\.md/.test((await run('ls', [examples])).stdout)) seen.ls = at;
      if (seen['skills.json'] === undefined && (await resourcesDigest()) !== digestBefore) seen['skills.json'] = at;
      await delay(100);
    }
    if (process.env['SHOW_DELAYS']) process.stderr.write(`delays over ${transport}: ${JSON.stringify(seen)}\n`);
    for (const what of ['cat', 'ls', 'skills.json'] as const) {
      expect(seen[what], `${what} never showed the change:\n${mount.log().slice(-2000)}`).toBeDefined();
      expect(seen[what]!, what).toBeLessThan(QUIET_BOUND_MS);
    }
    // The premise: the server announced nothing (its own line, relayed from its stderr over stdio).
    if (transport === 'stdio') expect(mount.log()).toMatch(/reloaded .*"listChanged":false/);
  }, 40_000);
});
