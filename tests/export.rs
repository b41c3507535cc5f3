//! `export`: the exported rows, read back by independent readers (DuckDB for
//! Parquet, pyarrow for the Arrow IPC stream; `tests/export_check.py`), equal
//! the rows a node returned (`select.json`) and `dump-data -o cql`; row
//! groups, codecs, token-range files and errors checked in process with the
//! `parquet` crate's reader.
//!
//! The Python readers come from `$SSTKIT_PYTHON` (`.ci/run`'s venv, else
//! `python3`); without duckdb/pyarrow those checks are skipped with a message.

use std::path::{Path, PathBuf};
use std::process::Command;

use parquet::file::reader::{FileReader, SerializedFileReader};

use crate::cql::{select_queries, truth_now};
use crate::util::{fixture_cases, fixtures, repo, scratch_dir, sstkit, Scratch};

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> Scratch {
    scratch_dir("export", name)
}

/// Run `export_check.py MODE DATA TRUTH...`: None when a reader is missing
/// (the message printed), else whether the rows were equal (stderr shown).
fn check(mode: &str, data: &Path, truths: &[PathBuf]) -> Option<bool> {
    check_with(mode, data, truths, false)
}

/// [`check`]; `subset`: only the columns the truth selects.
fn check_with(mode: &str, data: &Path, truths: &[PathBuf], subset: bool) -> Option<bool> {
    let py = std::env::var("SSTKIT_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut cmd = Command::new(&py);
    if subset {
        cmd.env("EXPORT_CHECK_SUBSET", "1");
    }
    let out = cmd
        .arg(repo().join("tests/export_check.py"))
        .arg(mode)
        .arg(data)
        .args(truths)
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipping: {py}: {e}");
            return None;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(77) {
        eprintln!("skipping export readers: {}", stderr.trim());
        return None;
    }
    if !out.status.success() {
        eprintln!("{}: {stderr}", data.display());
    }
    Some(out.status.success())
}

/// The cases of one sstable whose table holds the types the export maps.
fn typed_cases() -> Vec<PathBuf> {
    fixture_cases()
        .into_iter()
        .filter(|c| {
            let n = c.file_name().unwrap().to_string_lossy().to_string();
            [
                "all_types",
                "collections",
                "udt",
                "frozen_keys",
                "typed_keys",
                "counters",
                "clustering",
                "deletes",
                "range_tombstones",
                "wide",
            ]
            .iter()
            .any(|t| n.ends_with(&format!("_{t}")))
        })
        .collect()
}

/// The `all` query of a case's select.json, one row per line.
fn truth_file(case: &Path, dir: &Path) -> Option<PathBuf> {
    query_file(case, dir, "all")
}

/// Query `name` of a case's select.json, one row per line.
fn query_file(case: &Path, dir: &Path, name: &str) -> Option<PathBuf> {
    let text = crate::dump_data::expected(case, "select.json")?;
    let (_, rows) = select_queries(&text).into_iter().find(|(n, _)| n == name)?;
    let p = dir.join(format!(
        "{}.{name}.jsonl",
        case.file_name()?.to_string_lossy()
    ));
    std::fs::write(&p, rows.join("\n") + "\n").unwrap();
    Some(p)
}

fn now_args(case: &Path) -> Vec<String> {
    truth_now(case).map_or_else(Vec::new, |n| vec!["--now".into(), n.to_string()])
}

#[test]
fn parquet_and_arrow_stream_equal_select_json_and_dump_cql() {
    let dir = scratch("truth");
    let mut checked = 0;
    for case in typed_cases() {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let Some(truth) = truth_file(&case, &dir) else {
            continue;
        };
        let now = now_args(&case);
        let mut args = vec!["dump-data".to_string(), "-o".into(), "cql".into()];
        args.extend(now.iter().cloned());
        args.push(case.display().to_string());
        let r = sstkit(&args);
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        let cql = dir.join(format!("{name}.cql.jsonl"));
        std::fs::write(&cql, &r.stdout).unwrap();

        let pq = dir.join(format!("{name}.parquet"));
        let mut args = vec![
            "export".to_string(),
            "-o".into(),
            "parquet".into(),
            "--output-file".into(),
        ];
        args.push(pq.display().to_string());
        args.extend(now.iter().cloned());
        args.push(case.display().to_string());
        let r = sstkit(&args);
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        match check("parquet", &pq, &[truth.clone(), cql.clone()]) {
            None => return,
            Some(ok) => assert!(ok, "{name}: DuckDB's rows of the Parquet export differ"),
        }

        // The Arrow IPC stream on stdout.
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sstkit"));
        cmd.args(["export", "-o", "arrow", "--output-file", "-"])
            .args(&now)
            .arg(&case);
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stream = dir.join(format!("{name}.arrows"));
        std::fs::write(&stream, &out.stdout).unwrap();
        match check("arrow-stream", &stream, &[truth, cql]) {
            None => return,
            Some(ok) => assert!(ok, "{name}: pyarrow's rows of the Arrow stream differ"),
        }
        checked += 1;
    }
    assert!(checked >= 9, "only {checked} cases checked");
}

#[test]
fn merged_export_equals_select_json() {
    let dir = scratch("merge");
    let mut checked = 0;
    let mut with_metadata = 0;
    for run in ["nb", "oa", "da"] {
        for (table, n) in [
            ("merge_overwrite", 3),
            ("merge_range", 3),
            ("merge_partition_delete", 3),
            ("merge_collections", 3),
            ("deletes_merge", 2),
        ] {
            let dirs: Vec<PathBuf> = (1..=n)
                .map(|i| fixtures().join(format!("{run}_{table}_{i}")))
                .collect();
            if !dirs.iter().all(|d| d.is_dir()) {
                eprintln!("skipping {run}_{table}: fixtures absent");
                continue;
            }
            let truth = truth_file(&dirs[0], &dir).expect("select.json");
            let pq = dir.join(format!("{run}_{table}.parquet"));
            let mut args = vec![
                "export".to_string(),
                "--merge".into(),
                "-o".into(),
                "parquet".into(),
                "--output-file".into(),
            ];
            args.push(pq.display().to_string());
            args.extend(dirs.iter().map(|d| d.display().to_string()));
            let r = sstkit(&args);
            assert_eq!(r.code, 0, "{run}_{table}: {}", r.stderr);
            assert!(!r.stderr.contains("without --merge"), "{}", r.stderr);
            match check("parquet", &pq, &[truth]) {
                None => return,
                Some(ok) => assert!(ok, "{run}_{table}: merged export differs from select.json"),
            }
            checked += 1;
            // writetime() and ttl() as the node returned them, at the query's time.
            let Some(wt) = query_file(&dirs[0], &dir, "writetime") else {
                continue;
            };
            let cj: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dirs[0].join("case.json")).unwrap())
                    .unwrap();
            let Some(now) = cj["select"]["queried_at_s"]
                .as_i64()
                .or_else(|| truth_now(&dirs[0]))
            else {
                eprintln!("{run}_{table}: no query time recorded, writetime not checked");
                continue;
            };
            let mut args = args.clone();
            args.splice(
                1..1,
                [
                    "--with-metadata".to_string(),
                    "--now".into(),
                    now.to_string(),
                ],
            );
            let r = sstkit(&args);
            assert_eq!(r.code, 0, "{run}_{table} --with-metadata: {}", r.stderr);
            let ok = check_with("parquet", &pq, &[wt], true).unwrap_or(true);
            assert!(
                ok,
                "{run}_{table}: writetime/ttl columns differ from select.json"
            );
            with_metadata += 1;
        }
    }
    assert!(checked > 0, "no merge fixture");
    assert!(
        with_metadata > 0,
        "no writetime query in the merge fixtures"
    );
}

