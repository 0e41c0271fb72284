#!/bin/sh
# The container image's entrypoint: mounts at $SKILLS_MOUNT_POINT with the config at
# $SKILLS_MOUNT_CONFIG, extra arguments passed on (--allow-user 1000, --metrics 0.0.0.0:9464);
# a first argument that is a command (snapshot, serve, verify, status, ...) runs that command as given.
#   SKILLS_MOUNT_BIN     the command to run (default skills-mount), split into words
#   SKILLS_MOUNT_POINT   where to mount (default /var/lib/skills-mount/mnt)
#   SKILLS_MOUNT_CONFIG  the config file (default /etc/skills-mount/config.json)
# It execs, so SIGTERM from the runtime reaches skills-mount itself, which unmounts, stops
# its servers and exits 0. A mount left by a killed predecessor at the same path is
# recovered by skills-mount itself (a stale one is detached, a live one refused): it never
# stacks a second mount there.
set -eu

# SKILLS_MOUNT_BIN is split into words on purpose ("node /opt/skills-mount/dist/cli/skills-mount.js"
# is a command and its first argument); set -f keeps a * or ? in it from matching file names.
set -f
bin=${SKILLS_MOUNT_BIN:-skills-mount}

case "${1:-}" in
  snapshot | serve | verify | status | unmount | cache | approve | revoke | approvals | --help | --version)
    # shellcheck disable=SC2086 # split on purpose, see above
    exec $bin "$@"
    ;;
esac

mountpoint=${SKILLS_MOUNT_POINT:-/var/lib/skills-mount/mnt}
# Parents made here get the umask's modes (0755), so the --allow-user user can pass through;
# skills-mount would make the ones it creates 0700. A stale mount at the path answers stat
# with ENOTCONN and makes mkdir -p fail: that, and any other failure, is left to
# skills-mount, which recovers the stale mount or says what is wrong with the path.
mkdir -p -- "$mountpoint" 2>/dev/null || :
# shellcheck disable=SC2086 # split on purpose, see above
exec $bin "$mountpoint" --config "${SKILLS_MOUNT_CONFIG:-/etc/skills-mount/config.json}" "$@"
