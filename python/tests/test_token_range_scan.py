"""A scan limited to a token range starts at its first partition, found
through the partition index, and stops past its end (Data.db is in token
order): the Spark source's splits rely on it. Measured by the chunks of
Data.db the export decompresses (`--io-stats=json`)."""

import json
import subprocess

from conftest import FIXTURES

MIN, MAX = -(2**63), 2**63 - 1


def chunks(sstkit_bin, case, start, end):
    r = subprocess.run([sstkit_bin, "export", "--merge", "-o", "arrow", "--output-file", "/dev/null",
                        "--io-stats=json", f"--token-range={start},{end}", str(case)],
                       check=True, capture_output=True, text=True)
    stats = json.loads(r.stderr.strip().splitlines()[-1])
    return stats["components"]["data"]["chunks_decompressed"]


def test_scan_of_an_eighth_reads_only_its_chunks(sstkit_bin):
    case = FIXTURES / "nb_clustering"
    whole = chunks(sstkit_bin, case, MIN, MAX)
    first = chunks(sstkit_bin, case, MIN, MIN + 2**61)
    last = chunks(sstkit_bin, case, MAX - 2**61, MAX)
    assert whole >= 8, whole
    # Only the chunks up to the range's end, not the whole file.
    assert first < whole // 2, (first, whole)
    # A range at the end starts where the index places it: the chunks before are not read.
    assert last < whole // 2, (last, whole)
