"""The ``sstable`` data source for Spark 4.1+ (the Python Data Source API).

::

    import sstkit.spark
    sstkit.spark.register(spark)
    df = (spark.read.format("sstable")
          .option("now", "2024-05-01T00:00:00Z")
          .load("/backups/node1/ks/t-1234,/backups/node2/ks/t-1234"))

The paths (comma-separated, or ``option("paths", ...)``) are what ``sstkit``
takes: sstables, directories, data directories, ``s3://``, ``gs://``,
``az://`` and ``http(s)://`` URLs. Several nodes' copies of a table are
replicas: the merged read reconciles them as a read at consistency ALL would.

Splits: the Murmur3 token ring is cut into ``splits`` equal ranges (default:
one per ~128 MB of Data.db, ``option("split_bytes", N)`` to change the
size, rounded up to a multiple of the session's default parallelism so
that the last round of tasks keeps every core busy); each split opens only
the sstables whose first..last token overlaps its range and runs the merged
read of that range through the engine, yielding Arrow record batches.

Filter push-down: equality and IN on every partition key column become key
lookups through the partition index (one split). ``option("token_range",
"START,END")`` reads the partitions whose token is in (START, END] only: the
splits cut that range, not the ring.

Options: ``now`` (epoch seconds or an ISO timestamp), ``merge`` (default
true), ``splits``, ``split_bytes``, ``token_range``, ``columns`` (comma-separated),
``batch_rows``, ``decimals``, ``recursive``, ``snapshots``, ``backups``,
``keyspace``, ``table``, ``s3_endpoint``, ``threads`` (per task; default 1),
and any other ``sstkit export`` flag by its name (``io_mode``, ``read_ahead``, ...).

Types (where Arrow's would not convert to Spark's):

=================================  ======================================
CQL                                Spark
=================================  ======================================
tinyint, smallint, int, bigint     ByteType, ShortType, IntegerType, LongType
counter                            LongType
float, double, boolean             FloatType, DoubleType, BooleanType
text, ascii, inet                  StringType
uuid, timeuuid                     StringType (the usual 36-character text)
blob, custom types                 BinaryType
decimal, varint                    StringType (exact text); with
                                   ``decimals=decimal128:S``: DecimalType(38, S)
timestamp                          TimestampType
date                               DateType
time                               LongType (nanoseconds since midnight)
duration                           struct<months: int, days: int, nanoseconds: bigint>
list, set, vector                  ArrayType
map                                MapType
tuple, UDT                         StructType (tuple fields ``0``, ``1``, ...)
=================================  ======================================
"""

import itertools
import re
import time

import sstkit

from pyspark.sql.datasource import DataSource, DataSourceReader, EqualTo, In, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema

__all__ = ["register", "SstableDataSource"]

SPLIT_BYTES = 128 << 20
MIN_TOKEN, MAX_TOKEN = -(2**63), 2**63 - 1
# Options this source reads itself; every other one is an `sstkit export` flag.
_OWN = {"path", "paths", "now", "merge", "splits", "split_bytes", "columns", "batch_rows",
        "token_range"}
# The data directory options: how the inputs are found, not how they are read.
_WALK = ("recursive", "snapshots", "backups", "keyspace", "table")


def register(spark):
    """Make ``spark.read.format("sstable")`` available in this session, with
    filter push-down on (Spark refuses a source with ``pushFilters`` otherwise)."""
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    try:
        cores = max(1, int(spark.sparkContext.defaultParallelism))
    except Exception:  # Spark Connect has no SparkContext: splits by size alone
        cores = 1
    # The source travels to the planner pickled by value, with the cores it plans for.
    spark.dataSource.register(type("SstableDataSource", (SstableDataSource,), {"cores": cores}))


def _read(paths, *, merge=True, now=None, columns=None, keys=None, token_range=None,
          batch_rows=8192, flags):
    """``sstkit.read`` in Spark's types (the table above): converted on the
    reading thread, so a task's Python worker holds each batch once."""
    return sstkit._stream("rows", paths, merge, now, columns, keys, token_range, batch_rows,
                          flags, spark=True)


def _bool(v, default):
    if v is None:
        return default
    return str(v).strip().lower() in ("1", "true", "yes", "on")


def _options(options):
    """(paths, sstkit keyword arguments) of the source's options."""
    opts = {str(k).lower(): v for k, v in dict(options).items()}
    raw = opts.get("paths") or opts.get("path")
    if not raw:
        raise sstkit.UsageError("sstable source: give the paths to load() or option('paths', ...)")
    paths = [p.strip() for p in str(raw).split(",") if p.strip()]
    flags = {}
    for k, v in opts.items():
        if k in _OWN:
            continue
        if str(v).lower() in ("true", "false"):
            v = _bool(v, False)
        flags[k] = v
    return paths, flags


class SstableDataSource(DataSource):
    """``spark.read.format("sstable")``: see the module documentation."""

    @classmethod
    def name(cls):
        return "sstable"

    def _arrow_schema(self):
        # Kept on the instance, which Spark pickles from schema() to reader(): one open per query, not two.
        if getattr(self, "_arrow", None) is None:
            self._arrow = self._read_schema()
        return self._arrow

    def _read_schema(self):
        paths, flags = _options(self.options)
        columns = self.options.get("columns")
        cols = [c.strip() for c in columns.split(",")] if columns else None
        reader = _read(paths, columns=cols, batch_rows=1, flags=flags)
        schema = reader.schema
        reader.close()
        return schema

    def schema(self):
        return from_arrow_schema(self._arrow_schema())

    # Tasks that run at once (set by register): the default splits come in multiples of it.
    cores = 1

    def reader(self, schema):
        return SstableReader(dict(self.options), schema, self._arrow_schema(), self.cores)


