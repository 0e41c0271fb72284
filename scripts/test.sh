#!/usr/bin/env bash
# Sets up, then runs every test (unit, integration, end-to-end through real kernel mounts).
# Extra arguments go to vitest (e.g. scripts/test.sh test/unit).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
scripts/setup.sh
# The terminal tests (test/e2e/cli-terminal.test.ts) drive a real terminal through tmux.
if ! command -v tmux >/dev/null 2>&1; then
  echo "test: installing Debian package tmux" >&2
  if [ "$(id -u)" -eq 0 ]; then sudo_cmd=(); else sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq tmux >/dev/null
fi
report="$(mktemp)"
trap 'rm -f "$report"; scripts/fuse-cleanup.sh /tmp/skills-mount-test >/dev/null 2>&1 || true; rm -rf /tmp/skills-mount-test-* 2>/dev/null || true' EXIT
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@" || status=$?
# One plain closing line for CI: "N passed, N failed, N skipped".
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
  if (r.numTotalTests === 0) { console.error("no tests ran"); process.exit(1); }
' "$report" || status=1
exit "$status"
