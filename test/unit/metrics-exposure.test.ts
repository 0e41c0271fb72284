// The --metrics exposure warning: which bound addresses reach this host only, and the one line
// that says, for any other, what a reader of the endpoint learns (labels, skill counts, the
// mountpoint's path).
import { describe, expect, it } from 'vitest';
import { exposureWarning, isLoopbackAddress, warnIfExposed } from '../../src/metrics/index.js';

const FACTS = { servers: ['docs', 'tools'], mountpoint: '/srv/skills' };

describe('the metrics exposure warning', () => {
  it('takes 127.0.0.0/8, ::1 and IPv4-mapped loopback for this host only, and nothing else', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) expect(isLoopbackAddress(address), address).toBe(true);
    for (const address of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.20', '::ffff:10.0.0.5', 'fe80::1', '2001:db8::1']) expect(isLoopbackAddress(address), address).toBe(false);
  });

  it('says nothing on a loopback address', () => {
    expect(exposureWarning({ url: 'http://127.0.0.1:9464', address: '127.0.0.1' }, FACTS)).toBeUndefined();
    expect(exposureWarning({ url: 'http://localhost:9464', address: '::1' }, FACTS)).toBeUndefined();
  });

  it('on every address, names what anyone who reaches it reads: the labels, the skill counts, the mountpoint', () => {
    expect(exposureWarning({ url: 'http://0.0.0.0:9464', address: '0.0.0.0' }, FACTS)).toBe(
      'warning: --metrics listens on every address of this host (http://0.0.0.0:9464), with no authentication and no TLS: anyone who can reach it reads ' +
        '/metrics (the server labels docs, tools, how many skills each shows, declines and rejects, whether each is up, request, error and FUSE operation counts, ' +
        "cache sizes, the process's memory and Node version) and /healthz (the mountpoint /srv/skills in its reasons); " +
        'expose it only on a network you trust, or keep it on 127.0.0.1 behind an authenticating proxy (docs/metrics.md)',
    );
    expect(exposureWarning({ url: 'http://[::]:9464', address: '::' }, FACTS)).toMatch(/^warning: --metrics listens on every address of this host \(http:\/\/\[::\]:9464\)/);
  });

  it('on one address, names it; many labels are cut short with a count', () => {
    const servers = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    const warning = exposureWarning({ url: 'http://10.0.0.5:9464', address: '10.0.0.5' }, { servers, mountpoint: '/m' });
    expect(warning).toMatch(/^warning: --metrics listens on 10\.0\.0\.5, not a loopback address \(http:\/\/10\.0\.0\.5:9464\)/);
    expect(warning).toContain('the server labels a, b, c, d, e, f and 2 more,');
  });

  it('warnIfExposed logs the one line, or nothing', () => {
    const lines: string[] = [];
    warnIfExposed({ url: 'http://127.0.0.1:9464', address: '127.0.0.1' }, FACTS, (line) => lines.push(line));
    expect(lines).toEqual([]);
    warnIfExposed({ url: 'http://0.0.0.0:9464', address: '0.0.0.0' }, FACTS, (line) => lines.push(line));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('the server labels docs, tools,');
  });
});
