#!/usr/bin/env bash
# Builds the libfuse 3 addon (native/) from source with node-gyp, the copy bundled with npm, against
# this Node's own headers (no download) and Debian's libfuse3-dev, into native/build (loaded before
# any prebuild). Run by setup.sh in a checkout, and in an installed package where no prebuild fits
# (`npm explore -g skills-mount -- npm run build-native`); rebuilds only when a native source is newer.
#   scripts/build-native.sh [--sanitize]   (--sanitize: ASan+UBSan build in native/build-sanitize)
# A failed build fails (exit 1), except where the package's prebuild for this platform and arch
# exists and SKILLS_FUSE_REQUIRED is not 1: then it warns, and the mount loads the prebuild.
set -euo pipefail
cd "$(dirname "$0")/../native"
sanitize=0
out=build/Release/skills_fuse.node
if [ "${1:-}" = "--sanitize" ]; then sanitize=1; out=build-sanitize/skills_fuse.node; fi
if [ -f "$out" ] && [ -z "$(find ./*.c ./*.h binding.gyp libfuse3.map -newer "$out" -print -quit)" ]; then exit 0; fi
prebuild="../prebuilds/linux-$(node -p process.arch)/skills_fuse.node"
fail() {
  if [ "${SKILLS_FUSE_REQUIRED:-0}" != 1 ] && [ -f "$prebuild" ]; then
    echo "build-native: $1; the mount will load the prebuilt addon (prebuilds/linux-$(node -p process.arch))" >&2
    exit 0
  fi
  echo "build-native: $1 (Debian/Ubuntu: sudo apt-get install libfuse3-dev pkg-config build-essential python3)" >&2
  exit 1
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
