"""sstkit.read and friends against the rows a live node returned
(select.json) and against `sstkit export`'s Arrow stream; pandas, polars
and DuckDB consume the reader; errors carry their location."""

import shutil
import subprocess

import pyarrow as pa
import pyarrow.ipc
import pytest

import sstkit
from arrow_truth import _pylist, compare
from conftest import FIXTURES, has_truth, merge_cases, select_rows, truth_now, typed_cases

MERGE = merge_cases()
TYPED = typed_cases()
TRUTH = [c for c in TYPED if has_truth(c)]


def test_fixtures_present():
    assert len(MERGE) >= 5 and len(TRUTH) >= 9, (len(MERGE), len(TRUTH))


@pytest.mark.parametrize("name,dirs", MERGE, ids=[m[0] for m in MERGE])
def test_merged_read_equals_select_json(name, dirs):
    table = sstkit.read([str(d) for d in dirs]).read_all()
    ok, detail = compare(table, select_rows(dirs[0]))
    assert ok, f"{name}: {detail}"


@pytest.mark.parametrize("case", TRUTH, ids=[c.name for c in TRUTH])
def test_read_equals_select_json(case):
    table = sstkit.read(case, now=truth_now(case), merge=False).read_all()
    ok, detail = compare(table, select_rows(case))
    assert ok, f"{case.name}: {detail}"


@pytest.mark.parametrize("case", TYPED, ids=[c.name for c in TYPED])
def test_read_is_what_export_writes(case, sstkit_bin):
    """The same columns, Arrow types (field metadata included) and rows as
    `sstkit export -o arrow`."""
    now = truth_now(case)
    argv = [sstkit_bin, "export", "-o", "arrow", "--output-file", "-", "--merge"]
    if now is not None:
        argv += ["--now", str(now)]
    out = subprocess.run(argv + [str(case)], check=True, capture_output=True).stdout
    want = pa.ipc.open_stream(out).read_all()
    got = sstkit.read(case, now=now, batch_rows=5).read_all()
    assert got.schema.equals(want.schema, check_metadata=True), (got.schema, want.schema)
    for name in want.schema.names:
        a, b = got.column(name), want.column(name)
        # NaN is not equal to itself: such columns are compared as the values' texts.
        assert a.equals(b) or [repr(x) for x in _pylist(a)] == [repr(x) for x in _pylist(b)], name


def test_batches_stream_in_order_and_stop_early():
    name, dirs = MERGE[0]
    whole = sstkit.read(dirs).read_all()
    assert whole.num_rows > 10
    reader = sstkit.read(dirs, batch_rows=3)
    sizes = [b.num_rows for b in reader]
    assert sizes and all(s == 3 for s in sizes[:-1]) and 1 <= sizes[-1] <= 3
    assert sum(sizes) == whole.num_rows
    # A reader dropped after one batch stops its thread (the channel closes).
    for _ in range(50):
        r = sstkit.read(dirs, batch_rows=1)
        next(iter(r))
        r.close()


@pytest.mark.parametrize("name,dirs", MERGE + [(c.name, [c]) for c in TYPED],
                         ids=[m[0] for m in MERGE] + [c.name for c in TYPED])
def test_threads_give_the_same_batches(name, dirs, monkeypatch):
    """The batches (their bounds too) with 2 and 4 threads are those of one,
    merged and not, rows and tombstones, with units of a few partitions."""
    monkeypatch.setenv("SSTKIT_UNIT_BYTES", "64")
    # Any fixed time: TTLs are judged alike in every read.
    now = 1_700_000_000
    for merge in (True, False):
        for read in (sstkit.read, sstkit.tombstones):
            one = list(read(dirs, merge=merge, now=now, batch_rows=3, threads=1))
            for n in (2, 4):
                got = list(read(dirs, merge=merge, now=now, batch_rows=3, threads=n))
                assert [b.num_rows for b in got] == [b.num_rows for b in one], (name, merge, n)
                # NaN is not equal to itself: such batches are compared as their IPC bytes.
                assert all(a.equals(b) or a.serialize().to_pybytes() == b.serialize().to_pybytes()
                           for a, b in zip(got, one)), (name, merge, n)


