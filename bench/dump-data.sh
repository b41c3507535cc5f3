#!/usr/bin/env bash
# dump-data.sh - throughput of `sstkit dump-data` on one (large) sstable.
#
# Builds sstkit (release), then runs `sstkit dump-data --output FORMAT SSTABLE > /dev/null`
# N times per format, pinned to one core (`taskset -c CORE`), and reports per format:
#
#   wall     best and median wall time of the N runs
#   MB/s     uncompressed Data.db bytes / best wall time (1 MB = 10^6 bytes); the size is
#            `sstkit info -o json`'s compression.uncompressed_size (data_size when the
#            sstable is not compressed)
#   rows/s   info's `rows` / best wall time (Cassandra's totalRows: static rows count too)
#   max RSS  largest maximum resident set size of the N runs (/usr/bin/time %M)
#
# With --with-cassandra, and when fixtures/make-fixtures.sh has created the Cassandra 5.0
# tool harness (/tmp/sstkit-oracle/tools.sh, or $ORACLE_TOOLS), Cassandra's own
# `sstabledump` is run on the same Data.db (not pinned: a JVM needs its threads; heap
# $TOOL_HEAP, default 2G) and the speedup of `--output sstabledump` over it is printed
# (Cassandra's best wall time / sstkit's best pinned wall time).
#
# The issue 3 targets: ndjson >= 300 MB/s on one core, sstabledump >= 20x Cassandra's
# sstabledump. Data: bench/make-bench-data.sh (default /tmp/sstkit-bench).
#
# Usage:
#   bench/dump-data.sh [options] [SSTABLE]
#     SSTABLE            a Data.db path or a folder holding one sstable
#                        (default /tmp/sstkit-bench/nb_many_partitions)
#     -n N               runs per format (default 5)
#     -f FORMATS         comma-separated --output formats (default ndjson,sstabledump)
#     -c CORE            core to pin to (default 0)
#     --with-cassandra   also time Cassandra's sstabledump (once; slow: ~40 s for 225 MB)
#     --no-build         use the existing binary
#     -h, --help         this text
#
# Environment: CARGO_TARGET_DIR (where the binary is built / looked for; default
# ./target), SSTKIT (use this binary, implies --no-build), TOOL_HEAP, ORACLE_TOOLS.
#
# Page cache: the first run of each format warms it; with N >= 2 the best run is a
# warm one. The numbers are for an otherwise idle machine: another busy process on the
# same core (or its hyperthread sibling) inflates them.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SSTABLE=/tmp/sstkit-bench/nb_many_partitions
RUNS=5
FORMATS=ndjson,sstabledump
CORE=0
WITH_CASSANDRA=0
BUILD=1
ORACLE_TOOLS="${ORACLE_TOOLS:-/tmp/sstkit-oracle/tools.sh}"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    -n) RUNS="$2"; shift 2 ;;
    -f) FORMATS="$2"; shift 2 ;;
    -c) CORE="$2"; shift 2 ;;
    --with-cassandra) WITH_CASSANDRA=1; shift ;;
    --no-build) BUILD=0; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "dump-data.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) SSTABLE="$1"; shift ;;
  esac
done

# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
DATA="$(data_file dump-data.sh "$SSTABLE")"
BIN="$(sstkit_binary dump-data.sh "$BUILD")"

# Size and rows from `sstkit info`.
read -r BYTES ROWS < <("$BIN" info -o json "$DATA" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
info = next(iter(doc["sstables"].values()))
comp = info.get("compression") or {}
print(comp.get("uncompressed_size") or info["data_size"], info.get("rows") or 0)
')

echo "sstable:  $DATA"
python3 -c "import sys; b, r = int(sys.argv[1]), int(sys.argv[2]); print(f'size:     {b/1e6:.1f} MB uncompressed Data.db, {r:,} rows (info)')" "$BYTES" "$ROWS"
echo "binary:   $BIN ($("$BIN" --version 2>/dev/null || echo '?'))"
echo "runs:     $RUNS per format, pinned with taskset -c $CORE"
echo

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# time_runs OUTFILE CMD...: run CMD $RUNS times to /dev/null, one "wall_s max_rss_kb" line each.
time_runs() {
  local out="$1"; shift
  : > "$out"
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f '%e %M' -o "$TMP/one" "$@" > /dev/null
    cat "$TMP/one" >> "$out"
  done
}

# summarize LABEL FILE: best / median wall, MB/s, rows/s, max RSS.
summarize() {
  python3 - "$1" "$2" "$BYTES" "$ROWS" <<'EOF'
import statistics, sys
label, path, size, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
runs = [tuple(map(float, l.split())) for l in open(path) if l.strip()]
walls = sorted(w for w, _ in runs)
best, med = walls[0], statistics.median(walls)
rss = max(r for _, r in runs) / 1024
print(f"{label:<26} best {best:7.2f} s  median {med:7.2f} s  {size/1e6/best:8.1f} MB/s  "
      f"{rows/best/1e6:6.2f} M rows/s  max RSS {rss:7.1f} MB")
EOF
}

declare -A BEST
IFS=, read -r -a FMTS <<< "$FORMATS"
for f in "${FMTS[@]}"; do
  time_runs "$TMP/$f" taskset -c "$CORE" "$BIN" dump-data --output "$f" "$DATA"
  summarize "sstkit $f" "$TMP/$f"
  BEST[$f]="$(sort -n "$TMP/$f" | head -1 | cut -d' ' -f1)"
done

if [[ $WITH_CASSANDRA -eq 1 ]]; then
  echo
  if [[ ! -x "$ORACLE_TOOLS" ]]; then
    echo "cassandra: $ORACLE_TOOLS not found (run fixtures/make-fixtures.sh first); skipped"
  else
    RUNS_SAVED=$RUNS
    RUNS=1
    time_runs "$TMP/cassandra" env TOOL_HEAP="${TOOL_HEAP:-2G}" "$ORACLE_TOOLS" sstabledump "$DATA"
    RUNS=$RUNS_SAVED
    summarize "cassandra sstabledump" "$TMP/cassandra"
    if [[ -n "${BEST[sstabledump]:-}" ]]; then
      python3 -c "import sys; c, s = float(sys.argv[1]), float(sys.argv[2]); print(f'speedup: sstkit --output sstabledump is {c/s:.1f}x faster than Cassandra sstabledump (target 20x)')" \
        "$(cut -d' ' -f1 "$TMP/cassandra")" "${BEST[sstabledump]}"
    fi
  fi
fi
