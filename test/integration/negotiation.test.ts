// Protocol revision negotiation against real SDK v2 servers: 2026-07-28 first, the 2025
// handshake as fallback, a pinned revision, a mismatch (a clear error, not a retry loop),
// and a server that changes era across a restart.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Connection } from '../../src/mcp/connection.js';
import type { ServerConfig } from '../../src/config/server-config.js';
import type { ProtocolVersionChoice } from '../../src/protocol/revisions.js';
import { startListening } from '../support/http-server.js';
import { delay } from '../support/poll.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

const SDK_SERVER = fileURLToPath(new URL('../support/sdk-skills-server.mjs', import.meta.url));
const EXAMPLES = fileURLToPath(new URL('../../examples/skills', import.meta.url));

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function stdio(mode: string): ServerConfig {
  return { kind: 'stdio', command: process.execPath, args: [SDK_SERVER, EXAMPLES, mode], env: {}, cwd: undefined };
}

async function http(mode: 'http-modern' | 'http-default'): Promise<ServerConfig> {
  const server = await startListening([SDK_SERVER, EXAMPLES, mode]);
  cleanups.push(() => server.stop());
  return { kind: 'http', url: server.url, headers: {} };
}

async function connect(config: ServerConfig, protocolVersion: ProtocolVersionChoice) {
  const lines: string[] = [];
  const connection = new Connection('srv', config, { timeoutMs: 5_000, protocolVersion, log: (line) => lines.push(line), minBackoffMs: 100 });
  cleanups.push(() => connection.close());
  await connection.start();
  return { connection, lines };
}

describe('protocol revision negotiation', () => {
  it('a 2025-only server: negotiation falls back to the initialize handshake', async () => {
    const { connection } = await connect(stdio('stdio-legacy'), 'negotiate');
    expect(connection.connection()).toEqual({ status: 'connected', protocolVersion: '2025-11-25' });
  });

  it('a server of both eras: 2026-07-28 is chosen, over stdio and HTTP', async () => {
    expect((await connect(stdio('stdio'), 'negotiate')).connection.connection()).toEqual({ status: 'connected', protocolVersion: '2026-07-28' });
    expect((await connect(await http('http-default'), 'negotiate')).connection.connection()).toEqual({ status: 'connected', protocolVersion: '2026-07-28' });
  });

  it('a 2026-only server: connected at 2026-07-28; pinning 2025-11-25 there is a clear mismatch, not retried', async () => {
    const config = await http('http-modern');
    expect((await connect(config, 'negotiate')).connection.connection()).toEqual({ status: 'connected', protocolVersion: '2026-07-28' });
    const { connection, lines } = await connect(config, '2025-11-25');
    const status = connection.connection();
    expect(status.status).toBe('incompatible');
    expect('reason' in status && status.reason).toMatch(/protocol version mismatch: the server supports 2026-07-28; skills-mount offered only 2025-11-25 \(pinned\)/);
    await delay(1_000);
    expect(lines.filter((line) => /mismatch/.test(line))).toHaveLength(1);
    expect(lines.join('\n')).not.toMatch(/retrying in/);
  });

  it('pinning 2026-07-28 against a 2025-only server is a clear mismatch, not retried', async () => {
    const { connection, lines } = await connect(stdio('stdio-legacy'), '2026-07-28');
    const status = connection.connection();
    expect(status.status).toBe('incompatible');
    expect('reason' in status && status.reason).toMatch(/did not offer 2026-07-28 through server\/discover; skills-mount offered only 2026-07-28 \(pinned\)/);
    expect(lines.join('\n')).not.toMatch(/retrying in/);
  });

  it('a server that changes era across a restart is followed', async () => {
    const dir = await makeTempDir('skills-mount-era-');
    cleanups.push(() => removeDir(dir));
    const { connection, lines } = await connect(stdio(`stdio-flip:${path.join(dir, 'starts')}`), 'negotiate');
    expect(connection.connection()).toEqual({ status: 'connected', protocolVersion: '2025-11-25' });
    // The server process dies; the connection restarts it, and it now speaks 2026-07-28 too.
    const pid = Number((await import('node:child_process')).execFileSync('pgrep', ['-f', `stdio-flip:${path.join(dir, 'starts')}`], { encoding: 'utf8' }).trim().split('\n')[0]);
    process.kill(pid, 'SIGKILL');
    await expect.poll(() => connection.connection(), { timeout: 10_000 }).toEqual({ status: 'connected', protocolVersion: '2026-07-28' });
    expect(lines.join('\n')).toMatch(/connected \(protocol 2025-11-25\)[\s\S]*connected \(protocol 2026-07-28\)/);
  });
});
