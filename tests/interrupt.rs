//! Interrupted writers leave nothing behind: every command that writes
//! files, signalled with SIGINT or SIGTERM while its Data.db (or export
//! file) grows, removes its temporary files and exits 130 or 143. A writer
//! killed with SIGKILL leaves `tmp-sstkit-*` files: `info` and `validate`
//! name them, and the next writer into the directory removes them, says so,
//! and reuses the generation.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{scratch_dir, sstkit};

/// A table of `partitions` partitions of 50 rows of varied text, keyed by
/// bigint under ByteOrderedPartitioner (so the NDJSON is written in key
/// order): its schema file and its `dump-data -o ndjson` records.
fn big_input(dir: &Path, partitions: u64) -> (PathBuf, PathBuf) {
    let words = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliet", "kilo", "lima", "mike",
    ];
    // A small LCG: varied values compress like real text, not to nothing.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    crate::util::kcv_input(
        dir,
        "big",
        partitions,
        |_| 50,
        |_, _| {
            let v: Vec<&str> = (0..15).map(|_| words[next() % words.len()]).collect();
            v.join(" ")
        },
    )
}

/// `write` of `input` into `out` (ByteOrderedPartitioner), with `extra` flags.
fn write_args(schema: &Path, input: &Path, out: &Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "write",
        "-o",
        "json",
        "--from",
        input.to_str().unwrap(),
        "--schema",
        schema.to_str().unwrap(),
        "--partitioner",
        "org.apache.cassandra.dht.ByteOrderedPartitioner",
        "--output-dir",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// The temporary files in `dir`: sstable components and export files.
fn temporaries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("tmp-sstkit-") || n.contains(".tmp-"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Every file in `dir`.
fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The size of the growing output file in `dir` (a temporary Data.db, an
/// export file, scrub's salvaged NDJSON), if there is one.
fn growing_size(dir: &Path) -> Option<u64> {
    std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
        let n = e.file_name().to_string_lossy().into_owned();
        let data = n.starts_with("tmp-sstkit-") && n.ends_with("-Data.db");
        (data || n.contains(".tmp-") || n.ends_with("-salvaged.ndjson"))
            .then(|| e.metadata().map(|m| m.len()).unwrap_or(0))
    })
}

/// Run sstkit with `args`, wait until its temporary file in `watch` exists
/// and has grown twice, send `signal`, and return the exit status and stderr.
fn interrupt(args: &[String], watch: &Path, signal: i32) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sstkit"))
        .args(args)
        .current_dir(crate::util::repo())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sstkit");
    let start = Instant::now();
    let mut seen: Vec<u64> = Vec::new();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("{args:?} ended ({status}) before it could be interrupted mid-file: {seen:?}");
        }
        if let Some(n) = growing_size(watch) {
            if seen.last() != Some(&n) {
                seen.push(n);
            }
            if seen.len() >= 3 && n > 0 {
                break;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{args:?}: no growing temporary file in {}",
            watch.display()
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    // SAFETY: signals a child this test spawned and has not yet reaped.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Interrupt `args` writing into `out` with `signal`: exit 128 + signal, no
/// temporary file left, no final file either, and stderr says what went.
fn assert_cleaned_up(args: &[String], out: &Path, signal: i32) {
    let (status, stderr) = interrupt(args, out, signal);
    assert_eq!(
        status.code(),
        Some(128 + signal),
        "{args:?}: {status}; {stderr}"
    );
    assert_eq!(temporaries(out), Vec::<String>::new(), "{args:?}: {stderr}");
    assert!(
        !files(out)
            .iter()
            .any(|f| f.ends_with("TOC.txt") || f.ends_with(".parquet") || f.ends_with(".ndjson")),
        "{args:?}: a partial output was kept: {:?}",
        files(out)
    );
    assert!(
        stderr.contains("interrupted; removed"),
        "{args:?}: {stderr}"
    );
}

#[test]
fn writers_leave_nothing_when_interrupted() {
    let tmp = scratch_dir("interrupt", "writers");
    let (schema, input) = big_input(tmp.path(), 2000);
    // zstd at a high level: slow enough to be caught mid-file every time.
    let slow = ["--compression", "zstd:19"];
    let out = tmp.path().join("write");
    assert_cleaned_up(
        &write_args(&schema, &input, &out, &slow),
        &out,
        libc::SIGINT,
    );

    let src = tmp.path().join("src");
    let r = sstkit(write_args(&schema, &input, &src, &[]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let data = src.join("oa-1-big-Data.db");
    let data = data.to_str().unwrap();

    let mut n = 0;
    let mut case = |args: &[&str], signal: i32| {
        n += 1;
        let out = tmp.path().join(format!("out{n}"));
        std::fs::create_dir_all(&out).unwrap();
        let args: Vec<String> = args
            .iter()
            .map(|a| a.replace("OUT", out.to_str().unwrap()))
            .collect();
        assert_cleaned_up(&args, &out, signal);
    };
    let rewrite = [
        "rewrite",
        "--format-version",
        "da",
        "--compression",
        "zstd:19",
        "--output-dir",
        "OUT",
        data,
    ];
    case(&rewrite, libc::SIGINT);
    case(&rewrite, libc::SIGTERM);
    case(
        &[
            "compact",
            "--compression",
            "zstd:19",
            "--output-dir",
            "OUT",
            data,
        ],
        libc::SIGINT,
    );
    case(
        &[
            "split",
            "--max-size",
            "100000000",
            "--compression",
            "zstd:19",
            "--output-dir",
            "OUT",
            data,
        ],
        libc::SIGTERM,
    );
    case(
        &[
            "scrub",
            "--mode",
            "skip",
            "-o",
            "json",
            "--output-dir",
            "OUT",
            data,
        ],
        libc::SIGINT,
    );
    case(
        &[
            "scrub",
            "--mode",
            "skip",
            "--salvage-format",
            "ndjson",
            "-o",
            "json",
            "--output-dir",
            "OUT",
            data,
        ],
        libc::SIGTERM,
    );
    let export = [
        "export",
        "-f",
        "parquet",
        "--row-group-rows",
        "2000",
        "-o",
        "OUT/t.parquet",
        data,
    ];
    case(&export, libc::SIGINT);
    case(&export, libc::SIGTERM);
}

#[test]
fn a_killed_writers_leftovers_are_named_then_removed() {
    let tmp = scratch_dir("interrupt", "killed");
    let (schema, input) = big_input(tmp.path(), 1000);
    let out = tmp.path().join("out");
    let slow = ["--compression", "zstd:19"];
    let (status, _) = interrupt(
        &write_args(&schema, &input, &out, &slow),
        &out,
        libc::SIGKILL,
    );
    assert_eq!(status.code(), None, "killed");
    let left = temporaries(&out);
    assert!(
        left.iter().any(|f| f == "tmp-sstkit-oa-1-big-Data.db"),
        "{left:?}"
    );
    let dir = out.to_str().unwrap();
    for cmd in [&["info", dir][..], &["validate", "-o", "json", dir][..]] {
        let r = sstkit(cmd);
        assert_eq!(r.code, 2, "{cmd:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("left by an interrupted sstkit write")
                && r.stderr.contains("tmp-sstkit-oa-1-big-Data.db"),
            "{cmd:?}: {}",
            r.stderr
        );
    }
    let r = sstkit(write_args(&schema, &input, &out, &[]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    for f in &left {
        assert!(
            r.stderr
                .contains(&format!("removed {}", out.join(f).display())),
            "{f}: {}",
            r.stderr
        );
    }
    assert_eq!(temporaries(&out), Vec::<String>::new());
    // The generation of the removed leftovers is the one written: none skipped.
    assert!(out.join("oa-1-big-TOC.txt").is_file(), "{:?}", files(&out));
    let r = sstkit(["info", dir]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("interrupted"), "{}", r.stderr);
}

#[test]
fn a_killed_exports_temporary_is_removed_by_the_next_export() {
    let tmp = scratch_dir("interrupt", "killed-export");
    let (schema, input) = big_input(tmp.path(), 2000);
    let src = tmp.path().join("src");
    let r = sstkit(write_args(&schema, &input, &src, &[]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let data = src.join("oa-1-big-Data.db");
    let out = tmp.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let file = out.join("t.parquet");
    let args: Vec<String> = [
        "export",
        "-f",
        "parquet",
        "--row-group-rows",
        "2000",
        "-o",
        file.to_str().unwrap(),
        data.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (status, _) = interrupt(&args, &out, libc::SIGKILL);
    assert_eq!(status.code(), None, "killed");
    let left = temporaries(&out);
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].starts_with(".t.parquet.tmp-"), "{left:?}");

    let r = sstkit(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "removed {}, left by an interrupted sstkit export",
            out.join(&left[0]).display()
        )),
        "{}",
        r.stderr
    );
    assert_eq!(temporaries(&out), Vec::<String>::new());
    assert_eq!(files(&out), vec!["t.parquet".to_string()]);
}
