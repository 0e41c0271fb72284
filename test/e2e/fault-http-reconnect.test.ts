// A Streamable HTTP server that goes away and comes back on the same port, under a real
// mount: the loss is noticed without waiting for a deadline (the broken subscriptions/listen
// stream on 2026-07-28), reads fail fast meanwhile (cached verified files still served), and
// the reconnect negotiates afresh. A 2025 session the restarted server forgot is replaced.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Connection } from '../../src/mcp/connection.js';
import { serverStates, timed } from '../support/fault-harness.js';
import { run, runBytes } from '../support/fuse-harness.js';
import { freePort, startHttpServe, type ListeningServer } from '../support/http-server.js';
import { CORPUS_DIR, makeTestDir, startMount, type RunningMount } from '../support/mount-harness.js';
import { waitFor } from '../support/poll.js';
import { requireFuse } from '../support/require-fuse.js';
import { writeSkill } from '../support/skill-builder.js';

requireFuse();

describe('an HTTP server that dies and comes back on the same port', () => {
  let mount: RunningMount;
  let server: ListeningServer | undefined;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    server = await startHttpServe([CORPUS_DIR], { port });
    mount = await startMount({ config: { web: { url: server.url } }, args: ['--timeout', '30'] });
  });
  afterAll(async () => {
    await mount?.stop();
    await server?.stop();
  });

  const inMount = (file: string) => path.join(mount.mountpoint, 'web', file);
  const source = (file: string) => readFile(path.join(CORPUS_DIR, file));
  const connects = () => (mount.log().match(/\[web\] connected/g) ?? []).length;

  it('notices the loss, fails reads fast, serves cached files, and reconnects with a new session', async () => {
    const cached = 'commit-message/SKILL.md';
    expect((await runBytes('cat', [inMount(cached)])).stdout.equals(await source(cached))).toBe(true);

    await server!.stop({ signal: 'SIGKILL' });
    // Nothing was asked of the server: the broken event stream alone marks the connection lost.
    await waitFor(async () => (await serverStates(mount.mountpoint))[0]?.state !== 'connected', 10_000, 'state not connected');
    const [state] = await serverStates(mount.mountpoint);
    expect(state!.reason).toMatch(/connection lost|cannot connect/);
    expect(mount.log()).toMatch(/\[web\] connection lost: [^\n]*; retrying in 0\.5 s/);

    const down = await timed(() => run('cat', [inMount('api-reference/SKILL.md')]));
    expect(down.value.stderr).toMatch(/Input\/output error/);
    expect(down.elapsedMs).toBeLessThan(2_000);
    expect((await runBytes('cat', [inMount(cached)])).stdout.equals(await source(cached))).toBe(true);

    server = await startHttpServe([CORPUS_DIR], { port });
    await waitFor(async () => (await serverStates(mount.mountpoint))[0]?.state === 'connected', 20_000, 'state connected');
    // The restarted server remembers nothing: working reads prove a fresh connection.
    const file = 'api-reference/SKILL.md';
    expect((await runBytes('cat', [inMount(file)])).stdout.equals(await source(file))).toBe(true);
    expect(connects()).toBe(2);
  });

  it('a server restarted at once (killed and back before the next request) is reconnected too', async () => {
    const before = connects();
    await server!.stop({ signal: 'SIGKILL' });
    server = await startHttpServe([CORPUS_DIR], { port });
    await waitFor(() => connects() > before, 20_000, 'reconnect');
    const file = 'brand-fonts/SKILL.md';
    expect((await runBytes('cat', [inMount(file)])).stdout.equals(await source(file))).toBe(true);
    expect(mount.child.exitCode).toBeNull();
  });

  it('a server that stays away: reads keep failing fast with EIO and the daemon keeps retrying', async () => {
    await server!.stop({ signal: 'SIGKILL' });
    server = undefined;
    await waitFor(async () => (await serverStates(mount.mountpoint))[0]?.state !== 'connected', 10_000, 'state not connected');
    for (let i = 0; i < 3; i++) {
      const attempt = await timed(() => run('cat', [inMount('localization/SKILL.md')]));
      expect(attempt.value.code).not.toBe(0);
      expect(attempt.elapsedMs).toBeLessThan(2_000);
    }
    await mount.waitForLog(/\[web\] cannot connect: [^\n]*fetch failed[^\n]*; retrying in \d+ s/, 10_000);
  });
});

