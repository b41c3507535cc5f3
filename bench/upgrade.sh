#!/usr/bin/env bash
# upgrade.sh - `sstkit rewrite --format-version oa` against Cassandra's own offline upgrader
# (sstableupgrade, org.apache.cassandra.tools.StandaloneUpgrader) on the same nb sstable, in
# the same run: MB/s of uncompressed Data.db and peak RSS of both, their ratio, and whether
# the two oa sstables hold the same data.
#
#   bench/upgrade.sh                                   # /tmp/sstkit-bench/nb_many_partitions
#   RUNS=5 bench/upgrade.sh /tmp/sstkit-bench/nb_one_partition
#
# What it does
#   1. Copies the oracle harness (ORACLE_DIR, default ../shared/oracle) into WORK (default
#      /tmp/sstkit-oracle-upgrade), seeding lib/ and .venv/ from SSTKIT_ORACLE_WORK.
#   2. The upgrader reads the table's schema from a node's system tables, so the sstable is
#      first imported into a node (import_check.sh --keep-work, under
#      `flock /tmp/oracle-node.lock`: one node at a time on a machine), which is then stopped.
#   3. RUNS times, in turn: the upgrader (with --keep-source, on the stopped node's data
#      directory, with its cassandra.yaml but storage_compatibility_mode NONE so that the
#      current version is oa), then `sstkit rewrite --format-version oa` of the source. Both
#      under /usr/bin/time -v; the JVM's start-up is part of the upgrader's time, as for a user.
#   4. Compares `sstkit dump-data -o ndjson` of both oa sstables (the "sstable" field aside),
#      at one --now. A compaction (the upgrader is one) turns expired TTL cells into
#      tombstones and a rewrite does not, so when they differ `sstkit compact
#      --format-version oa` of the source is compared as well.
#
# Env: SSTKIT, BUILD=1, RUNS (3), OUT (/tmp/sstkit-bench-upgrade), WORK, ORACLE_DIR,
#      SSTKIT_ORACLE_WORK (/tmp/sstkit-oracle), TOOL_HEAP (the harness's default, 1G),
#      KEEP_NODE=1 (keep the stopped node's files, to time the upgrader again by hand).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
source "$HERE/lib.sh"
# shellcheck source=../fixtures/common.sh
source "$REPO/fixtures/common.sh"
LOG_TAG=upgrade
BIN="$(sstkit_binary upgrade.sh "${BUILD:-0}")"
SRC="${1:-/tmp/sstkit-bench/nb_many_partitions}"
DATA="$(data_file upgrade.sh "$SRC")"
SRC_DIR="$(dirname "$DATA")"
RUNS="${RUNS:-3}"
OUT="${OUT:-/tmp/sstkit-bench-upgrade}"
ORACLE_DIR="$(cd "${ORACLE_DIR:-$REPO/../shared/oracle}" && pwd)"
WORK="${WORK:-/tmp/sstkit-oracle-upgrade}"
SEED_WORK="${SSTKIT_ORACLE_WORK:-/tmp/sstkit-oracle}"
[[ -f "$SRC_DIR/schema.cql" ]] || die "no schema.cql next to $DATA"

copy_harness "$ORACLE_DIR" "$WORK" "$SEED_WORK"
rm -rf "${OUT:?}"; mkdir -p "$OUT"
LEN="$("$BIN" dump-compression-info -o json "$DATA" | python3 -c 'import json,sys; print(list(json.load(sys.stdin)["sstables"].values())[0]["data_len"])')"
log "source: $DATA ($LEN bytes uncompressed, $(stat -c %s "$DATA") on disk)"

# ---- import into a node, then stop it (the upgrader needs the schema it keeps)
read -r KS TABLE < <(python3 - "$SRC_DIR/schema.cql" <<'EOF'
import re, sys
m = re.search(r"CREATE\s+TABLE\s+(\w+)\.(\w+)", open(sys.argv[1]).read(), re.I)
print(m.group(1), m.group(2))
EOF
)
log "importing into a node as $KS.$TABLE (waiting for /tmp/oracle-node.lock)"
flock /tmp/oracle-node.lock "$WORK/import_check.sh" "$SRC_DIR" --run nb --import-mode no-verify \
  --query "SELECT JSON * FROM $KS.$TABLE LIMIT 1" --keep-work --out "$OUT/import-select.json" \
  2>&1 | tee "$OUT/import.log" >&2
