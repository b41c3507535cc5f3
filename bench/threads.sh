#!/usr/bin/env bash
# threads.sh - `--threads 2` against `--threads 1` on the same data, in turn: the speed-up
# of the parallel read path, its peak RSS, and that both outputs are the same bytes.
#
#   bench/threads.sh                      # builds the release binary first
#   RUNS=9 SSTKIT=target/release/sstkit DATA=/tmp/sstkit-compare bench/threads.sh
#
# Data: made once in DATA (default /tmp/sstkit-compare) with the binary's `write`
# (make_compare_data in lib.sh): a partition of 1,000,000 rows (wide/, cut into parts at
# its row-index blocks) and 1,000,000 one-row partitions (many/, cut into units of
# partitions).
#
# Cases: dump-data -o ndjson and -o sstabledump of wide/, dump-data -o ndjson and
# -o sstabledump of many/, partitions -o csv of many/ (CASES=dump), and validate of
# many/ and wide/, with and without the checksum pass, and scrub --mode validate of
# many/ (CASES=validate); dump-data
# --merge -o ndjson and -o sstabledump of merge8/ (8 sstables of the same 250,000
# partitions, cut into token ranges common to them; CASES=merge); export -o parquet and
# -o csv of many/ and export --merge -o parquet of merge/ (CASES=export); output to a file;
# read -o ndjson of 20,000 keys of many/ (every 50th, in token order, by --keys-file;
# CASES=read). CASES=all (the default) runs all five sets. Each case runs -j1 and -j2 in turn RUNS
# times (default 9) after one warm-up each, and prints the median wall seconds of each,
# the median of the j1/j2 ratios taken pair by pair (the speed-up; pairing keeps it
# meaningful when the machine's speed drifts) with the smallest and largest, and the
# largest peak RSS of each. "fastest" is the fastest j1 run over the fastest j2 run: other
# work on the host only ever slows a run down, so the fastest of each is the nearest to an
# idle machine. Each pair is followed by two -j1 runs started at once; "two j1
# at once" is the median of 2 x (j1 seconds) / (their wall seconds): the speed-up the
# machine gives two jobs that share nothing, the ceiling for -j2 (2.0 on an idle machine
# with two whole cores; less when the host runs other work on them). Timing needs only
# python3 (wall clock around fork/exec/wait, peak RSS from wait4). The machine needs 2
# idle cores.
#
# TO=file (the default) times the runs writing stdout to a file beside the others, as an
# operator's `> dump.json` does: the kernel's page cache and its writeback to disk are then
# part of the figure, and the writeback shares the cores. TO=null times them writing to
# /dev/null: the tool's own speed-up (the warm-up runs still write the files compared).
# Export's --output-file is a file either way.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bin="$(sstkit_binary threads.sh 1)"
runs="${RUNS:-9}"
data="${DATA:-/tmp/sstkit-compare}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cases="${CASES:-all}"
to="${TO:-file}"
[[ "$to" == file || "$to" == null ]] || { echo "threads.sh: TO is file or null" >&2; exit 2; }

# Wall seconds and peak RSS (KiB) of one run with J threads, output in DEST (default
# $work/out.J); a run that exits other than 0 fails the script.
run_once() {
  local j="$1"
  shift
  python3 - "${DEST:-$work/out.$j}" "$bin" "$@" "--threads=$j" <<'PY'
import os, sys, time
# An argument @OUT@ is the output file (export): stdout is then dropped.
args = [a.replace("@OUT@", sys.argv[1]) for a in sys.argv[2:]]
to_file = args != sys.argv[2:]
out = open("/dev/null" if to_file else sys.argv[1], "wb")
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.dup2(out.fileno(), 1)
    os.execv(args[0], args)
_, status, usage = os.wait4(pid, 0)
print(f"{time.perf_counter() - start:.4f} {usage.ru_maxrss}")
sys.exit(os.waitstatus_to_exitcode(status))
PY
}

# Wall seconds of two runs with one thread started at once, outputs in DEST1 and DEST2: the
# speed-up two cores give work that shares nothing on this machine at this time (the
# ceiling; 2.0 on an idle machine with two whole cores).
run_two_at_once() {
  python3 - "$DEST1" "$DEST2" "$bin" "$@" "--threads=1" <<'PY'
import os, sys, time
def spawn(dest):
    args = [a.replace("@OUT@", dest) for a in sys.argv[3:]]
    out = open("/dev/null" if args != sys.argv[3:] else dest, "wb")
    pid = os.fork()
    if pid == 0:
        os.dup2(out.fileno(), 1)
        os.execv(args[0], args)
    return pid
start = time.perf_counter()
pids = [spawn(sys.argv[1]), spawn(sys.argv[2])]
bad = 0
for pid in pids:
    _, status = os.waitpid(pid, 0)
    bad |= os.waitstatus_to_exitcode(status)
print(f"{time.perf_counter() - start:.4f}")
sys.exit(1 if bad else 0)
PY
}

