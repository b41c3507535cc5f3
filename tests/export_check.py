"""Read what `sstkit export` wrote with independent readers and compare its
rows to CQL rows as `SELECT JSON *` prints them (select.json, `dump-data -o cql`).

    export_check.py parquet FILE.parquet ROWS.jsonl...   # DuckDB reads the file
    export_check.py arrow-stream FILE.arrows ROWS.jsonl... # pyarrow reads the IPC stream

Each ROWS.jsonl holds one JSON row per line. Values are compared after both
sides are brought to one canonical form, driven by the Arrow type of the
column (from the file's schema): a timestamp as milliseconds, a uuid as its
text, a map as its sorted entries, ... Rows are compared as multisets.
With EXPORT_CHECK_SUBSET set, only the columns of the first truth row are
compared. Exit 0: equal; 1: different (the first differences on stderr); 77: a
reader is not installed.
"""

import datetime
import json
import os
import sys
import uuid
from decimal import Decimal

try:
    import duckdb
    import pyarrow as pa
    import pyarrow.ipc
    import pyarrow.parquet as pq
except ImportError as e:  # the caller skips
    print(f"missing Python package: {e.name}", file=sys.stderr)
    sys.exit(77)

# DuckDB reads time64[ns] as microseconds: times are compared at that precision there.
TIME_UNIT = 1

# Per compared column: a ttl() column compared as "a TTL is left" (subset mode).
TTL_AS_PRESENCE = []

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


class Num(str):
    """A JSON number kept as its text (decimals and varints are exact)."""


