#!/usr/bin/env bash
# The official conformance suite's SEP-2640 server scenarios against skills-serve --http,
# at the suite's default revision (2026-07-28) and at 2025-11-25, under the pinned Node 24.
# usage: scripts/conformance.sh [DIR]   (default examples/skills; needs `npm run build`)
# Results: .cache/conformance/<revision>/server-<scenario>-*/checks.json. Exits 1 on any failure.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$REPO/examples/skills}"
NODE24="$("$REPO/scripts/node24.sh")"
SUITE="$REPO/node_modules/@modelcontextprotocol/conformance/dist/index.js"
OUT="$REPO/.cache/conformance"
LOG="$(mktemp)"
node "$REPO/dist/cli/skills-serve.js" "$DIR" --http 127.0.0.1:0 2>"$LOG" &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true; rm -f "$LOG"' EXIT
URL=""
for _ in $(seq 1 100); do
  URL="$(sed -n 's/^skills-serve: listening on \(http:[^ ]*\)$/\1/p' "$LOG")"
  [ -n "$URL" ] && break
  kill -0 "$SERVER" 2>/dev/null || { cat "$LOG" >&2; exit 1; }
  sleep 0.1
done
[ -n "$URL" ] || { echo "conformance: skills-serve printed no URL" >&2; cat "$LOG" >&2; exit 1; }
rm -rf "$OUT" && mkdir -p "$OUT"
status=0
for revision in 2026-07-28 2025-11-25; do
  for scenario in sep-2640-skills-directory sep-2640-skills-enumeration sep-2640-skills-manifest; do
    force=()
    [ "$revision" = 2026-07-28 ] || force=(--spec-version "$revision" --force)
    printf '%s @ %s: ' "$scenario" "$revision"
    "$NODE24" "$SUITE" server --url "$URL" --scenario "$scenario" -o "$OUT/$revision" "${force[@]}" >"$OUT/$scenario-$revision.txt" 2>&1 || status=1
    grep -o 'Passed: .*' "$OUT/$scenario-$revision.txt" | sed 's/\x1b\[[0-9;]*m//g' || { echo "no result"; status=1; }
  done
done
exit "$status"
