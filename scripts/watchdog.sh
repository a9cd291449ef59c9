#!/usr/bin/env bash
# Runs a command with a time limit. If the limit passes, prints every thread's stack of each process the
# command started (gdb, when present) before stopping them, so a hang in CI leaves a trace instead of a
# silent timeout.
#   scripts/watchdog.sh SECONDS command [args...]
set -uo pipefail
limit="$1"; shift

setsid "$@" &
leader=$!
waited=0
while kill -0 "$leader" 2>/dev/null; do
    if [ "$waited" -ge "$limit" ]; then
        echo "watchdog: '$*' still running after ${limit}s; stacks follow" >&2
        for pid in $(pgrep -s "$leader"); do
            echo "---- process $pid: $(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null | cut -c1-200)" >&2
            if command -v gdb >/dev/null 2>&1; then
                timeout 120 gdb -p "$pid" -batch -nx -ex "set pagination off" -ex "thread apply all bt 30" 2>&1 \
                    | grep -E '^(Thread|#)' >&2 || true
            fi
        done
        kill -TERM -- "-$leader" 2>/dev/null; sleep 5; kill -KILL -- "-$leader" 2>/dev/null
        wait "$leader" 2>/dev/null
        exit 124
    fi
    sleep 1
    waited=$((waited + 1))
done
wait "$leader"
