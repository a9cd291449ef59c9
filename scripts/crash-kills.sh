#!/usr/bin/env bash
# Longer crash-recovery run: SIGKILL the saving worker N times (default 300) and check the store after each.
#   scripts/crash-kills.sh [kills]
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
OCD_CRASH_KILLS="${1:-300}" swift test --skip-build --filter CrashRecoveryTests 2>&1 | grep -E "CrashRecoveryTests:|✘|✔|error"
