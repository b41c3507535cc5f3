"""The `sstable` Spark source in local mode: the merge fixtures read
through it equal the rows a live node returned (select.json); splits, key
push-down and a corrupt sstable's error."""

import os

import pyarrow as pa
import pytest

from arrow_truth import compare
from conftest import FIXTURES, merge_cases, select_rows, typed_cases
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


def test_default_splits_are_a_multiple_of_the_cores(spark):
    """local[2]: a table of one ~128 MB share gets 2 splits, not 1 that
    leaves a core idle; splits given by option are kept as given."""
    name, dirs = MERGE[0]
    paths = ",".join(str(d) for d in dirs)
    df = spark.read.format("sstable").load(paths)
    assert df.rdd.getNumPartitions() == 2
    assert df.count() == sstkit.read(dirs).read_all().num_rows
    assert spark.read.format("sstable").option("splits", "3").load(paths).rdd.getNumPartitions() == 3


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


def _walk(v, t, leaf):
    """leaf(x, type) of every value in v (of export's Arrow type t), through
    lists, maps and structs; NaN as "NaN", which equals itself."""
    if v is None:
        return None
    if isinstance(v, float) and v != v:
        return "NaN"
    if pa.types.is_list(t) or pa.types.is_fixed_size_list(t):
        return [_walk(x, t.value_type, leaf) for x in v]
    if pa.types.is_map(t):
        return [(_walk(k, t.key_type, leaf), _walk(x, t.item_type, leaf)) for k, x in v]
    if pa.types.is_struct(t):
        return {t.field(i).name: _walk(v[t.field(i).name], t.field(i).type, leaf)
                for i in range(t.num_fields)}
    return leaf(v, t)


def _spark_form(v, t):
    """A value of export's type t as its Spark form reads back in Python,
    converted here by the standard library alone; time at microseconds, as
    to_pylist keeps them."""
    import uuid

    if isinstance(t, pa.BaseExtensionType) and t.extension_name == "arrow.uuid":
        return str(v if isinstance(v, uuid.UUID) else uuid.UUID(bytes=v))
    if pa.types.is_time64(t):
        return (v.hour * 3600 + v.minute * 60 + v.second) * 10**6 + v.microsecond
    return v


def _micros_of_time(v, t):
    """A value the source yields (time as Int64 nanoseconds) at microseconds."""
    return v // 1000 if pa.types.is_time64(t) else v


@pytest.mark.parametrize("case", typed_cases(), ids=lambda c: c.name)
def test_spark_batches_are_export_batches_in_spark_types(case):
    """Every column of every typed fixture: the batches the source yields hold
    export's values, in the types of the table in sstkit.spark (uuid as text,
    time as nanoseconds, timestamps in microseconds, vectors as lists)."""
    want = sstkit.read(case, merge=False, batch_rows=7).read_all()
    got = sstkit.spark._read(case, merge=False, batch_rows=7, flags={}).read_all()
    assert got.num_rows == want.num_rows and got.column_names == want.column_names
    for name in want.column_names:
        t, g = want.schema.field(name).type, got.schema.field(name).type
        assert not pa.types.is_fixed_size_binary(g) and not pa.types.is_time64(g), (name, g)
        if pa.types.is_time64(t):
            # Top-level time columns compare exactly, in nanoseconds.
            assert got.column(name).to_pylist() == want.column(name).cast(pa.int64()).to_pylist()
            continue
        if pa.types.is_timestamp(t):
            # As integers: some values are beyond Python's datetime.
            assert g == pa.timestamp("us", tz="UTC"), (name, g)
            ms = want.column(name).cast(pa.int64()).to_pylist()
            assert got.column(name).cast(pa.int64()).to_pylist() == [
                None if x is None else x * 1000 for x in ms], name
            continue
        if pa.types.is_date32(t):
            assert got.column(name).cast(pa.int32()).equals(want.column(name).cast(pa.int32())), name
            continue
        w = [_walk(v, t, _spark_form) for v in want.column(name).to_pylist()]
        v = [_walk(x, t, _micros_of_time) for x in got.column(name).to_pylist()]
        assert v == w, name


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
    monkeypatch.setattr(sstkit, "_stream", refused)
    reader = copy.reader(schema)
    assert reader.arrow_schema.names == [f.name for f in schema.fields]