node="$(sed -n 's/.*node files kept in \(\/[^ ]*\).*/\1/p' "$OUT/import.log" | tail -n1)"
[[ -d "$node/data/$KS" ]] || die "no kept node data in '$node'"
table_dir="$(find "$node/data/$KS" -maxdepth 1 -type d -name "$TABLE-*" | head -n1)"
mapfile -t imported < <(find "$table_dir" -maxdepth 1 -name 'nb-*-Data.db')
[[ ${#imported[@]} -eq 1 ]] || die "expected one imported nb sstable in $table_dir"
sed -E 's/^storage_compatibility_mode:.*$/storage_compatibility_mode: NONE/' \
  "$node/cassandra.yaml" >"$OUT/upgrade.yaml"

# seconds and peak RSS (KiB) of a /usr/bin/time -v log
elapsed() { grep "Elapsed (wall clock)" "$1" | awk '{print $NF}' | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }'; }
peak() { grep "Maximum resident set size" "$1" | awk '{print $NF}'; }
mbs() { python3 -c "print(f'{$LEN/1e6/$1:.1f}')"; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

c_t=(); c_r=(); s_t=(); s_r=()
for i in $(seq 1 "$RUNS"); do
  # the upgrader's outputs of the run before (the nb source is kept)
  find "$table_dir" -maxdepth 1 -type f ! -name 'nb-*' -delete
  TOOL_YAML="$OUT/upgrade.yaml" /usr/bin/time -v "$WORK/tools.sh" class \
    org.apache.cassandra.tools.StandaloneUpgrader --keep-source "$KS" "$TABLE" \
    >"$OUT/upgrader.out" 2>"$OUT/upgrader.time" \
    || { tail -n 30 "$OUT/upgrader.time" >&2; die "the upgrader failed"; }
  t="$(elapsed "$OUT/upgrader.time")"; r="$(peak "$OUT/upgrader.time")"
  c_t+=("$t"); c_r+=("$r")
  log "run $i: sstableupgrade ${t}s, $(mbs "$t") MB/s, peak RSS $((r / 1024)) MiB"
  rm -rf "$OUT/sstkit"
  /usr/bin/time -v "$BIN" rewrite -o json --format-version oa --output-dir "$OUT/sstkit" "$DATA" \
    >"$OUT/sstkit.json" 2>"$OUT/sstkit.time"
  t="$(elapsed "$OUT/sstkit.time")"; r="$(peak "$OUT/sstkit.time")"
  s_t+=("$t"); s_r+=("$r")
  log "run $i: sstkit rewrite ${t}s, $(mbs "$t") MB/s, peak RSS $((r / 1024)) MiB"
done
ct="$(printf '%s\n' "${c_t[@]}" | median)"; st="$(printf '%s\n' "${s_t[@]}" | median)"
cr="$(printf '%s\n' "${c_r[@]}" | sort -n | tail -n1)"; sr="$(printf '%s\n' "${s_r[@]}" | sort -n | tail -n1)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "sstableupgrade nb->oa: median ${ct}s = $(mbs "$ct") MB/s; peak RSS max $((cr / 1024)) MiB"
echo "sstkit rewrite --format-version oa: median ${st}s = $(mbs "$st") MB/s; peak RSS max $((sr / 1024)) MiB"
echo "ratio (time): $(python3 -c "print(f'{$ct/$st:.1f}')")x; RSS $(python3 -c "print(f'{$cr/$sr:.1f}')")x"

# ---- same data?
mapfile -t c_out < <(find "$table_dir" -maxdepth 1 -name 'oa-*-Data.db')
[[ ${#c_out[@]} -eq 1 ]] || die "expected one oa sstable from the upgrader in $table_dir"
"$BIN" validate "$OUT/sstkit" >/dev/null && log "sstkit's output valid"
now="$(date +%s)"
# dump_of SSTABLE FILE: the ndjson dump at $now, the "sstable" field cut, into FILE
dump_of() { "$BIN" dump-data -o ndjson --now "$now" "$1" | sed -E 's/^\{"sstable":"[^"]*",/{/' >"$2"; }
dump_of "${c_out[0]}" "$OUT/cassandra.ndjson"
dump_of "$OUT/sstkit" "$OUT/sstkit.ndjson"
if cmp -s "$OUT/cassandra.ndjson" "$OUT/sstkit.ndjson"; then
  echo "dump-data -o ndjson: sstableupgrade's oa sstable == sstkit rewrite's ($(wc -l <"$OUT/sstkit.ndjson") partitions)"
  rm -f "$OUT"/*.ndjson            # GBs; kept only when they differ
else
  n="$(python3 -c 'import sys; print(sum(a != b for a, b in zip(open(sys.argv[1]), open(sys.argv[2]))))' \
    "$OUT/cassandra.ndjson" "$OUT/sstkit.ndjson")"
  echo "dump-data -o ndjson: $n of $(wc -l <"$OUT/sstkit.ndjson") partitions differ between sstableupgrade and sstkit rewrite"
  "$BIN" compact -o json --format-version oa --output-dir "$OUT/compact" "$DATA" >/dev/null
  dump_of "$OUT/compact" "$OUT/compact.ndjson"
  if cmp -s "$OUT/cassandra.ndjson" "$OUT/compact.ndjson"; then
    echo "dump-data -o ndjson: sstableupgrade's oa sstable == sstkit compact --format-version oa's"
  else
    echo "dump-data -o ndjson: sstableupgrade's oa sstable != sstkit compact's too (see $OUT/*.ndjson)"
  fi
fi
if [[ "${KEEP_NODE:-0}" == 1 ]]; then
  log "node files kept in $node (table $table_dir, upgrader yaml $OUT/upgrade.yaml)"
else
  rm -rf "${node:?}"
fi
