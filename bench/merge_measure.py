#!/usr/bin/env python3
"""The measurements of bench/merge.sh (run by it; standard library only).

    merge_measure.py SSTKIT BENCH_DIR [--lookups N] [--runs N] [--seed N]

BENCH_DIR holds nb_merged_1..8 and nb_compacted from bench/workloads_merge.py. Prints:
- random single-row merged reads (`read --merge --io-stats=json`, one process per lookup;
  a third each in the wide partition, in small partitions, and in small partitions deleted
  as a whole in the newest sstable):
  reads and bytes per lookup against the sum of the 8 single-sstable reads of the same row
  (`read` without --merge over the same sstables, its "read" lines), and how many sstables
  each lookup skipped, by reason (filter, clustering range, partition deletion);
- `dump-data --merge` of the 8 against `dump-data` of the compacted sstable (same content,
  checked with `-o cql`), run in turn: median wall and CPU time, MB/s of uncompressed
  Data.db read, peak RSS, and the ratio of MB/s pair by pair, in wall and in CPU time;
- `read --merge` of the whole wide partition, forward and reversed (and its last 10 rows):
  wall time and peak RSS;
- the load average at each step.
"""

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path


def loadavg():
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def stats_lines(stderr):
    return [json.loads(ln) for ln in stderr.splitlines() if ln.startswith("{")]


def data_len(sstkit, dirs):
    """Uncompressed Data.db bytes of the sstables in dirs (CompressionInfo's data_len)."""
    total = 0
    for d in dirs:
        r = subprocess.run([sstkit, "dump-compression-info", "-o", "json", str(d)],
                           capture_output=True, text=True, check=True)
        total += sum(v["data_len"] for v in json.loads(r.stdout)["sstables"].values())
    return total


def timed_cpu(cmd):
    """(wall seconds, CPU seconds (user + sys), peak RSS KiB) of cmd, output discarded,
    from /usr/bin/time -v."""
    r = subprocess.run(["/usr/bin/time", "-v", *cmd], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise SystemExit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr[-2000:]}")
    wall = rss = None
    cpu = 0.0
    for ln in r.stderr.splitlines():
        if "Elapsed (wall clock)" in ln:
            parts = [float(x) for x in ln.rsplit(" ", 1)[1].split(":")]
            wall = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
        elif "Maximum resident set size" in ln:
            rss = int(ln.rsplit(" ", 1)[1])
        elif "User time (seconds)" in ln or "System time (seconds)" in ln:
            cpu += float(ln.rsplit(" ", 1)[1])
    return wall, cpu, rss


def timed(cmd):
    """(wall seconds, peak RSS KiB) of cmd, output discarded."""
    wall, _, rss = timed_cpu(cmd)
    return wall, rss


