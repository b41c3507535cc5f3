#!/usr/bin/env bash
# scrub-resync.sh - what `sstkit scrub` costs and salvages when Data.db is damaged.
#
# For each corpus set below (read in place from $SSTKIT_CORPUS, else ../shared/corpus; copied
# to a temp dir), it overwrites 8 bytes of Data.db at a third of the file with 0xFF, then runs
# `sstkit scrub -o json` twice: with the sstable's index, and with Index.db, Summary.db and
# Filter.db removed (the index-less scan, where candidate partition starts are searched byte by
# byte). It prints the wall time (best of RUNS, default 3), the confirmation attempts and the
# bytes they decoded (`attempts`, `probe_bytes`), and what was salvaged and lost.
#
# Usage:
#   bench/scrub-resync.sh            # builds the release binary first
#   SSTKIT=path/to/sstkit bench/scrub-resync.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
bin="$(sstkit_binary scrub-resync.sh 1)"
corpus="${SSTKIT_CORPUS:-$here/../../shared/corpus}"
[[ -d "$corpus" ]] || { echo "scrub-resync.sh: no corpus at $corpus" >&2; exit 2; }
runs="${RUNS:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

printf '%-34s %-8s %8s %9s %12s %9s %11s\n' set index "best s" attempts probe_bytes salvaged lost_bytes
for set in cassandra/legacy_nb_clust cassandra/legacy_mc_clust cassandra/legacy_da_clust \
    scylladb/3.x-uncompressed-filtering_and_forwarding_range_tombstones; do
  [[ -d "$corpus/$set" ]] || continue
  for index in kept removed; do
    d="$work/$(basename "$set")-$index"
    mkdir -p "$d"
    cp "$corpus/$set"/* "$d/"
    chmod u+w "$d"/*
    if [[ "$index" == removed ]]; then
      rm -f "$d"/*-Index.db "$d"/*-Summary.db "$d"/*-Filter.db "$d"/*-Partitions.db "$d"/*-Rows.db
    fi
    python3 - "$d" <<'EOF'
import glob, sys
p = glob.glob(sys.argv[1] + "/*-Data.db")[0]
b = bytearray(open(p, "rb").read())
at = len(b) // 3
b[at:at + 8] = b"\xff" * 8
open(p, "wb").write(b)
EOF
    python3 - "$bin" "$d" "$set" "$index" "$runs" <<'EOF'
import json, subprocess, sys, time
bin, d, name, index, runs = sys.argv[1:6]
best = None
for _ in range(int(runs)):
    t = time.perf_counter()
    out = subprocess.run([bin, "scrub", "-o", "json", d], capture_output=True).stdout
    t = time.perf_counter() - t
    best = t if best is None else min(best, t)
r = next(iter(json.loads(out)["sstables"].values()))
print("%-34s %-8s %8.3f %9s %12s %9s %11s" % (name.split("/")[-1][:34], index, best,
      r.get("attempts"), r.get("probe_bytes"), r.get("salvaged"), r.get("lost_bytes")))
EOF
  done
done
