#!/usr/bin/env bash
# Longer crash-recovery runs: SIGKILL the saving worker N times (default 300), the migrating worker M times
# (default 200), each migration on a copy (mapping model, staged) C times (default 50) and the saving worker
# with persistent history on H times (default 200), checking the store (and its history) after each kill.
#   scripts/crash-kills.sh [kills] [migration-kills] [copy-migration-kills] [history-kills]
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
OCD_CRASH_KILLS="${1:-300}" OCD_MIGRATION_KILLS="${2:-200}" OCD_COPY_MIGRATION_KILLS="${3:-50}" OCD_HISTORY_CRASH_KILLS="${4:-200}" \
    swift test --skip-build --filter "CrashRecoveryTests|MigrationCrashTests|HistoryCrashTests" 2>&1 \
    | grep -E "CrashRecoveryTests:|MigrationCrashTests( \(|:)|HistoryCrashTests:|✘|✔|error"
