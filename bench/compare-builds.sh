#!/usr/bin/env bash
# compare-builds.sh - two builds of sstkit on the same data, run in turn: is a change
# neutral for the read path's speed?
#
#   bench/compare-builds.sh OLD_BINARY NEW_BINARY
#   RUNS=21 DATA=/tmp/sstkit-compare bench/compare-builds.sh /tmp/sstkit-old target/release/sstkit
#
# Data (made once in DATA with OLD_BINARY's `write`, sstkit's own writer, so no node is
# needed; remove DATA to make it again):
#   wide/   one partition of 1,000,000 rows (int clustering, text + bigint), nb, LZ4:
#           86 MB of uncompressed Data.db
#   many/   1,000,000 partitions of one row (make-many-partitions.sh), nb
#   merge/  4 sstables of the same 250,000 partitions with other timestamps and values:
#           every row is reconciled from 4 versions
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

make_data() {
  mkdir -p "$data"
  if [[ ! -d "$data/wide" ]]; then
    echo 'CREATE TABLE bench.wide (pk int, ck int, v text, v2 bigint, PRIMARY KEY (pk, ck));' \
      >"$data/wide.cql"
    awk -v n=1000000 'BEGIN {
      printf("{\"key\":{\"raw\":\"00000001\"},\"clustering_elements\":[")
      for (i = 0; i < n; i++) {
        if (i) printf(",")
        printf("{\"type\":\"clustering-row\",\"key\":{\"raw\":\"0004%08x\"},\"marker\":{\"timestamp\":%d},\"columns\":{\"v\":{\"is_live\":true,\"type\":\"regular\",\"timestamp\":%d,\"value\":\"value number %d of the wide bench partition, some text\"},\"v2\":{\"is_live\":true,\"type\":\"regular\",\"timestamp\":%d,\"value\":\"%d\"}}}", i, 1700000000000000 + i, 1700000000000000 + i, i, 1700000000000000 + i, i * 7)
      }
      printf("]}\n")
    }' | "$old" write --from - --schema "$data/wide.cql" --format-version nb \
      --output-dir "$data/wide" -o json >/dev/null
  fi
  if [[ ! -d "$data/many" ]]; then
    SSTKIT="$old" "$here/make-many-partitions.sh" 1000000 "$data/many-set" >/dev/null 2>&1
    mv "$data/many-set/nb" "$data/many"
    rm -rf "$data/many-set"
  fi
  if [[ ! -d "$data/merge" ]]; then
    echo 'CREATE TABLE bench.many (pk bigint PRIMARY KEY, v int);' >"$data/merge.cql"
    for j in 1 2 3 4; do
      awk -v n=250000 -v j="$j" 'BEGIN {
        for (i = 0; i < n; i++)
          printf("{\"key\":{\"raw\":\"%016x\"},\"clustering_elements\":[{\"type\":\"clustering-row\",\"key\":{\"raw\":\"\"},\"columns\":{\"v\":{\"is_live\":true,\"type\":\"regular\",\"timestamp\":%d,\"value\":\"%d\"}}}]}\n", i, 1700000000000000 + j * ((i * 7 + j) % 5), (i + j) % 1000)
      }' | "$old" write --from - --schema "$data/merge.cql" \
        --partitioner ByteOrderedPartitioner --format-version nb \
        --output-dir "$data/merge" -o json >/dev/null
    done
  fi
}

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

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

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

make_data
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $runs pairs, core $core"
compare "dump-data -o ndjson, wide" dump-data -o ndjson "$data/wide"
compare "dump-data -o sstabledump, wide" dump-data -o sstabledump "$data/wide"
compare "dump-data -o ndjson, many" dump-data -o ndjson "$data/many"
compare "dump-data --merge -o ndjson, merge" dump-data --merge -o ndjson "$data/merge"
