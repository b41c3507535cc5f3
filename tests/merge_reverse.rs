//! `--merge --reverse` in windows: the slice is merged forward in windows
//! cut at row-index blocks, from the last to the first, and the output is
//! the one of the slice held whole (`SSTKIT_MERGE_REVERSE_WINDOW=0`, the
//! behaviour before windows), byte for byte in every output form, Data.db
//! positions included.
//!
//! * Three sstables written with 1 KiB blocks (BIG `oa` and BTI `da`): one
//!   with every row, one with range tombstones that change every few rows
//!   (bounds, boundaries at the clustering of rows the other sstables have
//!   and between them), one with newer rows and an older range tombstone.
//!   Windows of one block up to many blocks put bounds at window edges.
//! * Slices, `--limit`, `--columns`, `dump-data --merge --reverse` (a
//!   partition larger than a window is read again by key).
//! * Merging one sstable reversed equals `read --reverse` of it.

use std::process::Command;

use crate::util::{fixtures, Run};

/// `sstkit args` with `SSTKIT_MERGE_REVERSE_WINDOW=window`.
fn sstkit_window(window: u64, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_sstkit"))
        .args(args)
        .current_dir(crate::util::repo())
        .env("COLUMNS", "80")
        .env("SSTKIT_MERGE_REVERSE_WINDOW", window.to_string())
        .output()
        .expect("run sstkit");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `got` equals `want`; else the first line that differs, with `what`.
fn same(got: &str, want: &str, what: &str) {
    if got == want {
        return;
    }
    let (g, w): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
    let i = g.iter().zip(&w).take_while(|(a, b)| a == b).count();
    panic!(
        "{what}: line {} of {} differs (held: {} lines)\n got: {}\nwant: {}",
        i + 1,
        g.len(),
        w.len(),
        g.get(i).unwrap_or(&"<end>"),
        w.get(i).unwrap_or(&"<end>")
    );
}

/// The three sstables of the test table in `version`, in `out`.
fn write_table(out: &std::path::Path, version: &str) -> Vec<String> {
    let schema = crate::util::schema_file(
        out,
        "t",
        "CREATE TABLE ks.t (pk int, ck int, v text, PRIMARY KEY (pk, ck));",
    );
    let ck = |c: i32| format!("0004{:08x}", c as u32);
    let row = |c: i32, ts: i64| {
        format!(
            r#"{{"type":"clustering-row","key":{{"raw":"{}"}},"marker":{{"timestamp":{ts}}},"columns":{{"v":{{"is_live":true,"type":"regular","timestamp":{ts},"value":"{}"}}}}}}"#,
            ck(c),
            format!("{c:03}-{ts}-").repeat(30)
        )
    };
    let tomb = |ts: i64| format!(r#"{{"timestamp":{ts},"deletion_time":"2026-11-26 03:55:00z"}}"#);
    // weight -1: the bound sorts before the rows of `c` (an inclusive start
    // or exclusive end), 1: after them.
    let change = |c: i32, weight: i32, tombstone: &str| {
        format!(
            r#"{{"type":"range-tombstone-change","key":{{"raw":"{}"}},"weight":{weight},"tombstone":{tombstone}}}"#,
            ck(c)
        )
    };
    // "all": every row at ts 10.
    let all: Vec<String> = (0..600).map(|c| row(c, 10)).collect();
    // "rt": range tombstones only, changing every 3 to 9 rows: opened,
    // replaced by a newer or older one (boundaries), closed; before and
    // after the rows of a clustering. Times 5 (older than every row) to 40.
    let mut rt = Vec::new();
    let times = [20, 35, 5, 0, 25, 40, 0, 15, 30, 0];
    let mut c = 3;
    let mut k = 0;
    let mut open = 0;
    while c < 590 {
        let t = times[k % times.len()];
        let weight = if k % 3 == 1 { 1 } else { -1 };
        if t != open {
            rt.push(change(
                c,
                weight,
                &if t == 0 { "{}".to_string() } else { tomb(t) },
            ));
            open = t;
        }
        c += 3 + (k as i32 * 5) % 7;
        k += 1;
    }
    if open != 0 {
        rt.push(change(595, 1, "{}"));
    }
    // "new": every 4th row at ts 30, and [200, 260] at ts 12.
    let mut new = Vec::new();
    for c in (0..600).step_by(4) {
        if c == 200 {
            new.push(change(200, -1, &tomb(12)));
        }
        if c == 264 {
            new.push(change(260, 1, "{}"));
        }
        new.push(row(c, 30));
    }
    let part = |elems: &[String]| {
        format!(
            r#"{{"key":{{"raw":"00000001"}},"clustering_elements":[{}]}}"#,
            elems.join(",")
        )
    };
    let mut dirs = Vec::new();
    for (name, elems) in [("all", &all), ("rt", &rt), ("new", &new)] {
        let input = out.join(format!("{version}-{name}.ndjson"));
        std::fs::write(&input, part(elems)).unwrap();
        let dir = out.join(format!("{version}-{name}"));
        let r = crate::util::write_from(
            &input,
            &schema,
            &dir,
            version,
            &["--column-index-size", "1KiB"],
        );
        assert_eq!(r.code, 0, "{version} {name}: {}{}", r.stdout, r.stderr);
        dirs.push(dir.display().to_string());
    }
    dirs
}

/// How many windows the reversed read reported (`--io-stats=json`).
fn windows_of(stderr: &str) -> usize {
    stderr
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["sstable"] == "total")
        .filter_map(|v| {
            let r = v["result"].as_str()?.to_string();
            r.split("reversed in ")
                .nth(1)?
                .split(' ')
                .next()?
                .parse::<usize>()
                .ok()
        })
        .sum()
}

#[test]
fn merge_reverse_in_windows_equals_the_held_slice() {
    let out = crate::util::scratch_dir("merge-reverse", "windows");
    let slices: &[&[&str]] = &[
        &[],
        &["--from", "100", "--to", "400"],
        &["--after", "3", "--before", "595"],
        &["--from", "205", "--to", "205"],
        &["--to", "250"],
        &["--from", "333"],
        &["--limit", "7"],
        &["--from", "150", "--to", "450", "--limit", "60"],
        &["--limit", "0"],
        &["--columns", "v", "--after", "17", "--before", "480"],
    ];
    for version in ["oa", "da"] {
        let dirs = write_table(&out, version);
        for slice in slices {
            for output in ["text", "ndjson", "sstabledump", "cql"] {
                if output == "cql" && slice.contains(&"--columns") {
                    continue;
                }
                let read = |window: u64| {
                    let mut args = vec![
                        "read",
                        "--clustering-order",
                        "--merge",
                        "--reverse",
                        "--io-stats=json",
                        "-o",
                        output,
                        "-k",
                        "1",
                    ];
                    args.extend(slice.iter());
                    args.extend(dirs.iter().map(String::as_str));
                    let r = sstkit_window(window, &args);
                    assert_eq!(r.code, 0, "{version} {slice:?} {window}: {}", r.stderr);
                    r
                };
                let held = read(0);
                assert_eq!(windows_of(&held.stderr), 0, "{}", held.stderr);
                let nothing = output == "cql" || *slice == ["--limit", "0"];
                assert!(
                    !held.stdout.is_empty() || nothing,
                    "{version} {output} {slice:?}"
                );
                for window in [1, 2500, 9000, 1 << 20] {
                    let got = read(window);
                    let what = format!("{version} {output} {slice:?}: windows of {window} bytes");
                    same(&got.stdout, &held.stdout, &what);
                    let n = windows_of(&got.stderr);
                    // One block a window: many windows for the whole
                    // partition, and only the last few for its last rows.
                    if window == 1 && slice.is_empty() {
                        assert!(n > 50, "{version}: {n} windows");
                    }
                    if window == 1 && *slice == ["--limit", "7"] {
                        assert!((1..=5).contains(&n), "{version} {slice:?}: {n} windows");
                    }
                    // One window holds the whole slice; none is read for no row.
                    if window == 1 << 20 {
                        let want = usize::from(*slice != ["--limit", "0"]);
                        assert_eq!(n, want, "{version} {slice:?}");
                    }
                }
            }
        }
        // A partition larger than a window in a merged reversed dump is read
        // again by key, in windows; a key looked up is read in windows.
        for (output, key) in [("text", None), ("sstabledump", None), ("text", Some("1"))] {
            let dump = |window: u64| {
                let mut args = vec!["dump-data", "--merge", "--reverse", "-o", output];
                if let Some(k) = key {
                    args.extend(["-k", k]);
                }
                args.extend(dirs.iter().map(String::as_str));
                let r = sstkit_window(window, &args);
                assert_eq!(r.code, 0, "{version} dump {window}: {}", r.stderr);
                r.stdout
            };
            let held = dump(0);
            for window in [1, 9000] {
                same(
                    &dump(window),
                    &held,
                    &format!("{version} dump {output} {window}"),
                );
            }
        }
    }
}

/// Merging one sstable reversed, in windows, equals reading it reversed,
/// for the wide fixtures' 21,000-row partition (row indexes written by
/// Cassandra, ASC and DESC clustering).
#[test]
fn merge_reverse_of_one_sstable_equals_read_reverse() {
    let slices: &[&[&str]] = &[
        &[],
        &["--from", "500", "--to", "4000"],
        &["--after", "2000:m", "--before", "9000"],
        &["--limit", "300"],
    ];
    let mut compared = 0;
    for run in ["nb", "oa", "da"] {
        for table in ["wide", "wide_desc"] {
            let case = fixtures().join(format!("{run}_{table}"));
            if !case.is_dir() {
                continue;
            }
            let case = case.display().to_string();
            for slice in slices {
                let run_read = |merge: bool| {
                    let mut args = vec![
                        "read",
                        "--clustering-order",
                        "--reverse",
                        "-o",
                        "text",
                        "-k",
                        "0",
                    ];
                    if merge {
                        args.extend(["--merge", "--io-stats=json"]);
                    }
                    args.extend(slice.iter());
                    args.push(&case);
                    let r = sstkit_window(8192, &args);
                    assert_eq!(r.code, 0, "{case} {slice:?}: {}", r.stderr);
                    r
                };
                let merged = run_read(true);
                if slice.is_empty() {
                    assert!(windows_of(&merged.stderr) > 1, "{case}");
                }
                same(
                    &merged.stdout,
                    &run_read(false).stdout,
                    &format!("{case} {slice:?}"),
                );
                compared += 1;
            }
        }
    }
    assert!(compared > 0 || !fixtures().join("nb_wide").is_dir());
}

/// Every merge fixture table (sstables a Cassandra 5.0 node wrote, with
/// overwrites, partition, range, row and collection deletions, static
/// rows), dumped merged and reversed: a partition read again by key, in
/// windows, prints what the held partition prints; and each key read merged
/// and reversed in windows prints what the held read prints, from the same
/// sstables (filter, clustering range and partition deletion skips). (The
/// rows against what the node returned, reversed:
/// `merge::dump_data_merge_equals_select` and `merge::read_merge_equals_select`.)
#[test]
fn merge_fixtures_reversed_in_windows_equal_the_held_partitions() {
    let mut compared = 0;
    for run in ["nb", "oa", "da"] {
        for (table, n) in [
            ("merge_overwrite", 3),
            ("merge_partition_delete", 3),
            ("merge_range", 3),
            ("merge_collections", 3),
            ("deletes_merge", 2),
        ] {
            let Some(dirs) = crate::merge::cases(run, table, n) else {
                continue;
            };
            for output in ["text", "sstabledump", "cql"] {
                let dump = |window: u64| {
                    let mut args = vec!["dump-data", "--merge", "--reverse", "-o", output];
                    args.extend(dirs.iter().map(String::as_str));
                    let r = sstkit_window(window, &args);
                    assert_eq!(r.code, 0, "{run}_{table} {window}: {}", r.stderr);
                    r.stdout
                };
                let held = dump(0);
                assert!(!held.is_empty(), "{run}_{table} {output}");
                same(&dump(1), &held, &format!("{run}_{table} {output}"));
                compared += 1;
            }
            // Each key read merged and reversed: the same output, and the
            // same sstables read, given only their header or skipped.
            let mut args = vec!["dump-data", "--merge", "--keys-only", "-o", "text"];
            args.extend(dirs.iter().map(String::as_str));
            let keys = crate::util::sstkit(&args).stdout;
            for key in keys.lines() {
                let read = |window: u64| {
                    let mut args = vec![
                        "read",
                        "--clustering-order",
                        "--merge",
                        "--reverse",
                        "--io-stats=json",
                    ];
                    args.extend(["-o", "text", "-k", key]);
                    args.extend(dirs.iter().map(String::as_str));
                    let r = sstkit_window(window, &args);
                    assert_eq!(r.code, 0, "{run}_{table} {key} {window}: {}", r.stderr);
                    let visits: Vec<String> = r
                        .stderr
                        .lines()
                        .filter(|l| l.starts_with('{'))
                        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                        .filter(|v| v["sstable"] != "total")
                        .map(|v| v["result"].to_string())
                        .collect();
                    (r.stdout, visits)
                };
                let (held, held_visits) = read(0);
                let (got, visits) = read(1);
                same(&got, &held, &format!("{run}_{table} -k {key}"));
                assert_eq!(visits, held_visits, "{run}_{table} -k {key}");
                assert_eq!(visits.len(), dirs.len());
            }
        }
    }
    assert!(compared > 0 || !fixtures().join("nb_merge_range_1").is_dir());
}

/// A pre-3.0 sstable (ka, read with `--schema`, its index naming cells) in a
/// reversed merge with mc and me sstables of the same 13,520-row partition
/// (Scylla's `large_partition`): the mc and me row indexes cut the windows,
/// the ka partition is read whole in each, and the output is the held one.
#[test]
fn merge_reverse_with_a_legacy_sstable_equals_the_held_slice() {
    let Some(c) = crate::util::corpus() else {
        return;
    };
    let dir = c.join("scylladb/large_partition");
    if !dir.is_dir() {
        eprintln!("skipping: scylladb/large_partition is absent");
        return;
    }
    let scratch = crate::util::scratch_dir("merge-reverse", "legacy");
    let cql = crate::util::schema_file(
        &scratch,
        "wide",
        "CREATE TABLE try1.data (t1 text, t2 text, t3 text, PRIMARY KEY (t1, t2));",
    );
    let files: Vec<String> = [
        "try1-data-ka-3-Data.db",
        "mc-3-big-Data.db",
        "me-3-big-Data.db",
    ]
    .iter()
    .map(|f| dir.join(f).display().to_string())
    .collect();
    for slice in [&[][..], &["--from", "13aB", "--to", "15aA"][..]] {
        let read = |window: u64| {
            let mut args = vec![
                "read",
                "--clustering-order",
                "--merge",
                "--reverse",
                "--io-stats=json",
                "-o",
                "text",
                "-k",
                "v1",
                "--schema",
                cql.to_str().unwrap(),
            ];
            args.extend(slice);
            args.extend(files.iter().map(String::as_str));
            let r = sstkit_window(window, &args);
            assert_eq!(r.code, 0, "{slice:?} {window}: {}", r.stderr);
            r
        };
        let held = read(0);
        let got = read(4096);
        if slice.is_empty() {
            assert!(windows_of(&got.stderr) > 1, "{}", got.stderr);
        }
        same(&got.stdout, &held.stdout, &format!("{slice:?}"));
    }
}

/// Row indexes written by Cassandra 3.0 (`ma`, `mc`), 4.0 (`na`, `nb`) and
/// 5.0 (`oa`, and the BTI `da`) in one reversed merge (the `legacy_*_clust`
/// tables: 5 partitions of 50 rows with 1.2 KB clusterings, 13 blocks
/// each): the BIG and BTI row indexes cut the windows together, and every
/// key, whole and sliced, reads as the held slice.
#[test]
fn merge_reverse_across_big_and_bti_row_indexes_equals_the_held_slice() {
    let Some(c) = crate::util::corpus() else {
        return;
    };
    let dirs: Vec<String> = ["ma", "mc", "na", "nb", "oa", "da"]
        .iter()
        .map(|v| c.join(format!("cassandra/legacy_{v}_clust")))
        .filter(|d| d.is_dir())
        .map(|d| d.display().to_string())
        .collect();
    if dirs.len() < 2 {
        eprintln!("skipping: fewer than two cassandra/legacy_*_clust tables");
        return;
    }
    let slices: &[&[&str]] = &[&[], &["--from", "17", "--to", "33"], &["--limit", "9"]];
    for key in ["0", "1", "2", "3", "4"] {
        for slice in slices {
            let read = |window: u64| {
                let mut args = vec![
                    "read",
                    "--clustering-order",
                    "--merge",
                    "--reverse",
                    "--io-stats=json",
                ];
                args.extend(["-o", "text", "-k", key]);
                args.extend(slice.iter());
                args.extend(dirs.iter().map(String::as_str));
                let r = sstkit_window(window, &args);
                assert_eq!(r.code, 0, "-k {key} {slice:?} {window}: {}", r.stderr);
                r
            };
            let held = read(0);
            assert!(!held.stdout.is_empty(), "-k {key} {slice:?}");
            for window in [1, 6000, 30000] {
                let got = read(window);
                let what = format!("-k {key} {slice:?}: windows of {window} bytes");
                same(&got.stdout, &held.stdout, &what);
                // One block a window: at least one window per block of
                // the whole partition (13 in each sstable).
                if window == 1 && slice.is_empty() {
                    let n = windows_of(&got.stderr);
                    assert!(n >= 13, "{what}: {n} windows");
                }
            }
        }
    }
}

/// A corrupt offsets array in one sstable of a reversed merge in windows
/// (Cassandra's `legacy_nb_clust`, partition `0`, 13 blocks): an entry past
/// the blocks, and one that names an earlier block (so block names go out
/// of clustering order and a window could not move down), each exit 3
/// with an error naming Index.db, its offset and the key, instead of a
/// wrong answer or a read that never ends.
#[test]
fn merge_reverse_with_a_corrupt_offsets_array_is_an_error() {
    let Some(c) = crate::util::corpus() else {
        return;
    };
    let (src, other) = (
        c.join("cassandra/legacy_nb_clust"),
        c.join("cassandra/legacy_oa_clust"),
    );
    if !src.is_dir() || !other.is_dir() {
        eprintln!("skipping: cassandra/legacy_{{nb,oa}}_clust are absent");
        return;
    }
    let out = crate::util::scratch_dir("merge-reverse", "offsets");
    // Partition 0's entry ends where partition 1's starts: its last 13 × 4
    // bytes are the offsets array.
    let index = crate::util::sstkit(["dump-index", "-o", "ndjson", src.to_str().unwrap()]);
    assert_eq!(index.code, 0, "{}", index.stderr);
    let entries: Vec<serde_json::Value> = index
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(entries[0]["key"]["value"], "0");
    assert_eq!(entries[0]["promoted_index"]["blocks"], 13);
    let array = entries[1]["index_offset"].as_u64().unwrap() as usize - 13 * 4;
    for name in ["past", "earlier"] {
        let dir = out.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for f in std::fs::read_dir(&src).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, dir.join(f.file_name().unwrap())).unwrap();
        }
        let p = dir.join("nb-1-big-Index.db");
        let mut bytes = std::fs::read(&p).unwrap();
        // offsets[7]: past the blocks, or offsets[3] again.
        match name {
            "past" => bytes[array + 28..array + 32].copy_from_slice(&[0xff; 4]),
            _ => bytes.copy_within(array + 12..array + 16, array + 28),
        }
        std::fs::write(&p, bytes).unwrap();
        let args = [
            "read",
            "--clustering-order",
            "--merge",
            "--reverse",
            "-k",
            "0",
            dir.to_str().unwrap(),
            other.to_str().unwrap(),
        ];
        let r = sstkit_window(1, &args);
        assert_eq!(r.code, 3, "{name}: {}", r.stderr);
        assert!(
            r.stderr.contains("nb-1-big-Index.db+0x"),
            "{name}: {}",
            r.stderr
        );
        assert!(r.stderr.contains("partition key 0"), "{name}: {}", r.stderr);
    }
    let _ = std::fs::remove_dir_all(&out);
}
