#!/usr/bin/env bash
# merge.sh - merged reads over the 8 sstables of one table (issue 16 §7): random single-row
# `read --merge` against the 8 single-sstable reads of the same row, `dump-data --merge`
# against a dump of the same table compacted into one sstable, and peak RSS.
#
#   bench/merge.sh                          # BENCH_SCALE=1: a 1,000,000-row partition, ~10 min
#   BENCH_SCALE=0.01 bench/merge.sh         # 1% of the rows: about 70 s, mostly the node
#
# 1. Data (skipped when BENCH_DIR already has it, unless MAKE=1): a node of the oracle harness
#    (under `flock /tmp/oracle-node.lock`: one node at a time on a machine) runs
#    bench/workloads_merge.py through bench/bench_driver.py: table `merged` in 8 flushed
#    slices (8 sstables, compaction disabled) and table `compacted` with the same writes,
#    `nodetool compact`ed into one. Into BENCH_DIR: nb_merged_1..8, nb_compacted.
# 2. bench/merge_measure.py prints the figures (see its doc).
#
# Env: BENCH_SCALE (1), BENCH_DIR (/tmp/sstkit-bench-merge-<scale>), MAKE=1 (make the data
#      again), MEASURE=0 (only make the data), SSTKIT, BUILD=1, LOOKUPS (150), RUNS (3),
#      BENCH_METADATA=1 (also sstablemetadata of each sstable), SSTKIT_BENCH_WORK
#      (/tmp/sstkit-oracle-bench), ORACLE_DIR, SSTKIT_ORACLE_WORK (/tmp/sstkit-oracle),
#      ORACLE_HEAP (3G).
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$BENCH/.." && pwd)"
source "$BENCH/lib.sh"
# shellcheck source=../fixtures/common.sh
source "$REPO/fixtures/common.sh"
LOG_TAG=merge
export BENCH_SCALE="${BENCH_SCALE:-1}"
export ORACLE_HEAP="${ORACLE_HEAP:-3G}"
python3 -c 'import sys; s = float(sys.argv[1]); sys.exit(not 0 < s <= 10)' "$BENCH_SCALE" \
  || die "BENCH_SCALE must be a number in (0, 10], got '$BENCH_SCALE'"
BENCH_DIR="${BENCH_DIR:-/tmp/sstkit-bench-merge-$BENCH_SCALE}"
BIN="$(sstkit_binary merge.sh "${BUILD:-0}")"

if [[ "${MAKE:-0}" == 1 || ! -f "$BENCH_DIR/bench-summary.json" ]]; then
  ORACLE_DIR="$(cd "${ORACLE_DIR:-$REPO/../shared/oracle}" && pwd)"
  WORK="${SSTKIT_BENCH_WORK:-/tmp/sstkit-oracle-bench}"
  copy_harness "$ORACLE_DIR" "$WORK" "${SSTKIT_ORACLE_WORK:-/tmp/sstkit-oracle}"
  mkdir -p "$WORK/tmp" "$BENCH_DIR"
  rm -rf "${BENCH_DIR:?}"/nb_merged_* "$BENCH_DIR/nb_compacted" "$BENCH_DIR/bench-summary.json"
  export TMPDIR="$WORK/tmp" PYTHONDONTWRITEBYTECODE=1
  "$WORK/tools.sh" setup
  log "BENCH_SCALE=$BENCH_SCALE: writing merged (8 sstables) and compacted into $BENCH_DIR" \
      "(waiting for /tmp/oracle-node.lock)"
  start=$(date +%s)
  flock /tmp/oracle-node.lock "$WORK/.venv/bin/python" "$BENCH/bench_driver.py" \
    --harness "$WORK" --workloads "$BENCH/workloads_merge.py" --out "$BENCH_DIR" --run nb \
    --tables merged,compacted $([[ "${BENCH_METADATA:-0}" == 1 ]] || echo --no-metadata)
  log "data done in $(( $(date +%s) - start )) s"
fi

[[ "${MEASURE:-1}" == 1 ]] || exit 0
python3 "$BENCH/merge_measure.py" "$BIN" "$BENCH_DIR" --lookups "${LOOKUPS:-150}" \
  --runs "${RUNS:-3}"
