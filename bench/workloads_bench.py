"""CQL workloads for sstkit's benchmark data (bench/make-bench-data.sh). Not committed data.

A workload module for the Cassandra 5.0 oracle harness (``make_corpus.py``'s ``--workloads``
interface: KS, TABLES, run_all), written like the harness's ``workloads.py``; driven by
bench/bench_driver.py, which writes the sstables but skips the JSON dumps.

Tables (keyspace ``bench``, one sstable each, ``nb`` format):

``one_partition``
    ONE partition (pk 1) of 1,000,000 clustering rows (``ck int``) of ~100 bytes
    (``v`` text of 80 chars, ``n`` bigint); default LZ4 compression.

``many_partitions``
    Many partitions of mixed columns, sized for >= 200 MB of uncompressed Data.db: 23,000
    partitions (``pk bigint``) of 1..99 rows (``ck int``), a static text column, and per
    row text, int, bigint, double, boolean, timestamp, uuid, blob (0..48 bytes), set<text>,
    map<text,int> and frozen<list<int>> columns; ~5% of the rows have a null cell (cell
    tombstone), ~2% a TTL'd cell. Default LZ4 compression.

BENCH_COMPRESSION (environment): empty for the table default (LZ4), ``none`` for uncompressed
Data.db with CRC.db, or a compressor class (``ZstdCompressor``, ``SnappyCompressor``, ...).

BENCH_SCALE (environment, default 1) multiplies the row count of one_partition and the
partition count of many_partitions (e.g. 0.01 for a quick check).

Both tables are flushed in slices while loading (so the memtable never gets big) and then
compacted into one sstable with ``nodetool compact`` (autocompaction is disabled first), so the
result is a single compaction-written sstable per table. Everything comes from fixed seeds with
explicit ``USING TIMESTAMP`` writes (only TTL expiry times come from the node's clock).
"""

import os
import random
import time
import uuid
import datetime

from cassandra.query import BatchStatement, BatchType

KS = "bench"
DEFAULT_OUT = "out-bench"
TS0 = 1_700_000_000_000_000     # 2023-11-14T22:13:20Z, as workloads.py

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
ONE_PARTITION_ROWS = max(1, round(1_000_000 * SCALE))
MANY_PARTITIONS = max(1, round(23_000 * SCALE))
# Flush after about this many rows (keeps the node's heap small; compaction merges the slices).
FLUSH_EVERY_ROWS = int(os.environ.get("BENCH_FLUSH_EVERY_ROWS", "250000"))
# Table compression: "" = the table default (LZ4, 16 KiB chunks), "none" = uncompressed Data.db
# with CRC.db, or a compressor class name such as "ZstdCompressor".
COMPRESSION = os.environ.get("BENCH_COMPRESSION", "")


def table_options():
    if not COMPRESSION:
        return ""
    if COMPRESSION == "none":
        return " WITH compression = {'enabled': 'false'}"
    return " WITH compression = {'class': '%s'}" % COMPRESSION

