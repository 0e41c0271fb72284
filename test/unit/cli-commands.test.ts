// The command line (subcommands vs mountpoints), status rendering, the mount table and
// the startup progress line, without a kernel mount.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { parseCommandLine } from '../../src/cli/command-line.js';
import { labelledSkillPath } from '../../src/config/server-selection.js';
import { skillsMounts } from '../../src/fuse/index.js';
import { StartupProgress } from '../../src/cli/progress.js';
import { formatBytes, formatDuration, renderStatusText, type StatusReport } from '../../src/cli/status.js';

describe('command line', () => {
  it('keeps the mount command line as it was', () => {
    expect(parseCommandLine(['/mnt/s', '--config', 'c.json', '--timeout', '2.5', '--cache-size', '64', '--no-dynamic', '--verbose'])).toEqual({
      command: 'mount',
      options: {
        mountpoint: '/mnt/s',
        configPath: 'c.json',
        serverFlags: [],
        only: [],
        timeoutMs: 2_500,
        startupTimeoutMs: 30_000,
        cacheBytes: 64 * 1024 * 1024,
        diskCache: { root: undefined, limitBytes: 1024 * 1024 * 1024, rootLimitBytes: 2048 * 1024 * 1024 },
        metadataTtlSeconds: undefined,
        hideDynamic: true,
        approvedOnly: [],
        protocolVersion: undefined,
        allowUser: undefined,
        metrics: undefined,
        verbose: true,
        lockfile: undefined,
        background: false,
        stopWhenUnmounted: false,
        logFile: undefined,
      },
    });
  });

  it('--allow-user takes a name or a uid; --metrics [HOST:]PORT, loopback unless a host is given', () => {
    expect(parseCommandLine(['/m', '--allow-user', 'nobody'])).toMatchObject({ options: { allowUser: 'nobody' } });
    expect(parseCommandLine(['/m', '--allow-user', '1000'])).toMatchObject({ options: { allowUser: '1000' } });
    expect(() => parseCommandLine(['/m', '--allow-user', 'a b'])).toThrow(/--allow-user takes a user name or a numeric uid, got "a b"/);
    expect(() => parseCommandLine(['/m', '--allow-user', '../x'])).toThrow(/--allow-user/);
    expect(parseCommandLine(['/m', '--metrics', '9464'])).toMatchObject({ options: { metrics: { host: '127.0.0.1', port: 9464 } } });
    expect(parseCommandLine(['/m', '--metrics', ':9464'])).toMatchObject({ options: { metrics: { host: '127.0.0.1', port: 9464 } } });
    expect(parseCommandLine(['/m', '--metrics', '0.0.0.0:9464'])).toMatchObject({ options: { metrics: { host: '0.0.0.0', port: 9464 } } });
    expect(parseCommandLine(['/m', '--metrics', '[::1]:9464'])).toMatchObject({ options: { metrics: { host: '::1', port: 9464 } } });
    for (const bad of ['0', '65536', 'host:', 'x:y', '1.2.3.4:99999', '']) {
      expect(() => parseCommandLine(['/m', '--metrics', bad]), bad).toThrow(/--metrics takes \[HOST:\]PORT/);
    }
  });

  it('--fuse-backend and --metadata-ttl: libfuse3 alone remains, libfuse2 is a usage error that says why', () => {
    expect(parseCommandLine(['/m', '--fuse-backend', 'libfuse3', '--metadata-ttl', '5'])).toMatchObject({ options: { metadataTtlSeconds: 5 } });
    expect(parseCommandLine(['/m'])).toMatchObject({ options: { metadataTtlSeconds: undefined } });
    expect(() => parseCommandLine(['/m', '--fuse-backend', 'libfuse2'])).toThrow(
      new ConfigError('--fuse-backend libfuse2 is gone: the libfuse 2 fallback (fuse-native) was removed in 0.2.0; the mount runs on the libfuse 3 addon (drop the option)'),
    );
    expect(() => parseCommandLine(['/m', '--fuse-backend', 'fuse4'])).toThrow(/--fuse-backend must be libfuse3 \(the only backend; the option can be dropped\), got "fuse4"/);
  });

  it('approve, revoke and approvals: their arguments, and what each refuses', () => {
    expect(parseCommandLine(['/m', '--approved-only', 'a,b', '--approved-only', 'c'])).toMatchObject({ options: { approvedOnly: ['a', 'b', 'c'] } });
    expect(parseCommandLine(['approve', '/m/docs/x', '/m/docs/y', '--yes'])).toEqual({ command: 'approve', paths: ['/m/docs/x', '/m/docs/y'], yes: true, grantAllowedTools: false, grantExec: false, servers: undefined });
    expect(parseCommandLine(['approve', '/m/docs/x', '-y', '--grant-allowed-tools'])).toMatchObject({ yes: true, grantAllowedTools: true, grantExec: false });
    expect(parseCommandLine(['approve', '/m/docs/x', '-y', '--grant-exec'])).toMatchObject({ yes: true, grantAllowedTools: false, grantExec: true });
    expect(() => parseCommandLine(['approve', '/m/docs/x', '--grant-allowed-tools'])).toThrow(/--grant-allowed-tools goes with --yes/);
    expect(() => parseCommandLine(['approve', '/m/docs/x', '--grant-exec'])).toThrow(/--grant-exec goes with --yes/);
    expect(() => parseCommandLine(['approve'])).toThrow(/approve takes one or more skill directories/);
    expect(parseCommandLine(['revoke', '--label', 'docs', '--uri', 'skill://x/SKILL.md'])).toEqual({ command: 'revoke', paths: [], label: 'docs', uri: 'skill://x/SKILL.md', servers: undefined });
    expect(() => parseCommandLine(['revoke', '--label', 'docs'])).toThrow(/--label and --uri go together/);
    expect(() => parseCommandLine(['revoke', '/m/docs/x', '--label', 'docs', '--uri', 'u'])).toThrow(/not both/);
    expect(parseCommandLine(['approvals', '--json'])).toEqual({ command: 'approvals', json: true });
    expect(() => parseCommandLine(['approvals', 'x'])).toThrow(/approvals takes no arguments/);
  });

  it('approve and revoke without a mount: --config, --server and --only name the servers, and each PATH is LABEL/SKILLDIR', () => {
    expect(parseCommandLine(['approve', 'docs/guide', 'docs/a/b/', 'docs/c/SKILL.md', '--config', 'c.json', '--only', 'docs', '--yes', '--grant-exec'])).toEqual({
      command: 'approve',
      paths: ['docs/guide', 'docs/a/b/', 'docs/c/SKILL.md'],
      yes: true,
      grantAllowedTools: false,
      grantExec: true,
      servers: { configPath: 'c.json', serverFlags: [], only: ['docs'] },
    });
    expect(parseCommandLine(['approve', 'docs/guide', '--server', 'docs=npx docs-mcp', '--server', 'b=https://x/mcp'])).toMatchObject({
      servers: { configPath: undefined, serverFlags: ['docs=npx docs-mcp', 'b=https://x/mcp'], only: [] },
    });
    expect(parseCommandLine(['revoke', 'docs/guide', '--config', 'c.json'])).toEqual({ command: 'revoke', paths: ['docs/guide'], label: undefined, uri: undefined, servers: { configPath: 'c.json', serverFlags: [], only: [] } });
    for (const command of ['approve', 'revoke']) {
      expect(() => parseCommandLine([command, '/m/docs/guide', '--config', 'c.json'])).toThrow(/each PATH is LABEL\/SKILLDIR .*"\/m\/docs\/guide" is absolute/);
      expect(() => parseCommandLine([command, 'guide', '--config', 'c.json'])).toThrow(/"guide" names no skill directory under a label/);
      expect(() => parseCommandLine([command, 'docs/../x', '--server', 'docs=x'])).toThrow(/"docs\/..\/x" has an empty, "." or ".." segment/);
      expect(() => parseCommandLine([command, 'docs//x', '--config', 'c.json'])).toThrow(/empty/);
      expect(() => parseCommandLine([command, '/m/docs/guide', '--only', 'docs'])).toThrow(/--only goes with --config or --server/);
    }
    expect(() => parseCommandLine(['revoke', '--label', 'docs', '--uri', 'u', '--config', 'c.json'])).toThrow(/need no server: --config goes with LABEL\/SKILL/);
    expect(labelledSkillPath('docs/a/b/SKILL.md')).toEqual({ label: 'docs', directory: 'a/b' });
  });

  it('the disk cache is on by default (1 GiB); --cache-dir and --disk-cache-size set it, --no-disk-cache turns it off and refuses the other two', () => {
    expect(parseCommandLine(['/m', '--cache-dir', '/c', '--disk-cache-size', '8'])).toMatchObject({ options: { diskCache: { root: '/c', limitBytes: 8 * 1024 * 1024 } } });
    expect(parseCommandLine(['/m', '--no-disk-cache'])).toMatchObject({ options: { diskCache: undefined } });
    // The whole root's bound: 2048 MiB, never below this mount's own.
    expect(parseCommandLine(['/m', '--disk-cache-total-size', '100'])).toMatchObject({ options: { diskCache: { rootLimitBytes: 100 * 1024 * 1024 } } });
    expect(parseCommandLine(['/m', '--disk-cache-size', '4096'])).toMatchObject({ options: { diskCache: { rootLimitBytes: 4096 * 1024 * 1024 } } });
    expect(() => parseCommandLine(['/m', '--no-disk-cache', '--disk-cache-total-size', '1'])).toThrow('--no-disk-cache cannot be combined');
    expect(() => parseCommandLine(['/m', '--no-disk-cache', '--cache-dir', '/c'])).toThrow(/--no-disk-cache cannot be combined with --cache-dir/);
    expect(() => parseCommandLine(['/m', '--disk-cache-size', '0'])).toThrow(/--disk-cache-size must be a positive number, got "0"/);
  });

  it('cache status|prune|clear [LABEL]: only clear takes a label; anything else is refused with the choices', () => {
    expect(parseCommandLine(['cache', 'status', '--json', '--cache-dir', '/c'])).toEqual({ command: 'cache', action: 'status', label: undefined, cacheDir: '/c', configPath: undefined, json: true });
    expect(parseCommandLine(['cache', 'clear', 'docs'])).toMatchObject({ command: 'cache', action: 'clear', label: 'docs' });
    expect(() => parseCommandLine(['cache', 'prune', 'docs'])).toThrow(/cache prune takes no LABEL/);
    expect(() => parseCommandLine(['cache', 'wipe'])).toThrow(/cache takes one of status, prune, clear, got "wipe"/);
    expect(parseCommandLine(['./cache'])).toMatchObject({ command: 'mount', options: { mountpoint: './cache' } });
  });

  it('--protocol-version pins one revision for every server; anything else is refused with the choices', () => {
    expect(parseCommandLine(['/m', '--protocol-version', '2025-11-25'])).toMatchObject({ options: { protocolVersion: '2025-11-25' } });
    expect(parseCommandLine(['/m', '--protocol-version=2026-07-28'])).toMatchObject({ options: { protocolVersion: '2026-07-28' } });
    expect(() => parseCommandLine(['/m', '--protocol-version', '2024'])).toThrow(/--protocol-version must be one of negotiate, 2026-07-28, 2025-11-25, got "2024"/);
  });

  it('--metadata-ttl sets the kernel cache bound; 0 is allowed, nonsense is refused', () => {
    expect(parseCommandLine(['/m', '--metadata-ttl', '0'])).toMatchObject({ options: { metadataTtlSeconds: 0 } });
    expect(parseCommandLine(['/m', '--metadata-ttl', '2.5'])).toMatchObject({ options: { metadataTtlSeconds: 2.5 } });
    for (const bad of ['-1', 'soon', '100000']) expect(() => parseCommandLine(['/m', `--metadata-ttl=${bad}`])).toThrow(/--metadata-ttl must be/);
  });

  it('"status" and "unmount" are commands only as the first argument; ./status mounts', () => {
    expect(parseCommandLine(['status'])).toEqual({ command: 'status', mountpoint: undefined, json: false });
    expect(parseCommandLine(['status', '/m', '--json'])).toEqual({ command: 'status', mountpoint: '/m', json: true });
    expect(parseCommandLine(['unmount', '/m'])).toEqual({ command: 'unmount', mountpoint: '/m' });
    expect(parseCommandLine(['./status'])).toMatchObject({ command: 'mount', options: { mountpoint: './status' } });
    expect(parseCommandLine(['--verbose', 'status'])).toMatchObject({ command: 'mount', options: { mountpoint: 'status' } });
  });

  it('collects repeated --server and --only', () => {
    expect(parseCommandLine(['/m', '--server', 'a=x', '--server', 'b=http://h/mcp', '--only', 'a', '--only', 'b'])).toMatchObject({
      options: { serverFlags: ['a=x', 'b=http://h/mcp'], only: ['a', 'b'] },
    });
  });

  it('help and version win; errors say what is wrong', () => {
    expect(parseCommandLine(['--help'])).toEqual({ command: 'help' });
    expect(parseCommandLine(['-h', '/m'])).toEqual({ command: 'help' });
    expect(parseCommandLine(['status', '--help'])).toEqual({ command: 'help' });
    expect(parseCommandLine(['--version'])).toEqual({ command: 'version' });
    expect(() => parseCommandLine([])).toThrow('MOUNTPOINT is required');
    expect(() => parseCommandLine(['/m', '--timeout', '0'])).toThrow('--timeout must be a positive number, got "0"');
    expect(() => parseCommandLine(['/m', '--bogus'])).toThrow('unknown option --bogus');
    expect(() => parseCommandLine(['unmount'])).toThrow('unmount takes exactly one MOUNTPOINT');
    expect(() => parseCommandLine(['/m', '--server', 'a=node', 'server.js'])).toThrow(/got 2: \/m server.js \(quote the whole --server value/);
  });
});

describe('mount table', () => {
  it('finds skills-mount mounts (topmost per path, escapes decoded) and nothing else', async () => {
    const table = [
      '22 1 0:21 / /proc rw,nosuid - proc proc rw',
      '40 22 0:50 / /tmp/a\\040b/mnt ro,nosuid,nodev,noexec - fuse.skills-mount skills-mount ro,user_id=0',
      '41 22 0:51 / /tmp/over rw - fuse.skills-mount skills-mount ro',
      '42 41 0:52 / /tmp/over rw - tmpfs tmpfs rw',
      '43 22 0:53 / /tmp/sshfs rw - fuse.sshfs host: rw',
    ].join('\n');
    expect(await skillsMounts(table)).toEqual([{ id: '40', parentId: '22', device: '0:50', mountpoint: '/tmp/a b/mnt', fsType: 'fuse.skills-mount', source: 'skills-mount', connection: '50', options: 'ro,nosuid,nodev,noexec' }]);
  });
});

describe('status text', () => {
  const now = Date.parse('2025-01-01T12:00:00Z');
  const report: StatusReport = {
    mounts: [
      {
        mountpoint: '/home/u/.cache/mcp-skills',
        state: 'ok',
        pid: 4242,
        startedAt: '2025-01-01T11:57:55Z',
        cache: { usedBytes: 1_572_864, limitBytes: 256 * 1024 * 1024 },
        recentErrors: ['2025-01-01T11:59:00.000Z [docs] skill://x/SKILL.md: digest mismatch'],
        servers: [
          { label: 'demo', state: 'connected', protocolVersion: '2026-07-28', generation: 'listing', listingComplete: true, skills: 1234, declined: 2, rejected: 1, changed: 3, problems: 0 },
          { label: 'old', state: 'incompatible', reason: 'protocol version mismatch: the server supports 2025-06-18; skills-mount offered only 2026-07-28 (pinned)', generation: null, listingComplete: false, skills: 0, declined: 0, rejected: 0, changed: 0, problems: 0 },
          { label: 'broken', state: 'failed', reason: 'cannot connect: spawn nope ENOENT', generation: null, listingComplete: false, skills: 0, declined: 0, rejected: 0, changed: 0, problems: 0 },
        ],
      },
      { mountpoint: '/tmp/dead', state: 'stale', detail: 'the daemon is gone (Transport endpoint is not connected)' },
      { mountpoint: '/tmp/hung', state: 'not-responding', detail: 'skills.json did not answer within 2 s' },
    ],
  };

  it('shows daemon, servers, counts, errors, and a fix for broken mounts', () => {
    expect(renderStatusText(report, now)).toBe(
      [
        '/home/u/.cache/mcp-skills  up 2m 05s, pid 4242, cache 1.5 MiB of 256 MiB',
        '  SERVER  STATE                   DISCOVERY  SKILLS  NOTES',
        '  demo    connected (2026-07-28)  listing      1234  2 declined; 1 rejected (failed verification); 3 changed since first listed',
        '  old     incompatible            -               0  protocol version mismatch: the server supports 2025-06-18; skills-mount offered only 2026-07-28 (pinned)',
        '  broken  failed                  -               0  cannot connect: spawn nope ENOENT',
        '  3 servers (1 connected), 1234 skills',
        '  recent errors (1, latest last):',
        '    2025-01-01T11:59:00.000Z [docs] skill://x/SKILL.md: digest mismatch',
        '',
        '/tmp/dead  STALE: the daemon is gone (Transport endpoint is not connected)',
        '  fix: skills-mount unmount /tmp/dead',
        '',
        '/tmp/hung  NOT RESPONDING: skills.json did not answer within 2 s',
        '  fix: skills-mount unmount /tmp/hung',
        '',
      ].join('\n'),
    );
    expect(renderStatusText({ mounts: [] })).toBe('no skills-mount mounts\n');
  });

  it('formats sizes and durations for people', () => {
    expect([formatBytes(0), formatBytes(512), formatBytes(2048), formatBytes(300 * 1024 * 1024)]).toEqual(['0 B', '512 B', '2.0 KiB', '300 MiB']);
    expect([formatDuration(3_400), formatDuration(125_000), formatDuration(4 * 3600_000 + 600_000), formatDuration(50 * 3600_000)]).toEqual([
      '3s',
      '2m 05s',
      '4h 10m',
      '2d 2h',
    ]);
  });
});

describe('startup progress', () => {
  function fakeStream(isTTY: boolean) {
    const writes: string[] = [];
    return { writes, stream: { isTTY, columns: 60, write: (text: string) => writes.push(text) > 0 } };
  }

  it('on a TTY: redraws one line, prints logs above it, and leaves nothing behind', () => {
    const { writes, stream } = fakeStream(true);
    const progress = new StartupProgress(stream, 3);
    progress.serverConnected();
    progress.serverListed(1500);
    progress.serverFailed();
    expect(progress.line()).toMatch(/^. \d+\.\ds  1\/3 servers connected, 1 failed, 1 starting; 1,500 skills listed from 1 server$/);
    progress.log('skills-mount: [a] connected');
    progress.finish();
    const screen = writes.join('');
    expect(screen).toContain('\r\x1b[2Kskills-mount: [a] connected\n');
    expect(screen.endsWith('\r\x1b[2K')).toBe(true);
    expect(writes.every((text) => text.replace(/\x1b\[2K|\r/g, '').length <= 60)).toBe(true);
  });

  it('not on a TTY: only the log lines', () => {
    const { writes, stream } = fakeStream(false);
    const progress = new StartupProgress(stream, 2);
    progress.serverConnected();
    progress.serverListed(3);
    progress.log('skills-mount: [a] connected');
    progress.finish();
    expect(writes).toEqual(['skills-mount: [a] connected\n']);
    expect(progress.skillCount).toBe(3);
  });
});
