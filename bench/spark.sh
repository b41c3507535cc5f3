#!/usr/bin/env bash
# spark.sh - the Python package and the Spark `sstable` source against the CLI's export.
#
#   1. `sstkit.read` of the table into pyarrow (every batch consumed) against
#      `sstkit export --merge -o arrow` to /dev/null: best and median wall time of N runs and
#      the ratio (target: >= 0.9); then the peak RSS of a Python process that only reads the
#      table through `sstkit.read` (8192-row batches), and of one that only imports sstkit.
#   2. Spark local[1] and local[2], one run of each in turn, N times: `count()` and
#      `groupBy(first key column).count()` through the `sstable` source (default splits; the
#      groupBy also with `option("columns", key column)`, as Spark prunes no columns here), with
#      the CPU seconds of the JVM and of the Python workers and the Python workers' peak RSS
#      (with the size of an 8192-row batch), against `sstkit export --merge -o
#      parquet` followed by `spark.read.parquet` of it (the export's time included). A run of
#      N cores is pinned to N CPUs. Spark 4.1 refuses uuid and time columns in Parquet when it
#      infers the schema: the read is given the other columns' schema (the line names the
#      columns left out).
#   3. The floor: the peak RSS of Spark's Python workers when the source reads 100 rows of
#      every CQL type (fixtures/cassandra/nb_all_types), with 1 and 2 cores: what the Python
#      Data Source API and the imports cost before any data.
#
# Usage:
#   bench/spark.sh [-n N] [PATH...]
#     PATH   sstables or table directories, read as one merged table
#            (default /tmp/sstkit-bench/nb_many_partitions, from bench/make-bench-data.sh)
#     -n N   runs (default 3)
#
# Environment: SSTKIT (the CLI binary; default: the release build, built first),
# SSTKIT_PYTHON (a python with the package installed, pyarrow and pyspark; default
# .ci/venv-python/bin/python), CARGO_TARGET_DIR.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS=3
PATHS=()
PY="${SSTKIT_PYTHON:-$ROOT/.ci/venv-python/bin/python}"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    -n) RUNS="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "spark.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) PATHS+=("$1"); shift ;;
  esac
done
[[ ${#PATHS[@]} -gt 0 ]] || PATHS=(/tmp/sstkit-bench/nb_many_partitions)

# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
BIN="$(sstkit_binary spark.sh 1)"
"$PY" -c 'import sstkit, pyspark' || { echo "spark.sh: $PY lacks sstkit or pyspark (pip install ./python pyspark)" >&2; exit 2; }

echo "== sstkit.read vs export -o arrow (${PATHS[*]})"
"$PY" "$ROOT/bench/spark_measure.py" read "$BIN" "$RUNS" "${PATHS[@]}"
/usr/bin/time -f "sstkit.read peak RSS: %M KiB" "$PY" -c '
import sys, sstkit
print(sum(b.num_rows for b in sstkit.read(sys.argv[1:])), "rows")' "${PATHS[@]}"
/usr/bin/time -f "import sstkit, pyarrow: %M KiB" "$PY" -c 'import sstkit, pyarrow'
/usr/bin/time -f "import sstkit, pyarrow, pyspark: %M KiB" "$PY" -c 'import sstkit, pyarrow, pyspark'
# 1 and 2 cores in turn, one run each, so that a change of load falls on both alike.
echo "== Spark local[1] (pinned to 1 CPU) and local[2]: the sstable source vs export + spark.read.parquet"
for ((i = 1; i <= RUNS; i++)); do
  for cores in 1 2; do
    "$PY" "$ROOT/bench/spark_measure.py" spark "$BIN" 1 "$cores" "${PATHS[@]}" 2> >(grep -v WARN >&2)
  done
done
echo "== the floor: the Python workers' peak RSS when the source reads 100 rows"
for cores in 1 2; do
  "$PY" "$ROOT/bench/spark_measure.py" floor "$BIN" 1 "$cores" "$ROOT/fixtures/cassandra/nb_all_types" \
    2> >(grep -v WARN >&2)
done