describe('a 2025 session the restarted server does not know (no event stream to notice the loss)', () => {
  it('the 404 fails that request, and the reconnect opens a new session that works', async () => {
    const port = await freePort();
    let server = await startHttpServe([CORPUS_DIR], { port });
    const lines: string[] = [];
    // The real SDK transport, but without the standalone GET stream (405, as a server may
    // answer), so only a failing request can reveal that the server restarted.
    const noEventStream: typeof fetch = (input, init) =>
      init?.method === 'GET' ? Promise.resolve(new Response(null, { status: 405 })) : fetch(input, init);
    const connection = new Connection(
      'web',
      { kind: 'http', url: server.url, headers: {} },
      {
        timeoutMs: 10_000,
        protocolVersion: '2025-11-25',
        log: (line) => lines.push(line),
        minBackoffMs: 50,
        createTransport: () => new StreamableHTTPClientTransport(new URL(server.url), { fetch: noEventStream }),
      },
    );
    const read = () => connection.request('resources/read', { uri: 'skill://commit-message/SKILL.md' }, z.looseObject({ contents: z.array(z.unknown()) }));
    try {
      await connection.start();
      expect((await read()).contents).toHaveLength(1);
      await server.stop({ signal: 'SIGKILL' });
      server = await startHttpServe([CORPUS_DIR], { port });
      expect(connection.connection().status).toBe('connected');
      await expect(read()).rejects.toMatchObject({ name: 'UnavailableError' });
      expect(lines.join('\n')).toMatch(/\[web\] connection lost: [^\n]*Session not found[^\n]*; retrying in 0\.05 s/);
      await waitFor(() => connection.connection().status === 'connected', 10_000, 'reconnect');
      expect((await read()).contents).toHaveLength(1);
      expect(server.log()).toMatch(/session \S+ opened \(1 open\)/);
    } finally {
      await connection.close();
      await server.stop();
    }
  });
});

// The seed's index generation: directories below a SKILL.md are known only from
// resources/directory/read. While the server is away, one never read cannot be known: EIO with
// a log line, never an empty listing; one read before is served as it was read.
describe('a directory the server cannot read while it is away', () => {
  let mount: RunningMount;
  let server: ListeningServer | undefined;

  beforeAll(async () => {
    const dir = await makeTestDir();
    const skills = path.join(dir, 'skills');
    await writeSkill(skills, 's1', { files: { 'refs/y.md': 'y\n', 'refs/deep/x.md': 'x\n', 'held/z.md': 'z\n' } });
    server = await startHttpServe([skills, '--protocol', 'index']);
    mount = await startMount({ dir, config: { idx: { url: server.url } }, args: ['--metadata-ttl', '0', '--timeout', '2'] });
  });
  afterAll(async () => {
    await mount?.stop();
    await server?.stop();
  });

  it('is EIO, logged with server and URI, never empty; a directory read before is served as read', async () => {
    const skill = path.join(mount.mountpoint, 'idx', 's1');
    expect((await run('ls', [skill])).stdout.split('\n').filter(Boolean).sort()).toEqual(['SKILL.md', 'held', 'refs']);
    expect((await run('ls', [path.join(skill, 'held')])).stdout).toBe('z.md\n');
    await server!.stop({ signal: 'SIGKILL' });
    // Past the first reconnect attempt: the server's capabilities are no longer on the connection.
    await waitFor(async () => /\[idx\] cannot connect/.test(mount.log()), 10_000, 'a reconnect attempt failed');
    for (let attempt = 0; attempt < 3; attempt++) {
      const refs = await run('ls', [path.join(skill, 'refs')]);
      expect(refs.stdout).toBe('');
      expect(refs.stderr).toMatch(/Input\/output error/);
      expect(refs.code).not.toBe(0);
    }
    expect(mount.log()).toMatch(/readdir \/idx\/s1\/refs: .*idx: resources\/directory\/read skill:\/\/s1\/refs/);
    const held = await run('ls', [path.join(skill, 'held')]);
    expect(held.stdout).toBe('z.md\n');
    expect(held.code).toBe(0);
  });
});
