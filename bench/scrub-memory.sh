#!/usr/bin/env bash
# scrub-memory.sh - peak RSS of `sstkit scrub --mode validate` as the partition count grows.
#
#   bench/scrub-memory.sh [DIR] [COUNTS...]     # default /tmp/sstkit-scrub-memory, 100000 3000000
#
# For each count, writes DIR/<count>/{nb,da} with make-many-partitions.sh (kept for reruns;
# delete DIR when done: 3 M partitions take about 0.2 GB per format) and prints one line per
# binary and format: partitions, format, max RSS (KiB, /usr/bin/time -v), wall seconds, exit
# code. Binaries: $SSTKIT (default target/release/sstkit) and, when set, $SSTKIT_BASE (e.g. a
# build of main, for before/after).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
dir="${1:-/tmp/sstkit-scrub-memory}"
shift || true
counts=("$@")
[[ ${#counts[@]} -gt 0 ]] || counts=(100000 3000000)
bin="$(sstkit_binary scrub-memory 0)"
bins=("$bin")
[[ -n "${SSTKIT_BASE:-}" ]] && bins=("$SSTKIT_BASE" "${bins[@]}")
printf '%-10s %-4s %-28s %10s %8s %4s\n' partitions fmt binary max_rss_kib wall_s rc
for n in "${counts[@]}"; do
  [[ -d "$dir/$n/da" ]] || SSTKIT="$bin" "$here/make-many-partitions.sh" "$n" "$dir/$n"
  for v in nb da; do
    for b in "${bins[@]}"; do
      rc=0
      /usr/bin/time -v -o "$dir/time.txt" "$b" scrub --mode validate -o json "$dir/$n/$v" \
        >"$dir/scrub.json" 2>/dev/null || rc=$?
      rss="$(awk -F': ' '/Maximum resident set size/ {print $2}' "$dir/time.txt")"
      wall="$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$dir/time.txt")"
      printf '%-10s %-4s %-28s %10s %8s %4s\n' "$n" "$v" "$(basename "$(dirname "$b")")/$(basename "$b")" "$rss" "$wall" "$rc"
    done
  done
done
