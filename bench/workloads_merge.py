"""CQL workload for the merged-read benchmark (bench/merge.sh). Not committed data.

A workload module for the Cassandra 5.0 oracle harness (``make_corpus.py``'s ``--workloads``
interface: KS, TABLES, run_all), driven by bench/bench_driver.py like workloads_bench.py.

Tables (keyspace ``bench``, ``nb`` format, default LZ4), both with the same writes:

``merged``
    8 sstables: the writes come in 8 slices, each flushed, with autocompaction disabled.
    - Partition ``pk`` 0 holds WIDE_ROWS rows (1,000,000 at BENCH_SCALE 1): slice ``s``
      inserts the rows of the s-th eighth of the clustering range and, for ``s`` > 0, in the
      eighth before it overwrites 10% of the rows, deletes 2% (row deletions) and deletes
      ranges of rows (range tombstones, 4 per slice). Each sstable thus covers at most two
      eighths of the clustering range.
    - Partitions ``pk`` 1..SMALL_PARTITIONS (20,000 at scale 1) overlap across sstables:
      each slice writes 5 rows (``ck`` 0..49, so later slices overwrite) into a random 35%
      of them. Every 50th is deleted as a whole (a partition deletion) in the last slice,
      newer than every older sstable's data.

``compacted``
    The same writes into one table, merged into 1 sstable by ``nodetool compact``: the
    single sstable of the same content.

BENCH_SCALE (environment, default 1) multiplies WIDE_ROWS and SMALL_PARTITIONS. Everything
comes from fixed seeds with explicit ``USING TIMESTAMP`` writes and no TTLs.
"""

import os
import random
import time

from cassandra.query import BatchStatement, BatchType

KS = "bench"
DEFAULT_OUT = "out-bench-merge"
TS0 = 1_700_000_000_000_000
SLICES = 8

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
WIDE_ROWS = max(SLICES * 100, round(1_000_000 * SCALE))
SMALL_PARTITIONS = max(50, round(20_000 * SCALE))

TABLES = {
    "merged": (SLICES, f"{SLICES} sstables: one partition of {WIDE_ROWS:,} rows spread over all "
                       f"of them with overwrites, row and range deletions, and "
                       f"{SMALL_PARTITIONS:,} overlapping small partitions"),
    "compacted": (1, "the same writes as merged, compacted into one sstable"),
}

# Filled by run_all: table -> {"rows", "partitions", "load_s", "flush_s", "compact_s"}.
TIMINGS = {}

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee "
         "zulu").split()


def value_text(rng, ck, n=80):
    """n characters: a rotating word pattern with one random word (compresses like text)."""
    s = "%09d:%s:" % (ck, rng.choice(WORDS))
    j = ck
    while len(s) < n:
        s += WORDS[j % 26] + " "
        j += 7
    return s[:n]


class Writer:
    """The same statements into every table: single-partition unlogged batches, a window of
    them in flight."""

    def __init__(self, conn, tables, window=16):
        self.conn, self.window, self.futures = conn, window, []
        self.stmts = {t: {
            "ins": conn.prepare(f"INSERT INTO {t} (pk, ck, v, n) VALUES (?, ?, ?, ?) "
                                f"USING TIMESTAMP ?"),
            "del_row": conn.prepare(f"DELETE FROM {t} USING TIMESTAMP ? "
                                    f"WHERE pk = ? AND ck = ?"),
            "del_range": conn.prepare(f"DELETE FROM {t} USING TIMESTAMP ? "
                                      f"WHERE pk = ? AND ck >= ? AND ck < ?"),
            "del_partition": conn.prepare(f"DELETE FROM {t} USING TIMESTAMP ? WHERE pk = ?"),
        } for t in tables}

    def send(self, ops):
        """ops: [(statement name, params)] of one partition."""
        for start in range(0, len(ops), 500):
            for stmts in self.stmts.values():
                b = BatchStatement(batch_type=BatchType.UNLOGGED)
                for name, params in ops[start:start + 500]:
                    b.add(stmts[name], params)
                self.futures.append(self.conn.execute_async(b))
                if len(self.futures) >= self.window:
                    self.futures.pop(0).result()

    def drain(self):
        for f in self.futures:
            f.result()
        self.futures = []


