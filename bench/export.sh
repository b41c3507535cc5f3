#!/usr/bin/env bash
# export.sh - throughput of `sstkit export --format parquet` on one (large) sstable, next
# to CQLite's Parquet export of the same sstable in the same run.
#
# Builds sstkit (release), then runs `sstkit export -o parquet --output-file OUT SSTABLE` N times,
# pinned to one core (`taskset -c CORE`), and reports:
#
#   wall     best and median wall time of the N runs
#   MB/s     uncompressed Data.db bytes / best wall time (1 MB = 10^6 bytes; the size is
#            `sstkit info -o json`'s compression.uncompressed_size)
#   rows/s   rows in the Parquet file (its footer) / best wall time
#   max RSS  largest maximum resident set size of the N runs (/usr/bin/time %M)
#
# CQLite (`cargo install cqlite-cli --locked --root /tmp/cqlite`, or $CQLITE; 0.18.0
# measured): the same measure of its Parquet export of the same sstable, then the ratio of
# the throughputs. CQLite's `read-sstable` has no Parquet output, so its query mode is
# used: `cqlite --schema SCHEMA --data-dir D -e 'SELECT * FROM KS.T' --out parquet -o OUT`,
# with D a data directory (D/KS/T-<id>/) of links to the sstable's files and KS.T the
# CREATE TABLE of SCHEMA (default SSTABLE_DIR/schema.cql). `CQLITE_ARGS` replaces those
# arguments (split on spaces, no quoting; OUT and DIR are substituted). When the binary
# is absent or its export fails, the reason is printed and only sstkit's figures are
# given. Target (issue 20): >= 3x CQLite.
#
# Usage:
#   bench/export.sh [options] [SSTABLE_DIR]
#     SSTABLE_DIR   a folder holding one sstable (default /tmp/sstkit-bench/nb_many_partitions)
#     -n N          runs (default 3)
#     -c CORE       core to pin to (default 0)
#     --no-build    use the existing binary
#     -h, --help    this text
#
# Environment: CARGO_TARGET_DIR, SSTKIT (use this binary, implies --no-build), CQLITE,
# CQLITE_ARGS, SCHEMA, SSTKIT_PYTHON (a python with pyarrow, to count the Parquet rows; else
# python3).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SSTABLE=/tmp/sstkit-bench/nb_many_partitions
RUNS=3
CORE=0
BUILD=1
CQLITE="${CQLITE:-/tmp/cqlite/bin/cqlite}"
PY="${SSTKIT_PYTHON:-python3}"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    -n) RUNS="$2"; shift 2 ;;
    -c) CORE="$2"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "export.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) SSTABLE="$1"; shift ;;
  esac
done

# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
DATA="$(data_file export.sh "$SSTABLE")"
DIR="$(dirname "$DATA")"
BIN="$(sstkit_binary export.sh "$BUILD")"

BYTES="$("$BIN" info -o json "$DATA" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
info = next(iter(doc["sstables"].values()))
comp = info.get("compression") or {}
print(comp.get("uncompressed_size") or info["data_size"])
')"

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

echo "sstable:  $DATA"
python3 -c "import sys; print(f'size:     {int(sys.argv[1])/1e6:.1f} MB uncompressed Data.db')" "$BYTES"
echo "binary:   $BIN"
echo "runs:     $RUNS, pinned with taskset -c $CORE"
echo

# parquet_rows FILE: rows in a Parquet file's footer.
parquet_rows() {
  "$PY" -c 'import sys, pyarrow.parquet as pq; print(pq.ParquetFile(sys.argv[1]).metadata.num_rows)' "$1" 2>/dev/null || echo 0
}

# time_runs OUTFILE CMD...: run CMD $RUNS times, one "wall_s max_rss_kb" line each.
time_runs() {
  local out="$1"; shift
  : > "$out"
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f '%e %M' -o "$TMP/one" "$@" > "$TMP/stdout" 2> "$TMP/stderr" || {
      echo "  failed: $*" >&2; tail -3 "$TMP/stderr" >&2; return 1; }
    cat "$TMP/one" >> "$out"
  done
}

# summarize LABEL FILE ROWS: best / median wall, MB/s, rows/s, max RSS; prints best MB/s last.
summarize() {
  python3 - "$1" "$2" "$BYTES" "$3" <<'PY'
import statistics, sys
label, path, size, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
runs = [tuple(map(float, l.split())) for l in open(path) if l.strip()]
walls = sorted(w for w, _ in runs)
best, med = walls[0], statistics.median(walls)
rss = max(r for _, r in runs) / 1024
print(f"{label:<22} best {best:7.2f} s  median {med:7.2f} s  {size/1e6/best:8.1f} MB/s  "
      f"{rows/best/1e6:6.3f} M rows/s ({rows:,} rows)  max RSS {rss:7.1f} MB")
PY
}

OUT="$TMP/sstkit.parquet"
time_runs "$TMP/sstkit" taskset -c "$CORE" "$BIN" export -o parquet --output-file "$OUT" "$DIR"
ROWS="$(parquet_rows "$OUT")"
summarize "sstkit export" "$TMP/sstkit" "$ROWS"
SSTKIT_BEST="$(sort -n "$TMP/sstkit" | head -1 | cut -d' ' -f1)"

echo
if [[ ! -x "$CQLITE" ]]; then
  echo "cqlite:   no binary at $CQLITE (cargo install cqlite-cli --locked --root /tmp/cqlite); skipped"
  exit 0
fi
COUT="$TMP/cqlite.parquet"
if [[ -n "${CQLITE_ARGS:-}" ]]; then
  ARGS="${CQLITE_ARGS//OUT/$COUT}"
  read -r -a CARGS <<< "${ARGS//DIR/$DIR}"
else
  SCHEMA="${SCHEMA:-$DIR/schema.cql}"
  KS_TABLE="$(sed -n 's/^ *CREATE TABLE \(IF NOT EXISTS \)\{0,1\}\([A-Za-z0-9_]*\.[A-Za-z0-9_]*\).*/\2/Ip' "$SCHEMA" 2>/dev/null | head -1)"
  if [[ -z "$KS_TABLE" ]]; then
    echo "cqlite:   no CREATE TABLE ks.table in $SCHEMA (set SCHEMA or CQLITE_ARGS); skipped"
    exit 0
  fi
  TABLE_DIR="$TMP/data/${KS_TABLE%.*}/${KS_TABLE#*.}-00000000000000000000000000000001"
  mkdir -p "$TABLE_DIR"
  PREFIX="$(basename "$DATA")"
  for f in "$DIR/${PREFIX%Data.db}"*; do ln -s "$(realpath "$f")" "$TABLE_DIR/"; done
  CARGS=(--schema "$SCHEMA" --data-dir "$TMP/data" -e "SELECT * FROM $KS_TABLE"
         --out parquet -o "$COUT" --overwrite)
fi
if time_runs "$TMP/cqlite" taskset -c "$CORE" "$CQLITE" "${CARGS[@]}"; then
  CROWS="$(parquet_rows "$COUT")"
  summarize "cqlite" "$TMP/cqlite" "$CROWS"
  CQLITE_BEST="$(sort -n "$TMP/cqlite" | head -1 | cut -d' ' -f1)"
  python3 -c "import sys; c, s = float(sys.argv[1]), float(sys.argv[2]); print(f'speedup:  sstkit export is {c/s:.1f}x CQLite (target 3x)')" "$CQLITE_BEST" "$SSTKIT_BEST"
else
  echo "cqlite:   its Parquet export failed (above); no comparison"
fi
