#!/usr/bin/env bash
# partitions.sh - `sstkit partitions` against Cassandra's sstablepartitions on a table of at
# least 1 GiB uncompressed.
#
# The table is made of the bench data (bench/make-bench-data.sh, BENCH_DIR, default
# /tmp/sstkit-bench): its sstables are hard-linked (or copied) into
# WORK/bench/bench_table-<id>/ under successive generations until the uncompressed Data.db
# total reaches MIN_BYTES (default 1 GiB). Then, in the same run, each of these is timed with
# its peak RSS (/usr/bin/time):
#   sstkit partitions -o csv --min-size 0          (every partition decoded)
#   sstkit partitions -o csv --min-size 0 -y       (sizes from the index: the fast path)
#   sstablepartitions -m -t 0                      (Cassandra 5.0.9, oracle harness)
#   sstablepartitions -m -t 0 -y
# and the csv outputs of each pair are compared (same rows, same counts).
#
# Usage:
#   bench/partitions.sh                 # builds the release binary first
#   SSTKIT=path/to/sstkit SSTKIT_ORACLE_WORK=/tmp/sstkit-oracle bench/partitions.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
bin="$(sstkit_binary partitions.sh 1)"
bench="${BENCH_DIR:-/tmp/sstkit-bench}"
oracle="${SSTKIT_ORACLE_WORK:-/tmp/sstkit-oracle}"
min_bytes="${MIN_BYTES:-1073741824}"
now=1800000000
[[ -x "$oracle/tools.sh" ]] || { echo "partitions.sh: no oracle harness in $oracle" >&2; exit 2; }
mapfile -t sources < <(find "$bench" -mindepth 2 -maxdepth 2 -name 'nb-*-big-Data.db' | sort)
[[ ${#sources[@]} -gt 0 ]] || { echo "partitions.sh: no bench data in $bench (run bench/make-bench-data.sh)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
table="$work/bench/bench_table-0123456789abcdef0123456789abcdef"
mkdir -p "$table"

# Uncompressed Data.db bytes of an sstable, from its case.json (bench: data_uncompressed_bytes).
uncompressed() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["bench"]["data_uncompressed_bytes"])' \
    "$(dirname "$1")/case.json"
}

gen=0 total=0
while (( total < min_bytes )); do
  for data in "${sources[@]}"; do
    gen=$((gen + 1))
    prefix="$(basename "$data" -Data.db)"
    for f in "$(dirname "$data")/$prefix"-*; do
      comp="${f##*/"$prefix"-}"
      ln "$f" "$table/nb-$gen-big-$comp" 2>/dev/null || cp "$f" "$table/nb-$gen-big-$comp"
    done
    total=$((total + $(uncompressed "$data")))
  done
done
echo "table: $gen sstables, $((total / 1048576)) MiB uncompressed, $(du -shl "$table" | cut -f1) on disk"

# run NAME OUT CMD...: wall seconds and peak RSS of CMD (stdout to OUT).
run() {
  local name="$1" out="$2"; shift 2
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" > "$out" 2>"$work/stderr" \
    || { echo "$name failed:" >&2; cat "$work/stderr" >&2; exit 1; }
  read -r secs kb < "$work/time"
  printf '%-34s %8.2f s %9d MiB\n' "$name" "$secs" $((kb / 1024))
}

printf '%-34s %10s %13s\n' run wall "peak RSS"
run "sstkit partitions (decode)" "$work/ours.csv" \
  "$bin" partitions -o csv --min-size 0 --now "$now" "$table"
run "sstkit partitions -y (index)" "$work/ours-y.csv" \
  "$bin" partitions -o csv --min-size 0 -y --now "$now" "$table"
run "sstablepartitions" "$work/java.csv" \
  "$oracle/tools.sh" class org.apache.cassandra.tools.SSTablePartitions -u "$now" -m -t 0 "$table"
run "sstablepartitions -y" "$work/java-y.csv" \
  "$oracle/tools.sh" class org.apache.cassandra.tools.SSTablePartitions -u "$now" -m -t 0 -y "$table"
# sstablepartitions orders sstables by generation as a string (1, 10, 11, 2, ...): compare sorted.
for pair in ":" "-y:-y"; do
  a="$work/ours${pair%%:*}.csv" b="$work/java${pair##*:}.csv"
  if diff <(sort "$a") <(sort "$b") >/dev/null; then
    echo "csv${pair%%:*}: equal ($(($(wc -l < "$a") - 1)) partitions)"
  else
    echo "csv${pair%%:*}: DIFFERENT"; diff <(sort "$a") <(sort "$b") | head -5
  fi
done
