//! `read --threads`: the lookups of many keys on several threads write the
//! bytes one thread writes (stdout), with the same notes on absent keys and
//! the same first error (stderr) and exit code, in every output format,
//! with bounds, `--limit`, `--columns`, `--reverse` and `--merge`, on the
//! fixtures and on the corpus.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::merge_sets;
use crate::util::{corpus, fixture_cases, repo, scratch_dir};

/// stdout, stderr and exit code of `read` with `args` over `paths` on
/// `threads` threads.
fn read(args: &[&str], paths: &[&Path], threads: usize) -> (Vec<u8>, String, i32) {
    read_in_pieces(args, paths, threads, None)
}

/// [`read`] with pieces of at most `rows` rows (a task that reaches it is
/// read again on the calling thread).
fn read_in_pieces(
    args: &[&str],
    paths: &[&Path],
    threads: usize,
    rows: Option<u64>,
) -> (Vec<u8>, String, i32) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sstkit"));
    if let Some(r) = rows {
        cmd.env("SSTKIT_PIECE_ROWS", r.to_string());
    }
    let out = cmd
        .arg("read")
        .arg(format!("-j{threads}"))
        .args(args)
        .args(paths)
        .current_dir(repo())
        .env("COLUMNS", "80")
        .output()
        .expect("run sstkit");
    (
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// `read` with `args` over `paths` is the same on 1 thread and on each of
/// `threads`; returns the one-thread run.
fn same_on_threads(args: &[&str], paths: &[&Path], threads: &[usize]) -> (Vec<u8>, String, i32) {
    let one = read(args, paths, 1);
    // A usage error on every thread count would compare equal and prove nothing.
    assert_ne!(one.2, 2, "read {args:?} {paths:?}: {}", one.1);
    for &n in threads {
        let many = read(args, paths, n);
        assert!(
            one == many,
            "read {args:?} {paths:?}: {n} threads differ from 1\n\
             1 thread: exit {}, stderr {}\n{n} threads: exit {}, stderr {}",
            one.2,
            one.1,
            many.2,
            many.1
        );
    }
    one
}

/// The partition keys of `paths` (serialized, as hex), each once, in the
/// order a one-thread `dump-data --keys-only` lists them; a damaged sstable
/// gives the keys before its damage.
fn keys_of(paths: &[&Path]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for p in paths {
        let out = Command::new(env!("CARGO_BIN_EXE_sstkit"))
            .args(["dump-data", "-j1", "--keys-only", "-o", "ndjson"])
            .arg(p)
            .current_dir(repo())
            .output()
            .expect("run sstkit");
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if let Some(raw) = v["raw"].as_str() {
                if !keys.iter().any(|k| k == raw) {
                    keys.push(raw.to_string());
                }
            }
        }
    }
    keys
}

