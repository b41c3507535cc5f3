#!/usr/bin/env bash
# Build the cargo-fuzz targets and run each for a bounded time:
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 12 s, every target)
# Needs a nightly toolchain and cargo-fuzz. Seeds come from seeds.sh (run
# first when fuzz/seeds/ is absent) and tests/regressions/<target>/; what a
# run finds is kept in fuzz/corpus/<target>/, its log in
# fuzz/fuzz-<target>.log. Exit status 1 when a target crashed (panic,
# timeout, out of memory): the input is under fuzz/artifacts/<target>/;
# 2 when the targets did not build.
set -eu
cd "$(dirname "$0")"
secs=${1:-12}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
[ -d seeds ] || ./seeds.sh
# Debug assertions: an arithmetic overflow panics, as in the (debug) tests.
# The code builds on stable (the tests): a failure here is the nightly's.
if ! cargo +nightly fuzz build -O --debug-assertions; then
    echo "fuzz: the targets did not build with this nightly toolchain"
    exit 2
fi

failed=()
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "seeds/$t"
    dirs=("corpus/$t" "seeds/$t")
    [ -d "../tests/regressions/$t" ] && dirs+=("../tests/regressions/$t")
    log="fuzz-$t.log"
    if cargo +nightly fuzz run -O --debug-assertions "$t" "${dirs[@]}" -- \
        -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10 \
        -max_len=65536 -print_final_stats=1 >"$log" 2>&1; then
        status=ok
    else
        status=CRASH
        failed+=("$t")
    fi
    # libFuzzer's first and last status lines: executions, coverage, corpus.
    first=$(grep -m1 -o 'INITED cov: [0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
    last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    runs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | tail -1 || true)
    printf '%-17s %-5s cov %s -> %s | %s | %s\n' "$t" "$status" "$first" \
        "$(grep -o 'cov: [0-9]*' <<<"$last" | grep -o '[0-9]*' || echo '?')" \
        "${runs:-no final stats}" "$(grep -o 'corp: [^ ]*' <<<"$last" || true)"
    if [ "$status" = CRASH ]; then
        grep -E 'panicked|ERROR: libFuzzer|SUMMARY|Test unit written' "$log" | head -5 | sed 's/^/    /'
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: crashes in: ${failed[*]} (inputs under fuzz/artifacts/, logs fuzz/fuzz-<target>.log)"
    exit 1
fi
