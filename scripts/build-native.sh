#!/usr/bin/env bash
# Builds the libfuse 3 addon (native/) with node-gyp, the copy bundled with npm, against this
# Node's own headers (no download) and Debian's libfuse3-dev. Runs at `npm ci` (the install
# script) and from setup.sh; rebuilds only when a native source is newer than the build.
#   scripts/build-native.sh [--sanitize]   (--sanitize: ASan+UBSan build in native/build-sanitize)
# Without libfuse3-dev it warns and exits 0: the mount then falls back to libfuse 2, unless
# SKILLS_FUSE_REQUIRED=1 (CI), where a failed build fails.
set -euo pipefail
cd "$(dirname "$0")/../native"
sanitize=0
out=build/Release/skills_fuse.node
if [ "${1:-}" = "--sanitize" ]; then sanitize=1; out=build-sanitize/skills_fuse.node; fi
if [ -f "$out" ] && [ -z "$(find ./*.c ./*.h binding.gyp libfuse3.map -newer "$out" -print -quit)" ]; then exit 0; fi
fail() {
  if [ "${SKILLS_FUSE_REQUIRED:-0}" = 1 ]; then echo "build-native: $1" >&2; exit 1; fi
  echo "build-native: $1; the mount will use the libfuse 2 fallback (scripts/setup.sh installs what the addon needs)" >&2
  exit 0
}
pkg-config --exists fuse3 2>/dev/null || fail "libfuse3-dev (pkg-config fuse3) is not installed"
gyp="${npm_config_node_gyp:-}"
if [ -z "$gyp" ] || [ ! -f "$gyp" ]; then
  npm_root="$(dirname "$(readlink -f "$(command -v npm)")")/.."
  gyp="$npm_root/node_modules/node-gyp/bin/node-gyp.js"
fi
[ -f "$gyp" ] || fail "node-gyp (bundled with npm) was not found"
node_prefix="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
nodedir=()
if [ -f "$node_prefix/include/node/node_api.h" ]; then nodedir=(--nodedir="$node_prefix"); fi
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if [ "$sanitize" = 1 ]; then
  rm -rf build-sanitize.tmp && mkdir -p build-sanitize
  node "$gyp" rebuild "${nodedir[@]}" -- -Dsanitize=1 >"$log" 2>&1 || { cat "$log" >&2; fail "the sanitizer build failed"; }
  cp build/Release/skills_fuse.node "$out"
  # The ordinary build is what the mount loads: build it again over the sanitizer one.
  node "$gyp" rebuild "${nodedir[@]}" >"$log" 2>&1 || { cat "$log" >&2; fail "node-gyp failed"; }
else
  node "$gyp" rebuild "${nodedir[@]}" >"$log" 2>&1 || { cat "$log" >&2; fail "node-gyp failed"; }
fi
echo "build-native: built native/$out" >&2
