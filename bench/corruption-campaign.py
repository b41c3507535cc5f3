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
intact), partitions of the intact sstable that were not written. A
single-chunk case damages the bytes of one checksummed chunk of Data.db
(compressed, or uncompressed with CRC.db) and nothing else: every intact
partition outside that chunk's uncompressed range is recoverable, and
`recoverable_lost` counts those not written.

Every random choice is drawn up front in the seed's order, so a seed gives
the same cases and the same counts whatever --jobs is. Progress goes to
stderr every --progress cases; an interrupt (SIGINT, SIGTERM) stops the
campaign and prints the counts of the cases finished so far.

Usage:
  bench/corruption-campaign.py [--cases N] [--seed S] [--sstkit PATH] [--limit-mib M]
                               [--jobs N] [--progress N]
Sources: the project fixtures, and the corpus legacy_* sets when
$SSTKIT_CORPUS (else ../shared/corpus) is there. Python 3 stdlib only.
"""

import argparse
import json
import multiprocessing
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
KINDS = ["flip", "run", "zero", "truncate", "ff", "delete", "replace"]
COUNTS = ["cases", "runs", "crash", "bad_exit", "timeout", "written", "phantom",
          "metadata_only_cases", "lost_intact", "single_chunk_cases", "recoverable",
          "recoverable_lost"]


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


def plan(rng, srcs, cases):
    """The cases of a seed: the same draws, in the same order, as the
    sequential campaign made, without touching the files (sizes only)."""
    specs = []
    for case in range(cases):
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
        dmg = draw_damage(rng, os.path.getsize(os.path.join(d, comp)), kind, donor)
        if dmg is not None:
            specs.append({"case": case, "dir": d, "prefix": prefix, "comps": comps,
                          "comp": comp, "suffix": suffix, "damage": dmg})
    return specs


def draw_damage(rng, n, kind, donor):
    """What to do to a file of `n` bytes: a dict, or None for no case."""
    if kind == "delete":
        return {"kind": kind, "desc": "deleted"}
    if kind == "replace":
        if donor is None:
            return None
        return {"kind": kind, "donor": donor,
                "desc": "replaced by " + os.path.basename(os.path.dirname(donor))}
    if n == 0:
        return None
    if kind == "flip":
        at = rng.randrange(n)
        bit = rng.randrange(8)
        return {"kind": kind, "at": at, "bit": bit, "span": [at, at + 1],
                "desc": f"bit flip at {at}"}
    if kind == "run":
        ln = rng.randint(1, 32)
        at = rng.randrange(n)
        data = [rng.randrange(256) for _ in range(at, min(n, at + ln))]
        return {"kind": kind, "at": at, "bytes": data, "span": [at, at + len(data)],
                "desc": f"{ln} random bytes at {at}"}
    if kind == "zero":
        at = rng.randrange(n) // 4096 * 4096
        return {"kind": kind, "at": at, "span": [at, min(n, at + 4096)],
                "desc": f"zeroed page at {at}"}
    if kind == "truncate":
        cut = rng.randint(1, n)
        return {"kind": kind, "cut": cut, "desc": f"cut by {cut}"}
    at = rng.randrange(max(1, n - 7))
    return {"kind": kind, "at": at, "span": [at, min(n, at + 8)],
            "desc": f"0xFF field at {at}"}


def apply_damage(path, dmg):
    kind = dmg["kind"]
    if kind == "delete":
        os.remove(path)
        return
    if kind == "replace":
        shutil.copy(dmg["donor"], path)
        return
    b = bytearray(open(path, "rb").read())
    n = len(b)
    if kind == "flip":
        b[dmg["at"]] ^= 1 << dmg["bit"]
    elif kind == "run":
        at = dmg["at"]
        b[at : at + len(dmg["bytes"])] = bytes(dmg["bytes"])
    elif kind == "zero":
        at = dmg["at"]
        b[at : at + 4096] = bytes(min(4096, n - at))
    elif kind == "truncate":
        b = b[: n - dmg["cut"]]
    else:
        at = dmg["at"]
        b[at : at + 8] = b"\xff" * min(8, n - at)
    open(path, "wb").write(b)


def run(cmd, limit, timeout, stdout):
    """(exit code, 128 + the signal for one; peak RSS KiB) of `cmd` under an
    address-space limit of `limit` bytes (None: no limit), its stdout to
    the file `stdout`; (None, peak RSS) on timeout."""

    def prep():
        # A group of its own, so a timeout kills the command with its GNU time.
        os.setpgid(0, 0)
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    # GNU time measures the command alone: a child forked from this
    # interpreter would count the interpreter's own RSS as its peak.
    rss_file = stdout + ".rss"
    with open(stdout, "wb") as out:
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss_file] + cmd, stdout=out,
                             stderr=subprocess.DEVNULL, preexec_fn=prep)
    try:
        code = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        code = None
    except BaseException:
        # An interrupted campaign leaves no command running behind it.
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        raise
    rss = 0
    try:
        lines = open(rss_file).read().split()
        rss = int(lines[-1]) if lines else 0
        os.remove(rss_file)
    except (OSError, ValueError):
        pass
    return code, rss


class Worker:
    """Per-process state: the intact sstables' partitions, read once."""

    def __init__(self, sstkit, limit, timeout, work):
        self.sstkit, self.limit, self.timeout, self.work = sstkit, limit, timeout, work
        self.intact = {}
        self.rss = 0

    def cmd_json(self, args, lines=False):
        f = os.path.join(self.work, f"cmd{os.getpid()}.out")
        code, rss = run([self.sstkit] + args, None, self.timeout * 4, f)
        self.rss = max(self.rss, rss)
        text = open(f, encoding="utf-8", errors="replace").read()
        os.remove(f)
        if lines:
            return [json.loads(x) for x in text.splitlines() if x.strip()]
        return json.loads(text) if code == 0 else None

    def dump(self, data_db):
        """The partitions of one Data.db: {raw key: NDJSON record without the path}."""
        recs = {}
        for rec in self.cmd_json(["dump-data", "-o", "ndjson", data_db], lines=True):
            rec.pop("sstable", None)
            recs[rec["key"]["raw"]] = json.dumps(rec, sort_keys=True)
        return recs

    def intact_of(self, d, prefix):
        """The intact sstable: its partitions, their uncompressed spans and its chunks."""
        if d in self.intact:
            return self.intact[d]
        data_db = os.path.join(d, prefix + "Data.db")
        recs = self.dump(data_db)
        spans = {}
        for p in self.cmd_json(["partitions", "-o", "ndjson", data_db], lines=True):
            if p.get("type") == "partition":
                spans[p["key"]["raw"]] = (p["offset"], p["offset"] + p["size"])
        chunks = None
        ci = os.path.join(d, prefix + "CompressionInfo.db")
        crc = os.path.join(d, prefix + "CRC.db")
        size = os.path.getsize(data_db)
        if os.path.exists(ci):
            info = self.cmd_json(["dump-compression-info", "-o", "json", data_db])
            if info:
                c = list(info["sstables"].values())[0]
                offs = c["offsets"] + [size]
                # (on-disk range, uncompressed range) of each chunk.
                chunks = [((offs[i], offs[i + 1]),
                           (i * c["chunk_len"], (i + 1) * c["chunk_len"]))
                          for i in range(len(c["offsets"]))]
        elif os.path.exists(crc):
            cs = int.from_bytes(open(crc, "rb").read(4), "big")
            if cs > 0:
                chunks = [((s, s + cs), (s, s + cs)) for s in range(0, size, cs)]
        self.intact[d] = (recs, spans, chunks)
        return self.intact[d]

    def case(self, spec):
        d, prefix, suffix, dmg = spec["dir"], spec["prefix"], spec["suffix"], spec["damage"]
        t = dict.fromkeys(COUNTS, 0)
        t["scrub_rss"] = 0
        log = []
        recs, spans, chunks = self.intact_of(d, prefix)
        intact = set(recs.values())
        cdir = os.path.join(self.work, f"case{spec['case']}")
        out = os.path.join(self.work, f"out{spec['case']}")
        os.mkdir(cdir)
        try:
            for f in spec["comps"]:
                shutil.copy(os.path.join(d, f), cdir)
                os.chmod(os.path.join(cdir, f), 0o644)
            apply_damage(os.path.join(cdir, spec["comp"]), dmg)
            t["cases"] = t["runs"] = 1
            what = f"{os.path.basename(d)} {suffix} {dmg['desc']}"
            code, rss = run([self.sstkit, "scrub", "--mode", "skip", "-o", "json",
                             "--output-dir", out, cdir], self.limit, self.timeout,
                            os.path.join(self.work, f"report{spec['case']}.json"))
            os.remove(os.path.join(self.work, f"report{spec['case']}.json"))
            t["scrub_rss"] = rss
            if code is None:
                t["timeout"] = 1
                log.append(f"TIMEOUT {what}")
            elif code >= 128 or code == 101:
                t["crash"] = 1
                log.append(f"CRASH {code} {what}")
            elif code not in (0, 1, 3):
                t["bad_exit"] = 1
                log.append(f"EXIT {code} {what}")
            written = {}
            if os.path.isdir(out):
                for f in sorted(os.listdir(out)):
                    if f.endswith("-Data.db"):
                        written.update(self.dump(os.path.join(out, f)))
            wset = set(written.values())
            t["written"] = len(wset)
            ph = wset - intact
            t["phantom"] = len(ph)
            if ph:
                log.append(f"PHANTOM {len(ph)} {what}")
            if suffix != "Data.db":
                t["metadata_only_cases"] = 1
                t["lost_intact"] = len(intact - wset)
            elif chunks and "span" in dmg:
                a, b = dmg["span"]
                hit = [c for c in chunks if c[0][0] < b and a < c[0][1]]
                if len(hit) == 1:
                    lo, hi = hit[0][1]
                    t["single_chunk_cases"] = 1
                    lost = 0
                    for k, (s, e) in spans.items():
                        if e <= lo or s >= hi:
                            t["recoverable"] += 1
                            if recs.get(k) not in wset:
                                lost += 1
                    t["recoverable_lost"] = lost
                    if lost:
                        log.append(f"LOST {lost} recoverable {what}")
        finally:
            shutil.rmtree(cdir, ignore_errors=True)
            shutil.rmtree(out, ignore_errors=True)
        t["any_rss"] = max(self.rss, t["scrub_rss"])
        return spec["case"], t, log


