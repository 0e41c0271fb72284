// Item 9 of issue 22: a configured header value (a token) never appears in a log line, a
// status reason or an error message, whoever wrote the text (undici quotes a value it refuses;
// a server may quote the token it refuses); and a header no request could carry is a
// ConfigError at start naming the server and the header, never the value.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMountConfig } from '../../src/config/config.js';
import { ConfigError, UnavailableError } from '../../src/errors.js';
import { Connection } from '../../src/mcp/connection.js';
import { headerRedactor } from '../../src/mcp/redaction.js';
import { withTempDir } from '../support/temp-dir.js';

const SECRET = 'sk-live-4f9a8b7c6d5e';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function configWith(headers: Record<string, string>, env: Record<string, string>) {
  return withTempDir('skills-mount-headers-', async (dir) => {
    const file = path.join(dir, 'config.json');
    await writeFile(file, JSON.stringify({ mcpServers: { web: { url: 'https://example.com/mcp', headers } } }));
    return loadMountConfig({ configPath: file, env: { HOME: '/home/alex', ...env } });
  });
}

describe('a header no request could carry is a configuration error at start', () => {
  it('a line break in an expanded variable: ConfigError naming server and header, not the value', async () => {
    const error = await configWith({ Authorization: 'Bearer ${TOKEN}' }, { TOKEN: `${SECRET}\nX-Injected: 1` }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/server "web".*"headers"\."Authorization": the value \(after expanding variables; not shown\) contains a line break/);
    expect((error as Error).message).not.toContain(SECRET);
    expect((error as Error).message).not.toContain('Bearer');
  });

  it('a NUL, or a character HTTP cannot carry, in a value; an invalid header name', async () => {
    for (const value of [`${SECRET}\u0000`, `${SECRET}\u0100`]) {
      const error = await configWith({ 'X-Key': '${KEY}' }, { KEY: value }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/"X-Key": the value .*not shown/);
      expect((error as Error).message).not.toContain(SECRET);
    }
    const error = await configWith({ 'X Key': SECRET }, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/"X Key" is not a valid HTTP header name/);
    expect((error as Error).message).not.toContain(SECRET);
  });

  it('good headers pass unchanged', async () => {
    const config = await configWith({ Authorization: 'Bearer ${TOKEN}', 'X-Tab': 'a\tb' }, { TOKEN: SECRET });
    expect(config.servers[0]!.config).toEqual({ kind: 'http', url: 'https://example.com/mcp', headers: { Authorization: `Bearer ${SECRET}`, 'X-Tab': 'a\tb' } });
  });
});

describe('header values are redacted from every text the mount shows', () => {
  it('the redactor: whole values, their escaped and first-line forms, a token alone, and undici quotes', () => {
    const redact = headerRedactor({ Authorization: `Bearer ${SECRET}\nsecond-line-part` });
    expect(redact(`Headers.append: "Bearer ${SECRET}\nsecond-line-part" is an invalid header value.`)).toBe('Headers.append: [redacted]');
    expect(redact(`Headers.append: "Bearer ${SECRET}`)).toBe('Headers.append: [redacted]');
    expect(redact(`token Bearer ${SECRET}\\nsecond-line-part refused`)).toBe('token [redacted] refused');
    expect(redact(`the token ${SECRET} is revoked`)).toBe('the token [redacted] is revoked');
    expect(redact('HTTP 401 Unauthorized')).toBe('HTTP 401 Unauthorized');
  });

  it('a value the HTTP library refuses: not in the log, the status reason, or a request error', async () => {
    const lines: string[] = [];
    // Straight to the connection, past the config check: the library's own error must still be redacted.
    const connection = new Connection('h', { kind: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: `Bearer ${SECRET}\nX` } }, { timeoutMs: 2_000, log: (line) => lines.push(line), minBackoffMs: 60_000 });
    cleanups.push(() => connection.close());
    await connection.start();
    const status = connection.connection();
    expect(status.status).toBe('failed');
    const error = await connection.request('resources/read', { uri: 'skill://a/SKILL.md' }, (await import('zod')).z.looseObject({})).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    const shown = [...lines, JSON.stringify(status), (error as Error).message].join('\n');
    expect(shown).toMatch(/cannot connect/);
    expect(shown).not.toContain(SECRET);
  });

  it('a server that quotes the token it refuses: not in the log or the status reason', async () => {
    const server: Server = createServer((request, response) => {
      request.resume();
      response.writeHead(400, { 'content-type': 'text/plain' }).end(`token ${request.headers.authorization} is revoked`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const lines: string[] = [];
    const connection = new Connection('h', { kind: 'http', url, headers: { Authorization: `Bearer ${SECRET}` } }, { timeoutMs: 2_000, log: (line) => lines.push(line), minBackoffMs: 60_000 });
    cleanups.push(() => connection.close());
    await connection.start();
    const shown = [...lines, JSON.stringify(connection.connection())].join('\n');
    expect(shown).toMatch(/token \[redacted\] is revoked/);
    expect(shown).not.toContain(SECRET);
  });
});