/// Rows, row groups and statistics of a Parquet file.
fn parquet_meta(p: &Path) -> (i64, Vec<i64>, bool) {
    let r = SerializedFileReader::new(std::fs::File::open(p).unwrap()).unwrap();
    let md = r.metadata();
    let groups: Vec<i64> = md.row_groups().iter().map(|g| g.num_rows()).collect();
    let stats = md
        .row_groups()
        .iter()
        .all(|g| g.columns().iter().all(|c| c.statistics().is_some()));
    (md.file_metadata().num_rows(), groups, stats)
}

#[test]
fn row_groups_codecs_and_token_range_files() {
    let dir = scratch("groups");
    let case = fixtures().join("nb_wide");
    let rows = |extra: &[&str], out: &Path| {
        let mut args: Vec<String> = vec![
            "export".into(),
            "-o".into(),
            "parquet".into(),
            "--output-file".into(),
        ];
        args.push(out.display().to_string());
        args.extend(extra.iter().map(|s| s.to_string()));
        args.push(case.display().to_string());
        let r = sstkit(&args);
        assert_eq!(r.code, 0, "{extra:?}: {}", r.stderr);
    };
    let whole = dir.join("whole.parquet");
    rows(&[], &whole);
    let (n, groups, stats) = parquet_meta(&whole);
    assert!(n > 100, "{n} rows");
    assert_eq!(groups, vec![n], "one row group by default");
    assert!(stats, "statistics on");
    // --row-group-rows cuts every N rows; each codec reads back the same rows.
    for codec in ["zstd", "snappy", "lz4", "none"] {
        let p = dir.join(format!("{codec}.parquet"));
        rows(&["--row-group-rows", "100", "--compression", codec], &p);
        let (m, groups, _) = parquet_meta(&p);
        assert_eq!(m, n, "{codec}");
        assert!(
            groups.iter().all(|g| *g <= 100) && groups.len() as i64 == (n + 99) / 100,
            "{codec}: {groups:?}"
        );
    }
    // --partition-by token-range:4: four files whose rows add up, each within its range.
    let parts = dir.join("parts");
    rows(&["--partition-by", "token-range:4"], &parts);
    let mut total = 0;
    for i in 0..4 {
        let p = parts.join(format!("part-{i:05}-of-00004.parquet"));
        let r = SerializedFileReader::new(std::fs::File::open(&p).unwrap()).unwrap();
        let kv = r
            .metadata()
            .file_metadata()
            .key_value_metadata()
            .cloned()
            .unwrap_or_default();
        let range = kv
            .iter()
            .find(|k| k.key == "sstkit.token_range")
            .and_then(|k| k.value.clone())
            .unwrap();
        total += r.metadata().file_metadata().num_rows();
        // The same range through --token-range gives the same rows.
        let (s, e) = range
            .trim_start_matches('(')
            .trim_end_matches(']')
            .split_once(',')
            .unwrap();
        let q = dir.join(format!("range-{i}.parquet"));
        rows(&[&format!("--token-range={s},{e}")], &q);
        assert_eq!(
            parquet_meta(&q).0,
            r.metadata().file_metadata().num_rows(),
            "range {range}"
        );
    }
    assert_eq!(total, n);
    let leftovers: Vec<_> = std::fs::read_dir(&parts)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left");
}

