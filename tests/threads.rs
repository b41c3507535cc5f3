//! `--threads`: a dump (and the partitions and timestamps reports) read on several threads
//! is byte for byte the one read on one, in every output format, with
//! limits and filters, on the fixtures and on the corpus (damaged sets too:
//! the same first error).
//!
//! The fixtures are small, so `SSTKIT_UNIT_BYTES` cuts them into units of
//! a few hundred bytes: many units per sstable, a few partitions each.

use std::path::Path;
use std::process::Command;

use crate::util::{corpus, fixture_cases, fixtures, repo};

/// stdout, stderr and exit code of a dump with `threads` threads and
/// units of `unit` bytes.
fn dump(args: &[&str], path: &Path, threads: usize, unit: u64) -> (Vec<u8>, String, i32) {
    run("dump-data", args, path, threads, unit)
}

/// [`dump`] of another command.
fn run(
    command: &str,
    args: &[&str],
    path: &Path,
    threads: usize,
    unit: u64,
) -> (Vec<u8>, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_sstkit"))
        .arg(command)
        .arg(format!("--threads={threads}"))
        .args(args)
        .arg(path)
        .current_dir(repo())
        .env("SSTKIT_UNIT_BYTES", unit.to_string())
        .env("COLUMNS", "80")
        .output()
        .expect("run sstkit");
    (
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// The dump of `path` with `args` is the same on 1 thread and on `n`
/// threads (2 or 4, by `n`'s parity), cut into units of a few hundred
/// bytes (a large partition: into parts at its row-index blocks).
fn same_on_threads(args: &[&str], path: &Path, n: usize) {
    let one = dump(args, path, 1, 1 << 20);
    let (threads, unit) = if n.is_multiple_of(2) {
        (2, 200)
    } else {
        (4, 64)
    };
    let many = dump(args, path, threads, unit);
    assert!(
        one == many,
        "{} {args:?}: {threads} threads (units of {unit} bytes) differ from 1\n\
         1 thread: exit {}, stderr {}\n{threads} threads: exit {}, stderr {}",
        path.display(),
        one.2,
        one.1,
        many.2,
        many.1
    );
}

#[test]
fn every_format_is_the_same_on_several_threads() {
    let mut cases = fixture_cases();
    cases.extend(
        std::fs::read_dir(repo().join("fixtures/scylla"))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir()),
    );
    assert!(cases.len() > 40, "fixtures missing: {}", cases.len());
    let mut n = 0;
    for case in &cases {
        for format in [
            "json",
            "ndjson",
            "sstabledump",
            "sstabledump-lines",
            "text",
            "cql",
        ] {
            n += 1;
            same_on_threads(&["-o", format], case, n);
        }
    }
}

#[test]
fn limits_and_filters_are_the_same_on_several_threads() {
    for case in fixture_cases() {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        // The larger tables: several partitions per sstable.
        if ![
            "clustering",
            "deletes",
            "range_tombstones",
            "wide",
            "counters",
        ]
        .iter()
        .any(|n| name.contains(n))
        {
            continue;
        }
        let mut n = 0;
        for format in ["json", "ndjson", "sstabledump", "text"] {
            for extra in [
                &["--limit", "1"][..],
                &["--limit", "3"],
                &["--keys-only"],
                &["--keys-only", "--limit", "2"],
                &["--tombstones-only"],
                &["--tombstones-only", "--limit", "1"],
            ] {
                let mut args = vec!["-o", format];
                args.extend_from_slice(extra);
                n += 1;
                same_on_threads(&args, &case, n);
            }
        }
    }
}

#[test]
fn corpus_dumps_are_the_same_on_several_threads() {
    let Some(root) = corpus() else { return };
    let mut data = Vec::new();
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with("-Data.db") {
                data.push(p);
            }
        }
    }
    data.sort();
    assert!(data.len() > 100, "corpus sstables: {}", data.len());
    for (n, d) in data.iter().enumerate() {
        // Damaged sets included: the first error, its message and the
        // exit code are the ones a single thread meets.
        let args: &[&str] = if n.is_multiple_of(3) {
            &["-o", "ndjson", "--limit", "5"]
        } else {
            &["-o", "sstabledump"]
        };
        same_on_threads(args, d, n);
    }
}

#[test]
fn partitions_and_timestamps_are_the_same_on_several_threads() {
    let mut paths = fixture_cases();
    if let Some(root) = corpus() {
        // The corpus sets, damaged ones included (the same first error).
        for e in std::fs::read_dir(&root).into_iter().flatten().flatten() {
            if e.path().is_dir() {
                paths.push(e.path());
            }
        }
    }
    for (n, p) in paths.iter().enumerate() {
        let format = ["json", "csv", "ndjson"][n % 3];
        let bucket = ["day", "hour", "month"][n % 3];
        for (command, args) in [
            ("partitions", ["-o", format, "-r"]),
            ("timestamps", ["--bucket", bucket, "-r"]),
        ] {
            let one = run(command, &args, p, 1, 1 << 20);
            let many = run(command, &args, p, 3, 100);
            assert!(
                one == many,
                "{command} {args:?} {}: 3 threads differ from 1\n1: exit {} {}\n3: exit {} {}",
                p.display(),
                one.2,
                one.1,
                many.2,
                many.1
            );
        }
    }
}

