#!/usr/bin/env bash
# Removes FUSE mounts a dead test or daemon left under DIR (default: /tmp/skills-mount-test),
# stale ones (ENOTCONN) included: aborts each mount's kernel connection, so no process stays
# blocked on it, then lazily unmounts it. For a live mount, prefer `skills-mount unmount`.
# usage: scripts/fuse-cleanup.sh [DIR]
set -u
under="${1:-/tmp/skills-mount-test}"
connections=/sys/fs/fuse/connections
mountpoint -q "$connections" 2>/dev/null || mount -t fusectl none "$connections" 2>/dev/null || true
# /proc/mounts escapes spaces and the like as octal (\040); printf %b turns them back.
awk '$3 ~ /^fuse\./ || $3 == "fuse" { print $2 }' /proc/mounts | while read -r escaped; do
  target="$(printf '%b' "$escaped")"
  case "$target" in "$under"*) ;; *) continue ;; esac
  device="$(mountpoint -d "$target" 2>/dev/null | cut -d: -f2)"
  if [ -n "$device" ] && [ -w "$connections/$device/abort" ]; then echo 1 >"$connections/$device/abort"; fi
  fusermount -uz "$target" 2>/dev/null || umount -l "$target" 2>/dev/null || true
  echo "unmounted $target"
done
