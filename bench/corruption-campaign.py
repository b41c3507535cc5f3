#!/usr/bin/env python3
"""A seeded corruption campaign: damaged copies of sstables, scrubbed.

For each case it copies one sstable to a temp dir, damages one component
(bit flips, a run of random bytes, a zeroed page, a truncation, an 8-byte
field set to 0xFF, the component deleted, or replaced by the same
component of another sstable of the same version), runs
`sstkit scrub --mode skip --output-dir` under an address-space limit,
records the exit status and peak RSS, and compares the partitions written
(dump-data NDJSON of the output) with the intact sstable's.

Counts: crashes (signal, panic exit 101), out-of-range exit codes,
timeouts, partitions written that differ from the intact sstable
(phantoms), and, when only a metadata component was damaged (Data.db
intact), partitions of the intact sstable that were not written.

Usage:
  bench/corruption-campaign.py [--cases N] [--seed S] [--sstkit PATH] [--limit-mib M]
Sources: the project fixtures, and the corpus legacy_* sets when
$SSTKIT_CORPUS (else ../shared/corpus) is there. Python 3 stdlib only.
"""

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
KINDS = ["flip", "run", "zero", "truncate", "ff", "delete", "replace"]


def sources():
    """(directory, prefix) of each sstable of the campaign."""
    dirs = []
    fx = os.path.join(REPO, "fixtures", "cassandra")
    for d in sorted(os.listdir(fx)):
        if d.startswith(("nb_", "oa_", "da_")) and "merge" not in d:
            dirs.append(os.path.join(fx, d))
    corpus = os.environ.get("SSTKIT_CORPUS", os.path.join(REPO, "..", "shared", "corpus"))
    cas = os.path.join(corpus, "cassandra")
    if os.path.isdir(cas):
        for d in sorted(os.listdir(cas)):
            # Row-format versions: pre-3.0 sets need a schema file.
            if d.startswith("legacy_") and d.split("_")[1] >= "ma":
                dirs.append(os.path.join(cas, d))
    out = []
    for d in dirs:
        datas = sorted(f for f in os.listdir(d) if f.endswith("-Data.db"))
        if datas:
            out.append((d, datas[0][: -len("Data.db")]))
    return out


def run(cmd, limit, timeout):
    """(exit code, negative for a signal; stdout) under an address-space
    limit of `limit` bytes, or None on timeout."""

    def prep():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, preexec_fn=prep)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return None
    return p.returncode, out.decode(errors="replace")


def partitions(sstkit, directory):
    """The partitions of the sstables in `directory`, as NDJSON lines without the path."""
    found = set()
    if not os.path.isdir(directory):
        return found
    for f in sorted(os.listdir(directory)):
        if f.endswith("-Data.db"):
            r = subprocess.run(
                [sstkit, "dump-data", "-o", "ndjson", os.path.join(directory, f)],
                capture_output=True,
                text=True,
            )
            for line in r.stdout.splitlines():
                rec = json.loads(line)
                rec.pop("sstable", None)
                found.add(json.dumps(rec, sort_keys=True))
    return found


def damage(rng, path, kind, donor):
    """Damage the file at `path`; a description."""
    b = bytearray(open(path, "rb").read())
    n = len(b)
    if kind == "delete":
        os.remove(path)
        return "deleted"
    if kind == "replace":
        if donor is None:
            return None
        shutil.copy(donor, path)
        return "replaced by " + os.path.basename(os.path.dirname(donor))
    if n == 0:
        return None
    if kind == "flip":
        at = rng.randrange(n)
        b[at] ^= 1 << rng.randrange(8)
        desc = f"bit flip at {at}"
    elif kind == "run":
        ln = rng.randint(1, 32)
        at = rng.randrange(n)
        for i in range(at, min(n, at + ln)):
            b[i] = rng.randrange(256)
        desc = f"{ln} random bytes at {at}"
    elif kind == "zero":
        at = rng.randrange(n) // 4096 * 4096
        b[at : at + 4096] = bytes(min(4096, n - at))
        desc = f"zeroed page at {at}"
    elif kind == "truncate":
        cut = rng.randint(1, n)
        b = b[: n - cut]
        desc = f"cut by {cut}"
    else:
        at = rng.randrange(max(1, n - 7))
        b[at : at + 8] = b"\xff" * min(8, n - at)
        desc = f"0xFF field at {at}"
    open(path, "wb").write(b)
    return desc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=37)
    ap.add_argument("--sstkit", default=os.path.join(REPO, "target", "release", "sstkit"))
    ap.add_argument("--limit-mib", type=int, default=256)
    ap.add_argument("--timeout", type=int, default=60)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    srcs = sources()
    limit = a.limit_mib << 20
    tally = {"cases": 0, "runs": 0, "crash": 0, "bad_exit": 0, "timeout": 0,
             "written": 0, "phantom": 0, "metadata_only_cases": 0, "lost_intact": 0}
    intact_cache = {}
    work = tempfile.mkdtemp(prefix="sstkit-campaign-")
    try:
        for case in range(a.cases):
            d, prefix = rng.choice(srcs)
            comps = sorted(f for f in os.listdir(d) if f.startswith(prefix))
            comp = rng.choice(comps)
            kind = rng.choice(KINDS)
            suffix = comp[len(prefix):]
            peers = [p for p, q in srcs if p != d and q[:2] == prefix[:2]
                     and os.path.exists(os.path.join(p, q + suffix))]
            donor = None
            if peers:
                p = rng.choice(peers)
                q = [q for pp, q in srcs if pp == p][0]
                donor = os.path.join(p, q + suffix)
            cdir = os.path.join(work, f"case{case}")
            os.mkdir(cdir)
            for f in comps:
                shutil.copy(os.path.join(d, f), cdir)
                os.chmod(os.path.join(cdir, f), 0o644)
            desc = damage(rng, os.path.join(cdir, comp), kind, donor)
            if desc is None:
                shutil.rmtree(cdir)
                continue
            if d not in intact_cache:
                intact_cache[d] = partitions(a.sstkit, d)
            intact = intact_cache[d]
            out = os.path.join(work, f"out{case}")
            tally["cases"] += 1
            tally["runs"] += 1
            r = run([a.sstkit, "scrub", "--mode", "skip", "-o", "json", "--output-dir", out, cdir],
                    limit, a.timeout)
            what = f"{os.path.basename(d)} {suffix} {desc}"
            if r is None:
                tally["timeout"] += 1
                print("TIMEOUT", what)
            else:
                code, _ = r
                if code < 0 or code == 101:
                    tally["crash"] += 1
                    print("CRASH", code, what)
                elif code not in (0, 1, 3):
                    tally["bad_exit"] += 1
                    print("EXIT", code, what)
            written = partitions(a.sstkit, out)
            tally["written"] += len(written)
            ph = written - intact
            tally["phantom"] += len(ph)
            if ph:
                print("PHANTOM", len(ph), what)
            if suffix != "Data.db":
                tally["metadata_only_cases"] += 1
                lost = intact - written
                tally["lost_intact"] += len(lost)
            shutil.rmtree(cdir, ignore_errors=True)
            shutil.rmtree(out, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    # The largest peak RSS of any child (scrub, and the dump-data runs that read the outputs).
    tally["peak_rss_kib_any_run"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps(tally, indent=1))
    return 1 if tally["crash"] or tally["timeout"] or tally["phantom"] else 0


if __name__ == "__main__":
    sys.exit(main())