def test_columns_keys_token_range():
    name, dirs = MERGE[0]
    whole = sstkit.read(dirs).read_all()
    cols = [whole.schema.names[-1], whole.schema.names[0]]
    t = sstkit.read(dirs, columns=cols).read_all()
    assert t.schema.names == cols
    assert t.equals(whole.select(cols))
    key = whole.column(0)[0].as_py()
    one = sstkit.read(dirs, keys=[key]).read_all()
    want = whole.filter(pa.compute.equal(whole.column(0), key))
    assert one.num_rows == want.num_rows > 0
    assert sorted(one.to_pylist(), key=str) == sorted(want.to_pylist(), key=str)
    # Two halves of the ring hold every row once.
    lo = sstkit.read(dirs, token_range=(-2**63, 0)).read_all()
    hi = sstkit.read(dirs, token_range=(0, 2**63 - 1)).read_all()
    assert lo.num_rows + hi.num_rows == whole.num_rows
    assert lo.num_rows > 0 and hi.num_rows > 0
    with pytest.raises(sstkit.UsageError, match="no column"):
        sstkit.read(dirs, columns=["nope"])
    with pytest.raises(sstkit.UsageError):
        sstkit.read(dirs, no_such_option=True)


def test_pandas_polars_duckdb_consume_the_reader():
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    name, dirs = MERGE[0]
    whole = sstkit.read(dirs).read_all()
    df = sstkit.read(dirs).read_pandas()
    assert len(df) == whole.num_rows and list(df.columns) == whole.schema.names
    p = pl.from_arrow(sstkit.read(dirs))
    assert p.height == whole.num_rows and p.columns == whole.schema.names
    reader = sstkit.read(dirs)
    n = duckdb.sql("SELECT count(*) FROM reader").fetchall()[0][0]
    assert n == whole.num_rows
    reader = sstkit.read(FIXTURES / "nb_all_types", merge=False)
    kinds = {r[0]: r[1] for r in duckdb.sql("DESCRIBE SELECT u, tu FROM reader").fetchall()}
    assert kinds == {"u": "UUID", "tu": "UUID"}, kinds


def test_tombstones_partitions_info():
    case = FIXTURES / "nb_deletes"
    t = sstkit.tombstones(case).read_all()
    assert t.num_rows > 0
    assert t.schema.names[0] == "kind"
    assert set(t.column("kind").to_pylist()) <= {"partition", "range", "row", "collection", "cell"}
    assert "partition" in set(t.column("kind").to_pylist()) or "row" in set(t.column("kind").to_pylist())
    parts = sstkit.partitions(case)
    assert parts.num_rows > 0
    i = sstkit.info(case)
    assert isinstance(i, dict) and i


def corrupt_copy(tmp_path, case, at_fraction=0.5):
    """A copy of a case's sstable whose Data.db has bytes overwritten mid-file."""
    dst = tmp_path / case.name
    shutil.copytree(case, dst)
    data = next(dst.glob("*-Data.db"))
    b = bytearray(data.read_bytes())
    at = int(len(b) * at_fraction)
    b[at:at + 64] = b"\xff" * 64
    data.write_bytes(bytes(b))
    return dst, data


def test_corrupt_sstable_error_names_file_and_offset(tmp_path):
    dst, data = corrupt_copy(tmp_path, FIXTURES / "nb_clustering_nocompress")
    with pytest.raises(sstkit.SstableError) as e:
        sstkit.read(dst).read_all()
    err = e.value
    assert err.file and err.file.endswith("Data.db"), vars(err)
    assert err.offset is not None and err.component
    assert str(data) in str(err) or data.name in str(err)
