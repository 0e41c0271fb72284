#!/usr/bin/env bash
# Sets up a checkout: Debian's fuse + libfuse2 (the mount needs them), npm ci, build.
# Idempotent and quick when everything is already in place.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v fusermount >/dev/null 2>&1 || ! ldconfig -p 2>/dev/null | grep -q 'libfuse\.so\.2'; then
  echo "setup: installing Debian packages fuse and libfuse2" >&2
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq fuse libfuse2 >/dev/null
fi

# npm ci only when the lockfile changed since the last install.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci" >&2
  npm ci --no-audit --no-fund --loglevel=error
fi

# Build only when a source file is newer than the last build.
if [ ! -f dist/.build-stamp ] || [ -n "$(find src tsconfig.json package.json -newer dist/.build-stamp -print -quit)" ]; then
  echo "setup: building" >&2
  rm -rf dist
  npx tsc -p tsconfig.json
  chmod +x dist/cli/skills-mount.js dist/cli/skills-serve.js
  touch dist/.build-stamp
fi
