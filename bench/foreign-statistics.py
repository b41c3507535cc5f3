#!/usr/bin/env python3
"""foreign-statistics.py - every sstable scrubbed with the Statistics.db of each other
sstable of the same version and column types: the partitions written that differ from
the intact sstable's (phantoms), and those not written.

    bench/foreign-statistics.py --sstkit target/release/sstkit [--before OLD] [DIR...]

DIRs hold one sstable per subdirectory (default: ../shared/corpus/cassandra,
../shared/corpus/scylladb and fixtures/cassandra). Two sstables pair when dump-statistics
gives the same version, partition key, clustering and column types: another table's
Statistics.db that passes every type check, the case a campaign draws only now and then.
Each pair runs `scrub --mode skip --output-dir` on a copy whose Statistics.db is the
other's (a target that dump-data cannot read whole is left out), and compares the dump-data NDJSON of what was written with the intact one's.
With --before, a second binary runs each case too, for a before/after table. Exit 1 when
the --sstkit binary wrote a phantom.
"""
import argparse
import collections
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def header_key(sstkit, d):
    """(version, key, clustering, columns) of the one sstable in d, or None."""
    p = subprocess.run([sstkit, "dump-statistics", d], capture_output=True, text=True)
    try:
        j = json.loads(p.stdout)
        tables = list(j["sstables"].values())
        h = tables[0].get("serialization_header") if len(tables) == 1 else None
        if not h:
            return None
        version = list(j["sstable_refs"].values())[0]["version"]
        cols = lambda k: tuple((c["name"], c["type_name"]) for c in h[k])
        return (version, h["pk_type_name"], tuple(h["clustering_key_types_names"]),
                cols("regular_columns"), cols("static_columns"))
    except (ValueError, KeyError, IndexError):
        return None


def partitions(sstkit, d):
    """The partitions of the sstables in d, as canonical NDJSON lines (None when
    dump-data fails: a damaged sstable is no reference)."""
    p = subprocess.run([sstkit, "dump-data", "-o", "ndjson", d], capture_output=True, text=True)
    if p.returncode != 0:
        return None
    out = set()
    for line in p.stdout.splitlines():
        try:
            j = json.loads(line)
        except ValueError:
            continue
        j.pop("sstable", None)
        out.add(json.dumps(j, sort_keys=True))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--sstkit", required=True)
    ap.add_argument("--before")
    ap.add_argument("dirs", nargs="*")
    a = ap.parse_args()
    root = os.path.dirname(HERE)
    dirs = a.dirs or [os.path.join(root, "..", "shared", "corpus", "cassandra"),
                      os.path.join(root, "..", "shared", "corpus", "scylladb"),
                      os.path.join(root, "fixtures", "cassandra")]
    groups = collections.defaultdict(list)
    for r in dirs:
        for d in sorted(glob.glob(os.path.join(r, "*"))):
            if os.path.isdir(d) and len(glob.glob(os.path.join(d, "*Statistics.db"))) == 1:
                k = header_key(a.sstkit, d)
                if k:
                    groups[k].append(d)
    binaries = [("after", a.sstkit)] + ([("before", a.before)] if a.before else [])
    tot = collections.Counter()
    work = tempfile.mkdtemp(prefix="sstkit-foreign-")
    try:
        for ds in groups.values():
            for target in ds:
                intact = partitions(a.sstkit, target)
                if intact is None:
                    continue
                for donor in ds:
                    if donor == target:
                        continue
                    src = os.path.join(work, "in")
                    shutil.rmtree(src, ignore_errors=True)
                    shutil.copytree(target, src)
                    stats = glob.glob(os.path.join(src, "*Statistics.db"))[0]
                    shutil.copy(glob.glob(os.path.join(donor, "*Statistics.db"))[0], stats)
                    for name, binary in binaries:
                        out = os.path.join(work, name)
                        shutil.rmtree(out, ignore_errors=True)
                        subprocess.run([binary, "scrub", "--mode", "skip", "--output-dir", out,
                                        src], capture_output=True, text=True)
                        written = partitions(a.sstkit, out) if os.path.isdir(out) else None
                        written = written or set()
                        phantoms = len(written - intact)
                        tot[name, "cases"] += 1
                        tot[name, "written"] += len(written)
                        tot[name, "phantoms"] += phantoms
                        tot[name, "not written"] += len(intact - written)
                        tot[name, "cases with phantoms"] += phantoms > 0
                        if phantoms:
                            print(f"{name}: {os.path.basename(target)} with "
                                  f"{os.path.basename(donor)}'s Statistics.db: {phantoms} "
                                  "phantoms", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for name, _ in binaries:
        print(name + ": " + ", ".join(
            f"{k} {tot[name, k]}" for k in
            ("cases", "written", "phantoms", "cases with phantoms", "not written")))
    return 1 if tot["after", "phantoms"] else 0


if __name__ == "__main__":
    sys.exit(main())
