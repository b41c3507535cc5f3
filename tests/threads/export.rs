//! `export --threads`: the files written on several threads are byte for
//! byte those written on one (parquet, arrow, csv; one sstable and
//! `--merge`; `--partition-by`, `--with-metadata`, `--tombstones`,
//! `--token-range`), and a damaged sstable gives the same first error and
//! exit code.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::merge_sets;
use crate::util::{corpus, fixture_cases, repo, scratch_dir};

/// The files an export wrote (every file under `out`, by name, then the
/// tombstones file), its stderr and its exit code.
type Exported = (Vec<(String, Vec<u8>)>, String, i32);

/// Export `paths` with `args` into `out` (a file, or a directory with
/// `--partition-by`) on `threads` threads with units of `unit` bytes.
fn export(args: &[&str], paths: &[PathBuf], out: &Path, threads: usize, unit: u64) -> Exported {
    let _ = std::fs::remove_dir_all(out);
    let _ = std::fs::remove_file(out);
    let tombs = out.with_extension("tombs");
    let _ = std::fs::remove_file(&tombs);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sstkit"));
    cmd.arg("export")
        .arg(format!("--threads={threads}"))
        .args(args)
        .arg("--output-file")
        .arg(out);
    let r = cmd
        .args(paths)
        .current_dir(repo())
        .env("SSTKIT_UNIT_BYTES", unit.to_string())
        .env("COLUMNS", "80")
        .output()
        .expect("run sstkit");
    let mut files = Vec::new();
    let mut stack = vec![out.to_path_buf(), tombs];
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            let mut names: Vec<_> = std::fs::read_dir(&p)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .collect();
            names.sort();
            names.reverse();
            stack.extend(names);
        } else if let Ok(b) = std::fs::read(&p) {
            files.push((p.display().to_string(), b));
        }
    }
    (
        files,
        String::from_utf8_lossy(&r.stderr).into_owned(),
        r.status.code().unwrap_or(-1),
    )
}

/// The export of `paths` with `args` is the same on 1 thread and on 2
/// or 4 threads (by `n`'s parity), cut into units of a few hundred bytes.
/// `Some(exit code)` of the one-thread run.
fn export_same_on_threads(args: &[&str], paths: &[PathBuf], n: usize) -> i32 {
    let dir = scratch_dir("threads", "export");
    let out = dir.path().join("out");
    let tombs = out.with_extension("tombs");
    // A fixed --now: ttl() is what is left at it.
    let mut args: Vec<&str> = [&["--now", "1700000000"][..], args].concat();
    let tombs_arg = tombs.to_string_lossy().into_owned();
    if let Some(i) = args.iter().position(|a| *a == "--tombstones") {
        args.insert(i + 1, &tombs_arg);
    }
    let one = export(&args, paths, &out, 1, 1 << 20);
    let (threads, unit) = if n.is_multiple_of(2) {
        (2, 200)
    } else {
        (4, 64)
    };
    let many = export(&args, paths, &out, threads, unit);
    assert!(
        one == many,
        "export {args:?} {paths:?}: {threads} threads (units of {unit} bytes) differ from 1\n\
         1 thread: exit {}, stderr {}, files {:?}\n{threads} threads: exit {}, stderr {}, files {:?}",
        one.2,
        one.1,
        one.0.iter().map(|f| (&f.0, f.1.len())).collect::<Vec<_>>(),
        many.2,
        many.1,
        many.0.iter().map(|f| (&f.0, f.1.len())).collect::<Vec<_>>(),
    );
    one.2
}

/// The variants every case is exported with.
const VARIANTS: &[&[&str]] = &[
    &["-o", "parquet"],
    &["-o", "arrow", "--with-metadata"],
    &["-o", "csv", "--tombstones"],
    &[
        "-o",
        "parquet",
        "--partition-by",
        "token-range:4",
        "--with-metadata",
    ],
    &[
        "-o",
        "arrow",
        "--token-range",
        "-3000000000000000000,6000000000000000000",
    ],
    &["-o", "parquet", "--tombstones", "--row-group-rows", "7"],
];

#[test]
fn export_is_the_same_on_several_threads() {
    let mut exported = 0;
    for (n, case) in fixture_cases().iter().enumerate() {
        for (k, v) in VARIANTS.iter().enumerate() {
            if export_same_on_threads(v, std::slice::from_ref(case), n + k) == 0 {
                exported += 1;
            }
        }
    }
    assert!(exported > 50, "fixture exports that succeeded: {exported}");
}

#[test]
fn merged_export_is_the_same_on_several_threads() {
    let sets = merge_sets();
    assert!(sets.len() >= 15, "merge sets missing: {}", sets.len());
    for (n, dirs) in sets.iter().enumerate() {
        for (k, v) in VARIANTS.iter().enumerate() {
            let mut args = vec!["--merge"];
            args.extend_from_slice(v);
            let code = export_same_on_threads(&args, dirs, n + k);
            assert_eq!(code, 0, "export {args:?} {dirs:?}");
        }
    }
}

/// Every corpus sstable, damaged ones included: the first error, its
/// message and the exit code are those of one thread.
#[test]
fn corpus_exports_are_the_same_on_several_threads() {
    let Some(root) = corpus() else {
        eprintln!("skipping: no corpus");
        return;
    };
    let sets = super::corpus_data_files(root);
    let mut failed = 0;
    for (n, set) in sets.iter().enumerate() {
        let v = VARIANTS[n % VARIANTS.len()];
        if export_same_on_threads(v, std::slice::from_ref(set), n) != 0 {
            failed += 1;
        }
    }
    // Damaged sets are among them: the comparison covers errors too.
    assert!(
        failed > 0,
        "no corpus export failed: the damaged sets are missing"
    );
}

/// An index whose positions are not Data.db's partition starts: several
/// threads notice the cut is wrong and read on as one thread does.
#[test]
fn export_with_a_wrong_index_is_the_same_on_several_threads() {
    let dir = super::wrong_index("export-wrong-index");
    for (k, v) in VARIANTS.iter().enumerate() {
        export_same_on_threads(v, &[dir.path().to_path_buf()], k);
    }
}
