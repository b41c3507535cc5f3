"""Read Apache Cassandra and ScyllaDB SSTables offline, as Arrow.

``sstkit.read`` returns a ``pyarrow.RecordBatchReader`` of the CQL rows: the
rows, columns and Arrow types of ``sstkit export``, read by the same engine
(no JVM). pandas, polars and DuckDB take the reader as it is::

    import sstkit, polars as pl, duckdb
    reader = sstkit.read("/var/lib/cassandra/data/ks/t-1234/", now="2024-05-01T00:00:00Z")
    df = pl.from_arrow(reader)                     # or reader.read_pandas()
    duckdb.sql("SELECT count(*) FROM reader")

``paths`` takes what the CLI takes: sstable files, directories, data
directories (``recursive=True``, ``snapshots=True``, ``backups=True``),
``s3://``, ``gs://``, ``az://`` and ``http(s)://`` URLs. Any other option of
``sstkit export`` is a keyword argument: ``io_mode="mmap"``,
``decimals="decimal128:10"``, ``with_metadata=True``, ``s3_endpoint=URL``.

Errors are ``sstkit.SstableError`` (an ``OSError`` with ``file``,
``component``, ``offset`` and ``partition``) and ``sstkit.UsageError`` (a
``ValueError``).
"""

import datetime as _dt
import json as _json
import os as _os

import pyarrow as _pa

from . import _native
from ._native import SstableError, UsageError

__all__ = ["read", "tombstones", "partitions", "info", "SstableError", "UsageError"]
__version__ = _native.__version__


def _paths(paths):
    if isinstance(paths, (str, bytes, _os.PathLike)):
        paths = [paths]
    out = [_os.fsdecode(p) for p in paths]
    if not out:
        raise UsageError("no paths given")
    return out


def _now(now):
    """--now: epoch seconds, an ISO timestamp, or a datetime (naive: UTC)."""
    if now is None:
        return None
    if isinstance(now, bool):
        raise UsageError(f"now: {now!r} is not a time")
    if isinstance(now, _dt.datetime):
        if now.tzinfo is None:
            now = now.replace(tzinfo=_dt.timezone.utc)
        return str(int(now.timestamp()))
    if isinstance(now, (int, float)):
        return str(int(now))
    return str(now)


def _flags(options):
    """Keyword arguments as the CLI's flags: ``io_mode="mmap"`` is ``--io-mode mmap``."""
    argv = []
    for k, v in options.items():
        flag = "--" + k.replace("_", "-")
        if v is None or v is False:
            continue
        if v is True:
            argv.append(flag)
        elif isinstance(v, (list, tuple)):
            for x in v:
                argv += [flag, str(x)]
        else:
            argv += [flag, _os.fsdecode(v) if isinstance(v, _os.PathLike) else str(v)]
    return argv


def _key(k):
    """A partition key as ``--key`` takes it: a composite key's components joined by ':'."""
    if isinstance(k, (tuple, list)):
        return ":".join(str(x) for x in k)
    return str(k)


def _token_range(r):
    if r is None:
        return None
    if isinstance(r, str):
        return r
    start, end = r
    return f"{start},{end}"


def _export_argv(paths, merge, now, options):
    argv = ["sstkit", "export", "-o", "arrow", "--output-file", "-"]
    if merge:
        argv.append("--merge")
    n = _now(now)
    if n is not None:
        argv += ["--now", n]
    return argv + _flags(options) + ["--"] + _paths(paths)


def _stream(kind, paths, merge, now, columns, keys, token_range, batch_rows, options,
            spark=False):
    """The reader of ``read`` and ``tombstones``; ``spark``: in the Spark
    source's types (see ``sstkit.spark``), converted before Python sees them."""
    s = _native.stream(
        _export_argv(paths, merge, now, options),
        kind,
        None if columns is None else [str(c) for c in columns],
        [] if keys is None else [_key(k) for k in keys],
        _token_range(token_range),
        int(batch_rows),
        spark,
    )
    return _pa.RecordBatchReader.from_batches(s.schema, s)


def read(paths, *, merge=True, now=None, columns=None, keys=None, token_range=None,
         batch_rows=8192, **options):
    """The live CQL rows of the sstables at ``now`` as a ``pyarrow.RecordBatchReader``.

    merge: reconcile the sstables as one table (as a read at consistency ALL
    across replicas would); False reads them one after the other.
    now: epoch seconds, an ISO timestamp or a datetime: TTLs are judged at
    this time (default: the current time).
    columns: the columns to keep, in this order.
    keys: partition keys (CQL text; a composite key as a tuple), read
    through the partition index.
    token_range: ``(start, end)``: only partitions whose token is in (start, end].
    batch_rows: rows per record batch. The reader streams: one batch waits
    while the next is built, whatever the table's size.
    threads (in options): threads decoding, default one per core; the
    batches are the same whatever the number.
    """
    return _stream("rows", paths, merge, now, columns, keys, token_range, batch_rows, options)


def tombstones(paths, *, merge=True, now=None, keys=None, token_range=None, batch_rows=8192,
               **options):
    """The deletions (export's ``--tombstones`` records) as a ``pyarrow.RecordBatchReader``:
    kind (partition, range, row, collection, cell), the partition key, the
    clustering range, the column, and the deletion time."""
    return _stream("tombstones", paths, merge, now, None, keys, token_range, batch_rows, options)


def _run_json(argv):
    return _json.loads(_native.run(["sstkit"] + argv))


def partitions(paths, **options):
    """The ``partitions`` command's table (one row per partition: key, token,
    size, rows, tombstones, ...) as a ``pyarrow.Table``."""
    doc = _run_json(["partitions", "-o", "json"] + _flags(options) + ["--"] + _paths(paths))
    rows = doc.get("partitions", doc) if isinstance(doc, dict) else doc
    return _pa.Table.from_pylist(rows)


def info(path, **options):
    """The ``info`` command's summary of one sstable (version, sizes, times,
    tokens, schema) as a dict."""
    return _run_json(["info", "-o", "json"] + _flags(options) + ["--", _os.fsdecode(path)])
