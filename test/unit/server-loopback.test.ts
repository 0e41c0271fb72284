// Which hosts count as this machine's loopback for skills-serve's DNS-rebinding checks.
import { describe, expect, it } from 'vitest';
import { isLoopbackHost, loopbackRefusal } from '../../src/server/loopback.js';

describe('isLoopbackHost', () => {
  it.each(['localhost', 'LOCALHOST', '127.0.0.1', '127.0.0.2', '127.255.255.254', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '[::ffff:7f00:2]'])(
    '%s is loopback',
    (host) => expect(isLoopbackHost(host)).toBe(true),
  );
  it.each(['evil.example', '128.0.0.1', '126.255.255.255', '0.0.0.0', '::', '::2', '10.0.0.1', 'localhost.evil.example', '127.0.0.1.evil.example', 'localhost.', ''])(
    '%s is not',
    (host) => expect(isLoopbackHost(host)).toBe(false),
  );
});

describe('loopbackRefusal', () => {
  const at = (headers: Record<string, string>): Request => new Request('http://127.0.0.2:1/mcp', { headers });
  it('passes loopback Hosts (numeric forms included) and the bound name, with or without an Origin', () => {
    for (const host of ['127.0.0.2:8', '127.1:8', '[::1]:8', 'localhost', 'myhost:8']) {
      expect(loopbackRefusal(at({ host }), ['myhost']), host).toBeUndefined();
      expect(loopbackRefusal(at({ host, origin: 'http://localhost:3000' }), ['myhost']), host).toBeUndefined();
    }
  });
  it('refuses a foreign Host, a foreign or opaque Origin, and a Host with credentials in it', async () => {
    const refusedHeaders: Array<Record<string, string>> = [{ host: 'evil.example' }, { host: 'evil.example@127.0.0.1' }, { host: '127.0.0.1', origin: 'http://evil.example' }, { host: '127.0.0.1', origin: 'null' }, { host: '127.0.0.1', origin: 'file://' }, { host: '127.0.0.1', origin: 'http://x@127.0.0.1' }];
    for (const headers of refusedHeaders) {
      const refused = loopbackRefusal(at(headers));
      expect(refused?.status, JSON.stringify(headers)).toBe(403);
      expect(await refused!.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    }
  });
});
