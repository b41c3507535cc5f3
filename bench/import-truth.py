#!/usr/bin/env python3
"""import-truth.py - a live Cassandra 5.0 node reads what sstkit writes.

    $ORACLE/.venv/bin/python bench/import-truth.py [--runs nb,oa,da] [--cases GLOB]

For every single-sstable fixture of each run (one node per run, the oracle harness's own
`Node`), sstkit writes three sstables from it:

  rewrite  `sstkit rewrite CASE --output-dir D` (the source's version and compression)
  write    `sstkit dump-data -o ndjson CASE | sstkit write --from - --like CASE --output-dir D`
           (counter tables are refused by write and skipped here)
  scrub    `sstkit scrub --mode skip CASE --output-dir D` (an intact sstable: every partition)

The source and each output are loaded with `nodetool import --extended-verify` into a keyspace
of their own (the table created from the case's schema.cql), and `SELECT JSON *` of each output
must equal the source's, read at the same time (so TTL expiry cannot make them differ). A
refused import, an ERROR in the node's log during it, or different rows fail the case.

Prints one line per case and output, then a summary; exit 1 when anything failed.
Environment: ORACLE (a copy of the oracle harness with lib/ and .venv/, default
/tmp/sstkit-oracle), SSTKIT (default target/debug/sstkit), OUT (default /tmp/import-truth).
Needs the node's ports: run it under `flock /tmp/oracle-node.lock` when another node may run.
"""
import argparse
import fnmatch
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
ORACLE = Path(os.environ.get("ORACLE", "/tmp/sstkit-oracle"))
SSTKIT = Path(os.environ.get("SSTKIT", HERE / "target/debug/sstkit"))
OUT = Path(os.environ.get("OUT", "/tmp/import-truth"))
sys.path.insert(0, str(ORACLE))
import import_check as ic  # noqa: E402  (the harness's staging and schema helpers)
import make_corpus as mc  # noqa: E402  (the harness's node)
import select_truth  # noqa: E402

OUTPUTS = ("rewrite", "write", "scrub")


def sstkit(*args, stdin=None):
    return subprocess.run([str(SSTKIT), *map(str, args)], input=stdin, capture_output=True)


def make_outputs(case, work):
    """{output name: directory of the written sstable, or an error string}."""
    made = {}
    d = work / "rewrite"
    r = sstkit("rewrite", case, "--output-dir", d)
    made["rewrite"] = d if r.returncode == 0 else f"rewrite exit {r.returncode}: {r.stderr[-300:]}"
    if "counter" in case.name:
        made["write"] = None
    else:
        dump = sstkit("dump-data", "-o", "ndjson", case)
        d = work / "write"
        r = sstkit("write", "--from", "-", "--like", case, "--output-dir", d, stdin=dump.stdout)
        made["write"] = d if r.returncode == 0 else f"write exit {r.returncode}: {r.stderr[-300:]}"
    d = work / "scrub"
    r = sstkit("scrub", "--mode", "skip", case, "--output-dir", d)
    made["scrub"] = d if r.returncode == 0 else f"scrub exit {r.returncode}: {r.stderr[-300:]}"
    return made


def load(conn, node_work, case, variant, inputs):
    """Create the case's table in keyspace <case>_<variant>, import `inputs`, and return its
    SELECT JSON * rows, or raise RuntimeError saying why the import failed."""
    stmts, ks, table = ic.read_schema(case / "schema.cql", None, None)
    vks = f"{case.name}_{variant}".lower()
    conn.execute(f"CREATE KEYSPACE IF NOT EXISTS {vks} WITH replication = "
                 "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    conn.set_keyspace(vks)
    for s in stmts:
        conn.execute(re.sub(rf"\b{re.escape(ks)}\.", f"{vks}.", s))
    staged = ic.stage(inputs, node_work / "staging" / vks, vks, table)
    syslog = node_work / "logs" / "system.log"
    offset = ic.log_size(syslog)
    r = subprocess.run([str(ORACLE / "tools.sh"), "nodetool", "import", "--extended-verify",
                        "--", vks, table, *[str(d) for d, _, _ in staged]],
                       capture_output=True, text=True)
    time.sleep(0.5)
    entries = ic.interesting(ic.log_since(syslog, offset))
    offered = sum(len(names) for _, names, _ in staged)
    loaded = [p for d in (node_work / "data" / vks).glob(f"{table}-*") for p in d.glob("*-Data.db")]
    if r.returncode != 0 or len(loaded) < offered or ic.errors_in(entries):
        raise RuntimeError(f"import refused (exit {r.returncode}, {len(loaded)}/{offered} loaded): "
                           f"{(r.stdout + r.stderr).strip()[-300:]} "
                           f"{' | '.join(ic.brief(e) for e in entries)[:500]}")
    return select_truth.q(conn, "all", f"SELECT JSON * FROM {vks}.{ic.cql_name(table)}")["rows"]


def run_one(run, cases):
    node_work = Path(tempfile.mkdtemp(prefix=f"sstkit-import-truth-{run}-", dir="/tmp"))
    node = mc.Node(run, node_work)
    results = []
    try:
        conn = node.start()
        conn.default_timeout = 120
        for case in cases:
            first = len(results)
            work = OUT / case.name
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            made = make_outputs(case, work)
            try:
                want = load(conn, node_work, case, "src", [case])
            except RuntimeError as e:
                results.append((case.name, "source", f"FAIL source import: {e}"))
                continue
            for name in OUTPUTS:
                out = made[name]
                if out is None:
                    results.append((case.name, name, "skipped (counters)"))
                    continue
                if isinstance(out, str):
                    results.append((case.name, name, f"FAIL {out}"))
                    continue
                try:
                    got = load(conn, node_work, case, name, [out])
                except RuntimeError as e:
                    results.append((case.name, name, f"FAIL {e}"))
                    continue
                if got == want:
                    results.append((case.name, name, f"ok ({len(got)} rows)"))
                else:
                    results.append((case.name, name,
                                    f"FAIL rows differ: {len(got)} vs {len(want)} of the source"))
            for r in results[first:]:
                print(f"{run} {r[0]:32} {r[1]:8} {r[2]}", flush=True)
        clean = not any(r[2].startswith("FAIL") for r in results)
    finally:
        node.stop()
    # The node's data and logs only help to look into a failure.
    if clean and not os.environ.get("SSTKIT_KEEP_SCRATCH"):
        shutil.rmtree(node_work, ignore_errors=True)
    else:
        print(f"kept the node's directory {node_work}", file=sys.stderr)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", default="nb,oa,da")
    ap.add_argument("--cases", default="*", help="glob on the case name without the run")
    args = ap.parse_args()
    fixtures = HERE / "fixtures" / "cassandra"
    everything = []
    for run in args.runs.split(","):
        cases = [d for d in sorted(fixtures.glob(f"{run}_*"))
                 if (d / "schema.cql").is_file() and not re.search(r"_\d+$", d.name)
                 and fnmatch.fnmatch(d.name[len(run) + 1:], args.cases)]
        everything += run_one(run, cases)
    failed = [r for r in everything if r[2].startswith("FAIL")]
    ok = [r for r in everything if r[2].startswith("ok")]
    print(f"summary: {len(ok)} ok, {len(failed)} failed, "
          f"{len(everything) - len(ok) - len(failed)} skipped")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