class Split(InputPartition):
    """One token range (start, end] and the Data.db paths that overlap it;
    or partition keys to look up."""

    def __init__(self, start, end, paths, keys=None):
        super().__init__((start, end))
        self.start, self.end, self.paths, self.keys = start, end, paths, keys


def ring_splits(n, lo=MIN_TOKEN, hi=MAX_TOKEN):
    """(start, end] of n equal slices of the token range (lo, hi]; of the
    whole ring, the slices of `export --partition-by token-range:n`."""
    width = hi - lo
    at = lambda k: hi if k >= n else lo + ((k * width) // n)
    return [(at(i), at(i + 1)) for i in range(n) if at(i) < at(i + 1)]


def _token_range(v):
    """option("token_range", "START,END"): (START, END] as integers."""
    if v is None:
        return MIN_TOKEN, MAX_TOKEN
    try:
        lo, hi = (int(x) for x in str(v).split(","))
    except ValueError:
        raise sstkit.UsageError(f"token_range {v!r}: expected START,END (Murmur3 tokens)") from None
    if not MIN_TOKEN <= lo < hi <= MAX_TOKEN:
        raise sstkit.UsageError(f"token_range {v!r}: START must be below END, both Murmur3 tokens")
    return lo, hi


class SstableReader(DataSourceReader):
    def __init__(self, options, schema, arrow_schema, cores=1):
        self.options = options
        self.cores = cores
        self.paths, self.flags = _options(options)
        self.spark_schema = schema
        self.arrow_schema = arrow_schema
        self.keys = None
        self._infos = None
        # Fixed when the job is planned: every task judges TTLs at the same time.
        self.now = options.get("now") or str(int(time.time()))
        columns = options.get("columns")
        self.columns = [c.strip() for c in columns.split(",")] if columns else None

    def _info(self):
        """`sstkit info` of every input sstable, by Data.db path (read once)."""
        if self._infos is None:
            walk = {k: v for k, v in self.flags.items() if k in _WALK + ("s3_endpoint",)}
            doc = sstkit._run_json(["info", "-o", "json"] + sstkit._flags(walk) + ["--"] + self.paths)
            self._infos = doc.get("sstables", {})
        return self._infos

    def _sstables(self):
        """{Data.db path: (bytes, first token, last token)} of the inputs."""
        out = {}
        for path, s in self._info().items():
            if "Murmur3" not in str(s.get("partitioner", "")):
                raise sstkit.UsageError(f"{path}: the sstable source splits Murmur3 tables only")
            out[path] = (int(s.get("data_size") or 0), int(s["first_key"]["token"]),
                         int(s["last_key"]["token"]))
        return out

    def pushFilters(self, filters):
        """Equality and IN on every partition key column become key lookups."""
        pk = self._partition_key()
        found = {}
        rest = []
        for f in filters:
            col = f.attribute[0] if len(f.attribute) == 1 else None
            if isinstance(f, EqualTo) and col in pk and col not in found:
                found[col] = [f.value]
            elif isinstance(f, In) and col in pk and col not in found:
                found[col] = list(f.value)
            else:
                rest.append(f)
        if pk and set(found) == set(pk) and all(found.values()):
            combos = itertools.product(*[found[c] for c in pk])
            self.keys = [c[0] if len(pk) == 1 else tuple(c) for c in combos]
            for f in rest:
                yield f
        else:
            for f in filters:
                yield f

    def _partition_key(self):
        """The partition key columns' names: the first columns of the row view,
        as many as the PRIMARY KEY of the sstables' schema has partition key columns."""
        schema = next(iter(self._info().values()), {}).get("schema") or ""
        m = re.search(r"PRIMARY KEY \((\([^)]*\)|[^,)]+)", schema)
        if not m:
            return []
        n = m.group(1).count(",") + 1 if m.group(1).startswith("(") else 1
        return self.arrow_schema.names[:n]

    def partitions(self):
        ssts = self._sstables()
        if self.keys is not None:
            return [Split(MIN_TOKEN, MAX_TOKEN, sorted(ssts), keys=self.keys)]
        lo, hi = _token_range(self.options.get("token_range"))
        # The bytes in the range, as the share of the ring it covers.
        total = sum(b for b, _, _ in ssts.values()) * (hi - lo) // (MAX_TOKEN - MIN_TOKEN)
        n = self.options.get("splits")
        if n is None:
            size = int(self.options.get("split_bytes") or SPLIT_BYTES)
            n = max(1, -(-total // max(1, size)))
            # A last round with fewer splits than cores would leave cores idle.
            n = -(-n // self.cores) * self.cores
        n = max(1, min(int(n), 65536))
        out = []
        for start, end in ring_splits(n, lo, hi):
            over = sorted(p for p, (_, first, last) in ssts.items() if first <= end and last > start)
            if over:
                out.append(Split(start, end, over))
        return out or [Split(MIN_TOKEN, MAX_TOKEN, [])]

    def read(self, split):
        if not split.paths:
            return
        merge = _bool(self.options.get("merge"), True)
        # The split's paths are sstables: the data directory walk was done when planning.
        flags = {k: v for k, v in self.flags.items() if k not in _WALK}
        # Spark runs a task per core: more threads per task would only compete with the other tasks.
        flags.setdefault("threads", 1)
        token_range = None if split.keys is not None else (split.start, split.end)
        # The first split's range starts at the ring's minimum, which no token has: (MIN, end] holds them all.
        yield from _read(split.paths, merge=merge, now=self.now, columns=self.columns,
                         keys=split.keys, token_range=token_range,
                         batch_rows=int(self.options.get("batch_rows") or 8192), flags=flags)
