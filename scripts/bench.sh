#!/usr/bin/env bash
# Sets up (fuse, npm ci, build when needed), then runs the benchmark of issue 5:
#   scripts/bench.sh [--quick] [--runs N] [--work-dir DIR] [--corpus DIR] [--results FILE]
# Prints the table and writes bench/results.json; see docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# 8 parallel readers in one process need more than libuv's default 4 threads.
export UV_THREADPOOL_SIZE="${UV_THREADPOOL_SIZE:-16}"
exec node bench/run.mjs "$@"
