#!/usr/bin/env bash
# Longer crash-recovery runs: SIGKILL the saving worker N times (default 300), the migrating worker M times
# (default 200) and each migration on a copy (mapping model, staged) C times (default 50), checking the store
# after each kill.
#   scripts/crash-kills.sh [kills] [migration-kills] [copy-migration-kills]
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
OCD_CRASH_KILLS="${1:-300}" OCD_MIGRATION_KILLS="${2:-200}" OCD_COPY_MIGRATION_KILLS="${3:-50}" \
    swift test --skip-build --filter "CrashRecoveryTests|MigrationCrashTests" 2>&1 \
    | grep -E "CrashRecoveryTests:|MigrationCrashTests( \(|:)|✘|✔|error"
