#!/usr/bin/env bash
# Longer soak: writer, readers, cancelled asynchronous fetches for N seconds (default 300).
#   scripts/soak.sh [seconds]            readers reset their contexts between fetches
#   OCD_SOAK_LONG_LIVED_READERS=1 scripts/soak.sh 60   readers keep their contexts (shows registry growth)
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
OCD_SOAK_SECONDS="${1:-300}" swift test --skip-build --filter SoakTests 2>&1 | grep -E "SoakTests:|✘|✔|error"