_worker = None


def init_worker(args):
    global _worker
    # The parent decides when to stop; a worker ignores the terminal's interrupt.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _worker = Worker(*args)


def run_case(spec):
    return _worker.case(spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=37)
    ap.add_argument("--sstkit", default=os.path.join(REPO, "target", "release", "sstkit"))
    ap.add_argument("--limit-mib", type=int, default=256)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--progress", type=int, default=500)
    a = ap.parse_args()
    if a.jobs < 1:
        ap.error("--jobs must be at least 1")
    sstkit = os.path.abspath(a.sstkit)
    specs = plan(random.Random(a.seed), sources(), a.cases)
    tally = dict.fromkeys(COUNTS, 0)
    tally.update(peak_rss_kib_scrub=0, peak_rss_kib_any_run=0)
    work = tempfile.mkdtemp(prefix="sstkit-campaign-")
    wargs = (sstkit, a.limit_mib << 20, a.timeout, work)
    start = time.monotonic()
    stopped = None

    def on_term(signum, frame):
        raise KeyboardInterrupt

    pool = None
    try:
        if a.jobs == 1:
            init_worker(wargs)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            results = map(run_case, specs)
        else:
            pool = multiprocessing.Pool(a.jobs, init_worker, (wargs,))
        signal.signal(signal.SIGTERM, on_term)
        if pool is not None:
            # Results come back in case order, so the log and counts read the same for any N.
            results = pool.imap(run_case, specs, chunksize=1)
        done = 0
        for _, t, log in results:
            for line in log:
                print(line, flush=True)
            for k in COUNTS:
                tally[k] += t[k]
            tally["peak_rss_kib_scrub"] = max(tally["peak_rss_kib_scrub"], t["scrub_rss"])
            tally["peak_rss_kib_any_run"] = max(tally["peak_rss_kib_any_run"], t["any_rss"])
            done += 1
            if a.progress and done % a.progress == 0:
                el = time.monotonic() - start
                print(f"progress {done}/{len(specs)} cases, {el:.0f} s: "
                      + json.dumps({k: v for k, v in tally.items() if k != "cases"}),
                      file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        stopped = tally["cases"]
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
        shutil.rmtree(work, ignore_errors=True)
    tally["seed"] = a.seed
    tally["planned_cases"] = len(specs)
    if stopped is not None:
        tally["stopped_after_cases"] = stopped
    tally["wall_s"] = round(time.monotonic() - start, 1)
    print(json.dumps(tally, indent=1), flush=True)
    return 1 if tally["crash"] or tally["timeout"] or tally["phantom"] else 0


if __name__ == "__main__":
    sys.exit(main())
