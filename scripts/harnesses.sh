#!/usr/bin/env bash
# Installs the real coding-agent harnesses the harness tests drive (test/harness), pinned, each into
# a prefix of its own under PREFIX (default <repo>/.cache/harnesses), never globally; and Debian's
# ripgrep, which OpenCode's skill tool needs. Idempotent: a stamp per version makes a re-run instant.
# Usage: scripts/harnesses.sh [PREFIX]   (test/support/harness/harnesses.ts reads the same layout)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="${1:-$root/.cache/harnesses}"

# name  package  version  executable. Claude Code stays on 2.1.x: later releases need Node 22, this machine runs 20.
harnesses=(
  "claude-code @anthropic-ai/claude-code 2.1.197 claude"
  "codex @openai/codex 0.171.0 codex"
  "gemini @google/gemini-cli 0.61.0 gemini"
  "opencode opencode-ai 1.18.33 opencode"
)

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v rg >/dev/null 2>&1; then
  echo "harnesses: installing Debian package ripgrep (OpenCode's skill tool lists files with rg)" >&2
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq ripgrep >/dev/null
fi

# A harness answers --version with its version once installed; run in a scratch HOME, as each
# writes its state folders under HOME on any start.
check_version() {
  local exe="$1" version="$2" scratch out
  scratch="$(mktemp -d)"
  out="$(HOME="$scratch" XDG_CONFIG_HOME="$scratch/.config" XDG_DATA_HOME="$scratch/.local/share" XDG_CACHE_HOME="$scratch/.cache" XDG_STATE_HOME="$scratch/.local/state" \
    timeout 60 "$exe" --version 2>&1 || true)"
  rm -rf "$scratch"
  if [[ "$out" != *"$version"* ]]; then
    echo "harnesses: $exe --version does not say $version: $out" >&2
    return 1
  fi
}

for line in "${harnesses[@]}"; do
  read -r name package version exe <<<"$line"
  dir="$prefix/$name"
  stamp="$dir/.installed-$version"
  [ -f "$stamp" ] && continue
  echo "harnesses: installing $package@$version into $dir" >&2
  mkdir -p "$dir"
  # A package.json of its own, so npm does not walk up to the repo's (and never touches its lockfile).
  echo "{ \"name\": \"harness-$name\", \"private\": true }" >"$dir/package.json"
  rm -f "$dir"/.installed-*
  # Claude Code and OpenCode put their native binary in place in an install script, so scripts run
  # whatever the user's npm config says; optional ones that fail (keytar, node-pty) are not needed.
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --ignore-scripts=false "$package@$version" >&2
  check_version "$dir/node_modules/.bin/$exe" "$version"
  touch "$stamp"
done