TABLES = {
    "one_partition": (1, f"ONE partition of {ONE_PARTITION_ROWS:,} rows of ~100 bytes "
                         f"(pk int, ck int, v text(80), n bigint)"),
    "many_partitions": (1, f"{MANY_PARTITIONS:,} partitions x 1..99 rows of mixed columns "
                           f"(text, int, bigint, double, boolean, timestamp, uuid, blob, set, "
                           f"map, frozen list, static)"),
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


class Loader:
    """Sends single-partition unlogged batches, a window of them in flight."""

    def __init__(self, conn, window=16):
        self.conn, self.window, self.futures = conn, window, []

    def send(self, batch):
        self.futures.append(self.conn.execute_async(batch))
        if len(self.futures) >= self.window:
            self.futures.pop(0).result()

    def drain(self):
        for f in self.futures:
            f.result()
        self.futures = []


def create_schema(conn):
    conn.execute(f"DROP KEYSPACE IF EXISTS {KS}")
    conn.execute(f"CREATE KEYSPACE {KS} WITH replication = "
                 "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    conn.set_keyspace(KS)
    conn.execute("""CREATE TABLE one_partition (
        pk int, ck int, v text, n bigint,
        PRIMARY KEY (pk, ck))""" + table_options())
    conn.execute("""CREATE TABLE many_partitions (
        pk bigint, ck int,
        s text static,
        t text, i int, b bigint, d double, flag boolean, ts timestamp, u uuid, blb blob,
        tags set<text>, attrs map<text, int>, fl frozen<list<int>>,
        PRIMARY KEY (pk, ck))""" + table_options())


def load_one_partition(conn, flush, rows, batch=500):
    rng = random.Random(31)
    ins = conn.prepare("INSERT INTO one_partition (pk, ck, v, n) VALUES (1, ?, ?, ?) "
                       "USING TIMESTAMP ?")
    loader = Loader(conn)
    ts = TS0 + 31 * 10**9
    flush_s, since_flush = 0.0, 0
    for start in range(0, rows, batch):
        b = BatchStatement(batch_type=BatchType.UNLOGGED)
        for ck in range(start, min(start + batch, rows)):
            ts += 1
            b.add(ins, (ck, value_text(rng, ck), rng.getrandbits(40), ts))
        loader.send(b)
        since_flush += batch
        if since_flush >= FLUSH_EVERY_ROWS:
            loader.drain()
            t0 = time.time()
            flush("one_partition")
            flush_s += time.time() - t0
            since_flush = 0
    loader.drain()
    return {"rows": rows, "partitions": 1, "flush_s": flush_s}


def load_many_partitions(conn, flush, partitions):
    rng = random.Random(32)
    cols = "pk, ck, t, i, b, d, flag, ts, u, blb, tags, attrs, fl"
    ins = conn.prepare(f"INSERT INTO many_partitions ({cols}) VALUES "
                       f"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) USING TIMESTAMP ?")
    ins_ttl = conn.prepare("UPDATE many_partitions USING TTL 864000 AND TIMESTAMP ? "
                           "SET t = ? WHERE pk = ? AND ck = ?")
    static = conn.prepare("UPDATE many_partitions USING TIMESTAMP ? SET s = ? WHERE pk = ?")
    loader = Loader(conn)
    ts = TS0 + 32 * 10**9
    epoch = datetime.datetime(2020, 1, 1)
    flush_s, since_flush, rows = 0.0, 0, 0
    for p in range(partitions):
        pk = rng.getrandbits(63)
        n = rng.randint(1, 99)
        b = BatchStatement(batch_type=BatchType.UNLOGGED)
        ts += 1
        b.add(static, (ts, "static %d %s" % (p, rng.choice(WORDS)), pk))
        for ck in range(n):
            ts += 1
            row = [pk, ck, value_text(rng, ck, rng.randint(10, 60)), rng.randint(-2**31, 2**31 - 1),
                   rng.getrandbits(48), rng.uniform(-1e6, 1e6), rng.random() < 0.5,
                   epoch + datetime.timedelta(seconds=rng.randint(0, 10**8)),
                   uuid.UUID(int=rng.getrandbits(128), version=4),
                   rng.randbytes(rng.randint(0, 48)),
                   set(rng.sample(WORDS, rng.randint(0, 4))),
                   {w: rng.randint(0, 1000) for w in rng.sample(WORDS, rng.randint(0, 3))},
                   [rng.randint(0, 100) for _ in range(rng.randint(0, 5))],
                   ts]
            if rng.random() < 0.05:
                row[rng.randint(2, 12)] = None        # explicit null: a cell tombstone
            b.add(ins, tuple(row))
            if rng.random() < 0.02:
                ts += 1
                b.add(ins_ttl, (ts, "ttl %d" % ck, pk, ck))
        loader.send(b)
        rows += n
        since_flush += n
        if since_flush >= FLUSH_EVERY_ROWS:
            loader.drain()
            t0 = time.time()
            flush("many_partitions")
            flush_s += time.time() - t0
            since_flush = 0
    loader.drain()
    return {"rows": rows, "partitions": partitions, "flush_s": flush_s}


def run_all(conn, flush, log=print, only=None, nodetool=None):
    """Create the schema and fill the tables (or only those in ``only``); each ends up as one
    sstable (flushed slices, then ``nodetool compact``)."""
    conn.default_timeout = 300
    create_schema(conn)
    steps = [("one_partition", lambda: load_one_partition(conn, flush, ONE_PARTITION_ROWS)),
             ("many_partitions", lambda: load_many_partitions(conn, flush, MANY_PARTITIONS))]
    for table, fn in steps:
        if only is not None and table not in only:
            continue
        if nodetool:
            nodetool("disableautocompaction", KS, table)
        t0 = time.time()
        info = fn()
        t1 = time.time()
        flush(table)
        t2 = time.time()
        info["load_s"] = round(t1 - t0 - info["flush_s"], 1)
        info["flush_s"] = round(info["flush_s"] + t2 - t1, 1)
        if nodetool:
            nodetool("compact", KS, table)
        info["compact_s"] = round(time.time() - t2, 1)
        TIMINGS[table] = info
        log(f"  {table}: {info['rows']:,} rows in {info['partitions']:,} partition(s): load "
            f"{info['load_s']}s ({1e6 * info['load_s'] / info['rows']:.1f} us/row), flush "
            f"{info['flush_s']}s, compact {info['compact_s']}s")
    flush(None)