def lookups(sstkit, merged, wide_rows, small, n, seed):
    rng = random.Random(seed)
    out = {"wide": [], "small": [], "deleted": []}
    for i in range(n):
        kind = ("wide", "small", "deleted")[i % 3]
        pk = {"wide": 0, "small": rng.randint(1, small),
              "deleted": 50 * rng.randint(1, small // 50)}[kind]
        ck = rng.randrange(wide_rows) if kind == "wide" else rng.randrange(50)
        sel = ["-k", str(pk), "--from", str(ck), "--to", str(ck)]
        r = subprocess.run([sstkit, "read", "--merge", "-o", "ndjson", "--io-stats=json", *sel,
                            *map(str, merged)], capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"read --merge {sel}: exit {r.returncode}: {r.stderr[-2000:]}")
        lines = stats_lines(r.stderr)
        total = [x for x in lines if x["sstable"] == "total"]
        per = [x for x in lines if x["sstable"] != "total" and x.get("operation") == "read"]
        assert len(total) == 1 and len(per) == len(merged), r.stderr[-2000:]
        s = subprocess.run([sstkit, "read", "-o", "ndjson", "--io-stats=json", *sel,
                            *map(str, merged)], capture_output=True, text=True)
        single = [x for x in stats_lines(s.stderr) if x.get("operation") == "read"]
        assert len(single) == len(merged), s.stderr[-2000:]
        out[kind].append({
            "reads": total[0]["total"]["reads"], "bytes": total[0]["total"]["bytes"],
            "single_reads": sum(x["total"]["reads"] for x in single),
            "single_bytes": sum(x["total"]["bytes"] for x in single),
            "filter": sum("bloom filter" in x["result"] for x in per),
            "clustering": sum(x["result"].startswith("partition header only") for x in per),
            "deletion": sum("partition deletion" in x["result"] for x in per),
            "skipped_other": sum(x["result"].startswith("skipped") and "bloom filter" not in
                                 x["result"] and "partition deletion" not in x["result"]
                                 for x in per),
            "read": sum(x["result"].startswith("read") for x in per),
        })
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sstkit")
    ap.add_argument("bench_dir")
    ap.add_argument("--lookups", type=int, default=150)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    d = Path(a.bench_dir)
    merged = [d / f"nb_merged_{i}" for i in range(1, 9)]
    compacted = d / "nb_compacted"
    for p in merged + [compacted]:
        if not p.is_dir():
            raise SystemExit(f"no {p}: make the data first (bench/merge.sh)")
    summary = json.loads((d / "bench-summary.json").read_text())
    scale = summary.get("scale") or 1.0
    wide_rows = max(800, round(1_000_000 * scale))
    small = max(50, round(20_000 * scale))
    print(f"data: {d} (BENCH_SCALE {scale}: wide partition {wide_rows:,} rows, "
          f"{small:,} small partitions)")

    print(f"\n## random single-row merged reads ({a.lookups} lookups: a third each in the "
          f"wide partition, in small ones, in small ones deleted in the newest sstable; "
          f"load {loadavg()})")
    t0 = time.time()
    res = lookups(a.sstkit, merged, wide_rows, small, a.lookups, a.seed)
    print(f"{'':8}{'lookups':>8}{'reads':>8}{'bytes':>10}{'8 single reads':>16}"
          f"{'8 single bytes':>16}   sstables per lookup: read / skipped by filter, "
          f"clustering range, partition deletion")
    for kind, xs in res.items():
        if not xs:
            continue
        m = lambda k: statistics.mean(x[k] for x in xs)   # noqa: E731
        print(f"{kind:8}{len(xs):>8}{m('reads'):>8.1f}{m('bytes'):>10.0f}{m('single_reads'):>16.1f}"
              f"{m('single_bytes'):>16.0f}   {m('read'):.2f} / {m('filter'):.2f}, "
              f"{m('clustering'):.2f}, {m('deletion'):.2f}"
              + (f" (other skips {m('skipped_other'):.2f})" if m('skipped_other') else ""))
    print(f"({time.time() - t0:.0f} s; load {loadavg()})")

    print(f"\n## dump-data --merge of the 8 against dump-data of the compacted sstable "
          f"(median of {a.runs}; load {loadavg()})")
    cql = [subprocess.run([a.sstkit, "dump-data", *args, "-o", "cql", "--now", "1800000000"],
                          capture_output=True, check=True).stdout
           for args in (["--merge", *map(str, merged)], [str(compacted)])]
    rows = cql[0].count(b"\n")
    print("same rows (-o cql): " + ("yes" if cql[0] == cql[1] else "NO") + f" ({rows:,} rows)")
    in_merged, in_compacted = data_len(a.sstkit, merged), data_len(a.sstkit, [compacted])
    # The two run in turn, so that both see the same machine; each pair gives a ratio.
    dumps = (("merged (8 sstables)", ["--merge", *map(str, merged)], in_merged),
             ("compacted (1 sstable)", [str(compacted)], in_compacted))
    runs = {name: [] for name, _, _ in dumps}
    for _ in range(a.runs):
        for name, args, _ in dumps:
            runs[name].append(timed_cpu([a.sstkit, "dump-data", "-o", "ndjson", *args]))
    for name, _, length in dumps:
        wall = statistics.median(w for w, _, _ in runs[name])
        cpu = statistics.median(c for _, c, _ in runs[name])
        rss = max(r for _, _, r in runs[name])
        print(f"{name:24} {length / 1e6:8.1f} MB uncompressed, {wall:6.2f} s, "
              f"{length / 1e6 / wall:7.1f} MB/s, CPU {cpu:.2f} s, peak RSS {rss / 1024:.1f} MiB")
    pairs = list(zip(*(runs[name] for name, _, _ in dumps)))
    for what, k in (("wall", 0), ("CPU", 1)):
        ratios = [(in_merged / m[k]) / (in_compacted / c[k]) for m, c in pairs]
        print(f"merged MB/s / compacted MB/s, {what} time: median of {len(ratios)} pairs "
              f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})")
    wall, rss = timed([a.sstkit, "read", "--merge", "-o", "ndjson", "-k", "0",
                       *map(str, merged)])
    print(f"read --merge of the whole wide partition: {wall:.2f} s, peak RSS {rss / 1024:.1f} MiB")
    for extra in ([], ["--limit", "10"]):
        wall, rss = timed([a.sstkit, "read", "--merge", "--reverse", *extra, "-o", "ndjson",
                           "-k", "0", *map(str, merged)])
        print(f"read --merge --reverse {' '.join(extra)} of the wide partition: {wall:.2f} s, "
              f"peak RSS {rss / 1024:.1f} MiB")
    print(f"load {loadavg()}")


if __name__ == "__main__":
    sys.exit(main())