def slice_ops(s, rng, ts):
    """The writes of slice s: [(pk, ops)] and the next timestamp."""
    width = WIDE_ROWS // SLICES
    lo, hi = s * width, (WIDE_ROWS if s == SLICES - 1 else (s + 1) * width)
    wide = []
    for ck in range(lo, hi):
        ts += 1
        wide.append(("ins", (0, ck, value_text(rng, ck), rng.getrandbits(40), ts)))
    if s > 0:
        prev = list(range(lo - width, lo))
        picked = rng.sample(prev, len(prev) * 12 // 100)
        over, gone = picked[:len(prev) // 10], picked[len(prev) // 10:]
        for ck in sorted(over):
            ts += 1
            wide.append(("ins", (0, ck, value_text(rng, ck + 7), rng.getrandbits(40), ts)))
        for ck in sorted(gone):
            ts += 1
            wide.append(("del_row", (ts, 0, ck)))
        span = max(2, width // 2000)
        for _ in range(4):
            start = rng.randrange(lo - width, lo - span)
            ts += 1
            wide.append(("del_range", (ts, 0, start, start + span)))
    parts = [(0, wide)]
    for pk in range(1, SMALL_PARTITIONS + 1):
        ops = []
        if rng.random() < 0.35:
            for ck in sorted(rng.sample(range(50), 5)):
                ts += 1
                ops.append(("ins", (pk, ck, value_text(rng, ck, 40), rng.getrandbits(40), ts)))
        if s == SLICES - 1 and pk % 50 == 0:
            ts += 1
            ops.append(("del_partition", (ts, pk)))
        if ops:
            parts.append((pk, ops))
    return parts, ts


def run_all(conn, flush, log=print, only=None, nodetool=None):
    """Create both tables and write the 8 slices into each (flushing after each slice), then
    compact ``compacted`` into one sstable."""
    conn.default_timeout = 300
    conn.execute(f"DROP KEYSPACE IF EXISTS {KS}")
    conn.execute(f"CREATE KEYSPACE {KS} WITH replication = "
                 "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    conn.set_keyspace(KS)
    tables = [t for t in TABLES if only is None or t in only]
    for t in tables:
        # merged must keep its 8 sstables: no compaction at all.
        off = " WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'enabled': 'false'}"
        conn.execute(f"CREATE TABLE {t} (pk int, ck int, v text, n bigint, "
                        f"PRIMARY KEY (pk, ck))" + (off if t == "merged" else ""))
        if nodetool:
            nodetool("disableautocompaction", KS, t)
    w = Writer(conn, tables)
    rng = random.Random(33)
    ts = TS0 + 33 * 10**9
    rows = flush_s = load_s = 0.0
    for s in range(SLICES):
        t0 = time.time()
        parts, ts = slice_ops(s, rng, ts)
        for pk, ops in parts:
            w.send(ops)
            rows += sum(1 for name, _ in ops if name == "ins")
        w.drain()
        t1 = time.time()
        flush(None)            # the keyspace: both tables in one nodetool call
        flush_s += time.time() - t1
        load_s += t1 - t0
        log(f"  slice {s + 1}/{SLICES}: {len(parts):,} partitions written and flushed")
    t2 = time.time()
    if nodetool and "compacted" in tables:
        nodetool("compact", KS, "compacted")
    for t in tables:
        TIMINGS[t] = {"rows": int(rows), "partitions": SMALL_PARTITIONS + 1,
                      "load_s": round(load_s, 1), "flush_s": round(flush_s, 1),
                      "compact_s": round(time.time() - t2, 1) if t == "compacted" else 0.0}
    log(f"  {int(rows):,} inserts per table in {SLICES} slices: load {load_s:.1f}s, flush "
        f"{flush_s:.1f}s, compact {time.time() - t2:.1f}s")
    flush(None)
