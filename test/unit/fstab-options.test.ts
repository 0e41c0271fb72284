// The fstab form's -o options (src/cli/fstab-options.ts) and `skills-mount CONFIG MOUNTPOINT -o
// OPTIONS` as mount.fuse3 runs it (src/cli/command-line.ts): each option becomes its flag, mount(8)'s
// generic ones change nothing, anything else is refused by name.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parseCommandLine, type MountOptions } from '../../src/cli/command-line.js';
import { MOUNT_OPTION_NAMES, MountOptionError, mountOptionFlags } from '../../src/cli/fstab-options.js';
import { ConfigError } from '../../src/errors.js';

function mountOptions(argv: string[]): MountOptions {
  const command = parseCommandLine(argv);
  if (command.command !== 'mount') throw new Error(`not a mount: ${command.command}`);
  return command.options;
}

describe('mountOptionFlags', () => {
  it('maps every option to its flag; a ":" list becomes the flag\'s comma list', () => {
    expect(
      mountOptionFlags([
        'allow_user=agent,only=docs:team,approved_only=team,lock=/srv/p/skills-lock.json,timeout=5,startup_timeout=60,cache_size=64,cache_dir=/var/cache/s',
        'disk_cache_size=512,disk_cache_total_size=1024,no_disk_cache,metadata_ttl=30,no_dynamic,protocol_version=2025-11-25,metrics=127.0.0.1:9464,log=/var/log/s.log,verbose',
      ]),
    ).toEqual([
      '--allow-user', 'agent', '--only', 'docs,team', '--approved-only', 'team', '--lock', '/srv/p/skills-lock.json', '--timeout', '5', '--startup-timeout', '60',
      '--cache-size', '64', '--cache-dir', '/var/cache/s', '--disk-cache-size', '512', '--disk-cache-total-size', '1024', '--no-disk-cache', '--metadata-ttl', '30',
      '--no-dynamic', '--protocol-version', '2025-11-25', '--metrics', '127.0.0.1:9464', '--log-file', '/var/log/s.log', '--verbose',
    ]);
  });

  it("ignores mount(8)'s generic options, x-systemd.* and comment=, as mount.fuse3 passes them on", () => {
    expect(mountOptionFlags(['rw,nosuid,nodev,noexec,relatime,defaults,_netdev,nofail,noauto,user,x-systemd.automount,x-systemd.requires=network-online.target,comment=x,dev,suid'])).toEqual([]);
    expect(mountOptionFlags(['rw,only=docs,dev,suid'])).toEqual(['--only', 'docs']);
    expect(mountOptionFlags([',,only=docs,'])).toEqual(['--only', 'docs']);
  });

  it('keeps everything after the first "=" as the value (a metrics address, a path with "=")', () => {
    expect(mountOptionFlags(['metrics=[::1]:9464,lock=/srv/a=b/skills-lock.json'])).toEqual(['--metrics', '[::1]:9464', '--lock', '/srv/a=b/skills-lock.json']);
  });

  it('refuses an unknown option by name, listing the ones it takes', () => {
    expect(() => mountOptionFlags(['rw,bogus=1'])).toThrow(MountOptionError);
    expect(() => mountOptionFlags(['rw,bogus=1'])).toThrow(/^-o bogus=1: unknown mount option "bogus" \(skills-mount takes allow_user, only, .*, log, verbose, and mount\(8\)'s generic ones\)$/);
    // A flag's own spelling is not an option name.
    expect(() => mountOptionFlags(['allow-user=agent'])).toThrow(/unknown mount option "allow-user"/);
  });

  it('refuses allow_other, naming allow_user=NAME as the way to let one more user read', () => {
    expect(() => mountOptionFlags(['allow_other'])).toThrow(/^-o allow_other: a skills mount is host-private .*-o allow_user=NAME lets one more user read it$/);
    expect(() => mountOptionFlags(['allow_other'])).toThrow(ConfigError);
  });

  it('refuses a value where none is taken, and an option without its value', () => {
    expect(() => mountOptionFlags(['no_dynamic=1'])).toThrow('-o no_dynamic=1: no_dynamic takes no value');
    expect(() => mountOptionFlags(['only'])).toThrow('-o only: needs a value (only=...)');
    expect(() => mountOptionFlags(['lock='])).toThrow('-o lock: needs a value (lock=...)');
  });
});

describe('skills-mount CONFIG MOUNTPOINT -o OPTIONS (the fstab form)', () => {
  it('takes CONFIG as --config and runs in the background, its -o options as flags', () => {
    expect(mountOptions(['/etc/skills-mount/config.json', '/srv/skills', '-o', 'rw,allow_user=agent,only=docs:team,log=/var/log/skills.log,dev,suid'])).toMatchObject({
      configPath: '/etc/skills-mount/config.json',
      mountpoint: '/srv/skills',
      allowUser: 'agent',
      // As --only docs,team gives it (the config loader splits the list).
      only: ['docs,team'],
      logFile: '/var/log/skills.log',
      background: true,
    });
  });

  it('stays in the foreground with --foreground, takes -oOPTIONS glued and several -o', () => {
    expect(mountOptions(['c.json', '/srv/skills', '-oonly=docs', '-o', 'no_dynamic', '--foreground'])).toMatchObject({ configPath: 'c.json', only: ['docs'], hideDynamic: true, background: false });
  });

  it('the one-mountpoint form is unchanged: foreground, no log file; --log-file needs the fstab form', () => {
    expect(mountOptions(['/srv/skills', '--config', 'c.json', '-o', 'only=docs'])).toMatchObject({ configPath: 'c.json', only: ['docs'], background: false, logFile: undefined });
    expect(() => parseCommandLine(['/srv/skills', '--log-file', '/tmp/x.log'])).toThrow(/--log-file goes with the fstab form/);
    expect(() => parseCommandLine(['c.json', '/srv/skills', '--config', 'd.json'])).toThrow(/drop --config/);
  });

  it('refuses a bad -o option before anything starts', () => {
    expect(() => parseCommandLine(['c.json', '/srv/skills', '-o', 'rw,allow_other'])).toThrow(MountOptionError);
    expect(() => parseCommandLine(['c.json', '/srv/skills', '-o'])).toThrow('-o needs a list of mount options');
  });
});

describe('docs/fstab.md', () => {
  const doc = () => readFile(new URL('../../docs/fstab.md', import.meta.url), 'utf8');

  it('its option table names exactly the options skills-mount takes', async () => {
    const documented = [...(await doc()).matchAll(/^\| `([a-z_]+)[=`]/gm)].map((match) => match[1]);
    expect(documented.sort()).toEqual([...MOUNT_OPTION_NAMES].sort());
  });

  it('every fstab line it shows is one skills-mount accepts, as mount.fuse3 passes it', async () => {
    const lines = [...(await doc()).matchAll(/^(\/\S+)\s+(\/\S+)\s+fuse\.skills-mount\s+(\S+)\s+0\s+0$/gm)];
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const [, config, mountpoint, options] of lines) {
      // mount(8) keeps x-* options for itself; the rest reach skills-mount, after its own rw.
      const passed = options!.split(',').filter((option) => !option.startsWith('x-'));
      expect(mountOptions([config!, mountpoint!, '-o', ['rw', ...passed, 'dev', 'suid'].join(',')])).toMatchObject({ configPath: config, mountpoint, allowUser: 'agent', only: ['docs,team'], background: true });
    }
  });
});
