#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ and runs each for a while (docs/FUZZING.md).
#
#   scripts/fuzz.sh [SECONDS] [--no-merge] [--known]
#
# SECONDS    how long each target runs (default 60).
# --no-merge leave Fuzz/Corpus/ as it is (default: minimize the corpus together with the new inputs and
#            write it back, hand-written seeds kept).
# --known    only run the saved reproducers in Fuzz/Crashes/ with the targets' known-crash filters off, and
#            say for each whether it still crashes (exit 0 either way).
#
# FUZZ_TARGETS="FuzzPredicate" (space-separated) runs only those targets; OCD_FUZZ_RSS_MB (default 2048) sets
# libFuzzer's -rss_limit_mb.
#
# Exit status: 0 when no target crashed, 1 when one did (its input is in Fuzz/.build/fuzz-artifacts/), 2 when
# the build failed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

SECONDS_PER_TARGET=60
MERGE=1
KNOWN=0
for arg in "$@"; do
    case "$arg" in
        --no-merge) MERGE=0 ;;
        --known) KNOWN=1 ;;
        ''|*[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS] [--no-merge] [--known]" >&2; exit 2 ;;
        *) SECONDS_PER_TARGET=$arg ;;
    esac
done

# GRDB links the system SQLite; install its headers where they are missing (as .ci/run does).
if ! [ -f /usr/include/sqlite3.h ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq libsqlite3-dev) >/dev/null
fi

# -sanitize=fuzzer instruments every module for coverage and links libFuzzer; -enable-testing lets the targets
# reach the SQL compiler and store schema through @testable import; lld, because gold fails on these links.

# libFuzzer must see the trap itself: the Swift runtime's backtracer would otherwise end the process first.
export SWIFT_BACKTRACE=enable=no

# target  corpus-and-crash folder  dictionary  max input length
# The caps sit far above every size that once crashed (docs/FUZZING.md): 256 KB each.
TARGETS=(
    "FuzzPredicate Predicates predicates.dict 262144"
    "FuzzModelXML ModelXML model-xml.dict 262144"
    "FuzzStoreMetadata StoreMetadata store-metadata.dict 262144"
    "FuzzCompiledModel CompiledModel compiled-model.dict 262144"
    "FuzzImportRows ImportRows import-rows.dict 262144"
    "FuzzXMLStore XMLStore xml-store.dict 262144"
    "FuzzModelCache ModelCache model-cache.dict 262144"
    "FuzzPostgreSQLURL PostgreSQLURL postgresql-url.dict 262144"
)

if [ -n "${FUZZ_TARGETS:-}" ]; then
    selected=()
    for spec in "${TARGETS[@]}"; do
        [[ " $FUZZ_TARGETS " == *" ${spec%% *} "* ]] && selected+=("$spec")
    done
    TARGETS=("${selected[@]}")
fi

# Only the targets asked for are built: FuzzPostgreSQLURL alone brings SwiftNIO and swift-crypto's BoringSSL
# into the instrumented build (docs/FUZZING.md), which a run of the other targets need not wait for.
BUILD_START=$(date +%s)
: >/tmp/ocd-fuzz-build.log
for spec in "${TARGETS[@]}"; do
    if ! swift build -c release --package-path Fuzz --product "${spec%% *}" \
            -Xswiftc -sanitize=fuzzer -Xswiftc -enable-testing -Xswiftc -use-ld=lld >>/tmp/ocd-fuzz-build.log 2>&1; then
        tail -40 /tmp/ocd-fuzz-build.log
        echo "fuzz: build of ${spec%% *} failed (log: /tmp/ocd-fuzz-build.log)"
        exit 2
    fi
done
BIN=$(swift build -c release --package-path Fuzz --show-bin-path)
echo "fuzz: build took $(( $(date +%s) - BUILD_START )) s"