pair() {
  local name="$1"
  shift
  local i a b dest1="$work/out.1" dest2="$work/out.2"
  if [[ "$to" == null && "$*" != *@OUT@* ]]; then
    dest1=/dev/null dest2=/dev/null
  fi
  run_once 1 "$@" >/dev/null
  run_once 2 "$@" >/dev/null
  cmp -s "$work/out.1" "$work/out.2" || { echo "threads.sh: $name: outputs differ" >&2; exit 1; }
  : >"$work/t1"
  : >"$work/t2"
  : >"$work/ratio"
  : >"$work/rss1"
  : >"$work/rss2"
  : >"$work/ceiling"
  for ((i = 0; i < runs; i++)); do
    read -r a ra < <(DEST="$dest1" run_once 1 "$@")
    read -r b rb < <(DEST="$dest2" run_once 2 "$@")
    read -r c < <(DEST1="$dest1" DEST2="$dest2" run_two_at_once "$@")
    echo "$a" >>"$work/t1"
    echo "$b" >>"$work/t2"
    echo "$ra" >>"$work/rss1"
    echo "$rb" >>"$work/rss2"
    echo "$a / $b" | bc -l >>"$work/ratio"
    echo "2 * $a / $c" | bc -l >>"$work/ceiling"
  done
  printf '%-34s j1 %.3f s  j2 %.3f s  j1/j2 median %.2f (min %.2f, max %.2f)  fastest %.2f  two j1 at once %.2f  RSS j1 %d KiB, j2 %d KiB\n' \
    "$name" "$(median <"$work/t1")" "$(median <"$work/t2")" "$(median <"$work/ratio")" \
    "$(sort -g "$work/ratio" | head -1)" "$(sort -g "$work/ratio" | tail -1)" \
    "$(echo "$(sort -g "$work/t1" | head -1) / $(sort -g "$work/t2" | head -1)" | bc -l)" \
    "$(median <"$work/ceiling")" "$(sort -g "$work/rss1" | tail -1)" "$(sort -g "$work/rss2" | tail -1)"
}

make_compare_data "$bin" "$data"
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $runs pairs, stdout to $to"
if [[ "$cases" == all || "$cases" == dump ]]; then
  pair "dump-data -o ndjson, wide" dump-data -o ndjson "$data/wide"
  pair "dump-data -o sstabledump, wide" dump-data -o sstabledump "$data/wide"
  pair "dump-data -o ndjson, many" dump-data -o ndjson "$data/many"
  pair "dump-data -o sstabledump, many" dump-data -o sstabledump "$data/many"
  pair "partitions -o csv, many" partitions -o csv --min-size 0 "$data/many"
fi
if [[ "$cases" == all || "$cases" == validate ]]; then
  pair "validate -o json, many" validate -o json "$data/many"
  pair "validate --skip-checksums, many" validate -o json --skip-checksums "$data/many"
  pair "validate -o json, wide" validate -o json "$data/wide"
  pair "validate --skip-checksums, wide" validate -o json --skip-checksums "$data/wide"
  pair "scrub --mode validate, many" scrub --mode validate -o json "$data/many"
fi
if [[ "$cases" == all || "$cases" == export ]]; then
  pair "export -o parquet, many" export -o parquet --now 1700000000 --output-file @OUT@ "$data/many"
  pair "export -o csv, many" export -o csv --now 1700000000 --output-file @OUT@ "$data/many"
  pair "export --merge -o parquet" export --merge -o parquet --now 1700000000 --output-file @OUT@ "$data/merge"
fi
if [[ "$cases" == all || "$cases" == read ]]; then
  "$bin" dump-data --threads=1 --keys-only -o ndjson "$data/many" | python3 -c '
import json, sys
for i, line in enumerate(sys.stdin):
    if i % 50 == 0:
        print("0x" + json.loads(line)["raw"])
' >"$work/keys"
  pair "read --keys-file (20,000 keys), many" read -o ndjson --keys-file "$work/keys" "$data/many"
fi
if [[ "$cases" == all || "$cases" == merge ]]; then
  pair "dump-data --merge -o ndjson" dump-data --merge -o ndjson "$data/merge8"
  pair "dump-data --merge -o sstabledump" dump-data --merge -o sstabledump "$data/merge8"
fi
