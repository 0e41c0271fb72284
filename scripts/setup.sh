#!/usr/bin/env bash
# Sets up a checkout: Debian's fuse3 (fusermount3), libfuse3-dev and pkg-config (the addon is
# built against them), libfuse2 (the libfuse 2 fallback, fuse-native), npm ci, the addon, build.
# Installing fuse3 removes Debian's old `fuse` package (fuse3 Breaks it and ships `fusermount`
# as a link to fusermount3); libfuse2, the library, stays for the fallback.
# Idempotent and quick when everything is already in place.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v fusermount3 >/dev/null 2>&1 || ! pkg-config --exists fuse3 2>/dev/null || ! ldconfig -p 2>/dev/null | grep -q 'libfuse\.so\.2'; then
  echo "setup: installing Debian packages fuse3, libfuse3-dev, pkg-config and libfuse2" >&2
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq fuse3 libfuse3-dev pkg-config libfuse2 >/dev/null
fi

# npm ci only when the lockfile changed since the last install.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci" >&2
  npm ci --no-audit --no-fund --loglevel=error
fi

# The libfuse 3 addon (npm ci builds it too; this catches a native source changed since).
scripts/build-native.sh

# Build only when a source file is newer than the last build.
if [ ! -f dist/.build-stamp ] || [ -n "$(find src tsconfig.json package.json -newer dist/.build-stamp -print -quit)" ]; then
  echo "setup: building" >&2
  rm -rf dist
  npx tsc -p tsconfig.json
  chmod +x dist/cli/skills-mount.js dist/cli/skills-serve.js
  touch dist/.build-stamp
fi