/// A key of the type of `keys` that `paths` do not hold: one of them with
/// a byte changed, the first such that a read finds nothing and accepts.
fn absent_key(keys: &[String], paths: &[&Path]) -> Option<String> {
    let key = keys.first()?;
    let bytes: Vec<u8> = (0..key.len() / 2)
        .map(|i| u8::from_str_radix(&key[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let mut merged = vec!["--merge"];
    if paths.len() == 1 {
        merged.clear();
    }
    for at in (0..bytes.len()).rev().take(6) {
        let mut b = bytes.clone();
        b[at] ^= 0x01;
        let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
        if keys.contains(&hex) {
            continue;
        }
        let k = format!("0x{hex}");
        let mut args = merged.clone();
        args.extend(["-o", "text", "--key-hex", &hex]);
        let r = read(&args, paths, 1);
        if r.2 == 0 && r.0.is_empty() && r.1.contains("not found") {
            return Some(k);
        }
    }
    None
}

/// A keys file in `dir`: an absent key first (nothing precedes the first
/// piece that writes), then the keys with absent ones among them, and
/// the first key again at the end.
fn keys_file(dir: &Path, name: &str, keys: &[String], absent: Option<&str>) -> PathBuf {
    let mut lines = Vec::new();
    if let Some(a) = absent {
        lines.push(a.to_string());
    }
    for (i, k) in keys.iter().enumerate() {
        lines.push(format!("0x{k}"));
        if let Some(a) = absent.filter(|_| i % 7 == 3) {
            lines.push(a.to_string());
        }
    }
    if let Some(k) = keys.first() {
        lines.push(format!("0x{k}"));
    }
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

const FORMATS: [&str; 6] = [
    "json",
    "ndjson",
    "sstabledump",
    "sstabledump-lines",
    "text",
    "cql",
];

#[test]
fn many_keys_read_the_same_on_several_threads() {
    let tmp = scratch_dir("threads", "read-keys");
    let cases = fixture_cases();
    assert!(cases.len() > 40, "fixtures missing: {}", cases.len());
    let (mut tried, mut absent_first) = (0, 0);
    for (n, case) in cases.iter().enumerate() {
        let paths = [case.as_path()];
        let keys = keys_of(&paths);
        if keys.len() < 2 {
            continue;
        }
        tried += 1;
        let absent = absent_key(&keys, &paths);
        absent_first += usize::from(absent.is_some());
        let file = keys_file(tmp.path(), &format!("keys-{n}"), &keys, absent.as_deref());
        let file = file.to_str().unwrap();
        for (f, format) in FORMATS.iter().enumerate() {
            let threads = [[2, 4][(n + f) % 2]];
            same_on_threads(&["-o", format, "--keys-file", file], &paths, &threads);
        }
        // Limits, reversed reads and column choices, on some formats.
        for (i, extra) in [
            &["--limit", "1"][..],
            &["--reverse"],
            &["--reverse", "--limit", "2"],
        ]
        .iter()
        .enumerate()
        {
            let format = FORMATS[(n + i) % FORMATS.len()];
            let mut args = vec!["-o", format, "--keys-file", file];
            args.extend_from_slice(extra);
            same_on_threads(&args, &paths, &[3]);
        }
    }
    assert!(tried > 30, "fixtures with keys: {tried}");
    // Most begin with an absent key: the first piece that writes is not the first.
    assert!(
        absent_first * 2 > tried,
        "absent keys: {absent_first} of {tried}"
    );
}

/// Clustering bounds and `--columns` on the tables with clustering columns.
#[test]
fn bounds_and_columns_read_the_same_on_several_threads() {
    let tmp = scratch_dir("threads", "read-bounds");
    let mut tried = 0;
    for case in fixture_cases() {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with("_clustering") {
            continue;
        }
        let paths = [case.as_path()];
        let keys = keys_of(&paths);
        let file = keys_file(tmp.path(), &name, &keys, None);
        let file = file.to_str().unwrap();
        for (i, extra) in [
            &["--from", "-500", "--to", "500"][..],
            &["--after", "0", "--limit", "3"],
            &["--before", "100", "--reverse"],
            &["--columns", "v1"],
            &["--columns", "s", "--from", "0"],
        ]
        .iter()
        .enumerate()
        {
            for format in ["ndjson", "sstabledump", "text"] {
                let mut args = vec!["-o", format, "--keys-file", file];
                args.extend_from_slice(extra);
                let one = same_on_threads(&args, &paths, &[2 + i % 2]);
                assert_eq!(one.2, 0, "{name} {args:?}: {}", one.1);
            }
            tried += 1;
        }
    }
    assert!(tried >= 5, "clustering fixtures: {tried}");
}

/// Tasks whose pieces would pass the row bound (a large partition) are
/// read on the calling thread, streaming: the same output.
#[test]
fn large_pieces_are_read_on_the_calling_thread() {
    let tmp = scratch_dir("threads", "read-pieces");
    for name in ["nb_clustering", "da_wide", "nb_range_tombstones"] {
        let case = crate::util::fixtures().join(name);
        let paths = [case.as_path()];
        let keys = keys_of(&paths);
        assert!(keys.len() > 1, "{name}: keys");
        let file = keys_file(tmp.path(), name, &keys, None);
        let file = file.to_str().unwrap();
        for format in ["json", "sstabledump", "text", "cql"] {
            let args = ["-o", format, "--keys-file", file];
            let one = read(&args, &paths, 1);
            assert_eq!(one.2, 0, "{name} {format}: {}", one.1);
            for (threads, rows) in [(2, 3), (3, 40)] {
                let many = read_in_pieces(&args, &paths, threads, Some(rows));
                assert!(
                    one == many,
                    "{name} {format}: {threads} threads, pieces of {rows} rows differ"
                );
            }
        }
    }
}

#[test]
fn merged_keys_read_the_same_on_several_threads() {
    let tmp = scratch_dir("threads", "read-merge");
    let sets = merge_sets();
    assert!(sets.len() > 5, "merge sets: {}", sets.len());
    for (n, set) in sets.iter().enumerate() {
        let paths: Vec<&Path> = set.iter().map(|p| p.as_path()).collect();
        let keys = keys_of(&paths);
        let absent = absent_key(&keys, &paths);
        assert!(absent.is_some(), "{paths:?}: no absent key");
        let file = keys_file(tmp.path(), &format!("merge-{n}"), &keys, absent.as_deref());
        let file = file.to_str().unwrap();
        for (f, format) in FORMATS.iter().enumerate() {
            let extra: &[&str] = match (n + f) % 3 {
                0 => &[],
                1 => &["--reverse"],
                _ => &["--limit", "2"],
            };
            let mut args = vec!["--merge", "-o", format, "--keys-file", file];
            args.extend_from_slice(extra);
            same_on_threads(&args, &paths, &[2, 4]);
        }
    }
}

/// The pieces are written in key order: a shuffled list of keys, each
/// asked several times, comes back in that order (every key a task of
/// its own at most a few keys long, on four threads).
#[test]
fn partitions_come_in_the_order_of_the_keys() {
    let tmp = scratch_dir("threads", "read-order");
    let case = crate::util::fixtures().join("nb_clustering");
    let paths = [case.as_path()];
    let keys = keys_of(&paths);
    assert!(keys.len() > 50, "keys: {}", keys.len());
    // A fixed shuffle: each key three times, far apart.
    let mut asked = Vec::new();
    for round in 0..3 {
        for i in 0..keys.len() {
            asked.push(keys[(i * 37 + round * 11) % keys.len()].clone());
        }
    }
    let file = keys_file(tmp.path(), "order", &asked, None);
    let (out, err, code) = read(
        &["-o", "ndjson", "--keys-file", file.to_str().unwrap()],
        &paths,
        4,
    );
    assert_eq!(code, 0, "{err}");
    let got: Vec<String> = String::from_utf8_lossy(&out)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["key"]["raw"].as_str().unwrap().to_string()
        })
        .collect();
    let mut want = asked.clone();
    want.push(asked[0].clone());
    assert_eq!(got, want);
}

/// Data.db damaged in its middle: the keys before the damage are written,
/// the read stops at the first key whose partition is damaged with the
/// error one thread gives, and no later key is written.
#[test]
fn a_damaged_partition_gives_the_first_error_on_several_threads() {
    let tmp = scratch_dir("threads", "read-damaged");
    let case = crate::util::fixtures().join("nb_clustering_nocompress");
    for e in std::fs::read_dir(&case).unwrap().flatten() {
        std::fs::copy(e.path(), tmp.path().join(e.file_name())).unwrap();
    }
    let data = crate::util::data_files(tmp.path()).remove(0);
    let keys = keys_of(&[tmp.path()]);
    let mut bytes = std::fs::read(&data).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid..mid + 200].fill(0xee);
    std::fs::write(&data, bytes).unwrap();
    let file = keys_file(tmp.path(), "keys", &keys, None);
    let file = file.to_str().unwrap();
    for format in FORMATS {
        let one = same_on_threads(&["-o", format, "--keys-file", file], &[tmp.path()], &[2, 4]);
        assert_eq!(one.2, 3, "{format}: {}", one.1);
        assert!(one.1.contains("partition key"), "{format}: {}", one.1);
        assert!(!one.0.is_empty(), "{format}: the keys before the damage");
    }
}

#[test]
fn corpus_reads_are_the_same_on_several_threads() {
    let Some(root) = corpus() else { return };
    let data = super::corpus_data_files(root);
    let tmp = scratch_dir("threads", "read-corpus");
    for (n, d) in data.iter().enumerate() {
        let paths = [d.as_path()];
        let mut keys = keys_of(&paths);
        keys.truncate(300);
        let file = keys_file(tmp.path(), &format!("corpus-{n}"), &keys, None);
        let args = [
            "-o",
            ["ndjson", "sstabledump", "text"][n % 3],
            "--keys-file",
            file.to_str().unwrap(),
        ];
        // Damaged sets included: the same first error and exit code.
        let one = read(&args, &paths, 1);
        let many = read(&args, &paths, 3);
        assert!(
            one == many,
            "read {args:?} {}: 3 threads differ from 1\n1: exit {} {}\n3: exit {} {}",
            d.display(),
            one.2,
            one.1,
            many.2,
            many.1
        );
    }
}
