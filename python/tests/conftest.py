"""Fixtures of the package's tests: the Cassandra-written cases in
fixtures/cassandra and the rows a live node returned for them (select.json)."""

import gzip
import json
import os
import pathlib
import re
import shutil

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures" / "cassandra"
RUNS = ["nb", "oa", "da"]
# Tables of several sstables each, whose select.json is the node's merged read.
MERGE_TABLES = [("merge_overwrite", 3), ("merge_range", 3), ("merge_partition_delete", 3),
                ("merge_collections", 3), ("deletes_merge", 2)]
# Tables of one sstable that hold the types the export maps.
TYPED_TABLES = ["all_types", "collections", "udt", "frozen_keys", "typed_keys", "counters",
                "clustering", "deletes", "range_tombstones", "wide"]


def select_rows(case, query="all"):
    """The rows of query `query` of a case's select.json (numbers kept as text)."""
    p = case / "select.json"
    if p.is_file():
        text = p.read_text()
    else:
        text = gzip.decompress((case / "select.json.gz").read_bytes()).decode()
    for q in json.loads(text, parse_float=str):
        if q["name"] == query:
            return q["rows"]
    raise KeyError(f"{case.name}: no query {query}")


def truth_now(case):
    """The time the node's rows hold at (as tests/cql.rs): the query time when
    it is within an hour of the first expiry, else a minute after that expiry."""
    meta = (case / "sstablemetadata.txt").read_text()
    m = re.search(r"^SSTable min local deletion time:.*\((-?\d+)\)\s*$", meta, re.M)
    min_ldt = int(m.group(1)) if m else None
    if min_ldt is None or min_ldt == 2**63 - 1:
        return None
    q = json.loads((case / "case.json").read_text()).get("select", {}).get("queried_at_s")
    if q is not None and 0 <= q - min_ldt < 3600:
        return q
    return min_ldt + 60


def merge_cases():
    """(name, [case dirs]) of every merge table present."""
    out = []
    for run in RUNS:
        for table, n in MERGE_TABLES:
            dirs = [FIXTURES / f"{run}_{table}_{i}" for i in range(1, n + 1)]
            if all(d.is_dir() for d in dirs):
                out.append((f"{run}_{table}", dirs))
    return out


def typed_cases():
    return [FIXTURES / f"{run}_{t}" for run in RUNS for t in TYPED_TABLES
            if (FIXTURES / f"{run}_{t}").is_dir()]


def has_truth(case):
    return (case / "select.json").is_file() or (case / "select.json.gz").is_file()


@pytest.fixture(scope="session")
def sstkit_bin():
    """The sstkit binary: $SSTKIT_BIN, else the workspace's debug or release build."""
    env = os.environ.get("SSTKIT_BIN")
    if env:
        assert os.access(env, os.X_OK), f"SSTKIT_BIN={env} is not an executable"
        return env
    for p in (REPO / "target" / "debug" / "sstkit", REPO / "target" / "release" / "sstkit"):
        if p.is_file():
            return str(p)
    found = shutil.which("sstkit")
    if found:
        return found
    pytest.skip("no sstkit binary: build it (cargo build) or set SSTKIT_BIN")
