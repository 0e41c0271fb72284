#!/usr/bin/env bash
# Installs the registry tools the OCI image tests use (test/integration/snapshot-oci.test.ts), from
# Debian, when any is missing: skopeo (push and pull, oci: and docker:// transports), umoci
# (unpacks an image's layers into a rootfs) and docker-registry (the CNCF distribution registry,
# started on loopback by the test). Idempotent: nothing happens when all three are there.
set -euo pipefail
missing=()
for tool in skopeo umoci docker-registry; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "oci-tools: installing Debian packages ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then sudo_cmd=(); else sudo_cmd=(sudo); fi
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The package may start a registry of its own where services start: the test starts its own.
"${sudo_cmd[@]}" service docker-registry stop >/dev/null 2>&1 || true