#[test]
fn usage_errors_and_no_partial_file() {
    let dir = scratch("errors");
    let case = fixtures().join("nb_all_types");
    let c = case.display().to_string();
    let out = dir.join("x.parquet");
    let o = out.display().to_string();
    for bad in [
        vec!["export", "-o", "parquet", "--output-file", "-", &c],
        vec![
            "export",
            "-o",
            "parquet",
            "--output-file",
            &o,
            "--decimals",
            "decimal128:99",
            &c,
        ],
        vec![
            "export",
            "-o",
            "parquet",
            "--output-file",
            &o,
            "--partition-by",
            "hash:3",
            &c,
        ],
        vec![
            "export",
            "-o",
            "csv",
            "--output-file",
            &o,
            "--partition-by",
            "token-range:2",
            &c,
        ],
    ] {
        let r = sstkit(&bad);
        assert_eq!(r.code, 2, "{bad:?}: {}", r.stderr);
    }
    // A decimal that does not fit the fixed scale fails the export: no file at all.
    let r = sstkit([
        "export",
        "-o",
        "parquet",
        "--output-file",
        &o,
        "--decimals",
        "decimal128:2",
        &c,
    ]);
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("--decimals"), "{}", r.stderr);
    assert!(
        std::fs::read_dir(&dir).unwrap().next().is_none(),
        "a partial file was left"
    );
    // An input that does not exist: exit 2 or 3 as for every command, no file.
    let r = sstkit([
        "export",
        "-o",
        "parquet",
        "--output-file",
        &o,
        "/nonexistent/nb-1-big-Data.db",
    ]);
    assert!(r.code == 2 || r.code == 3, "{}", r.stderr);
    assert!(!out.exists());
}

