#!/usr/bin/env bash
# write-memory.sh - peak RSS and time of `sstkit write --from` as the partition grows.
#
#   bench/write-memory.sh [SSTABLE...]   # default /tmp/sstkit-bench/nb_one_partition and
#                                        # nb_many_partitions (bench/make-bench-data.sh)
#
# For each sstable: `dump-data -o ndjson` into a scratch file, then `write --from FILE --like
# SSTABLE` under /usr/bin/time -v, one line per binary: records, NDJSON bytes, longest record,
# max RSS (KiB), user and wall seconds, and whether the written sstable dumps as the source
# (the `sstable` field aside). Binaries: $SSTKIT (default target/release/sstkit) and, when set,
# $SSTKIT_BASE (e.g. a build of main, for before/after). Scratch: $WORK (/tmp/sstkit-write-memory).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
work="${WORK:-/tmp/sstkit-write-memory}"
ssts=("$@")
[[ ${#ssts[@]} -gt 0 ]] || ssts=(/tmp/sstkit-bench/nb_one_partition /tmp/sstkit-bench/nb_many_partitions)
bin="$(sstkit_binary write-memory 0)"
bins=("$bin")
[[ -n "${SSTKIT_BASE:-}" ]] && bins=("$SSTKIT_BASE" "${bins[@]}")
mkdir -p "$work"
strip() { sed 's/^{"sstable":"[^"]*"//' "$@"; }
printf '%-22s %-28s %8s %12s %12s %11s %7s %7s %s\n' sstable binary records ndjson_bytes \
  longest max_rss_kib user_s wall_s same
for sst in "${ssts[@]}"; do
  data="$(data_file write-memory "$sst")"
  "$bin" dump-data -o ndjson "$data" >"$work/in.ndjson"
  records="$(wc -l <"$work/in.ndjson")"
  bytes="$(stat -c %s "$work/in.ndjson")"
  longest="$(wc -L <"$work/in.ndjson")"
  want="$(strip "$work/in.ndjson" | md5sum)"
  for b in "${bins[@]}"; do
    rm -rf "$work/out" && mkdir -p "$work/out"
    rc=0
    /usr/bin/time -v -o "$work/time.txt" "$b" write -o json --from "$work/in.ndjson" \
      --like "$data" --output-dir "$work/out" >/dev/null 2>"$work/err.txt" || rc=$?
    rss="$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")"
    user="$(awk -F': ' '/User time/ {print $2}' "$work/time.txt")"
    wall="$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time.txt")"
    same="exit $rc"
    if [[ $rc -eq 0 ]]; then
      got="$("$bin" dump-data -o ndjson "$work/out" | strip | md5sum)"
      [[ "$got" == "$want" ]] && same=yes || same=NO
    fi
    printf '%-22s %-28s %8s %12s %12s %11s %7s %7s %s\n' "$(basename "$sst")" \
      "$(basename "$(dirname "$b")")/$(basename "$b")" "$records" "$bytes" "$longest" "$rss" \
      "$user" "$wall" "$same"
  done
done
rm -rf "$work"
