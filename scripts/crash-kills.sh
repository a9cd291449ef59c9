#!/usr/bin/env bash
# Longer crash-recovery runs: SIGKILL the saving worker N times (default 300) and the migrating worker M times
# (default 200), checking the store after each kill.
#   scripts/crash-kills.sh [kills] [migration-kills]
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
OCD_CRASH_KILLS="${1:-300}" OCD_MIGRATION_KILLS="${2:-200}" \
    swift test --skip-build --filter "CrashRecoveryTests|MigrationCrashTests" 2>&1 \
    | grep -E "CrashRecoveryTests:|MigrationCrashTests:|✘|✔|error"
