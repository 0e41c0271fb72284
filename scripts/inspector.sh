#!/usr/bin/env bash
# Installs the MCP Inspector (npm @modelcontextprotocol/inspector, pinned) into a prefix of its own
# (default <repo>/.cache/inspector), never into the project's node_modules: it pulls vite and react.
# It needs Node >= 22.19, so the tests run it on the pinned Node 24 of scripts/node24.sh.
# Idempotent: a stamp per version makes a re-run instant.
# Usage: scripts/inspector.sh [PREFIX]   (test/support/inspector.ts reads the same layout)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="${1:-$root/.cache/inspector}"
version=2.12.0
stamp="$prefix/.installed-$version"
[ -f "$stamp" ] && exit 0
echo "inspector: installing @modelcontextprotocol/inspector@$version into $prefix" >&2
mkdir -p "$prefix"
# A package.json of its own, so npm does not walk up to the repo's (and never touches its lockfile).
echo '{ "name": "inspector", "private": true }' >"$prefix/package.json"
rm -f "$prefix"/.installed-*
node24="$("$root/scripts/node24.sh")"
# npm runs on the Node it is started with: Node 24's, so the engines check (>= 22.19) is the one that applies.
PATH="$(dirname "$node24"):$PATH" npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "@modelcontextprotocol/inspector@$version" >&2
installed="$(PATH="$(dirname "$node24"):$PATH" node -p "require('$prefix/node_modules/@modelcontextprotocol/inspector/package.json').version")"
if [ "$installed" != "$version" ]; then
  echo "inspector: installed version is $installed, not $version" >&2
  exit 1
fi
touch "$stamp"
