// Item 14 of issue 22 (first part): a response over the mount's own message cap is reported
// as that, "response larger than the mount's own cap of N bytes", never as the server closing
// the connection. Over stdio the transport must drop the connection (the stream is mid-message)
// and reconnects; over HTTP only the request fails. The cap is set small here (1 MiB).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/errors.js';
import { McpSkillSource } from '../../src/mcp/mcp-skill-source.js';
import { HOSTILE_SERVER, hostileSkill, scriptedServer } from '../support/hostile-scenario.js';
import { startHttpServe } from '../support/http-server.js';
import { waitFor } from '../support/poll.js';
import { skillMd } from '../support/skill-builder.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

const CAP = 1 << 20;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a response over the mount\'s message cap', () => {
  it('over stdio: the request and the log name the mount\'s cap, not the server; the connection comes back', async () => {
    const dir = await makeTempDir('skills-mount-oversize-');
    cleanups.push(() => removeDir(dir));
    const server = await scriptedServer(
      dir,
      'big',
      { listing: true, skills: [hostileSkill('big', 'a big file', { 'big.txt': { text: 'x', repeat: 2 * CAP } })] },
      HOSTILE_SERVER,
    );
    const lines: string[] = [];
    const source = new McpSkillSource('big', server, { timeoutMs: 5_000, log: (line) => lines.push(line), maxMessageBytes: CAP, minBackoffMs: 100 });
    cleanups.push(() => source.close());
    await source.start();
    const error = await source.readResource('skill://big/big.txt').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toBe(`big: resources/read skill://big/big.txt: response larger than the mount's own cap of ${CAP} bytes (a message exceeds the ${CAP}-byte limit)`);
    await waitFor(() => lines.some((line) => /retrying in/.test(line)), 5_000, 'the reconnect to be scheduled');
    const log = lines.join('\n');
    expect(log).toMatch(new RegExp(`\\[big\\] connection closed: response larger than the mount's own cap of ${CAP} bytes.*; retrying in 0\\.1 s`));
    expect(log).not.toMatch(/closed by the server|server closed the connection/);
    await waitFor(() => source.connection().status === 'connected', 5_000, 'the reconnect');
    expect((await source.readResource('skill://big/SKILL.md')).bytes.toString()).toBe(skillMd('big', 'a big file'));
  });

  it('over HTTP: the request names the mount\'s cap; the connection stays (2026-07-28) or is replaced saying why (a 2025 event stream)', async () => {
    const dir = await makeTempDir('skills-mount-oversize-http-');
    cleanups.push(() => removeDir(dir));
    await mkdir(path.join(dir, 'big'));
    await writeFile(path.join(dir, 'big', 'SKILL.md'), skillMd('big', 'a big file'));
    await writeFile(path.join(dir, 'big', 'big.txt'), 'x'.repeat(2 * CAP));
    const server = await startHttpServe([dir]);
    cleanups.push(() => server.stop());
    for (const protocolVersion of ['2026-07-28', '2025-11-25'] as const) {
      const lines: string[] = [];
      const source = new McpSkillSource('big', { kind: 'http', url: server.url, headers: {} }, { timeoutMs: 5_000, protocolVersion, log: (line) => lines.push(line), maxMessageBytes: CAP, minBackoffMs: 100 });
      cleanups.push(() => source.close());
      await source.start();
      const error = await source.readResource('skill://big/big.txt').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnavailableError);
      expect((error as Error).message).toMatch(new RegExp(`^big: resources/read skill://big/big.txt: response larger than the mount's own cap of ${CAP} bytes`));
      if (protocolVersion === '2025-11-25') {
        // The answer came as an event stream, cut mid-event: the session is replaced, and the log says why.
        expect(lines.join('\n')).toMatch(/\[big\] connection closed: response larger than the mount's own cap of 1048576 bytes/);
        await waitFor(() => source.connection().status === 'connected', 5_000, 'the reconnect');
      } else expect(source.connection()).toEqual({ status: 'connected', protocolVersion });
      expect((await source.readResource('skill://big/SKILL.md')).bytes.toString()).toBe(skillMd('big', 'a big file'));
      expect(lines.join('\n')).not.toMatch(/closed by the server|server closed the connection|connection lost/);
    }
  });
});
