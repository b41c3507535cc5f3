"""The `sstable` Spark source in local mode: the merge fixtures read
through it equal the rows a live node returned (select.json); splits, key
push-down and a corrupt sstable's error."""

import os

import pyarrow as pa
import pytest

from arrow_truth import compare
from conftest import FIXTURES, merge_cases, select_rows
from test_read import corrupt_copy

pyspark = pytest.importorskip("pyspark")

import sstkit  # noqa: E402
import sstkit.spark  # noqa: E402

MERGE = merge_cases()


@pytest.fixture(scope="module")
def spark():
    import sys

    from pyspark.sql import SparkSession

    # The workers run this interpreter, where sstkit is installed.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    s = (SparkSession.builder.master("local[2]").appName("sstkit-tests")
         .config("spark.ui.enabled", "false")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.sql.shuffle.partitions", "2")
         .getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    sstkit.spark.register(s)
    yield s
    s.stop()


def to_arrow(df):
    """A Spark DataFrame's rows as an Arrow table (through Spark's own Arrow conversion)."""
    return df.toArrow()


@pytest.mark.parametrize("name,dirs", MERGE, ids=[m[0] for m in MERGE])
def test_spark_source_equals_select_json(spark, name, dirs):
    df = spark.read.format("sstable").option("splits", 3).load(",".join(str(d) for d in dirs))
    table = to_arrow(df)
    ok, detail = compare(table, select_rows(dirs[0]))
    assert ok, f"{name}: {detail}"
    # The same rows as sstkit.read, split or not.
    whole = sstkit.read(dirs).read_all()
    assert table.num_rows == whole.num_rows


def test_splits_open_only_overlapping_sstables(spark):
    name, dirs = MERGE[0]
    paths = ",".join(str(d) for d in dirs)
    src = sstkit.spark.SstableDataSource({"path": paths, "splits": "16"})
    reader = src.reader(src.schema())
    splits = reader.partitions()
    assert 1 < len(splits) <= 16
    ssts = reader._sstables()
    for s in splits:
        for p in s.paths:
            _, first, last = ssts[p]
            assert first <= s.end and last > s.start
    # Every partition's rows in exactly one split.
    n = sum(sum(b.num_rows for b in reader.read(s)) for s in splits)
    assert n == sstkit.read(dirs).read_all().num_rows


def test_partition_key_filters_are_pushed_down(spark):
    name, dirs = MERGE[0]
    paths = ",".join(str(d) for d in dirs)
    whole = sstkit.read(dirs).read_all()
    pk = whole.schema.names[0]
    keys = sorted(set(whole.column(0).to_pylist()))[:2]
    df = spark.read.format("sstable").load(paths).where(f"{pk} IN ({keys[0]}, {keys[1]})")
    got = df.count()
    want = sum(1 for v in whole.column(0).to_pylist() if v in keys)
    assert got == want > 0
    # Pushed down: the reader plans one split of key lookups.
    src = sstkit.spark.SstableDataSource({"path": paths})
    reader = src.reader(src.schema())
    from pyspark.sql.datasource import In
    left = list(reader.pushFilters([In((pk,), tuple(keys))]))
    assert left == [] and reader.keys == keys
    assert len(reader.partitions()) == 1


def test_spark_types(spark):
    case = FIXTURES / "nb_all_types"
    df = spark.read.format("sstable").option("merge", "false").load(str(case))
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert types["u"] == "string" and types["tu"] == "string" and types["ine"] == "string"
    assert types["ti"] == "bigint" and types["vec"] == "array<float>"
    assert types["du"] == "struct<months:int,days:int,nanoseconds:bigint>"
    rows = df.where("u IS NOT NULL").limit(1).collect()
    assert len(rows[0]["u"]) == 36
    table = to_arrow(df)
    want = sstkit.read(case, merge=False).read_all()
    assert table.num_rows == want.num_rows
    got_u = sorted(x for x in table.column("u").to_pylist() if x)
    want_u = sorted(str(x) for x in want.column("u").to_pylist() if x)
    assert got_u == want_u


def test_corrupt_sstable_fails_the_job_with_file_and_offset(spark, tmp_path):
    dst, data = corrupt_copy(tmp_path, FIXTURES / "nb_clustering_nocompress")
    df = spark.read.format("sstable").load(str(dst))
    with pytest.raises(Exception) as e:
        df.count()
    msg = str(e.value)
    assert data.name in msg and "+0x" in msg, msg[-2000:]


def test_token_range_option_narrows_the_splits(spark):
    name, dirs = MERGE[0]
    paths = ",".join(str(d) for d in dirs)
    src = sstkit.spark.SstableDataSource({"path": paths, "splits": "4", "token_range": "0,4611686018427387904"})
    reader = src.reader(src.schema())
    splits = reader.partitions()
    assert all(0 <= s.start < s.end <= 4611686018427387904 for s in splits), [(s.start, s.end) for s in splits]
    n = sum(sum(b.num_rows for b in reader.read(s)) for s in splits)
    assert n == sstkit.read(dirs, token_range=(0, 4611686018427387904)).read_all().num_rows > 0
    df = spark.read.format("sstable").option("token_range", "0,4611686018427387904").load(paths)
    assert df.count() == n


def test_uuid_text_with_nulls_and_slices():
    import uuid

    vals = [uuid.UUID(int=(i * 0x9E3779B97F4A7C15) % 2**128).bytes if i % 3 else None for i in range(50)]
    arr = pa.array(vals, pa.binary(16))
    want = [None if v is None else str(uuid.UUID(bytes=v)) for v in vals]
    assert sstkit.spark._uuid_text(arr).to_pylist() == want
    assert sstkit.spark._uuid_text(arr.slice(7, 20)).to_pylist() == want[7:27]


def test_schema_travels_with_the_source_to_the_reader(monkeypatch):
    """Spark pickles the source after schema() and calls reader() on the copy:
    the copy must not open the sstables again for their schema."""
    import pickle

    name, dirs = MERGE[0]
    src = sstkit.spark.SstableDataSource({"path": ",".join(str(d) for d in dirs)})
    schema = src.schema()
    copy = pickle.loads(pickle.dumps(src))

    def refused(*args, **kwargs):
        raise AssertionError("the sstables were opened again for the schema")

    monkeypatch.setattr(sstkit, "read", refused)
    reader = copy.reader(schema)
    assert reader.arrow_schema.names == [f.name for f in schema.fields]
