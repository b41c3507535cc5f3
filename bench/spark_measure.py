"""The measures of bench/spark.sh (see there): run with a python that has
sstkit (the package), pyarrow and pyspark installed.

    spark_measure.py read SSTKIT_BIN RUNS PATH...      sstkit.read into pyarrow vs export -o arrow
    spark_measure.py spark SSTKIT_BIN RUNS CORES PATH...  the sstable source vs export + read.parquet
"""

import json
import os
import subprocess
import sys
import tempfile
import time


def best(f, runs):
    times = []
    out = None
    for _ in range(runs):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), sorted(times)[len(times) // 2], out


def read(bin_, runs, paths):
    import pyarrow as pa

    import sstkit

    def export():
        r = subprocess.run(["/usr/bin/time", "-f", "%M", bin_, "export", "--merge", "-o", "arrow",
                            "--output-file", "-", *paths], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           check=True)
        rows = pa.ipc.open_stream(r.stdout).read_all().num_rows
        return rows, int(r.stderr.decode().strip().splitlines()[-1]) / 1024

    def package():
        rows = 0
        for b in sstkit.read(paths):
            rows += b.num_rows
        return rows

    # Written to /dev/null: the export's own time, as the package's batches are not written either.
    def export_only():
        t = time.perf_counter()
        r = subprocess.run([bin_, "export", "--merge", "-o", "arrow", "--output-file", "/dev/null",
                            *paths], check=True)
        return time.perf_counter() - t

    e_best, e_med, (e_rows, e_rss) = best(export, 1)
    x = [export_only() for _ in range(runs)]
    p_best, p_med, p_rows = best(package, runs)
    assert p_rows == e_rows, (p_rows, e_rows)
    print(json.dumps({"rows": p_rows, "export_arrow_best_s": round(min(x), 3),
                      "export_arrow_median_s": round(sorted(x)[len(x) // 2], 3),
                      "export_max_rss_mb": round(e_rss, 1),
                      "read_best_s": round(p_best, 3), "read_median_s": round(p_med, 3),
                      "read_vs_export": round(min(x) / p_best, 3)}))


def spark(bin_, runs, cores, paths):
    import sstkit.spark
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    s = (SparkSession.builder.master(f"local[{cores}]").config("spark.ui.enabled", "false")
         .config("spark.sql.session.timeZone", "UTC").config("spark.sql.shuffle.partitions", str(cores))
         .getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    sstkit.spark.register(s)
    src = lambda: s.read.format("sstable").option("splits", str(4 * cores)).load(",".join(paths))
    pk = src().schema.names[0]
    out = {"cores": cores}
    c_best, c_med, n = best(lambda: src().count(), runs)
    g_best, g_med, g = best(lambda: src().groupBy(pk).count().count(), runs)
    out.update(source_count_best_s=round(c_best, 3), source_count_median_s=round(c_med, 3),
               source_groupby_best_s=round(g_best, 3), rows=n, groups=g)
    with tempfile.TemporaryDirectory() as d:
        pq = os.path.join(d, "t.parquet")

        def export_then(q):
            subprocess.run([bin_, "export", "--merge", "-o", "parquet", "--output-file", pq, *paths],
                           check=True, capture_output=True)
            return q(s.read.parquet(pq))

        try:
            e_best, e_med, en = best(lambda: export_then(lambda df: df.count()), runs)
            eg_best, _, _ = best(lambda: export_then(lambda df: df.groupBy(pk).count().count()), runs)
            assert en == n, (en, n)
            out.update(export_parquet_count_best_s=round(e_best, 3), export_parquet_groupby_best_s=round(eg_best, 3))
        except Exception as e:  # Spark refuses some Parquet types (uuid, time)
            out.update(export_parquet=f"spark.read.parquet failed: {str(e).splitlines()[0][:160]}")
    s.stop()
    print(json.dumps(out))


if __name__ == "__main__":
    mode, bin_, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode == "read":
        read(bin_, runs, sys.argv[4:])
    else:
        spark(bin_, runs, int(sys.argv[4]), sys.argv[5:])
