#!/usr/bin/env bash
# reversed.sh - peak memory, time and bytes read of reversed vs forward full-partition reads.
#
#   bench/reversed.sh [SSTABLE] [KEY_HEX]
#   bench/reversed.sh /tmp/sstkit-bench/nb_one_partition        # 1M rows, 102 MB uncompressed
#   BENCH_SCALE=2 BENCH_TABLES=one_partition BENCH_DIR=/tmp/sstkit-bench-2x bench/make-bench-data.sh
#   bench/reversed.sh /tmp/sstkit-bench-2x/nb_one_partition     # 2M rows, ~204 MB uncompressed
#
# SSTABLE: any component path or the sstable's directory (default: the 1M-row partition of
# bench/make-bench-data.sh). KEY_HEX: the partition (default: the one with the most
# promoted-index blocks, from `dump-index`).
#
# Each run is its own process, output to /dev/null:
#   forward   `read --key-hex K`                 the whole partition, forward (bounded reader)
#   reverse   `read --key-hex K --reverse`       the whole partition, reversed
#   rev-10    `read --key-hex K --reverse --limit 10`   the last 10 rows
#   dump      `dump-data --key-hex K` / `dump-data --key-hex K --reverse` (the dump path)
# For each: max RSS (/usr/bin/time %M), wall and CPU (user + system) time (medians of RUNS;
# CPU time is the steadier on a shared machine), and from
# --io-stats=json the Data.db / Index.db / total bytes read, reads, and chunks decompressed.
# Memory of the reads is bounded by a promoted-index block group (`--max-io`), not the
# partition: both directions stay flat as the partition grows.
#
# Environment: RUNS (default 3), OUTPUT (output format, default ndjson; text is cheaper to
# render), SSTKIT (a prebuilt binary; default: cargo build --release into
# CARGO_TARGET_DIR or target/, then its sstkit), EXTRA (more flags for every command, e.g.
# "--io-mode direct").
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SST="${1:-/tmp/sstkit-bench/nb_one_partition}"
KEY="${2:-}"
RUNS="${RUNS:-3}"
OUTPUT="${OUTPUT:-ndjson}"
EXTRA="${EXTRA:-}"

# shellcheck source=bench/lib.sh
source "$REPO/bench/lib.sh"
SSTKIT="$(sstkit_binary reversed.sh 1)"
[[ -e "$SST" ]] || { echo "reversed.sh: no sstable at $SST (run bench/make-bench-data.sh?)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "reversed.sh: needs /usr/bin/time (GNU time)" >&2; exit 2; }

exec python3 - "$SSTKIT" "$SST" "$KEY" "$RUNS" "$OUTPUT" "$EXTRA" <<'PY'
import json, shlex, statistics, subprocess, sys, tempfile, os

sstkit, sst, key, runs, output, extra = sys.argv[1:7]
runs = int(runs)
extra = shlex.split(extra)

def run(args, **kw):
    r = subprocess.run([sstkit] + args, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"sstkit {' '.join(args)} failed ({r.returncode}): {r.stderr[-500:]}")
    return r

entries = [json.loads(l) for l in run(["dump-index", "--promoted-index", "-o", "ndjson", sst]).stdout.splitlines()]
if key:
    entry = next(e for e in entries if e["key"]["raw"] == key)
else:
    entry = max(entries, key=lambda e: (e.get("promoted_index") or {}).get("blocks", 0))
key = entry["key"]["raw"]
blocks = (entry.get("promoted_index") or {}).get("entries", [])
width = sum(b["width"] for b in blocks)
print(f"sstable {sst}\npartition 0x{key}: {len(blocks)} promoted-index blocks, "
      f"{width / 1e6:.1f} MB of rows (uncompressed), output -o {output}, {runs} runs each\n")

def measure(args):
    """(max RSS KiB, median wall seconds, median CPU seconds, io-stats op of the lookup)"""
    rss, secs, cpu, op = [], [], [], None
    for _ in range(runs):
        with tempfile.NamedTemporaryFile(mode="r") as t:
            cmd = ["/usr/bin/time", "-f", "%M %e %U %S", "-o", t.name, sstkit] + args
            with open(os.devnull, "w") as null:
                r = subprocess.run(cmd, stdout=null, stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                sys.exit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr[-500:]}")
            m, e, u, k = t.read().split()[-4:]
            rss.append(int(m)); secs.append(float(e)); cpu.append(float(u) + float(k))
            lines = [json.loads(l) for l in r.stderr.splitlines() if l.startswith("{")]
            reads = [l for l in lines if l.get("operation") == "read"]
            op = reads[-1] if reads else (lines[-1] if lines else None)
    return max(rss), statistics.median(secs), statistics.median(cpu), op

def comp(op, c, f):
    if op is None:
        return 0
    comps = op.get("components", {})
    return comps.get(c, {}).get(f, 0)

base = ["-o", output, "--io-stats=json"] + extra
cases = [
    ("read forward", ["read"] + base + ["--key-hex", key, sst]),
    ("read --reverse", ["read"] + base + ["--reverse", "--key-hex", key, sst]),
    ("read --reverse --limit 10", ["read"] + base + ["--reverse", "--limit", "10", "--key-hex", key, sst]),
    ("dump-data", ["dump-data"] + base + ["--key-hex", key, sst]),
    ("dump-data --reverse", ["dump-data"] + base + ["--reverse", "--key-hex", key, sst]),
]
print(f"{'':28} {'max RSS':>10} {'wall':>7} {'CPU':>7} {'data bytes':>12} {'data reads':>10} "
      f"{'chunks':>7} {'index bytes':>12} {'total bytes':>12}")
res = {}
for label, args in cases:
    rss, t, c, op = measure(args)
    tot = op["total"]["bytes"] if op and "total" in op else comp(op, "data", "bytes") + comp(op, "index", "bytes")
    res[label] = (rss, c, op, tot)
    print(f"{label:28} {rss / 1024:8.1f} MB {t:6.2f}s {c:6.2f}s {comp(op, 'data', 'bytes'):12,} "
          f"{comp(op, 'data', 'reads'):10,} {comp(op, 'data', 'chunks_decompressed'):7,} "
          f"{comp(op, 'index', 'bytes'):12,} {tot:12,}")
f, r = res["read forward"], res["read --reverse"]
print(f"\nreversed / forward (read): bytes x{r[3] / max(f[3], 1):.3f}, "
      f"data bytes x{comp(r[2], 'data', 'bytes') / max(comp(f[2], 'data', 'bytes'), 1):.3f}, "
      f"max RSS x{r[0] / max(f[0], 1):.2f}, CPU time x{r[1] / max(f[1], 0.001):.2f}")
PY
