#!/usr/bin/env bash
# Installs the real coding-agent harnesses the harness tests drive (test/harness), pinned, each into
# a prefix of its own under PREFIX (default <repo>/.cache/harnesses), never globally; and Debian's
# ripgrep, which OpenCode's skill tool needs. Idempotent: a stamp per version makes a re-run instant.
# Usage: scripts/harnesses.sh [PREFIX]   (test/support/harness/harnesses.ts reads the same layout)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="${1:-$root/.cache/harnesses}"

# name  package  version. Claude Code stays on 2.1.x: later releases need Node 22, this machine runs 20.
harnesses=(
  "claude-code @anthropic-ai/claude-code 2.1.197"
  "codex @openai/codex 0.171.0"
  "gemini @google/gemini-cli 0.61.0"
  "opencode opencode-ai 1.18.33"
)

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v rg >/dev/null 2>&1; then
  echo "harnesses: installing Debian package ripgrep (OpenCode's skill tool lists files with rg)" >&2
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq ripgrep >/dev/null
fi

for line in "${harnesses[@]}"; do
  read -r name package version <<<"$line"
  dir="$prefix/$name"
  stamp="$dir/.installed-$version"
  [ -f "$stamp" ] && continue
  echo "harnesses: installing $package@$version into $dir" >&2
  mkdir -p "$dir"
  # A package.json of its own, so npm does not walk up to the repo's (and never touches its lockfile).
  echo "{ \"name\": \"harness-$name\", \"private\": true }" >"$dir/package.json"
  rm -f "$dir"/.installed-*
  # Install scripts that fail (keytar, node-pty in gemini-cli's optional deps) are not needed offline.
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$package@$version" >&2
  touch "$stamp"
done
