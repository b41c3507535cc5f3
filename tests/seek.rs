//! Seek by token: a `--token-range` dump starts where the partition index
//! places the range, and prints byte for byte the lines of a whole dump
//! whose token is in the range, on one thread and on several, single and
//! merged, BIG and BTI.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{fixture_cases, repo};

/// stdout of `dump-data -o ndjson` with `args`, on `threads` threads.
fn dump(args: &[String], paths: &[PathBuf], threads: usize) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_sstkit"))
        .args(["dump-data", "-o", "ndjson"])
        .arg(format!("--threads={threads}"))
        .args(args)
        .args(paths)
        .current_dir(repo())
        // Units of a few hundred bytes: many per fixture.
        .env("SSTKIT_UNIT_BYTES", "300")
        .output()
        .expect("run sstkit");
    assert!(
        out.status.success(),
        "{args:?} {paths:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The Murmur3 token of an NDJSON partition line.
fn token(line: &str) -> i64 {
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    v["key"]["token"].as_str().unwrap().parse().unwrap()
}

/// Whether `t` is in `(s, e]` (wrapping when `s >= e`).
fn inside(t: i64, s: i64, e: i64) -> bool {
    if s < e {
        t > s && t <= e
    } else {
        t > s || t <= e
    }
}

/// Ranges around the tokens of a dump: inside, from and to the ring's
/// ends, just around partitions, wrapping.
fn ranges(tokens: &[i64]) -> Vec<(i64, i64)> {
    let n = tokens.len();
    let picks = [0, n / 2, n - 1].map(|i| tokens[i]);
    let mut v = Vec::new();
    for &a in &picks {
        for &b in &picks {
            if a < b {
                v.push((a, b));
                v.push((a - 1, b + 1));
                v.push((a + 1, b - 1));
                v.push((b, a));
            }
        }
        v.push((i64::MIN, a));
        v.push((a, i64::MAX));
    }
    v
}

/// Every range's dump equals the whole dump's lines in the range.
fn check(paths: &[PathBuf], merge: bool) -> usize {
    let base: Vec<String> = if merge {
        vec!["--merge".into()]
    } else {
        Vec::new()
    };
    let whole = dump(&base, paths, 1);
    let lines: Vec<&str> = whole.lines().collect();
    if lines.is_empty() {
        return 0;
    }
    let tokens: Vec<i64> = lines.iter().map(|l| token(l)).collect();
    let mut n = 0;
    for (s, e) in ranges(&tokens) {
        let want: String = lines
            .iter()
            .filter(|l| inside(token(l), s, e))
            .map(|l| format!("{l}\n"))
            .collect();
        let mut args = base.clone();
        args.push(format!("--token-range={s},{e}"));
        for threads in [1, 2] {
            let got = dump(&args, paths, threads);
            assert!(
                got == want,
                "{paths:?} ({s},{e}] threads {threads}: {} lines, want {}",
                got.lines().count(),
                want.lines().count()
            );
        }
        n += 1;
    }
    n
}

fn data_of(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("-Data.db"))
        .unwrap()
}

#[test]
fn token_range_dumps_equal_filtered_whole_dumps() {
    let mut n = 0;
    for case in [
        "nb_clustering",
        "da_clustering",
        "oa_typed_keys",
        "da_deletes",
    ] {
        n += check(
            &[data_of(&repo().join("fixtures/cassandra").join(case))],
            false,
        );
    }
    assert!(n > 50, "{n}");
}

#[test]
fn merged_token_range_dumps_equal_filtered_merged_dumps() {
    let mut n = 0;
    for set in ["nb_merge_range", "da_merge_overwrite"] {
        let paths: Vec<PathBuf> = fixture_cases()
            .iter()
            .filter(|d| {
                let name = d.file_name().unwrap().to_string_lossy().into_owned();
                name.starts_with(&format!("{set}_"))
            })
            .map(|d| data_of(d))
            .collect();
        assert!(paths.len() >= 2, "{set}");
        n += check(&paths, true);
    }
    assert!(n > 10, "{n}");
}
