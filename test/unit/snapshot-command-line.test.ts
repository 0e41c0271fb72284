// The command line of `snapshot` and `verify`, and the snapshot's progress line on a terminal.
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/command-line.js';
import { ConfigError } from '../../src/errors.js';
import { SnapshotProgress } from '../../src/cli/progress.js';

describe('skills-mount snapshot and verify on the command line', () => {
  it('snapshot takes the mount\'s server flags and its own', () => {
    const command = parseCommandLine(['snapshot', '/skills/current', '--server', 'docs=npx docs', '--only', 'docs', '--approved', '--include-dynamic', '--watch', '--timeout', '2.5', '--no-disk-cache']);
    expect(command).toEqual({
      command: 'snapshot',
      options: {
        dest: '/skills/current',
        configPath: undefined,
        serverFlags: ['docs=npx docs'],
        only: ['docs'],
        timeoutMs: 2_500,
        diskCache: undefined,
        approved: true,
        includeDynamic: true,
        watch: true,
        allowSharedParent: false,
        protocolVersion: undefined,
        verbose: false,
      },
    });
    expect(parseCommandLine(['snapshot', 'out'])).toMatchObject({ options: { approved: false, watch: false, includeDynamic: false, diskCache: { root: undefined, limitBytes: 1024 * 1024 * 1024 } } });
    expect(parseCommandLine(['snapshot', 'out', '--allow-shared-parent'])).toMatchObject({ options: { allowSharedParent: true } });
  });

  it('usage errors are ConfigErrors (exit 2): no DEST, two, an unknown flag, a bad timeout, a mount-only flag', () => {
    for (const argv of [['snapshot'], ['snapshot', 'a', 'b'], ['snapshot', 'a', '--bogus'], ['snapshot', 'a', '--timeout', '0'], ['snapshot', 'a', '--metadata-ttl', '5'], ['verify'], ['verify', 'a', 'b']]) {
      expect(() => parseCommandLine(argv), argv.join(' ')).toThrow(ConfigError);
    }
  });

  it('verify takes one DEST, --json, --expect sha256:<hex> and --against-server with the servers to list; "snapshot" and "verify" are commands only as the first argument', () => {
    expect(parseCommandLine(['verify', 'out', '--json'])).toEqual({ command: 'verify', options: { dest: 'out', json: true, expectDigest: undefined } });
    const digest = `sha256:${'Ab'.repeat(32)}`;
    expect(parseCommandLine(['verify', 'out', '--expect', digest])).toMatchObject({ options: { expectDigest: digest.toLowerCase() } });
    for (const bad of ['ab'.repeat(32), 'sha256:abc', `sha1:${'a'.repeat(40)}`]) {
      expect(() => parseCommandLine(['verify', 'out', '--expect', bad]), bad).toThrow(`--expect takes the manifest digest snapshot printed (sha256: and 64 hex digits), got "${bad}"`);
    }
    expect(parseCommandLine(['verify', 'out', '--against-server', '--config', 'c.json', '--server', 'docs=npx docs', '--only', 'docs', '--timeout', '3'])).toMatchObject({
      options: { againstServer: { configPath: 'c.json', serverFlags: ['docs=npx docs'], only: ['docs'], timeoutMs: 3_000 } },
    });
    expect(parseCommandLine(['verify', 'out', '--against-server'])).toMatchObject({ options: { againstServer: { configPath: undefined, serverFlags: [], only: [], timeoutMs: 10_000 } } });
    expect(() => parseCommandLine(['verify', 'out', '--config', 'c.json'])).toThrow('--config goes with --against-server: verify lists servers only to compare with them');
    expect(parseCommandLine(['./snapshot'])).toMatchObject({ command: 'mount', options: { mountpoint: './snapshot' } });
  });
});

describe('the progress line', () => {
  it('shows servers, skills, files and bytes on a terminal, and nothing when stderr is no terminal', () => {
    const written: string[] = [];
    const stream = { isTTY: true, columns: 200, write: (text: string) => (written.push(text), true) };
    const progress = new SnapshotProgress(stream, 2);
    progress.start();
    progress.walked(10, 3);
    progress.fileDone(2 * 1024 * 1024, 'fetched');
    progress.fileDone(1024 * 1024, 'linked');
    expect(progress.line()).toMatch(/^. [\d.]+s {2}2 servers; 3 skills, 2\/10 files, 3\.0 MiB \(1 linked, 1 fetched\)$/);
    progress.log('skills-mount: a line');
    progress.stop();
    expect(written.join('')).toContain('skills-mount: a line\n');
    expect(written.at(-1)).toBe('\r\x1b[2K');
    const quiet: string[] = [];
    const off = new SnapshotProgress({ write: (text: string) => (quiet.push(text), true) }, 1);
    off.start();
    off.walked(1, 1);
    off.log('only this');
    off.stop();
    expect(quiet).toEqual(['only this\n']);
  });
});
