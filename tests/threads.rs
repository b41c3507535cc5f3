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

// `export --threads`.
mod export;

// `--io-stats` counts the threads' reads.
mod io_stats;

// `read --threads`: many keys.
mod read;

// `scrub --mode validate --threads`.
mod scrub;

// `validate --threads`: large partitions in parts, damaged.
mod validate_wide;

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
    run_paths(command, args, &[path], threads, unit)
}

/// [`run`] over several paths.
fn run_paths(
    command: &str,
    args: &[&str],
    paths: &[&Path],
    threads: usize,
    unit: u64,
) -> (Vec<u8>, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_sstkit"))
        .arg(command)
        .arg(format!("--threads={threads}"))
        .args(args)
        .args(paths)
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

/// Every Data.db under the corpus `root`, sorted (more than 100 of them).
fn corpus_data_files(root: std::path::PathBuf) -> Vec<std::path::PathBuf> {
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
    data
}

#[test]
fn corpus_dumps_are_the_same_on_several_threads() {
    let Some(root) = corpus() else { return };
    let data = corpus_data_files(root);
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
        // Every other set with a threshold: the threads render only the partitions listed.
        let min_rows = ["--min-rows", "--min-size"][n / 3 % 2];
        let threshold = ["3", "200"][n / 3 % 2];
        // The text view and `--top` keep records on this thread and the
        // threads count the summaries: every other text view with a threshold.
        let mut text = vec!["-o", "text", "-r"];
        if n % 2 == 1 {
            text.extend([min_rows, threshold]);
        }
        let top_format = ["ndjson", "json", "csv"][n % 3];
        let by = ["size", "rows", "tombstones", "cells"][n % 4];
        for (command, args) in [
            ("partitions", vec!["-o", format, "-r"]),
            ("partitions", vec!["-o", format, "-r", min_rows, threshold]),
            ("partitions", text),
            (
                "partitions",
                vec!["-o", top_format, "-r", "--top", "5", "--by", by],
            ),
            ("timestamps", vec!["--bucket", bucket, "-r"]),
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

/// nb_clustering's sstable with nb_collections' Index.db and Summary.db,
/// in a scratch directory named for `what`.
pub(crate) fn wrong_index(what: &str) -> crate::util::Scratch {
    let dir = crate::util::scratch_dir("threads", what);
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
    dir
}

/// An index whose positions are not Data.db's partition starts (another
/// sstable's Index.db and Summary.db beside nb_clustering's Data.db): one
/// thread reads Data.db alone, and several threads, which cut Data.db where
/// the index says, notice the cut is wrong and read on as one thread does.
#[test]
fn a_wrong_index_gives_the_one_thread_output() {
    let dir = wrong_index("wrong-index");
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

/// `validate` of `path` with `args` on 1, 2 and 3 threads (units of a few
/// hundred bytes, then of 64: a few partitions each): the same report,
/// findings in the same order, the same exit code. Returns the one-thread
/// run.
fn validate_same_on_threads(args: &[&str], path: &Path) -> (Vec<u8>, String, i32) {
    let one = run("validate", args, path, 1, 1 << 20);
    // A usage error on every thread count would compare equal and prove nothing.
    assert_ne!(one.2, 2, "validate {args:?}: {}", one.1);
    for (threads, unit) in [(2, 200), (3, 64)] {
        let many = run("validate", args, path, threads, unit);
        assert!(
            one == many,
            "validate {args:?} {}: {threads} threads (units of {unit} bytes) differ from 1\n\
             1 thread: exit {}, stderr {}\n{}\n{threads} threads: exit {}, stderr {}\n{}",
            path.display(),
            one.2,
            one.1,
            String::from_utf8_lossy(&one.0),
            many.2,
            many.1,
            String::from_utf8_lossy(&many.0)
        );
    }
    one
}

/// The findings of a `validate -o json` report of one sstable.
fn findings_of(out: &[u8]) -> Vec<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_slice(out).expect("validate json");
    v["sstables"]
        .as_object()
        .into_iter()
        .flat_map(|m| m.values())
        .flat_map(|r| r["findings"].as_array().cloned().unwrap_or_default())
        .collect()
}

#[test]
fn validate_is_the_same_on_several_threads() {
    let mut paths = fixture_cases();
    let mut damaged = 0;
    if let Some(root) = corpus() {
        // Every corpus set, the damaged ones included.
        for origin in std::fs::read_dir(&root).into_iter().flatten().flatten() {
            for e in std::fs::read_dir(origin.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                if e.path().is_dir() {
                    paths.push(e.path());
                }
            }
        }
        assert!(paths.len() > 200, "corpus sets: {}", paths.len());
    }
    for (n, p) in paths.iter().enumerate() {
        let format = ["json", "text", "ndjson"][n % 3];
        let skip: &[&str] = if n % 2 == 0 {
            &[]
        } else {
            &["--skip-checksums"]
        };
        let mut args = vec!["-o", format];
        args.extend_from_slice(skip);
        validate_same_on_threads(&args, p);
        let json = validate_same_on_threads(&["-o", "json"], p);
        if json.2 == 1 {
            damaged += 1;
        }
    }
    if corpus().is_some() {
        // The corrupt sets (and those with a missing component) were among them.
        assert!(damaged > 10, "corpus sets with errors: {damaged}");
    }
}

/// Bytes of Data.db (and of some Index.db entries) changed in copies of
/// fixtures (compressed and not, BIG and BTI): the damage is found, and
/// found alike on 1, 2 and 3 threads.
#[test]
fn damaged_data_validates_the_same_on_several_threads() {
    let mut found = 0;
    let mut runs = 0;
    for case in [
        "nb_clustering",
        "nb_clustering_nocompress",
        "da_clustering",
        "oa_deletes",
        "nb_range_tombstones",
    ] {
        let from = fixtures().join(case);
        let data_name = std::fs::read_dir(&from)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|n| n.ends_with("-Data.db"))
            .unwrap();
        let len = std::fs::metadata(from.join(&data_name)).unwrap().len() as usize;
        for k in 0..8usize {
            let tmp = crate::util::scratch_dir("threads", &format!("damaged-{case}-{k}"));
            for e in std::fs::read_dir(&from).unwrap().flatten() {
                std::fs::copy(e.path(), tmp.path().join(e.file_name())).unwrap();
            }
            let data = tmp.path().join(&data_name);
            let mut bytes = std::fs::read(&data).unwrap();
            // One or two places, spread over the file.
            let at = [len * (2 * k + 1) / 17, len * (k + 9) / 19];
            for &a in &at[..1 + k % 2] {
                bytes[a.min(len - 1)] ^= 0x5a;
            }
            std::fs::write(&data, &bytes).unwrap();
            if k % 4 == 3 {
                // And an Index.db entry: units cut where no partition starts.
                let index = std::fs::read_dir(tmp.path())
                    .unwrap()
                    .flatten()
                    .map(|e| e.path())
                    .find(|p| p.to_string_lossy().ends_with("-Index.db"));
                if let Some(index) = index {
                    let mut ib = std::fs::read(&index).unwrap();
                    let i = ib.len() * (k + 2) / 11;
                    ib[i] ^= 0x21;
                    std::fs::write(&index, &ib).unwrap();
                }
            }
            for args in [&["-o", "json"][..], &["-o", "json", "--skip-checksums"]] {
                let one = validate_same_on_threads(args, tmp.path());
                runs += 1;
                if one.2 == 1 && !findings_of(&one.0).is_empty() {
                    found += 1;
                }
            }
            validate_same_on_threads(&["-o", "text", "--skip-checksums"], tmp.path());
        }
    }
    // Most changed bytes are found (some fall where nothing checks them
    // without the checksums: a value's bytes).
    assert!(found * 2 > runs, "damage found in {found} of {runs} runs");
}

/// Filter.db cut short, emptied or removed in copies of fixtures (BIG and
/// BTI): reported as one thread reports it, before the walk the threads share.
#[test]
fn a_damaged_or_missing_filter_validates_the_same_on_several_threads() {
    for case in ["nb_clustering", "da_clustering"] {
        let from = fixtures().join(case);
        for (k, damage) in ["cut", "empty", "removed"].into_iter().enumerate() {
            let tmp = crate::util::scratch_dir("threads", &format!("filter-{case}-{k}"));
            let mut filter = None;
            for e in std::fs::read_dir(&from).unwrap().flatten() {
                let to = tmp.path().join(e.file_name());
                std::fs::copy(e.path(), &to).unwrap();
                if to.to_string_lossy().ends_with("-Filter.db") {
                    filter = Some(to);
                }
            }
            let filter = filter.expect("Filter.db");
            match damage {
                "cut" => {
                    let b = std::fs::read(&filter).unwrap();
                    std::fs::write(&filter, &b[..b.len() / 2]).unwrap();
                }
                "empty" => std::fs::write(&filter, b"").unwrap(),
                _ => std::fs::remove_file(&filter).unwrap(),
            }
            let one = validate_same_on_threads(&["-o", "json"], tmp.path());
            assert_eq!(one.2, 1, "{case} {damage}: {}", one.1);
            let f = findings_of(&one.0);
            assert!(
                f.iter().any(|f| f["component"] == "Filter.db"),
                "{case} {damage}: {f:?}"
            );
            validate_same_on_threads(&["-o", "text", "--skip-checksums"], tmp.path());
        }
    }
}

/// Another sstable's Index.db and Summary.db beside nb_clustering's
/// Data.db: the units cut at its entries do not start at partitions, and
/// the findings (many index mismatches) are still those of one thread.
#[test]
fn validate_with_a_wrong_index_is_the_same_on_several_threads() {
    let dir = wrong_index("validate-wrong-index");
    let one = validate_same_on_threads(&["-o", "json"], dir.path());
    assert_eq!(one.2, 1, "{}", one.1);
    let f = findings_of(&one.0);
    assert!(
        f.iter().filter(|f| f["class"] == "index_mismatch").count() > 10,
        "{f:?}"
    );
    validate_same_on_threads(&["-o", "ndjson"], dir.path());
}

/// Two partitions of the same length swapped in a copy of an uncompressed
/// Data.db: partitions out of order, each at another's index entry. With
/// units of a partition or so, the order finding of a unit's first
/// partition is placed where one thread finds it.
#[test]
fn validate_orders_findings_at_unit_starts_as_one_thread() {
    let from = fixtures().join("nb_clustering_nocompress");
    let tmp = crate::util::scratch_dir("threads", "validate-swapped");
    for e in std::fs::read_dir(&from).unwrap().flatten() {
        std::fs::copy(e.path(), tmp.path().join(e.file_name())).unwrap();
    }
    swap_two_partitions(&from, &tmp.path().join("nb-1-big-Data.db"));
    for args in [&["-o", "json", "--skip-checksums"][..], &["-o", "json"]] {
        let one = run("validate", args, tmp.path(), 1, 1 << 20);
        assert_eq!(one.2, 1, "{}", one.1);
        let f = findings_of(&one.0);
        assert!(
            f.iter().any(|f| f["class"] == "partition_order"),
            "no partition_order finding: {f:?}"
        );
        for (threads, unit) in [(2, 1), (3, 16), (2, 3000)] {
            let many = run("validate", args, tmp.path(), threads, unit);
            assert!(
                one == many,
                "{threads} threads, units of {unit}: differ\n{}\n{}",
                String::from_utf8_lossy(&one.0),
                String::from_utf8_lossy(&many.0)
            );
        }
    }
}

/// The bundled merge sets (`*_merge_*_N`, `*_deletes_merge_N`): each set's
/// sstable directories, in order.
pub(crate) fn merge_sets() -> Vec<Vec<std::path::PathBuf>> {
    let mut sets: std::collections::BTreeMap<String, Vec<std::path::PathBuf>> = Default::default();
    for case in fixture_cases() {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let Some((set, n)) = name.rsplit_once('_') else {
            continue;
        };
        if set.contains("merge") && n.parse::<u32>().is_ok() {
            sets.entry(set.to_string()).or_default().push(case);
        }
    }
    sets.into_values().collect()
}

/// stdout, stderr and exit code of `dump-data --merge` over `dirs` with
/// `threads` threads and units of `unit` bytes.
fn dump_merged(
    args: &[&str],
    dirs: &[std::path::PathBuf],
    threads: usize,
    unit: u64,
) -> (Vec<u8>, String, i32) {
    let args: Vec<&str> = std::iter::once("--merge")
        .chain(args.iter().copied())
        .collect();
    let paths: Vec<&Path> = dirs.iter().map(|d| d.as_path()).collect();
    run_paths("dump-data", &args, &paths, threads, unit)
}

/// The merged dump of `dirs` with `args` is the same on 1 thread and on 2
/// and 3, cut into token ranges of a few partitions.
fn merged_same_on_threads(args: &[&str], dirs: &[std::path::PathBuf]) {
    let one = dump_merged(args, dirs, 1, 1 << 20);
    for (threads, unit) in [(2, 64), (3, 150)] {
        let many = dump_merged(args, dirs, threads, unit);
        assert!(
            one == many,
            "{dirs:?} {args:?}: {threads} threads (units of {unit} bytes) differ from 1\n\
             1 thread: exit {}, stderr {}\n{threads} threads: exit {}, stderr {}",
            one.2,
            one.1,
            many.2,
            many.1
        );
    }
}

#[test]
fn merged_dumps_are_the_same_on_several_threads() {
    let sets = merge_sets();
    assert!(sets.len() >= 15, "merge sets missing: {}", sets.len());
    for dirs in &sets {
        assert!(dirs.len() > 1, "{dirs:?}");
        for format in [
            "json",
            "ndjson",
            "sstabledump",
            "sstabledump-lines",
            "text",
            "cql",
        ] {
            merged_same_on_threads(&["-o", format], dirs);
        }
    }
}

#[test]
fn merged_limits_and_filters_are_the_same_on_several_threads() {
    // Murmur3 tokens: a range inside the ring and one that wraps around it.
    let inside = "--token-range=-4000000000000000000,3000000000000000000";
    let wraps = "--token-range=3000000000000000000,-4000000000000000000";
    for dirs in merge_sets() {
        for format in ["json", "ndjson", "sstabledump", "text"] {
            for extra in [
                &["--limit", "1"][..],
                &["--limit", "3"],
                &["--keys-only"],
                &["--keys-only", "--limit", "2"],
                &["--tombstones-only"],
                &["--tombstones-only", "--limit", "1"],
                &[inside],
                &[wraps, "--limit", "2"],
            ] {
                let mut args = vec!["-o", format];
                args.extend_from_slice(extra);
                merged_same_on_threads(&args, &dirs);
            }
        }
    }
}

/// A merge set one of whose sstables has another's Index.db and
/// Summary.db: the cut ranges' reads (or the index seeks placing them)
/// find the index wrong, and the dump is the one a single thread writes.
#[test]
fn a_merge_with_a_wrong_index_gives_the_one_thread_output() {
    let root = crate::util::scratch_dir("threads", "merge-wrong-index");
    let set = fixtures();
    let mut dirs = Vec::new();
    for n in 1..=3 {
        let dir = root.path().join(n.to_string());
        std::fs::create_dir_all(&dir).unwrap();
        let own = set.join(format!("nb_merge_range_{n}"));
        // The second sstable's index is the third's.
        let m = if n == 2 { 3 } else { n };
        let other = set.join(format!("nb_merge_range_{m}"));
        for e in std::fs::read_dir(&own).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let from = if name.ends_with("-Index.db") || name.ends_with("-Summary.db") {
                other.join(name.replacen(&format!("nb-{n}-"), &format!("nb-{m}-"), 1))
            } else {
                e.path()
            };
            std::fs::copy(&from, dir.join(&name)).unwrap();
        }
        dirs.push(dir);
    }
    for format in ["ndjson", "sstabledump", "text"] {
        merged_same_on_threads(&["-o", format], &dirs);
        merged_same_on_threads(&["-o", format, "--limit", "2"], &dirs);
    }
}

/// Swap two partitions of the same length (as `partitions` lists those of
/// the sstable at `from`) in the Data.db at `data`: partitions out of
/// order, each at the other's index entry. The two partitions' bytes, the
/// first's then the second's.
pub(crate) fn swap_two_partitions(from: &Path, data: &Path) -> (Vec<u8>, Vec<u8>) {
    let listed = run(
        "partitions",
        &["-o", "csv", "--min-size", "0"],
        from,
        1,
        1 << 20,
    );
    assert_eq!(listed.2, 0, "{}", listed.1);
    // key,keyBinary,live,offset,size,...: the keys here hold no comma.
    let mut by_size: std::collections::BTreeMap<u64, Vec<u64>> = Default::default();
    for line in String::from_utf8_lossy(&listed.0).lines().skip(1) {
        let cols: Vec<&str> = line.split(',').collect();
        let (off, size) = (cols[3].parse().unwrap(), cols[4].parse().unwrap());
        by_size.entry(size).or_default().push(off);
    }
    let (size, offs) = by_size
        .iter()
        .find(|(_, o)| o.len() > 1)
        .expect("two partitions of one length");
    let (a, b, n) = (offs[0] as usize, offs[1] as usize, *size as usize);
    let mut bytes = std::fs::read(data).unwrap();
    let first = bytes[a..a + n].to_vec();
    let second = bytes[b..b + n].to_vec();
    bytes.copy_within(b..b + n, a);
    bytes[b..b + n].copy_from_slice(&first);
    std::fs::write(data, &bytes).unwrap();
    (first, second)
}
