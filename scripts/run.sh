#!/usr/bin/env bash
# Sets up, then runs the mount in the foreground: scripts/run.sh MOUNTPOINT [skills-mount options]
# With no config file, it mounts the bundled demo skills as MOUNTPOINT/demo. Ctrl-C unmounts.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
exec node "$root/dist/cli/skills-mount.js" "$@"
