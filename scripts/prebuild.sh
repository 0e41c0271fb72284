#!/usr/bin/env bash
# Builds the prebuilt addons the package ships: prebuilds/linux-x64/skills_fuse.node natively and
# prebuilds/linux-arm64/skills_fuse.node by cross-compiling (Debian's gcc-aarch64-linux-gnu against
# the multiarch libfuse3-dev:arm64). Both link libfuse3.a statically, as a source build does, so each
# depends on glibc alone; Node-API (NAPI_VERSION 8), so one binary serves every Node >= 20.
# Run by `npm pack` (the prepack script); not committed. Installs what it needs with apt-get.
#   scripts/prebuild.sh [x64] [arm64]     (default: both)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=(x64 arm64)

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
need_packages=()
for arch in "${arches[@]}"; do
  case "$arch" in
    x64)
      pkg-config --exists fuse3 2>/dev/null || need_packages+=(libfuse3-dev pkg-config)
      command -v g++ >/dev/null 2>&1 && command -v make >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1 || need_packages+=(build-essential python3)
      ;;
    arm64)
      command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need_packages+=(gcc-aarch64-linux-gnu)
      [ -f /usr/lib/aarch64-linux-gnu/libfuse3.a ] || need_packages+=(libfuse3-dev:arm64)
      ;;
    *) echo "prebuild: arches are x64 and arm64, not $arch" >&2; exit 2 ;;
  esac
done
if [ ${#need_packages[@]} -gt 0 ]; then
  echo "prebuild: installing Debian packages ${need_packages[*]}" >&2
  if [[ " ${need_packages[*]} " == *":arm64 "* ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    as_root dpkg --add-architecture arm64
  fi
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${need_packages[@]}" >/dev/null
fi

gyp="${npm_config_node_gyp:-}"
if [ -z "$gyp" ] || [ ! -f "$gyp" ]; then
  gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
fi
[ -f "$gyp" ] || { echo "prebuild: node-gyp (bundled with npm) was not found" >&2; exit 1; }
node_prefix="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
nodedir=()
if [ -f "$node_prefix/include/node/node_api.h" ]; then nodedir=(--nodedir="$node_prefix"); fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for arch in "${arches[@]}"; do
  # A copy of the sources per arch: native/build (a checkout's source build) is left alone.
  src="$work/$arch"
  mkdir -p "$src"
  cp native/*.c native/*.h native/binding.gyp native/libfuse3.map "$src/"
  env=()
  if [ "$arch" = arm64 ]; then
    # binding.gyp asks pkg-config for libfuse3's flags and library: the arm64 ones here.
    env=(CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-gcc LINK=aarch64-linux-gnu-gcc AR=aarch64-linux-gnu-ar
      PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
  fi
  log="$work/$arch.log"
  (cd "$src" && env ${env[@]+"${env[@]}"} node "$gyp" rebuild --arch="$arch" "${nodedir[@]}" >"$log" 2>&1) || { cat "$log" >&2; echo "prebuild: the $arch build failed" >&2; exit 1; }
  if grep -qi 'warning' "$log"; then grep -i -A3 'warning' "$log" >&2; echo "prebuild: the $arch build has warnings" >&2; exit 1; fi
  out="prebuilds/linux-$arch/skills_fuse.node"
  mkdir -p "$(dirname "$out")"
  cp "$src/build/Release/skills_fuse.node" "$out"
  # What it needs at run time: glibc's libraries only (libfuse3 is inside).
  needed="$(readelf -d "$out" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
  machine="$(readelf -h "$out" | sed -n 's/^ *Machine: *//p')"
  if grep -q fuse <<<"$needed"; then echo "prebuild: $out needs libfuse at run time ($needed)" >&2; exit 1; fi
  echo "prebuild: $out ($machine; $(stat -c %s "$out") bytes; needs: $needed)" >&2
done
