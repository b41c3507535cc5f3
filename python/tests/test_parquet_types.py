"""`sstkit export -o parquet`: every CQL type's column carries the Parquet
annotation (logical type) that lets an engine read it as that type, checked
with what DuckDB and pyarrow read back. The expected types follow from the
Arrow type of each column (arrow.rs's mapping), so every typed fixture
checks every CQL type it holds, nested ones included."""

import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import FIXTURES, typed_cases

duckdb = pytest.importorskip("duckdb")
TYPED = typed_cases()


def is_uuid(t):
    return isinstance(t, pa.BaseExtensionType) and t.extension_name == "arrow.uuid"


def duck(t):
    """What DuckDB should read a Parquet column of Arrow type t as: (type id, children)."""
    if is_uuid(t):
        return ("uuid", [])
    ids = [(pa.types.is_int8, "tinyint"), (pa.types.is_int16, "smallint"),
           (pa.types.is_int32, "integer"), (pa.types.is_int64, "bigint"),
           (pa.types.is_float32, "float"), (pa.types.is_float64, "double"),
           (pa.types.is_boolean, "boolean"), (pa.types.is_string, "varchar"),
           (pa.types.is_binary, "blob"), (pa.types.is_date32, "date"),
           (pa.types.is_decimal, "decimal")]
    for pred, name in ids:
        if pred(t):
            return (name, [])
    if pa.types.is_time64(t) and t.unit == "ns":
        return ("time_ns", [])
    if pa.types.is_timestamp(t) and t.tz is not None:
        return ("timestamp with time zone", [])
    if pa.types.is_map(t):
        return ("map", [("key", duck(t.key_type)), ("value", duck(t.item_type))])
    if pa.types.is_list(t) or pa.types.is_fixed_size_list(t):
        return ("list", [("child", duck(t.value_type))])
    if pa.types.is_struct(t):
        return ("struct", [(t.field(i).name, duck(t.field(i).type)) for i in range(t.num_fields)])
    raise AssertionError(f"no expected DuckDB type for {t}")


def got_duck(t):
    kids = []
    if t.id in ("struct", "list", "map"):
        kids = [(n, got_duck(c)) for n, c in t.children]
    return (t.id, kids)


def logical(t):
    """The Parquet logical type of each leaf column of Arrow type t, in order."""
    if is_uuid(t):
        return ["UUID"]
    if pa.types.is_int8(t) or pa.types.is_int16(t):
        return ["INT"]
    if pa.types.is_string(t):
        return ["STRING"]
    simple = [(pa.types.is_date32, "DATE"), (pa.types.is_time64, "TIME"),
              (pa.types.is_timestamp, "TIMESTAMP"), (pa.types.is_decimal, "DECIMAL")]
    for pred, name in simple:
        if pred(t):
            return [name]
    if pa.types.is_map(t):
        return logical(t.key_type) + logical(t.item_type)
    if pa.types.is_list(t) or pa.types.is_fixed_size_list(t):
        return logical(t.value_type)
    if pa.types.is_struct(t):
        return [x for i in range(t.num_fields) for x in logical(t.field(i).type)]
    return ["NONE"]  # integers of 32 and 64 bits, floats, booleans, blobs: the physical type says it


def export(sstkit_bin, case, out, *extra):
    subprocess.run([sstkit_bin, "export", "-o", "parquet", "--output-file", str(out), *extra, str(case)],
                   check=True, capture_output=True)


@pytest.mark.parametrize("decimals", ["text", "decimal128:10"])
@pytest.mark.parametrize("case", TYPED, ids=[c.name for c in TYPED])
def test_parquet_annotations_duckdb_pyarrow(case, decimals, sstkit_bin, tmp_path):
    out = tmp_path / "t.parquet"
    try:
        export(sstkit_bin, case, out, "--decimals", decimals)
    except subprocess.CalledProcessError as e:
        # A value that does not fit the fixed scale is export's documented refusal.
        assert decimals != "text" and b"--decimals" in e.stderr, e.stderr
        return
    arrow = pq.read_schema(out)  # the Arrow schema export wrote (embedded)
    rel = duckdb.sql(f"SELECT * FROM read_parquet('{out}')")
    assert rel.columns == arrow.names
    for name, dt in zip(rel.columns, rel.types):
        t = arrow.field(name).type
        assert got_duck(dt) == duck(t), f"{case.name}.{name}: DuckDB reads {dt}, expected {duck(t)} for {t}"
    pf = pq.ParquetFile(out)
    leaves = [pf.schema.column(i).logical_type.type for i in range(pf.metadata.num_columns)]
    want = [x for f in arrow for x in logical(f.type)]
    assert leaves == want, f"{case.name}: Parquet logical types {leaves}, expected {want}"
    # pyarrow reads the uuid columns back as uuids, values and all.
    t = pq.read_table(out)
    for f in t.schema:
        if is_uuid(f.type):
            assert all(v is None or len(v.bytes) == 16 for v in t.column(f.name).to_pylist())


def test_uuid_columns_are_uuids_in_duckdb(sstkit_bin, tmp_path):
    """The uuid and timeuuid columns of the all-types table: DuckDB's UUID, the same text as the node's."""
    case = FIXTURES / "nb_all_types"
    out = tmp_path / "t.parquet"
    export(sstkit_bin, case, out)
    rows = duckdb.sql(f"SELECT typeof(u), typeof(tu), u::VARCHAR FROM read_parquet('{out}') "
                      "WHERE u IS NOT NULL LIMIT 1").fetchall()[0]
    assert rows[:2] == ("UUID", "UUID"), rows
    assert len(rows[2]) == 36 and rows[2].count("-") == 4
