#!/usr/bin/env bash
# Installs the authorization servers nobody here wrote that the sign-in interop tests put in front
# of `skills-serve --auth-issuer` (test/e2e/auth-interop-*.test.ts):
#   - oauth2-mock-server: a pinned devDependency (npm ci installs it); checked here;
#   - the MCP SDK's example OAuth server: it ships inside @modelcontextprotocol/sdk (a dependency of
#     the conformance suite); checked here;
#   - Glewlwyd, from Debian, WITHOUT its maintainer scripts: its post-install script sets up a
#     PostgreSQL database and a service and, failing, leaves dpkg half-configured (every later
#     apt-get install then fails). So its library dependencies come through apt-get install, and its
#     two packages are fetched with apt-get download and unpacked with dpkg-deb -x into
#     PREFIX/glewlwyd (default <repo>/.cache/idp/glewlwyd): nothing is registered with dpkg.
# Idempotent: a stamp per Debian version makes a re-run instant. Ends checking that `dpkg --audit`
# reports nothing. Usage: scripts/idp-interop.sh [PREFIX]   (test/support/idp-glewlwyd.ts reads the layout)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="${1:-$root/.cache/idp}"
cd "$root"

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

for file in node_modules/oauth2-mock-server/package.json node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/demoInMemoryOAuthProvider.js node_modules/@modelcontextprotocol/sdk/dist/esm/server/auth/router.js; do
  if [ ! -f "$file" ]; then
    echo "idp-interop: $file is missing: run npm ci (oauth2-mock-server is a devDependency; the SDK's example OAuth server comes with @modelcontextprotocol/conformance)" >&2
    exit 1
  fi
done

dest="$prefix/glewlwyd"
# The version apt would install; the stamp names it, so a Debian update installs afresh.
version="$(apt-cache policy glewlwyd 2>/dev/null | awk '/Candidate:/ { print $2 }')"
if [ -z "$version" ] || [ "$version" = "(none)" ]; then
  as_root apt-get update -qq
  version="$(apt-cache policy glewlwyd 2>/dev/null | awk '/Candidate:/ { print $2 }')"
fi
if [ -z "$version" ] || [ "$version" = "(none)" ]; then
  echo "idp-interop: Debian offers no glewlwyd package here (apt-cache policy glewlwyd)" >&2
  exit 1
fi
stamp="$dest/.installed-${version//[^A-Za-z0-9.+~-]/_}"
if [ ! -f "$stamp" ] || [ ! -x "$dest/root/usr/bin/glewlwyd" ]; then
  echo "idp-interop: installing Glewlwyd $version into $dest (unpacked; no maintainer script runs)" >&2
  as_root apt-get update -qq
  # Its shared libraries (and sqlite3): every Depends that is a library, nothing that configures
  # glewlwyd itself (dbconfig-*, debconf, ucf, adduser, init-system-helpers).
  mapfile -t libraries < <(apt-cache depends glewlwyd | awk '$1 ~ /^\|?(Pre)?Depends:$/ && $2 ~ /^(lib|sqlite3$)/ { print $2 }' | sort -u)
  if [ "${#libraries[@]}" -eq 0 ]; then echo "idp-interop: apt-cache depends glewlwyd names no library" >&2; exit 1; fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${libraries[@]}" >/dev/null
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  chmod 0755 "$work" # apt-get download hands the file to its _apt user when it can
  # (apt-get download's note that it fetches unsandboxed as root is noise: silenced, and the result checked.)
  (cd "$work" && apt-get download -qq "glewlwyd=$version" "glewlwyd-common=$version" 2>/dev/null) || true
  if [ ! -f "$work/glewlwyd_${version//:/%3a}_$(dpkg --print-architecture).deb" ] || ! ls "$work"/glewlwyd-common_*.deb >/dev/null 2>&1; then
    echo "idp-interop: apt-get download glewlwyd=$version glewlwyd-common=$version fetched nothing" >&2
    exit 1
  fi
  rm -rf "$dest"
  mkdir -p "$dest/root"
  for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$dest/root"; done
  # The SQLite schema the package's dbconfig script would load.
  gunzip -c "$dest/root/usr/share/doc/glewlwyd/database/init.sqlite3.sql.gz" >"$dest/init.sqlite3.sql"
  if ldd "$dest/root/usr/bin/glewlwyd" | grep -q 'not found'; then
    echo "idp-interop: glewlwyd misses libraries:" >&2
    ldd "$dest/root/usr/bin/glewlwyd" | grep 'not found' >&2
    exit 1
  fi
  touch "$stamp"
fi

# Nothing half-installed may be left behind (that breaks every later apt-get install on the machine).
audit="$(dpkg --audit 2>&1 || true)"
if [ -n "$audit" ]; then
  echo "idp-interop: dpkg --audit is not empty:" >&2
  echo "$audit" >&2
  exit 1
fi
