#!/usr/bin/env bash
# writer-truth.sh - Cassandra's own tools judge what `sstkit rewrite` writes.
#
# For each fixture (BIG and BTI `da`), in its own version or TARGET's:
#   1. sstkit rewrite (the fixture's compression; promoted-index blocks as the
#      oracle wrote them: 4 KiB, 1 KiB for the *_wide cases);
#   2. sstkit validate on the output;
#   3. Cassandra's sstabledump of the output == its dump of the source
#      (fixtures/*/sstabledump.json[.gz] when present, else dumped here),
#      "position" fields aside, and "expired" (it depends on when the dump
#      ran: the fixtures' dumps are older than the TTLs' expiry);
#   4. Cassandra's sstablemetadata of the output == the source's
#      (sstablemetadata.txt), lines naming files or sizes aside, every other
#      differing line printed;
#   5. with IMPORT=1, import_check.sh loads the output into a live node
#      (one node at a time: flock /tmp/oracle-node.lock) and compares the
#      rows with the fixture's select.json (--expect). select.json was
#      recorded when the fixtures were made: TTL'd data has expired since
#      (nb_deletes, *_collections). IMPORT_BASE=source imports the source
#      sstable first (--out) and compares with those rows instead, read at
#      the same time.
#
# Usage: bench/writer-truth.sh [CASE...]     (default: every nb_, oa_, da_ case)
#   ORACLE=/tmp/writer-oracle (a private copy of shared/oracle with lib/ and .venv/)
#   SSTKIT=target/debug/sstkit  OUT=/tmp/writer-truth  IMPORT=0|1
#   TARGET=VERSION (e.g. da: every case written as BTI; default: the source's)
# Prints one line per case and a summary; exit 1 when any check failed.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ORACLE="${ORACLE:-/tmp/writer-oracle}"
SSTKIT="${SSTKIT:-$HERE/target/debug/sstkit}"
OUT="${OUT:-/tmp/writer-truth}"
IMPORT="${IMPORT:-0}"
FIX="$HERE/fixtures/cassandra"
mkdir -p "$OUT"

norm() {  # strip "position" (and the clock-dependent "expired") keys, canonical form
  python3 -c '
import json,sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in ("position", "expired")}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
print(json.dumps(strip(json.load(sys.stdin)), sort_keys=True, indent=0))'
}

meta_filter() {  # sstablemetadata lines that name files, sizes or compression
  grep -v -E '^(SSTable:|Compression ratio|Bloom Filter|Index|Data|Size|TOC|Digest|Statistics|Summary|Filter|CompressionInfo|CRC|Partitions|Rows|SSTable Level|Estimated droppable)' \
    | grep -v -E 'bytes\)|\.db'
}

cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
  for d in "$FIX"/nb_* "$FIX"/oa_* "$FIX"/da_*; do cases+=("$(basename "$d")"); done
fi

fail=0; n=0
for c in "${cases[@]}"; do
  src_dir="$FIX/$c"; data=$(ls "$src_dir"/*-Data.db | head -1)
  o="$OUT/$c"; rm -rf "$o"; mkdir -p "$o/sst"
  cis=4KiB; case "$c" in *wide*) cis=1KiB;; esac
  extra=(); [ -n "${TARGET:-}" ] && extra=(--format-version "$TARGET")
  if ! "$SSTKIT" rewrite -o json --column-index-size "$cis" "${extra[@]}" --output-dir "$o/sst" "$data" > "$o/rewrite.json" 2> "$o/rewrite.err"; then
    echo "$c: REWRITE FAILED: $(head -c 300 "$o/rewrite.err")"; fail=1; continue
  fi
  cp "$src_dir/schema.cql" "$o/sst/"
  out_data=$(ls "$o"/sst/*-Data.db)
  v=ok; "$SSTKIT" validate "$out_data" > "$o/validate.json" 2>&1 || { v=FAIL; fail=1; }
  # sstabledump of the source (fixture copy when present) and of the output.
  if [ -f "$src_dir/sstabledump.json.gz" ]; then zcat "$src_dir/sstabledump.json.gz" > "$o/src.json"
  elif [ -f "$src_dir/sstabledump.json" ]; then cp "$src_dir/sstabledump.json" "$o/src.json"
  else "$ORACLE/tools.sh" sstabledump "$data" > "$o/src.json" 2> "$o/src.err"; fi
  "$ORACLE/tools.sh" sstabledump "$out_data" > "$o/out.json" 2> "$o/out.err"
  d=ok
  norm < "$o/src.json" > "$o/src.norm"; norm < "$o/out.json" > "$o/out.norm"
  if ! cmp -s "$o/src.norm" "$o/out.norm"; then d=DIFF; fail=1; fi
  "$ORACLE/tools.sh" sstablemetadata "$out_data" > "$o/out-meta.txt" 2> "$o/out-meta.err"
  diff <(meta_filter < "$src_dir/sstablemetadata.txt") <(meta_filter < "$o/out-meta.txt") > "$o/meta.diff"
  m=ok; [ -s "$o/meta.diff" ] && m="DIFF($(grep -c '^[<>]' "$o/meta.diff") lines)"
  i=-
  if [ "$IMPORT" = 1 ] && { [ -f "$src_dir/select.json" ] || [ -f "$src_dir/select.json.gz" ]; }; then
    exp="$src_dir/select.json"; [ -f "$exp" ] || { zcat "$src_dir/select.json.gz" > "$o/select.json"; exp="$o/select.json"; }
    if [ "${IMPORT_BASE:-}" = source ]; then
      flock /tmp/oracle-node.lock "$ORACLE/import_check.sh" "$src_dir" --out "$o/source-rows.json" > /dev/null 2> "$o/import-source.err" || true
      exp="$o/source-rows.json"
    fi
    if flock /tmp/oracle-node.lock "$ORACLE/import_check.sh" "$o/sst" --expect "$exp" --report "$o/import.json" > "$o/import.out" 2> "$o/import.err"; then i=ok; else i="FAIL($?)"; fail=1; fi
  fi
  n=$((n+1))
  echo "$c: validate $v, sstabledump $d, sstablemetadata $m, import $i"
done
echo "cases: $n, all ok: $([ $fail = 0 ] && echo yes || echo no)"
exit $fail
