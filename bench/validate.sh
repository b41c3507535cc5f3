#!/usr/bin/env bash
# validate.sh - speed of `sstkit validate-checksums` and `sstkit scrub --mode validate` on one
# (large) sstable, next to the speed of simply reading the file.
#
# Builds sstkit (release), then runs each command N times (page cache warm: the first run of
# each warms it) and reports, per command, the best and median wall time and MB/s:
#
#   cat                  `cat DATA > /dev/null`: the speed of reading the file
#   validate-checksums   `sstkit validate-checksums SSTABLE` (--io-mode pread, the default;
#                        one thread per core), MB/s of Data.db as stored (compressed bytes
#                        when compressed)
#   ... --threads 1      the same in one sequential pass
#   ... --io-mode mmap   the same through a memory map (with and without --threads 1)
#   scrub validate       `sstkit scrub --mode validate SSTABLE`, pinned to one core
#                        (`taskset -c CORE`), MB/s of uncompressed Data.db
#
# and the ratio validate-checksums / cat. The CRC alone (no IO) comes from the format crate's
# `checksum_throughput` example (in-process: read(2), the IO layer scan, CRC32
# over bytes already in memory, validate_checksums), run once at the end unless --no-crc.
#
# The issue 6 targets: validate-checksums >= 80% of read speed from page cache; scrub
# validate >= 300 MB/s of uncompressed data on one core.
#
# Timing is done by a small Python driver (wall clock around fork/exec/wait, max RSS from
# wait4), not /usr/bin/time: these runs take tens of milliseconds and need sub-ms
# resolution. Process start-up is included for every command alike (cat too).
#
# Usage:
#   bench/validate.sh [options] [SSTABLE]
#     SSTABLE      a Data.db path or a folder holding one sstable
#                  (default /tmp/sstkit-bench/nb_many_partitions)
#     -n N         runs per command (default 9)
#     -c CORE      core that scrub is pinned to (default 0)
#     --no-build   use the existing binary
#     --no-crc     skip the in-process throughput example
#     -h, --help   this text
#
# Environment: CARGO_TARGET_DIR (default ./target), SSTKIT (use this binary, implies
# --no-build). Data: bench/make-bench-data.sh (BENCH_COMPRESSION=none for an uncompressed
# sstable with CRC.db).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SSTABLE=/tmp/sstkit-bench/nb_many_partitions
RUNS=9
CORE=0
BUILD=1
CRC=1

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    -n) RUNS="$2"; shift 2 ;;
    -c) CORE="$2"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --no-crc) CRC=0; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "validate.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) SSTABLE="$1"; shift ;;
  esac
done

# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
DATA="$(data_file validate.sh "$SSTABLE")"
BIN="$(sstkit_binary validate.sh "$BUILD")"

python3 - "$BIN" "$DATA" "$RUNS" "$CORE" <<'EOF'
import json, os, statistics, subprocess, sys, time

bin_, data, runs, core = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
info = next(iter(json.loads(subprocess.run([bin_, "info", "-o", "json", data], check=True,
                                           capture_output=True).stdout)["sstables"].values()))
stored = os.path.getsize(data)
comp = info.get("compression") or {}
uncompressed = comp.get("uncompressed_size") or info["data_size"]
print(f"sstable:  {data}")
print(f"size:     {stored/1e6:.1f} MB Data.db as stored, {uncompressed/1e6:.1f} MB uncompressed, "
      f"{'compressed' if comp else 'uncompressed (CRC.db)'}")
print(f"binary:   {bin_}")
print(f"runs:     {runs} per command (best and median wall time)\n")

def run(argv, expect=(0,)):
    devnull = os.open(os.devnull, os.O_WRONLY)
    t = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t
    os.close(devnull)
    code = os.waitstatus_to_exitcode(status)
    if code not in expect:
        sys.exit(f"validate.sh: {' '.join(argv)} exited {code}")
    return wall, ru.ru_maxrss

def bench(label, argv, size, expect=(0,)):
    run(argv, expect)  # warm
    res = [run(argv, expect) for _ in range(runs)]
    walls = sorted(w for w, _ in res)
    best, med = walls[0], statistics.median(walls)
    rss = max(r for _, r in res) / 1024
    print(f"{label:<34} best {best*1e3:8.1f} ms  median {med*1e3:8.1f} ms  "
          f"{size/1e6/best:8.0f} MB/s (median {size/1e6/med:6.0f})  max RSS {rss:6.1f} MB")
    return best, med

cat = bench("cat > /dev/null", ["cat", data], stored)
vc = bench("validate-checksums", [bin_, "validate-checksums", data], stored)
v1 = bench("validate-checksums --threads 1",
           [bin_, "validate-checksums", "--threads", "1", data], stored)
vm = bench("validate-checksums --io-mode mmap",
           [bin_, "validate-checksums", "--io-mode", "mmap", data], stored)
vm1 = bench("  ... --io-mode mmap --threads 1",
            [bin_, "validate-checksums", "--io-mode", "mmap", "--threads", "1", data], stored)
sc = bench(f"scrub --mode validate (core {core})",
           ["taskset", "-c", core, bin_, "scrub", "--mode", "validate", data], uncompressed)
print()
for label, r in (("validate-checksums", vc), ("validate-checksums --threads 1", v1),
                 ("validate-checksums --io-mode mmap", vm),
                 ("validate-checksums --io-mode mmap --threads 1", vm1)):
    print(f"{label}: {100*cat[0]/r[0]:.0f}% of cat's speed (best), "
          f"{100*cat[1]/r[1]:.0f}% (median); target 80%")
print(f"scrub --mode validate: {uncompressed/1e6/sc[0]:.0f} MB/s uncompressed on one core "
      f"(best); target 300 MB/s")
EOF

if [[ $CRC -eq 1 ]]; then
  echo
  echo "in-process (format crate, examples/checksum_throughput.rs):"
  (cd "$ROOT" && cargo run --release -q -p sstkit-format --example checksum_throughput -- "$DATA")
fi
