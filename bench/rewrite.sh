#!/usr/bin/env bash
# rewrite.sh - how fast `sstkit rewrite` writes, and in how much memory.
#
# Rewrites one sstable (default: the 1,000,000-row single partition of
# bench/make-bench-data.sh, LZ4) RUNS times into a scratch directory and
# reports, per run and as the median: wall time, MB/s of uncompressed
# Data.db, and peak RSS (/usr/bin/time -v). The page cache is warm after
# the first run (the source is read, the output written).
#
# Cassandra's side: bench/make-bench-data.sh logs the node's own major
# compaction of the same table ("compact N s"); with CASSANDRA_LOG=that log
# the script prints it beside sstkit's time (same data, same machine). bench/upgrade.sh
# times Cassandra's offline sstableupgrade against `rewrite` in the same run.
#
# Usage: bench/rewrite.sh [SSTABLE]   (env: RUNS=3, SSTKIT=..., BUILD=1,
#        OUT=/tmp/sstkit-bench-rewrite, ARGS="--compression lz4", CASSANDRA_LOG=...)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/lib.sh"
BIN="$(sstkit_binary rewrite.sh "${BUILD:-0}")"
SST="${1:-/tmp/sstkit-bench/nb_one_partition}"
DATA="$(data_file rewrite.sh "$SST")"
RUNS="${RUNS:-3}"
OUT="${OUT:-/tmp/sstkit-bench-rewrite}"
# Uncompressed Data.db length (CompressionInfo's data_length).
LEN="$("$BIN" dump-compression-info "$DATA" 2>/dev/null | python3 -c 'import json,sys; v=json.load(sys.stdin)["sstables"]; print(list(v.values())[0]["data_len"])' 2>/dev/null || stat -c %s "$DATA")"
echo "source: $DATA ($LEN bytes uncompressed, $(stat -c %s "$DATA") on disk)"
times=(); rss=()
for i in $(seq 1 "$RUNS"); do
  rm -rf "$OUT"; mkdir -p "$OUT"
  /usr/bin/time -v "$BIN" rewrite -o json ${ARGS:-} --output-dir "$OUT" "$DATA" > /dev/null 2> "$OUT.time"
  t=$(grep "Elapsed (wall clock)" "$OUT.time" | awk '{print $NF}' | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
  r=$(grep "Maximum resident set size" "$OUT.time" | awk '{print $NF}')
  mbs=$(python3 -c "print(f'{$LEN/1e6/$t:.1f}')")
  echo "run $i: ${t}s, $mbs MB/s uncompressed, peak RSS $((r/1024)) MiB"
  times+=("$t"); rss+=("$r")
done
med=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
maxr=$(printf '%s\n' "${rss[@]}" | sort -n | tail -1)
echo "median: ${med}s = $(python3 -c "print(f'{$LEN/1e6/$med:.1f}')") MB/s; peak RSS max $((maxr/1024)) MiB"
"$BIN" validate "$OUT" > /dev/null && echo "output valid"
if [[ -n "${CASSANDRA_LOG:-}" && -f "$CASSANDRA_LOG" ]]; then
  grep -E "compact [0-9.]+s" "$CASSANDRA_LOG" | sed 's/^/cassandra: /'
fi