#[test]
fn csv_as_cqlsh_copy_writes_it() {
    let case = fixtures().join("nb_collections");
    let mut args = vec![
        "export".to_string(),
        "-o".into(),
        "csv".into(),
        "--output-file".into(),
        "-".into(),
    ];
    args.extend(now_args(&case));
    args.push(case.display().to_string());
    let r = sstkit(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut lines = r.stdout.split("\r\n");
    assert_eq!(
        lines.next(),
        Some("id,faddr,fl,fm,fs,l,m,nested,s,setlist,tup")
    );
    let body: Vec<&str> = lines.filter(|l| !l.is_empty()).collect();
    assert_eq!(body.len(), 201);
    // Collections as cqlsh prints them, quoted by RFC 4180 when they hold a comma.
    assert!(
        body.iter().any(|l| l.contains("\"{") && l.contains("'")),
        "{}",
        body[0]
    );
}

/// Tombstones of each kind in Cassandra's sstabledump of a case.
fn sstabledump_tombstones(case: &Path) -> std::collections::BTreeMap<String, usize> {
    let text = crate::dump_data::expected(case, "sstabledump.json").expect("sstabledump.json");
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut n = std::collections::BTreeMap::new();
    let mut add = |k: &str| *n.entry(k.to_string()).or_insert(0) += 1;
    for p in doc.as_array().unwrap() {
        if p["partition"].get("deletion_info").is_some() {
            add("partition");
        }
        for r in p["rows"].as_array().into_iter().flatten() {
            match r["type"].as_str() {
                Some("range_tombstone_bound") if r.get("start").is_some() => add("range"),
                Some("range_tombstone_boundary") => add("range"),
                Some("row" | "static_block") => {
                    if r.get("deletion_info").is_some() {
                        add("row");
                    }
                    for c in r["cells"].as_array().into_iter().flatten() {
                        let Some(d) = c.get("deletion_info") else {
                            continue;
                        };
                        // A collection deletion has a marked_deleted time; a cell tombstone a tstamp.
                        if d.get("marked_deleted").is_some() {
                            add("collection");
                        } else {
                            add("cell");
                        }
                    }
                }
                _ => {}
            }
        }
    }
    n
}

#[test]
fn tombstone_stream_holds_what_sstabledump_shows() {
    let dir = scratch("tombs");
    let mut checked = 0;
    for case in fixture_cases() {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        if !(name.ends_with("_deletes") || name.ends_with("_range_tombstones")) {
            continue;
        }
        let tombs = dir.join(format!("{name}.csv"));
        let r = sstkit([
            "export".as_ref(),
            "-o".as_ref(),
            "csv".as_ref(),
            "--output-file".as_ref(),
            dir.join(format!("{name}.rows.csv")).as_os_str(),
            "--tombstones".as_ref(),
            tombs.as_os_str(),
            case.as_os_str(),
        ]);
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        let text = std::fs::read_to_string(&tombs).unwrap();
        let mut got = std::collections::BTreeMap::new();
        for line in text.split("\r\n").skip(1).filter(|l| !l.is_empty()) {
            let kind = line.split(',').next().unwrap().to_string();
            *got.entry(kind).or_insert(0) += 1;
        }
        assert_eq!(got, sstabledump_tombstones(&case), "{name}");
        checked += 1;
    }
    assert!(checked >= 2, "no deletes fixture");
}

/// `export -o FORMAT --output-file FILE`; the previous release's `-f FORMAT
/// -o FILE` still writes the same file, with a note on stderr for each.
#[test]
fn output_format_and_file_spellings() {
    let dir = crate::util::scratch_dir("export", "spelling");
    let case = crate::util::fixtures().join("nb_clustering");
    let case = case.to_str().unwrap();
    let new = dir.join("new.csv");
    let old = dir.join("old.csv");
    let r = sstkit([
        "export",
        "-o",
        "csv",
        "--output-file",
        new.to_str().unwrap(),
        case,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("note"), "{}", r.stderr);
    let r = sstkit(["export", "-f", "csv", "-o", old.to_str().unwrap(), case]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("-f FORMAT is now -o FORMAT")
            && r.stderr
                .contains(&format!("is now --output-file {}", old.display())),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&new).unwrap(), std::fs::read(&old).unwrap());
    // The format from the file's extension; none that tells is a usage error.
    let pq = dir.join("t.parquet");
    let r = sstkit(["export", "--output-file", pq.to_str().unwrap(), case]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(&std::fs::read(&pq).unwrap()[..4], b"PAR1");
    let r = sstkit([
        "export",
        "--output-file",
        dir.join("t").to_str().unwrap(),
        case,
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = sstkit(["export", "-o", "csv", case]);
    assert_eq!(r.code, 2, "no output file: {}", r.stderr);
    assert!(r.stderr.contains("--output-file"), "{}", r.stderr);
}

/// An output that is not a regular file (a named pipe here; `/dev/null` in
/// a benchmark) is written as it is, never replaced by a renamed file.
#[test]
fn a_named_pipe_output_stays_a_pipe() {
    use std::io::Read as _;
    use std::os::unix::fs::FileTypeExt as _;
    let dir = scratch("fifo");
    let fifo = dir.path().join("out.parquet");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo on a NUL-terminated path this test owns.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        // Opening a pipe for reading waits for its writer.
        std::thread::spawn(move || {
            let mut b = Vec::new();
            std::fs::File::open(&fifo)
                .unwrap()
                .read_to_end(&mut b)
                .unwrap();
            b
        })
    };
    let data = fixtures().join("nb_clustering");
    let r = sstkit([
        "export",
        "-o",
        "parquet",
        "--output-file",
        fifo.to_str().unwrap(),
        data.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "the pipe was replaced: {kind:?}");
    let bytes = reader.join().unwrap();
    assert!(
        bytes.len() > 8 && bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"),
        "{} bytes through the pipe",
        bytes.len()
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
}