def duration_text(months, days, nanos):
    """Cassandra's Duration.toString."""
    if months is None:
        return None
    neg = months < 0 or days < 0 or nanos < 0
    months, days, nanos = abs(months), abs(days), abs(nanos)
    out = "-" if neg else ""
    for value, unit in ((months // 12, "y"), (months % 12, "mo"), (days, "d")):
        if value:
            out += f"{value}{unit}"
    for size, unit in (
        (3_600_000_000_000, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
        (1, "ns"),
    ):
        if nanos >= size:
            out += f"{nanos // size}{unit}"
            nanos %= size
    return out if out not in ("", "-") else "0s"


def civil_days(y, m, d):
    """Days since 1970-01-01 of a proleptic Gregorian date (any year)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def date_days(text):
    """`[+-]Y-M-D` (ISO, as Cassandra prints) or DuckDB's `Y-M-D (BC)`."""
    bc = text.endswith(" (BC)")
    text = text.removesuffix(" (BC)")
    sign = -1 if text.startswith("-") else 1
    y, m, d = text.lstrip("+-").split("-")
    y = sign * int(y)
    if bc:
        y = 1 - y
    return civil_days(y, int(m), int(d))


def is_uuid(t):
    return pa.types.is_fixed_size_binary(t) and t.byte_width == 16


def canon_json(v, t):
    """A select.json value of Arrow type t, canonical."""
    if isinstance(t, pa.BaseExtensionType):
        t = t.storage_type
    if v is None:
        return None
    if pa.types.is_integer(t):
        return int(v)
    if pa.types.is_floating(t):
        x = float(v)
        return None if x != x or x in (float("inf"), float("-inf")) else repr(pa.scalar(x, t).as_py())
    if pa.types.is_boolean(t):
        return bool(v)
    if pa.types.is_string(t):
        return str(v)  # text, inet, and decimal/varint kept as their JSON text
    if pa.types.is_binary(t):
        return v.lower()
    if is_uuid(t):
        return str(uuid.UUID(v))
    if pa.types.is_timestamp(t):
        d = datetime.datetime.strptime(v, "%Y-%m-%d %H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
        return (d - EPOCH) // datetime.timedelta(milliseconds=1)
    if pa.types.is_date(t):
        return date_days(v)
    if pa.types.is_time(t):
        h, m, s = v.split(":")
        sec, frac = s.split(".")
        ns = ((int(h) * 60 + int(m)) * 60 + int(sec)) * 1_000_000_000 + int(frac.ljust(9, "0"))
        return ns // TIME_UNIT
    if pa.types.is_decimal(t):
        return str(Decimal(v))
    if pa.types.is_struct(t):
        names = [f.name for f in t]
        if names == ["months", "days", "nanoseconds"]:
            return v
        if all(n.isdigit() for n in names):  # tuple: a JSON array
            return [canon_json(x, f.type) for x, f in zip(v, t)]
        return {f.name: canon_json(v.get(f.name, v.get(f'"{f.name}"')), f.type) for f in t}
    if pa.types.is_map(t):
        return sorted(
            ((k, canon_json(x, t.item_type)) for k, x in v.items()),
            key=lambda e: json.dumps(e, sort_keys=True, default=str),
        )
    if pa.types.is_list(t) or pa.types.is_fixed_size_list(t):
        return [canon_json(x, t.value_type) for x in v]
    return v


def key_text(v, t):
    """A map key as SELECT JSON writes it (a JSON string)."""
    c = canon_read(v, t)
    if pa.types.is_string(t) or is_uuid(t):
        return c
    if pa.types.is_timestamp(t):
        d = EPOCH + datetime.timedelta(milliseconds=c)
        return d.strftime("%Y-%m-%d %H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"
    return json.dumps(c)


def canon_read(v, t):
    """A value a reader returned for Arrow type t, canonical."""
    if isinstance(t, pa.BaseExtensionType):
        t = t.storage_type
    if v is None:
        return None
    if pa.types.is_integer(t):
        return int(v)
    if pa.types.is_floating(t):
        x = float(v)
        return None if x != x or x in (float("inf"), float("-inf")) else repr(pa.scalar(x, t).as_py())
    if pa.types.is_boolean(t):
        return bool(v)
    if pa.types.is_string(t):
        return str(v)
    if pa.types.is_binary(t):
        return "0x" + bytes(v).hex()
    if is_uuid(t):
        return str(v) if isinstance(v, uuid.UUID) else str(uuid.UUID(bytes=bytes(v)))
    if pa.types.is_timestamp(t):
        if isinstance(v, datetime.datetime):
            if v.tzinfo is None:
                v = v.replace(tzinfo=datetime.timezone.utc)
            return (v - EPOCH) // datetime.timedelta(milliseconds=1)
        return int(v)
    if pa.types.is_date(t):
        if isinstance(v, int):
            return v
        if isinstance(v, str):
            return date_days(v)
        if v == datetime.date.max:  # DuckDB reads the largest date32 as infinity
            return 2**31 - 1
        return (v - datetime.date(1970, 1, 1)).days
    if pa.types.is_time(t):
        if isinstance(v, datetime.time):
            ns = ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000_000 + v.microsecond * 1000
        else:
            ns = int(v)
        return ns // TIME_UNIT
    if pa.types.is_decimal(t):
        return str(Decimal(v))
    if pa.types.is_struct(t):
        names = [f.name for f in t]
        if names == ["months", "days", "nanoseconds"]:
            return duration_text(v["months"], v["days"], v["nanoseconds"])
        if all(n.isdigit() for n in names):
            return [canon_read(v[f.name], f.type) for f in t]
        return {f.name: canon_read(v[f.name], f.type) for f in t}
    if pa.types.is_map(t):
        items = v.items() if isinstance(v, dict) else v
        return sorted(
            ((key_text(k, t.key_type), canon_read(x, t.item_type)) for k, x in items),
            key=lambda e: json.dumps(e, sort_keys=True, default=str),
        )
    if pa.types.is_list(t) or pa.types.is_fixed_size_list(t):
        return [canon_read(x, t.value_type) for x in v]
    return v


def unquote(name):
    return name[1:-1].replace('""', '"') if name.startswith('"') else name


def json_rows(path, schema):
    rows = []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            obj = json.loads(line, parse_float=Num, parse_int=Num)
            obj = {unquote(k): v for k, v in obj.items()}
            row = tuple(canon_json(obj.get(f.name), f.type) for f in schema)
            if TTL_AS_PRESENCE:
                row = tuple((v is not None) if t else v for v, t in zip(row, TTL_AS_PRESENCE))
            rows.append(row)
    return rows


def main():
    mode, data, *truths = sys.argv[1:]
    global TIME_UNIT
    if mode == "parquet":
        TIME_UNIT = 1000
        schema = pq.read_schema(data)
        con = duckdb.connect()
        cur = con.execute("SELECT * FROM read_parquet(?)", [data])
        got = [tuple(canon_read(v, f.type) for v, f in zip(r, schema)) for r in cur.fetchall()]
    else:
        with open(data, "rb") as f:
            table = pa.ipc.open_stream(f).read_all()
        schema = table.schema
        # Dates and times past Python's range or precision read as their numbers.
        for i, f in enumerate(schema):
            raw = {"date32": pa.int32(), "time64": pa.int64(), "timestamp": pa.int64()}
            kind = str(f.type).split("[")[0]
            if kind in raw:
                col = table.column(i)
                table = table.set_column(
                    i, f.name, pa.chunked_array([c.view(raw[kind]) for c in col.chunks], raw[kind])
                )
        got = [tuple(canon_read(r[f.name], f.type) for f in schema) for r in table.to_pylist()]
    if os.environ.get("EXPORT_CHECK_SUBSET"):
        # Only the columns the truth selects (e.g. writetime(a), ttl(a)).
        with open(truths[0]) as f:
            first = json.loads(f.readline() or "{}")
        names = {unquote(k) for k in first}
        keep = [i for i, f in enumerate(schema) if f.name in names]
        schema = pa.schema([schema.field(i) for i in keep])
        got = [tuple(r[i] for i in keep) for r in got]
        # The truth records whether a TTL is left (`true`), not the seconds,
        # which depend on the moment of the query.
        ttl = [f.name.startswith("ttl(") for f in schema]
        got = [tuple((v is not None) if t else v for v, t in zip(r, ttl)) for r in got]
        TTL_AS_PRESENCE[:] = ttl
    key = lambda r: json.dumps(r, sort_keys=True, default=str)
    got.sort(key=key)
    ok = True
    for t in truths:
        want = sorted(json_rows(t, schema), key=key)
        if got != want:
            ok = False
            print(f"{data} vs {t}: {len(got)} rows, want {len(want)}", file=sys.stderr)
            shown = 0
            for g, w in zip(got, want):
                if g != w and shown < 3:
                    for f, a, b in zip(schema, g, w):
                        if a != b:
                            print(f"  column {f.name} ({f.type}): got {a!r}, want {b!r}", file=sys.stderr)
                    shown += 1
    print(f"{len(got)} rows", file=sys.stderr)
    sys.exit(0 if ok else 1)


main()
