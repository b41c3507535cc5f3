#!/usr/bin/env bash
# bounded-read.sh - IO and time per lookup of `sstkit read` on a large partition.
#
#   bench/bounded-read.sh [SSTABLE] [KEY_HEX]
#   bench/bounded-read.sh /tmp/sstkit-bench/nb_one_partition          # from make-bench-data.sh
#   N=50 IO_MODE=direct bench/bounded-read.sh fixtures/cassandra/nb_wide
#
# SSTABLE: any component path or the sstable's directory (default: the 1M-row partition that
# bench/make-bench-data.sh writes, /tmp/sstkit-bench/nb_one_partition). KEY_HEX: the partition
# (default: the one with the most promoted-index blocks, from `dump-index`).
#
# For N random rows of that partition (the first clustering of random promoted-index blocks,
# fixed seed), each in its own process:
#   single   `read -k K -k K --from R --to R`: the first lookup is cold (empty index cache:
#            Index.db pages and promoted-index blocks are read), the second warm;
#   slice    the same with `--from R --limit 100` (100-row slices);
#   naive    `read --naive`: located through the index, then Data.db scanned from the
#            partition start (scan reads with read-ahead), for both shapes.
# It prints reads and bytes per lookup (Data.db, Index.db; chunks decompressed for
# compressed sstables) and the lookup time (median and p90 of the in-process duration of
# the lookup itself, from --io-stats=json "micros"; process start and sstable open excluded).
#
# Environment: N (default 100), SEED (default 42), IO_MODE (pread | mmap | direct; direct
# bypasses the OS page cache), SSTKIT (a prebuilt binary; default: cargo build --release
# --bin sstkit, then target/release/sstkit), EXTRA (more flags for every read, e.g.
# "--io-unit 512").
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SST="${1:-/tmp/sstkit-bench/nb_one_partition}"
KEY="${2:-}"
N="${N:-100}"
SEED="${SEED:-42}"
IO_MODE="${IO_MODE:-pread}"
EXTRA="${EXTRA:-}"

# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"
SSTKIT="$(sstkit_binary bounded-read.sh 1)"
[[ -e "$SST" ]] || { echo "bounded-read.sh: no sstable at $SST (run bench/make-bench-data.sh?)" >&2; exit 2; }

exec python3 - "$SSTKIT" "$SST" "$KEY" "$N" "$SEED" "$IO_MODE" "$EXTRA" <<'PY'
import json, random, shlex, statistics, subprocess, sys

sstkit, sst, key, n, seed, io_mode, extra = sys.argv[1:8]
n, seed = int(n), int(seed)
extra = shlex.split(extra)

def run(args):
    r = subprocess.run([sstkit] + args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"sstkit {' '.join(args)} failed ({r.returncode}): {r.stderr}")
    return r

# The partition and its blocks.
entries = [json.loads(l) for l in run(["dump-index", "--promoted-index", "-o", "ndjson", sst]).stdout.splitlines()]
if key:
    entry = next(e for e in entries if e["key"]["raw"] == key)
else:
    entry = max(entries, key=lambda e: (e.get("promoted_index") or {}).get("blocks", 0))
key = entry["key"]["raw"]
pi = entry.get("promoted_index") or {}
blocks = pi.get("entries", [])
if not blocks:
    sys.exit("the partition has no promoted index: nothing to measure")
rows = [b["first"]["value"] for b in blocks if b["first"]["kind"] == "CLUSTERING"]
rng = random.Random(seed)
picks = [rng.choice(rows) for _ in range(n)]
base = ["read", "-o", "ndjson", "--io-stats=json", "--io-mode", io_mode] + extra

def ops(args):
    r = run(base + args + [sst])
    return [json.loads(l) for l in r.stderr.splitlines() if l.startswith("{")]

def comp(op, c, f):
    return op["components"].get(c, {}).get(f, 0)

results = {}  # label -> list of ops
for r in picks:
    for shape, bound in (("single row", ["--from", r, "--to", r]),
                         ("100-row slice", ["--from", r, "--limit", "100"])):
        o = ops(["--key-hex", key, "--key-hex", key] + bound)
        results.setdefault((shape, "cold"), []).append(o[1])
        results.setdefault((shape, "warm"), []).append(o[2])
        o = ops(["--naive", "--key-hex", key] + bound)
        results.setdefault((shape, "naive"), []).append(o[1])

first = entries[0]
print(f"sstable   {sst}")
print(f"partition key 0x{key}: {pi['blocks']} promoted-index blocks; {n} random rows "
      f"(seed {seed}); --io-mode {io_mode} {' '.join(extra)}")
hdr = ("shape", "index", "Data reads", "Data bytes", "chunks", "Index reads", "Index bytes",
       "lookup µs p50", "p90")
fmt = "{:<14} {:<6} {:>10} {:>12} {:>7} {:>11} {:>12} {:>13} {:>8}"
print(fmt.format(*hdr))
for shape in ("single row", "100-row slice"):
    for mode in ("cold", "warm", "naive"):
        os_ = results[(shape, mode)]
        avg = lambda c, f: sum(comp(o, c, f) for o in os_) / len(os_)
        us = sorted(o["micros"] for o in os_)
        p90 = us[min(len(us) - 1, int(len(us) * 0.9))]
        rows_out = sum(o["plan"]["rows"] for o in os_) / len(os_)
        print(fmt.format(shape, mode, f"{avg('data','reads'):.2f}", f"{avg('data','bytes'):.0f}",
                         f"{avg('data','chunks_decompressed'):.2f}", f"{avg('index','reads'):.2f}",
                         f"{avg('index','bytes'):.0f}", f"{statistics.median(us):.0f}", p90))
        if rows_out == 0:
            print("  (no rows returned?)")
PY
