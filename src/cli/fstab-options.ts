// The fstab form of the mount: `mount -t fuse.skills-mount CONFIG MOUNTPOINT -o OPTIONS` runs
// `skills-mount CONFIG MOUNTPOINT -o OPTIONS` (mount.fuse3's convention). Each -o option becomes
// the flag it names; the generic ones mount(8) adds (rw, dev, suid, _netdev, x-systemd.*, ...)
// are accepted and change nothing; any other is refused by name. Pure: argv in, argv out.
import { ConfigError } from '../errors.js';

/** mount(8)'s own options, which it passes on to every helper: they say nothing to skills-mount. */
const GENERIC = new Set([
  'rw', 'ro', 'dev', 'nodev', 'suid', 'nosuid', 'exec', 'noexec', 'auto', 'noauto', 'user', 'nouser', 'users', 'owner', 'group',
  'defaults', 'async', 'sync', 'dirsync', 'atime', 'noatime', 'relatime', 'norelatime', 'strictatime', 'nostrictatime', 'lazytime',
  'nolazytime', 'diratime', 'nodiratime', 'iversion', 'noiversion', 'mand', 'nomand', 'silent', 'loud', '_netdev', 'nofail',
]);

/** Option name -> the flag it sets; `list`: a ':'-separated value (a comma would end the -o option). */
const FLAGS: Record<string, { flag: string; value: 'none' | 'one' | 'list' }> = {
  allow_user: { flag: '--allow-user', value: 'one' },
  only: { flag: '--only', value: 'list' },
  approved_only: { flag: '--approved-only', value: 'list' },
  lock: { flag: '--lock', value: 'one' },
  timeout: { flag: '--timeout', value: 'one' },
  startup_timeout: { flag: '--startup-timeout', value: 'one' },
  cache_size: { flag: '--cache-size', value: 'one' },
  cache_dir: { flag: '--cache-dir', value: 'one' },
  disk_cache_size: { flag: '--disk-cache-size', value: 'one' },
  disk_cache_total_size: { flag: '--disk-cache-total-size', value: 'one' },
  no_disk_cache: { flag: '--no-disk-cache', value: 'none' },
  metadata_ttl: { flag: '--metadata-ttl', value: 'one' },
  no_dynamic: { flag: '--no-dynamic', value: 'none' },
  protocol_version: { flag: '--protocol-version', value: 'one' },
  metrics: { flag: '--metrics', value: 'one' },
  log: { flag: '--log-file', value: 'one' },
  verbose: { flag: '--verbose', value: 'none' },
};

/** A -o option refused: said in one line (mount(8) shows its helper's output as it is), no usage after it. */
export class MountOptionError extends ConfigError {
  override name = 'MountOptionError';
}

/** The names -o takes, for the help and the refusal. */
export const MOUNT_OPTION_NAMES: readonly string[] = Object.keys(FLAGS);

/** The flags one or more `-o` values stand for (each a comma-separated list). */
export function mountOptionFlags(lists: readonly string[]): string[] {
  const flags: string[] = [];
  for (const option of lists.flatMap((list) => list.split(',')).filter((option) => option !== '')) {
    const equals = option.indexOf('=');
    const name = equals === -1 ? option : option.slice(0, equals);
    const value = equals === -1 ? undefined : option.slice(equals + 1);
    if (GENERIC.has(name) || name.startsWith('x-') || name === 'comment') continue;
    if (name === 'allow_other') {
      throw new MountOptionError('-o allow_other: a skills mount is host-private (a skill is input for its user alone); -o allow_user=NAME lets one more user read it');
    }
    const known = FLAGS[name];
    if (known === undefined) throw new MountOptionError(`-o ${option}: unknown mount option "${name}" (skills-mount takes ${MOUNT_OPTION_NAMES.join(', ')}, and mount(8)'s generic ones)`);
    if (known.value === 'none') {
      if (value !== undefined) throw new MountOptionError(`-o ${option}: ${name} takes no value`);
      flags.push(known.flag);
      continue;
    }
    if (value === undefined || value === '') throw new MountOptionError(`-o ${name}: needs a value (${name}=...)`);
    flags.push(known.flag, known.value === 'list' ? value.split(':').join(',') : value);
  }
  return flags;
}
