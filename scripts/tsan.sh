#!/usr/bin/env bash
# The concurrency tests under ThreadSanitizer, in a build folder of their own (.build-tsan) so the
# ordinary debug build is not thrown away. First build: several minutes; later runs: seconds.
#   scripts/tsan.sh [filter]     default: the reliability suites that run threads or processes
set -euo pipefail
cd "$(dirname "$0")/.."
filter="${1:-ConcurrentWriterTests|KeyedRowReaderTests|SoakTests|RelationshipRaceTests|CrashRecoveryTests|BackgroundOperationTests|AsynchronousFetchTests}"
swift build --build-tests --sanitize=thread --scratch-path .build-tsan
# Halt on the first report so a race fails the run; the soak is shortened under TSan (it is ~10x slower).
TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1} suppressions=$PWD/scripts/tsan-suppressions.txt" OCD_SOAK_SECONDS="${OCD_SOAK_SECONDS:-5}" \
OCD_CRASH_WORKER="$PWD/.build-tsan/debug/ocd-crash-worker" \
    swift test --skip-build --sanitize=thread --scratch-path .build-tsan --filter "$filter"