/// An index whose positions are not Data.db's partition starts (another
/// sstable's Index.db and Summary.db beside nb_clustering's Data.db): one
/// thread reads Data.db alone, and several threads, which cut Data.db where
/// the index says, notice the cut is wrong and read on as one thread does.
#[test]
fn a_wrong_index_gives_the_one_thread_output() {
    let dir = crate::util::scratch_dir("threads", "wrong-index");
    let data = fixtures().join("nb_clustering");
    let other = fixtures().join("nb_collections");
    for e in std::fs::read_dir(&data).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let from = if name.ends_with("-Index.db") || name.ends_with("-Summary.db") {
            other.join(&name)
        } else {
            e.path()
        };
        std::fs::copy(&from, dir.path().join(&name)).unwrap();
    }
    let mut n = 0;
    for format in ["sstabledump", "ndjson", "text"] {
        for extra in [&[][..], &["--limit", "150"]] {
            let mut args = vec!["-o", format];
            args.extend_from_slice(extra);
            n += 1;
            same_on_threads(&args, dir.path(), n);
        }
    }
    for (command, args) in [
        ("partitions", ["-o", "json"]),
        ("timestamps", ["-o", "json"]),
    ] {
        let one = run(command, &args, dir.path(), 1, 1 << 20);
        assert_eq!(one.2, 0, "{command}: {}", one.1);
        assert_eq!(one, run(command, &args, dir.path(), 3, 200), "{command}");
    }
}

/// A table of many small partitions and a few large ones, written by
/// `write` (ByteOrderedPartitioner: Data.db in key order), in `dir`: the
/// Data.db path. Summary.db samples every 128th partition.
fn many_and_large(dir: &Path) -> std::path::PathBuf {
    // Every 700th partition is large; the others have one row.
    let (schema, input) = crate::util::kcv_input(
        dir,
        "mixed",
        3000,
        |k| if k % 700 == 350 { 400 } else { 1 },
        |k, c| format!("value {k} {c}"),
    );
    let out = dir.join("out");
    let r = crate::util::sstkit([
        "write",
        "--from",
        input.to_str().unwrap(),
        "--schema",
        schema.to_str().unwrap(),
        "--partitioner",
        "org.apache.cassandra.dht.ByteOrderedPartitioner",
        "--output-dir",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    out.join("oa-1-big-Data.db")
}

/// Units cut by Summary.db's samples (the entries between two samples read
/// only where the stretch is a unit or more) start at partitions, cover
/// Data.db, isolate each large partition, and dump as one thread does.
#[test]
fn units_cut_at_summary_samples() {
    use sstkit_format::engine::Table;
    let tmp = crate::util::scratch_dir("threads", "samples");
    let data = many_and_large(tmp.path());
    let sst = sstkit_format::Sstable::open_path(&data).unwrap();
    let b = sstkit_format::engine::bind(&sst).unwrap();
    let t = Table::new(&b.header, b.partitioner.clone(), 0);
    let mut starts = Vec::new();
    {
        let index = sstkit_format::read::BigIndex::open(
            &sst,
            b.partitioner.clone(),
            &b.header.clustering_fixed_lens(),
        )
        .unwrap();
        assert!(index.sample_offsets().len() > 10, "samples");
        let mut scan = index.scan();
        while let Some(h) = scan.next_handle().unwrap() {
            starts.push(h.position.0);
        }
    }
    assert_eq!(starts.len(), 3000);
    for target in [2_000u64, 20_000] {
        let units = sstkit_format::engine::units(&sst, &t, target)
            .unwrap()
            .expect("cut");
        assert_eq!(units[0].start.0, 0);
        for w in units.windows(2) {
            assert_eq!(w[0].end, w[1].start);
        }
        for u in &units {
            assert!(starts.binary_search(&u.start.0).is_ok(), "{u:?}");
        }
        // Each large partition (400 rows; 4 units or more at the smaller
        // size) is a unit of its own, from its start to the next one's.
        for k in [350usize, 1050, 1750, 2450] {
            let (s, e) = (starts[k], starts[k + 1]);
            if target == 2_000 {
                assert!(e - s >= 4 * target, "partition {k}: {}", e - s);
            } else if e - s < 4 * target {
                continue;
            }
            assert!(
                units
                    .iter()
                    .any(|u| u.large && u.start.0 == s && u.end.0 == e),
                "target {target}: partition {k} at {s}..{e}: {units:?}"
            );
        }
        // Fewer units than partitions: the cuts fall on samples.
        assert!(units.len() < 3000 / 16, "target {target}: {}", units.len());
        for f in ["ndjson", "sstabledump", "json"] {
            let one = dump(&["-o", f], &data, 1, target);
            let two = dump(&["-o", f], &data, 2, target);
            assert_eq!(one.2, 0, "{}", one.1);
            assert!(one == two, "{f} at units of {target}: -j2 differs");
        }
    }
}
