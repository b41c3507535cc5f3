#!/usr/bin/env bash
# make-bench-data.sh - write benchmark sstables with a real Cassandra 5.0.9 (NOT committed data).
#
#   bench/make-bench-data.sh                          # full size: see bench/README.md for times
#   BENCH_SCALE=0.01 bench/make-bench-data.sh         # 1% of the rows: a ~1-minute check
#   BENCH_DIR=bench/data bench/make-bench-data.sh     # into the repo (git-ignored there)
#
# Output, in BENCH_DIR (default /tmp/sstkit-bench):
#   nb_one_partition/    ONE partition of 1,000,000 rows of ~100 bytes (LZ4)
#   nb_many_partitions/  23,000 partitions x 1..99 rows of mixed columns, >= 200 MB of
#                        uncompressed Data.db (LZ4)
#   bench-summary.json   rows, sizes and load / flush / compaction times per table
# Each case dir holds the sstable components (nb-<gen>-big-*, original names), schema.cql,
# case.json and sstablemetadata.txt (no sstabledump output unless BENCH_DUMP=1).
#
# How: copies the oracle harness (../shared/oracle; ORACLE_DIR) into a work dir (default
# /tmp/sstkit-oracle-bench; SSTKIT_BENCH_WORK), seeding its jars and Python driver from
# make-fixtures.sh's work dir (SSTKIT_ORACLE_WORK, default /tmp/sstkit-oracle) when present;
# then bench/bench_driver.py runs the harness's node with the workload module
# bench/workloads_bench.py for the nb format only (storage_compatibility_mode: CASSANDRA_4,
# BIG), loading each table in flushed slices and merging them with `nodetool compact` into
# one sstable.
#
# Environment knobs:
#   BENCH_DIR                 output folder (default /tmp/sstkit-bench); only the case dirs it
#                             writes and bench-summary.json are replaced, nothing else there
#   BENCH_SCALE               multiplies the rows of one_partition and the partitions of
#                             many_partitions (default 1)
#   BENCH_TABLES              comma list (default one_partition,many_partitions)
#   BENCH_COLUMN_INDEX_SIZE   the node's column_index_size (row-index block size); default:
#                             the harness's own setting (4KiB); Cassandra's default when unset
#                             would be 64KiB for BIG
#   BENCH_FLUSH_EVERY_ROWS    rows per flushed slice (default 250000)
#   BENCH_COMPRESSION         table compression: unset = LZ4 (the default), none = uncompressed
#                             Data.db with CRC.db, or a compressor class (ZstdCompressor, ...)
#   BENCH_DUMP=1              also run sstabledump (JSON and -d, gzip'd): slow, ~GBs
#   ORACLE_HEAP               node heap (default here 3G)
#   ORACLE_DIR, SSTKIT_BENCH_WORK, SSTKIT_ORACLE_WORK   see above
# Needs Java 17, Maven, python3 with venv, ports 9042 / 7000 / 7199 on 127.0.0.1 free.
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$BENCH/.." && pwd)"
# shellcheck source=../fixtures/common.sh
source "$REPO/fixtures/common.sh"
LOG_TAG=make-bench-data
ORACLE_DIR="${ORACLE_DIR:-$REPO/../shared/oracle}"
BENCH_DIR="${BENCH_DIR:-/tmp/sstkit-bench}"
WORK="${SSTKIT_BENCH_WORK:-/tmp/sstkit-oracle-bench}"
SEED_WORK="${SSTKIT_ORACLE_WORK:-/tmp/sstkit-oracle}"
TABLES="${BENCH_TABLES:-one_partition,many_partitions}"
export BENCH_SCALE="${BENCH_SCALE:-1}"
export ORACLE_HEAP="${ORACLE_HEAP:-3G}"

python3 -c 'import sys; s = float(sys.argv[1]); sys.exit(not 0 < s <= 100)' "$BENCH_SCALE" \
  || die "BENCH_SCALE must be a number in (0, 100], got '$BENCH_SCALE'"
[[ -x "$ORACLE_DIR/make_corpus.sh" && -x "$ORACLE_DIR/tools.sh" ]] \
  || die "no oracle harness in $ORACLE_DIR (set ORACLE_DIR)"
ORACLE_DIR="$(cd "$ORACLE_DIR" && pwd)"

copy_harness "$ORACLE_DIR" "$WORK" "$SEED_WORK"
if [[ -n "${BENCH_COLUMN_INDEX_SIZE:-}" ]]; then
  set_column_index_size "$WORK" "$BENCH_COLUMN_INDEX_SIZE"
else
  log "column_index_size: $(sed -n 's/^column_index_size: *//p' "$WORK/conf/cassandra.yaml.tmpl") (the harness's setting)"
fi
mkdir -p "$WORK/tmp" "$BENCH_DIR"
export TMPDIR="$WORK/tmp"            # the tools' yaml is made from this copy's template
export PYTHONDONTWRITEBYTECODE=1     # no __pycache__ in bench/
"$WORK/tools.sh" setup

args=(--harness "$WORK" --workloads "$BENCH/workloads_bench.py" --out "$BENCH_DIR"
      --run nb --tables "$TABLES")
[[ "${BENCH_DUMP:-0}" == 1 ]] && args+=(--dump)
log "BENCH_SCALE=$BENCH_SCALE: writing $TABLES into $BENCH_DIR"
start=$(date +%s)
"$WORK/.venv/bin/python" "$BENCH/bench_driver.py" "${args[@]}"
log "done in $(( $(date +%s) - start )) s: $(du -sh "$BENCH_DIR" | cut -f1) in $BENCH_DIR"
