#!/usr/bin/env bash
# compare-builds.sh - two builds of sstkit on the same data, run in turn: is a change
# neutral for the read path's speed?
#
#   bench/compare-builds.sh OLD_BINARY NEW_BINARY
#   RUNS=21 DATA=/tmp/sstkit-compare bench/compare-builds.sh /tmp/sstkit-old target/release/sstkit
#
# Data: made once in DATA with OLD_BINARY's `write` (make_compare_data in lib.sh): a
# partition of 1,000,000 rows (wide/), 1,000,000 one-row partitions (many/), and 4
# sstables of the same 250,000 partitions (merge/).
#
# Cases: dump-data -o ndjson and -o sstabledump of wide/, -o ndjson of many/, and
# dump-data --merge -o ndjson of merge/, output to /dev/null. Each case runs OLD and NEW
# in turn RUNS times (default 15) after one warm-up each, pinned to core CORE (default 0)
# with taskset. Per case it prints the median wall seconds of each build and the median
# of the NEW/OLD ratios taken pair by pair (pairing keeps the ratio meaningful when the
# machine's speed drifts), with the smallest and largest ratio.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
old="${1:?usage: compare-builds.sh OLD_BINARY NEW_BINARY}"
new="${2:?usage: compare-builds.sh OLD_BINARY NEW_BINARY}"
runs="${RUNS:-15}"
core="${CORE:-0}"
data="${DATA:-/tmp/sstkit-compare}"
# shellcheck source=bench/lib.sh
source "$here/lib.sh"

# Wall seconds of one run of BINARY with ARGS, output thrown away.
run_once() {
  local bin="$1"
  shift
  local t0 t1
  t0=$(date +%s.%N)
  taskset -c "$core" "$bin" "$@" >/dev/null
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}

compare() {
  local name="$1"
  shift
  local o n i to tn
  run_once "$old" "$@" >/dev/null
  run_once "$new" "$@" >/dev/null
  : >"$data/old.t"
  : >"$data/new.t"
  : >"$data/ratio.t"
  for ((i = 0; i < runs; i++)); do
    to=$(run_once "$old" "$@")
    tn=$(run_once "$new" "$@")
    echo "$to" >>"$data/old.t"
    echo "$tn" >>"$data/new.t"
    echo "$tn / $to" | bc -l >>"$data/ratio.t"
  done
  o=$(median <"$data/old.t")
  n=$(median <"$data/new.t")
  printf '%-34s old %.3f s  new %.3f s  new/old median %.3f (min %.3f, max %.3f)\n' "$name" \
    "$o" "$n" "$(median <"$data/ratio.t")" "$(sort -g "$data/ratio.t" | head -1)" \
    "$(sort -g "$data/ratio.t" | tail -1)"
}

make_compare_data "$old" "$data"
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $runs pairs, core $core"
compare "dump-data -o ndjson, wide" dump-data -o ndjson "$data/wide"
compare "dump-data -o sstabledump, wide" dump-data -o sstabledump "$data/wide"
compare "dump-data -o ndjson, many" dump-data -o ndjson "$data/many"
compare "dump-data --merge -o ndjson, merge" dump-data --merge -o ndjson "$data/merge"
