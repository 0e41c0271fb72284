#!/usr/bin/env bash
# Sets up a checkout: Debian's fuse3 (fusermount3), libfuse3-dev and pkg-config (the addon is
# built against them), build-essential and python3 (node-gyp's toolchain), npm ci, the addon built from source (native/build: a checkout has no
# prebuilds; the package does, see scripts/prebuild.sh), and dist. No libfuse 2: fuse-native is
# gone since 0.2.0. Installing fuse3 removes Debian's old `fuse` package (fuse3 Breaks it and ships
# `fusermount` as a link to fusermount3). Idempotent and quick when everything is already in place.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# The addon is built by node-gyp (bundled with npm), which needs python3, make and a C and C++
# compiler (gyp links with g++): a minimal Debian image has none of them.
if ! command -v fusermount3 >/dev/null 2>&1 || ! pkg-config --exists fuse3 2>/dev/null || ! command -v gcc >/dev/null 2>&1 || ! command -v g++ >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
  echo "setup: installing Debian packages fuse3, libfuse3-dev, pkg-config, build-essential and python3" >&2
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq fuse3 libfuse3-dev pkg-config build-essential python3 >/dev/null
fi

# npm ci only when the lockfile changed since the last install.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci" >&2
  npm ci --no-audit --no-fund --loglevel=error
fi

# The libfuse 3 addon, built from source (the package has no install script: npm ci builds nothing).
SKILLS_FUSE_REQUIRED=1 scripts/build-native.sh

# Build only when a source file is newer than the last build.
if [ ! -f dist/.build-stamp ] || [ -n "$(find src tsconfig.json package.json -newer dist/.build-stamp -print -quit)" ]; then
  echo "setup: building" >&2
  rm -rf dist
  npx tsc -p tsconfig.json
  chmod +x dist/cli/skills-mount.js dist/cli/skills-serve.js
  touch dist/.build-stamp
fi
