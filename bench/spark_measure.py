"""The measures of bench/spark.sh (see there): run with a python that has
sstkit (the package), pyarrow and pyspark installed.

    spark_measure.py read SSTKIT_BIN RUNS PATH...      sstkit.read into pyarrow vs export -o arrow
    spark_measure.py spark SSTKIT_BIN RUNS CORES PATH...  the sstable source vs export + read.parquet
    spark_measure.py floor SSTKIT_BIN RUNS CORES PATH...  a Python worker's peak RSS on a tiny table
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


def _procs():
    """{pid: (parent pid, [utime, stime, cutime, cstime] in seconds)} of every live process."""
    hz = os.sysconf("SC_CLK_TCK")
    procs = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    st = f.read()
            except OSError:
                continue
            rest = st[st.rindex(")") + 2:].split()
            procs[int(d)] = (int(rest[1]), [int(x) / hz for x in rest[11:15]])
    return procs


def _descendants(procs, pid):
    """The processes below `pid`."""
    kids = {}
    for p, (ppid, _) in procs.items():
        kids.setdefault(ppid, []).append(p)
    out, todo = [], list(kids.get(pid, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def _cpu(jvm_pid):
    """CPU seconds so far of the JVM (its own threads) and of the Python
    workers it started (live ones, their children, and the ones it reaped)."""
    procs = _procs()
    u, s, cu, cs = procs[jvm_pid][1]
    return u + s, cu + cs + sum(sum(procs[p][1]) for p in _descendants(procs, jvm_pid))


def _workers_peak_rss_kib(jvm_pid):
    """The largest peak RSS (VmHWM) of the live Python workers the JVM started."""
    peak = 0
    for p in _descendants(_procs(), jvm_pid):
        try:
            with open(f"/proc/{p}/status") as f:
                peak = max([peak] + [int(l.split()[1]) for l in f if l.startswith("VmHWM:")])
        except OSError:
            continue
    return peak


def timed(f, runs, jvm_pid):
    """best(f, runs) with the median CPU seconds of the JVM and the Python workers per run."""
    cpu = []

    def g():
        a = _cpu(jvm_pid)
        out = f()
        b = _cpu(jvm_pid)
        cpu.append((b[0] - a[0], b[1] - a[1]))
        return out

    b, m, out = best(g, runs)
    mid = lambda xs: round(sorted(xs)[len(xs) // 2], 2)
    return b, m, out, mid([c[0] for c in cpu]), mid([c[1] for c in cpu])


def _session(cores):
    """A local[cores] Spark session and its JVM's pid."""
    # The cores a run may use are the CPUs it is pinned to: without it a `local[1]` run's
    # reading thread, Python worker and JVM spread over every CPU, and 1 core is not one.
    if len(os.sched_getaffinity(0)) > cores:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:cores])
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    s = (SparkSession.builder.master(f"local[{cores}]").config("spark.ui.enabled", "false")
         .config("spark.sql.session.timeZone", "UTC").config("spark.sql.shuffle.partitions", str(cores))
         .getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    return s, int(s.sparkContext._jvm.java.lang.ProcessHandle.current().pid())


def floor(cores, paths):
    """The peak RSS of a Python worker that runs the sstable source over a table of a few rows:
    the Python Data Source API's and the imports' cost before any data (workers reused, as in
    spark())."""
    import sstkit.spark

    s, jvm = _session(cores)
    sstkit.spark.register(s)
    rows = [s.read.format("sstable").load(",".join(paths)).count() for _ in range(3)]
    print(json.dumps({"cores": cores, "rows": rows[0],
                      "floor_python_worker_peak_rss_mib": round(_workers_peak_rss_kib(jvm) / 1024, 1)}))
    s.stop()


def spark(bin_, runs, cores, paths):
    import sstkit.spark

    s, jvm = _session(cores)
    sstkit.spark.register(s)
    # The default splits (about 128 MB of Data.db each): what a user gets.
    src = lambda: s.read.format("sstable").load(",".join(paths))
    pk = src().schema.names[0]
    splits = src().rdd.getNumPartitions()
    src().count()  # the Python workers started and their imports done once, as in a long job
    out = {"cores": cores, "splits": splits}
    c_best, c_med, n, c_jvm, c_py = timed(lambda: src().count(), runs, jvm)
    g_best, g_med, g, g_jvm, g_py = timed(lambda: src().groupBy(pk).count().count(), runs, jvm)
    # Spark's Python Data Source API prunes no columns: option("columns") is how a job does it.
    only_pk = lambda: s.read.format("sstable").option("columns", pk).load(",".join(paths))
    p_best, p_med, pg, _, _ = timed(lambda: only_pk().groupBy(pk).count().count(), runs, jvm)
    assert pg == g, (pg, g)
    out.update(source_count_best_s=round(c_best, 3), source_count_median_s=round(c_med, 3),
               source_count_cpu_jvm_s=c_jvm, source_count_cpu_python_s=c_py,
               source_groupby_best_s=round(g_best, 3), source_groupby_median_s=round(g_med, 3),
               source_groupby_cpu_jvm_s=g_jvm, source_groupby_cpu_python_s=g_py,
               source_groupby_key_column_only_best_s=round(p_best, 3), rows=n, groups=g)
    # A task's Python worker against its batches: the workers are reused, so their peak spans every query.
    import sstkit

    r = sstkit.read(paths, batch_rows=8192, threads=1)
    first = next(iter(r))
    r.close()
    out.update(python_worker_peak_rss_mib=round(_workers_peak_rss_kib(jvm) / 1024, 1),
               batch_8192_rows_mib=round(first.nbytes / 2**20, 2))
    # Spark 4.1 refuses a Parquet file's uuid (FIXED_LEN_BYTE_ARRAY (UUID)) and time columns when
    # it infers the schema; given the other columns' schema it reads the file.
    keep = [f for f in src().schema.fields if f.name not in _parquet_refused(paths)]
    ddl = ", ".join(f"`{f.name}` {f.dataType.simpleString()}" for f in keep)
    with tempfile.TemporaryDirectory() as d:
        pq = os.path.join(d, "t.parquet")

        def export_then(q):
            subprocess.run([bin_, "export", "--merge", "-o", "parquet", "--output-file", pq, *paths],
                           check=True, capture_output=True)
            return q(s.read.schema(ddl).parquet(pq))

        try:
            e_best, e_med, en, _, _ = timed(lambda: export_then(lambda df: df.count()), runs, jvm)
            eg_best, eg_med, _, _, _ = timed(lambda: export_then(lambda df: df.groupBy(pk).count().count()),
                                             runs, jvm)
        except Exception as e:  # a uuid or time nested in a collection or UDT: refused still
            out.update(export_parquet=f"spark.read.parquet failed: {str(e).splitlines()[0][:160]}")
            s.stop()
            print(json.dumps(out))
            return
        assert en == n, (en, n)
        out.update(export_parquet_count_best_s=round(e_best, 3), export_parquet_count_median_s=round(e_med, 3),
                   export_parquet_groupby_best_s=round(eg_best, 3),
                   export_parquet_groupby_median_s=round(eg_med, 3),
                   export_parquet_columns_left_out=sorted(f.name for f in src().schema.fields
                                                          if f not in keep))
    s.stop()
    print(json.dumps(out))


def _parquet_refused(paths):
    """The top-level columns whose Parquet type Spark 4.1 refuses: uuid, timeuuid and time (from the
    Arrow schema of sstkit.read, as the source's schema has them as strings and longs)."""
    import pyarrow as pa

    import sstkit

    r = sstkit.read(paths, batch_rows=1)
    bad = {f.name for f in r.schema
           if (isinstance(f.type, pa.BaseExtensionType) and f.type.extension_name == "arrow.uuid")
           or pa.types.is_time64(f.type)}
    r.close()
    return bad


if __name__ == "__main__":
    mode, bin_, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode == "read":
        read(bin_, runs, sys.argv[4:])
    elif mode == "floor":
        floor(int(sys.argv[4]), sys.argv[5:])
    else:
        spark(bin_, runs, int(sys.argv[4]), sys.argv[5:])