if [ "$KNOWN" = 1 ]; then
    for spec in "${TARGETS[@]}"; do
        read -r target folder _ _ <<<"$spec"
        for input in Fuzz/Crashes/"$folder"/*; do
            [ -f "$input" ] || continue
            if OCD_FUZZ_KNOWN_CRASHES=1 "$BIN/$target" "$input" >/tmp/ocd-fuzz-known.log 2>&1; then
                echo "fuzz: $target $input: no longer crashes"
            else
                echo "fuzz: $target $input: still crashes ($(grep -m1 -E 'SUMMARY|Fatal error' /tmp/ocd-fuzz-known.log))"
            fi
        done
    done
    exit 0
fi

# Hand-written seeds keep their names through merges; everything else in a corpus folder is generated.
is_seed() { case "$(basename "$1")" in seed-*|fixture-*|variant-*) return 0 ;; *) return 1 ;; esac; }

FAILED=0
for spec in "${TARGETS[@]}"; do
    read -r target folder dict maxlen <<<"$spec"
    corpus="Fuzz/Corpus/$folder"
    work=$(mktemp -d /tmp/ocd-fuzz-XXXXXX)
    artifacts="$ROOT/Fuzz/.build/fuzz-artifacts/$target"
    mkdir -p "$work/new" "$artifacts"
    log="$work/run.log"
    # New inputs go to the first folder ($work/new), so the repository's corpus is only read while fuzzing.
    "$BIN/$target" "$work/new" "$corpus" \
        -dict="Fuzz/Dictionaries/$dict" -max_len="$maxlen" -max_total_time="$SECONDS_PER_TARGET" \
        -rss_limit_mb="${OCD_FUZZ_RSS_MB:-2048}" -timeout=30 -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1
    status=$?
    runs=$(grep -m1 -oE 'stat::number_of_executed_units: +[0-9]+' "$log" | grep -oE '[0-9]+$')
    speed=$(grep -m1 -oE 'stat::average_exec_per_sec: +[0-9]+' "$log" | grep -oE '[0-9]+$')
    progress=$(grep -E '^#[0-9]+' "$log" | tail -1)
    cov=$(grep -oE 'cov: [0-9]+' <<<"$progress" | grep -oE '[0-9]+')
    ft=$(grep -oE 'ft: [0-9]+' <<<"$progress" | grep -oE '[0-9]+')
    crashes=0
    if [ $status -ne 0 ]; then
        crashes=1
        FAILED=1
        crash_file=$(grep -m1 -oE "Test unit written to [^ ]+" "$log" | sed 's/Test unit written to //')
        echo "fuzz: $target CRASHED (exit $status); input: ${crash_file:-see log}; log: $log"
        grep -m3 -E 'fuzz property failed|Fatal error|ERROR: |SUMMARY: ' "$log" | sed 's/^/    /'
    fi
    if [ "$MERGE" = 1 ]; then
        merged="$work/merged"
        mkdir -p "$merged"
        # Edges only (-use_counters=0), not hit counts, keeps the committed corpus to a few hundred files.
        if "$BIN/$target" -set_cover_merge=1 -use_counters=0 -max_len="$maxlen" -rss_limit_mb=2048 -timeout=30 \
                "$merged" "$corpus" "$work/new" >"$work/merge.log" 2>&1; then
            declare -A seed_sums=()
            for file in "$corpus"/*; do
                if is_seed "$file"; then seed_sums[$(sha1sum <"$file" | cut -c1-40)]=1; else rm -f "$file"; fi
            done
            for file in "$merged"/*; do
                [ -f "$file" ] || continue
                [ -n "${seed_sums[$(sha1sum <"$file" | cut -c1-40)]:-}" ] || cp "$file" "$corpus/"
            done
            unset seed_sums
        else
            echo "fuzz: $target: corpus merge failed (log: $work/merge.log); corpus left as it was"
        fi
    fi
    echo "fuzz: $target: ${runs:-?} runs in ${SECONDS_PER_TARGET} s (${speed:-?}/s), cov ${cov:-?}, ft ${ft:-?}," \
         "corpus $(ls "$corpus" | wc -l) files, crashes $crashes"
    [ $crashes -eq 0 ] && rm -rf "$work"
done
exit $FAILED
