#!/usr/bin/env python3
"""Write benchmark sstables with the Cassandra 5.0 oracle harness, without the JSON dumps.

    <harness>/.venv/bin/python bench_driver.py --harness DIR --workloads FILE --out DIR \
        [--run nb] [--tables a,b] [--dump] [--no-metadata] [--keep-work]

Uses the harness's own make_corpus.py (imported from --harness, a writable copy of
../shared/oracle) for everything it does per format run -- start the node, run the workload
module, flush, drain + stop, copy each table's sstable into OUT/<run>_<table>/ with
schema.cql -- but not its tool step: sstabledump of a million-row partition is hundreds of MB
of JSON that make_corpus.py would also parse in memory. Instead each case gets only
`sstablemetadata` (and the full sstabledump / -d / metadata set with --dump). Writes
OUT/<case>/case.json (as make_corpus.py does, plus "bench": load timings and the uncompressed
Data.db size) and OUT/bench-summary.json.
"""

import argparse
import json
import math
import struct
import sys
import time
from pathlib import Path


def uncompressed_size(d, base):
    """Uncompressed Data.db length: from CompressionInfo.db (UTF class, int #options, options,
    int chunk length, int max compressed length, long data length, int chunk count), or the
    Data.db size for an uncompressed sstable."""
    p = d / f"{base}-CompressionInfo.db"
    if not p.exists():
        return (d / f"{base}-Data.db").stat().st_size
    b = p.read_bytes()
    o = 2 + struct.unpack_from(">H", b, 0)[0]
    nopts = struct.unpack_from(">i", b, o)[0]
    o += 4
    for _ in range(2 * nopts):
        o += 2 + struct.unpack_from(">H", b, o)[0]
    chunk, _maxc, length, chunks = struct.unpack_from(">iiqi", b, o)
    # Compaction-written sstables (as these are) end with one extra, empty chunk (9 bytes in
    # Data.db: length 0, one LZ4 byte, CRC), so the count may be one more than the data needs.
    if chunk <= 0 or chunks not in (math.ceil(length / chunk), math.ceil(length / chunk) + 1):
        return None          # not the layout expected: do not guess
    return length


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--harness", required=True, help="writable copy of the oracle harness")
    ap.add_argument("--workloads", required=True, help="workload module (.py path)")
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--run", default="nb", help="format run: nb, oa or da (default nb)")
    ap.add_argument("--tables", default="", help="comma list (default: all of the module)")
    ap.add_argument("--dump", action="store_true",
                    help="also sstabledump (JSON, -d) each case, gzip'd over 1 MB (slow, big)")
    ap.add_argument("--keep-work", action="store_true", help="keep the node's /tmp work dir")
    ap.add_argument("--no-metadata", action="store_true",
                    help="skip sstablemetadata (one JVM start per case)")
    args = ap.parse_args()

    sys.path.insert(0, str(Path(args.harness).resolve()))
    import make_corpus as mc   # the harness's driver (its Node, produce_sstables, run_tool)
    mc.workloads = mc.load_workloads(str(Path(args.workloads).resolve()))
    w = mc.workloads
    tables = [t for t in args.tables.split(",") if t] or list(w.TABLES)
    for t in tables:
        if t not in w.TABLES:
            raise SystemExit(f"unknown table {t}")
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)

    t0 = time.time()
    cases = mc.produce_sstables(args.run, out, tables, args.keep_work)
    node_s = time.time() - t0
    summary = {"cassandra_version": mc.cassandra_version(), "run": args.run,
               "scale": getattr(w, "SCALE", None), "node_seconds": round(node_s, 1), "cases": []}
    for c in cases:
        d = Path(c["dir"])
        t1 = time.time()
        if args.dump:
            mc.dump_case(c, 1e6)               # sstabledump, -d, sstablemetadata + case.json
        elif not args.no_metadata:
            data = f"{c['sstable']}-Data.db"
            rc, err = mc.run_tool(["sstablemetadata", data], d / "sstablemetadata.txt", d)
            c["tools"] = {"sstablemetadata.txt": {"rc": rc, "seconds": round(time.time() - t1, 1)}}
            if rc != 0:
                (d / "tools-stderr.txt").write_text(err)
                raise SystemExit(f"{c['case']}: sstablemetadata failed (rc={rc}): {err[-2000:]}")
        c = json.loads((d / "case.json").read_text()) if args.dump else c
        c["bench"] = dict(getattr(w, "TIMINGS", {}).get(c["table"], {}))
        c["bench"]["data_uncompressed_bytes"] = uncompressed_size(d, c["sstable"])
        c["bench"]["data_bytes"] = (d / f"{c['sstable']}-Data.db").stat().st_size
        (d / "case.json").write_text(json.dumps(
            {k: v for k, v in c.items() if k != "dir"}, indent=2) + "\n")
        b = c["bench"]
        rows = b.get("rows") or 0
        line = (f"{c['case']}: {c['sstable']}, {rows:,} rows, Data.db {b['data_bytes']:,} B "
                f"({b['data_uncompressed_bytes'] or 0:,} B uncompressed)")
        if rows and "load_s" in b:
            line += (f"; load {b['load_s']} s = {1e6 * b['load_s'] / rows:.1f} us/row, flush "
                     f"{b['flush_s']} s, compact {b['compact_s']} s")
        mc.log(line)
        summary["cases"].append({"case": c["case"], "sstable": c["sstable"], "dir": str(d),
                                 "components": c["components"], **b})
    (out / "bench-summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    mc.log(f"done in {time.time() - t0:.0f} s (node run {node_s:.0f} s); "
           f"summary: {out / 'bench-summary.json'}")


if __name__ == "__main__":
    main()
