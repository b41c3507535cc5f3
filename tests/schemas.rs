//! Output contracts: the real `--output json` and `--output ndjson` output of
//! every command, and the `--io-stats=json` lines, checked against their
//! JSON Schema in `docs/schemas/` (docs/output.md).

use std::path::Path;

use serde_json::Value;

use crate::schema_check::{check, load};
use crate::util::{corpus, data_files, fixtures, scratch_dir, sstkit};

/// Fixtures that between them hold every kind of record: BIG and BTI,
/// compressed and not, statics, collections, counters, deletions, range
/// tombstones.
const CASES: &[&str] = &[
    "nb_clustering",
    "nb_clustering_nocompress",
    "nb_collections",
    "nb_counters",
    "nb_deletes",
    "nb_range_tombstones",
    "da_clustering",
    "da_all_types",
];

fn data_file(case: &str) -> String {
    let files = data_files(&fixtures().join(case));
    let f = files
        .first()
        .unwrap_or_else(|| panic!("{case}: no Data.db"));
    f.to_str().expect("utf-8 path").to_string()
}

/// The first partition key of `data`, as hex (for `read` and `token`).
fn first_key_hex(data: &str) -> String {
    let r = sstkit(["info", data, "-o", "json"]);
    let v: Value = serde_json::from_str(&r.stdout).expect("info JSON");
    v["sstables"][data]["first_key"]["raw"]
        .as_str()
        .expect("first key")
        .to_string()
}

/// The arguments of `command` on `data`, or None when the command does not
/// apply to that sstable (a BIG-only or BTI-only component); the writing
/// commands write under `scratch`.
fn args(command: &str, data: &str, scratch: &Path) -> Option<Vec<String>> {
    let bti = data.contains("-bti-");
    let compressed =
        std::path::Path::new(&data.replace("-Data.db", "-CompressionInfo.db")).is_file();
    let v = |a: &[&str]| Some(a.iter().map(|s| s.to_string()).collect());
    match command {
        "dump-summary" | "dump-index" if bti => None,
        "dump-trie" if !bti => None,
        "dump-compression-info" if !compressed => None,
        "read" => v(&["read", data, "--key-hex", &first_key_hex(data)]),
        "token" => v(&["token", "--sstable", data, "--hex", &first_key_hex(data)]),
        "dump-index" => v(&["dump-index", data, "--promoted-index"]),
        "dump-trie" => v(&["dump-trie", data, "--rows"]),
        // The writing commands write into a scratch directory of their own.
        "rewrite" | "split" | "compact" => {
            let dir = scratch.join(format!(
                "{command}-{}",
                data.len() ^ data.bytes().map(usize::from).sum::<usize>()
            ));
            let dir = dir.display().to_string();
            let mut a = vec![command, data, "--output-dir", &dir];
            if command == "split" {
                a.extend(["--max-size", "4096"]);
            }
            v(&a)
        }
        // Counter cells cannot be written back from NDJSON.
        "write" if data.contains("counters") => None,
        "write" => {
            let dir = scratch.join(format!(
                "write-{}",
                data.len() ^ data.bytes().map(usize::from).sum::<usize>()
            ));
            std::fs::create_dir_all(&dir).expect("scratch dir");
            let input = dir.join("in.ndjson");
            let r = sstkit(["dump-data", "-o", "ndjson", data]);
            std::fs::write(&input, r.stdout).expect("records");
            let schema = std::path::Path::new(data).with_file_name("schema.cql");
            let (i, s, o) = (
                input.display().to_string(),
                schema.display().to_string(),
                dir.join("out").display().to_string(),
            );
            v(&["write", "--from", &i, "--schema", &s, "--output-dir", &o])
        }
        c => v(&[c, data]),
    }
}

/// The commands with a JSON report and their schema files.
const COMMANDS: &[&str] = &[
    "info",
    "dump-toc",
    "dump-statistics",
    "dump-summary",
    "dump-index",
    "dump-trie",
    "dump-compression-info",
    "dump-filter",
    "dump-schema",
    "token",
    "dump-data",
    "read",
    "validate",
    "validate-checksums",
    "scrub",
    "partitions",
    "expired-blockers",
    "timestamps",
    "rewrite",
    "split",
    "compact",
    "write",
];

fn errors_of(v: &Value, schema: &Value, sub: Option<&str>) -> Vec<String> {
    let s = match sub {
        Some(d) => {
            // A missing definition would check nothing: that is a failure, not a pass.
            if !schema["$defs"][d].is_object() {
                return vec![format!("the schema has no $defs/{d}")];
            }
            serde_json::json!({ "$ref": format!("#/$defs/{d}") })
        }
        None => schema.clone(),
    };
    let mut e = Vec::new();
    check(v, &s, schema, "$", &mut e);
    e
}

#[test]
fn every_json_and_ndjson_output_matches_its_schema() {
    let scratch = scratch_dir("schemas", "commands");
    let mut failures = Vec::new();
    let mut checked = 0;
    for command in COMMANDS {
        let schema = load(&format!("{command}.schema.json"));
        for case in CASES {
            let data = data_file(case);
            let Some(a) = args(command, &data, &scratch) else {
                continue;
            };
            let json = sstkit(a.iter().map(String::as_str).chain(["-o", "json"]));
            let doc: Value = serde_json::from_str(&json.stdout)
                .unwrap_or_else(|e| panic!("{command} {case}: {e}\n{}", json.stderr));
            for e in errors_of(&doc, &schema, None) {
                failures.push(format!("{command} {case} json: {e}"));
            }
            let nd = sstkit(a.iter().map(String::as_str).chain(["-o", "ndjson"]));
            for line in nd.stdout.lines().filter(|l| !l.is_empty()) {
                let v: Value = serde_json::from_str(line).expect("NDJSON line");
                for e in errors_of(&v, &schema, Some("line")) {
                    failures.push(format!("{command} {case} ndjson: {e}"));
                }
            }
            checked += 1;
        }
    }
    assert!(checked > COMMANDS.len(), "{checked} runs checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn io_stats_lines_match_their_schema() {
    let schema = load("io-stats.schema.json");
    for case in CASES {
        let data = data_file(case);
        let r = sstkit(["dump-data", &data, "-o", "ndjson", "--io-stats=json"]);
        let lines: Vec<&str> = r.stderr.lines().filter(|l| l.starts_with('{')).collect();
        assert_eq!(lines.len(), 1, "{case}: {}", r.stderr);
        let v: Value = serde_json::from_str(lines[0]).expect("io-stats JSON");
        let e = errors_of(&v, &schema, None);
        assert!(e.is_empty(), "{case}: {e:?}");
    }
}

/// `write --io-stats=json` prints the reads of its `--like` sstable in the
/// schema `rewrite --io-stats=json` prints its source's; with `--schema` it
/// reads no sstable and prints no line.
#[test]
fn write_io_stats_lines_match_rewrites() {
    let schema = load("io-stats.schema.json");
    let data = data_file("nb_collections");
    let dir = scratch_dir("schemas", "write-io");
    let input = dir.join("in.ndjson");
    std::fs::write(&input, sstkit(["dump-data", "-o", "ndjson", &data]).stdout).expect("records");
    let (i, o) = (input.display().to_string(), dir.display().to_string());
    let lines = |stderr: &str| -> Vec<Value> {
        stderr
            .lines()
            .filter(|l| l.starts_with('{'))
            .map(|l| serde_json::from_str(l).expect("io-stats JSON"))
            .collect()
    };
    let rewrite = sstkit([
        "rewrite",
        &data,
        "--output-dir",
        &format!("{o}/rw"),
        "--io-stats=json",
    ]);
    let write = sstkit([
        "write",
        "--from",
        &i,
        "--like",
        &data,
        "--output-dir",
        &format!("{o}/w"),
        "--io-stats=json",
    ]);
    for (what, r) in [("rewrite", &rewrite), ("write", &write)] {
        assert_eq!(r.code, 0, "{what}: {}", r.stderr);
        let v = lines(&r.stderr);
        assert_eq!(v.len(), 1, "{what}: {}", r.stderr);
        let e = errors_of(&v[0], &schema, None);
        assert!(e.is_empty(), "{what}: {e:?}");
        assert_eq!(v[0]["sstable"], data.as_str(), "{what}");
        assert!(
            v[0]["components"]["statistics"]["reads"].as_u64() > Some(0),
            "{what}: {}",
            v[0]
        );
    }
    let cql = std::path::Path::new(&data).with_file_name("schema.cql");
    let r = sstkit([
        "write",
        "--from",
        &i,
        "--schema",
        &cql.display().to_string(),
        "--output-dir",
        &format!("{o}/s"),
        "--io-stats=json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(lines(&r.stderr).is_empty(), "{}", r.stderr);
}

/// The schemas are strict enough to notice a changed field: a report with a
/// field's type changed, or a required field removed, fails.
#[test]
fn the_schemas_reject_changed_records() {
    let data = data_file("nb_clustering");
    for (command, field) in [
        ("info", "rows"),
        ("validate", "valid"),
        ("dump-toc", "components"),
    ] {
        let schema = load(&format!("{command}.schema.json"));
        let r = sstkit([command, data.as_str(), "-o", "json"]);
        let doc: Value = serde_json::from_str(&r.stdout).expect("JSON");
        assert!(errors_of(&doc, &schema, None).is_empty(), "{command}");
        let mut changed = doc.clone();
        changed["sstables"][&data][field] = Value::String("changed".into());
        assert!(
            !errors_of(&changed, &schema, None).is_empty(),
            "{command}.{field} as a string"
        );
        let mut removed = doc.clone();
        removed["sstables"][&data]
            .as_object_mut()
            .expect("report")
            .remove(field);
        assert!(
            !errors_of(&removed, &schema, None).is_empty(),
            "{command} without {field}"
        );
    }
}

/// Every command that writes JSON has a schema file, and every schema file
/// is one of them (or the shared finding shape, or the IO counters).
#[test]
fn every_command_has_a_schema() {
    let mut files: Vec<String> = std::fs::read_dir(crate::util::repo().join("docs/schemas"))
        .expect("docs/schemas")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut want: Vec<String> = COMMANDS
        .iter()
        .map(|c| format!("{c}.schema.json"))
        .chain([
            "dump-scylla-metadata.schema.json".into(),
            "explain.schema.json".into(),
            "finding.schema.json".into(),
            "io-stats.schema.json".into(),
            "sstable-ref.schema.json".into(),
        ])
        .collect();
    want.sort();
    assert_eq!(files, want);
    let help = sstkit(["--help"]).stdout;
    let listed: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.strip_prefix("  "))
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        // export writes Parquet, Arrow IPC or CSV, never JSON.
        .filter(|c| *c != "export")
        .collect();
    for c in listed {
        let file = format!("{c}.schema.json");
        assert!(files.contains(&file), "{c} has no schema in docs/schemas");
    }
}

/// `dump-scylla-metadata` on the corpus's Scylla.db files (the fixtures are
/// Cassandra's and have none).
#[test]
fn scylla_metadata_matches_its_schema() {
    let Some(root) = corpus() else { return };
    let schema = load("dump-scylla-metadata.schema.json");
    let mut checked = 0;
    for set in std::fs::read_dir(root.join("scylladb"))
        .expect("scylladb sets")
        .flatten()
    {
        for data in data_files(&set.path()) {
            let data = data.to_str().expect("utf-8 path").to_string();
            if !std::path::Path::new(&data.replace("-Data.db", "-Scylla.db")).is_file() {
                continue;
            }
            let json = sstkit(["dump-scylla-metadata", &data, "-o", "json"]);
            let doc: Value = serde_json::from_str(&json.stdout).expect("JSON");
            let e = errors_of(&doc, &schema, None);
            assert!(e.is_empty(), "{data}: {e:?}");
            let nd = sstkit(["dump-scylla-metadata", &data, "-o", "ndjson"]);
            for line in nd.stdout.lines().filter(|l| !l.is_empty()) {
                let v: Value = serde_json::from_str(line).expect("NDJSON line");
                let e = errors_of(&v, &schema, Some("line"));
                assert!(e.is_empty(), "{data}: {e:?}");
            }
            checked += 1;
        }
    }
    assert!(checked > 0, "no Scylla.db in the corpus");
}

/// The validation commands on sets of the corpus that are corrupt on
/// purpose (MANIFEST.md): reports with findings, lost ranges and damage
/// match their schemas too.
#[test]
fn reports_on_corrupt_sets_match_their_schemas() {
    let Some(root) = corpus() else { return };
    let sets = [
        "scylladb/3.x-lz4-integrity_check-invalid_checksums",
        "scylladb/3.x-uncompressed-integrity_check-invalid_digest",
        "scylladb/broken_open_tombstone",
        "scylladb/invalid_boundary",
        "scylladb/mismatched_timestamp",
    ];
    let mut failures = Vec::new();
    for set in sets {
        for data in data_files(&root.join(set)) {
            let data = data.to_str().expect("utf-8 path").to_string();
            for command in ["validate", "validate-checksums", "scrub"] {
                let schema = load(&format!("{command}.schema.json"));
                let json = sstkit([command, data.as_str(), "-o", "json"]);
                // scrub reads Data.db only: a bad digest alone passes it.
                assert!(
                    [0, 1].contains(&json.code),
                    "{command} {set}: {}",
                    json.stderr
                );
                let doc: Value = serde_json::from_str(&json.stdout).expect("JSON");
                for e in errors_of(&doc, &schema, None) {
                    failures.push(format!("{command} {set} json: {e}"));
                }
                let nd = sstkit([command, data.as_str(), "-o", "ndjson"]);
                for line in nd.stdout.lines().filter(|l| !l.is_empty()) {
                    let v: Value = serde_json::from_str(line).expect("NDJSON line");
                    for e in errors_of(&v, &schema, Some("line")) {
                        failures.push(format!("{command} {set} ndjson: {e}"));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `--merge --explain -o ndjson` records (dump-data and read) of the merge
/// tables, in every format.
#[test]
fn explain_records_match_their_schema() {
    let schema = load("explain.schema.json");
    let mut n = 0;
    for run in ["nb", "oa", "da"] {
        for table in [
            "merge_overwrite",
            "merge_range",
            "merge_partition_delete",
            "merge_collections",
        ] {
            let dirs: Vec<String> = (1..=3)
                .map(|i| {
                    fixtures()
                        .join(format!("{run}_{table}_{i}"))
                        .display()
                        .to_string()
                })
                .collect();
            for head in [
                vec!["dump-data", "--merge", "--explain", "-o", "ndjson"],
                vec![
                    "read",
                    "--merge",
                    "--explain",
                    "-o",
                    "ndjson",
                    "-k",
                    "1",
                    "--from",
                    "1",
                ],
            ] {
                let r = sstkit(head.iter().copied().chain(dirs.iter().map(String::as_str)));
                assert_eq!(r.code, 0, "{run} {table}: {}", r.stderr);
                for line in r.stdout.lines().filter(|l| !l.is_empty()) {
                    let v: Value = serde_json::from_str(line).expect("NDJSON line");
                    let e = errors_of(&v, &schema, None);
                    assert!(e.is_empty(), "{run} {table}: {e:?}\n{line}");
                    n += 1;
                }
            }
        }
    }
    assert!(n > 100, "{n} records");
}

/// Every command that reads sstables through `--io-stats` (all but `read`,
/// which reports each lookup, and `write`, whose sstable is `--like`'s)
/// prints one schema-valid line per sstable it read, merged or not.
#[test]
fn every_reading_command_reports_io_per_sstable() {
    let schema = load("io-stats.schema.json");
    let data: Vec<String> = ["nb_merge_overwrite_1", "nb_merge_overwrite_2"]
        .iter()
        .map(|c| data_file(c))
        .collect();
    let scratch = scratch_dir("schemas", "io");
    let out = |name: &str| scratch.join(name).display().to_string();
    let runs: Vec<Vec<String>> = [
        vec!["info", "-o", "json"],
        vec!["info", "-o", "text"],
        vec!["dump-toc"],
        vec!["dump-statistics", "-o", "json"],
        vec!["dump-summary"],
        vec!["dump-index"],
        vec!["dump-compression-info"],
        vec!["dump-filter"],
        vec!["dump-data"],
        vec!["dump-data", "--merge"],
        vec!["validate"],
        vec!["validate-checksums"],
        vec!["scrub"],
        vec!["partitions", "-o", "json"],
        vec!["expired-blockers", "-o", "json"],
        vec!["timestamps", "-o", "json"],
        vec!["export", "-o", "csv", "--output-file", &out("rows.csv")],
        vec![
            "export",
            "--merge",
            "-o",
            "csv",
            "--output-file",
            &out("merged.csv"),
        ],
        vec!["rewrite", "--output-dir", &out("rewrite")],
        vec!["split", "--max-size", "4096", "--output-dir", &out("split")],
        vec!["compact", "--output-dir", &out("compact")],
    ]
    .into_iter()
    .map(|a| a.into_iter().map(String::from).collect())
    .collect();
    let mut failures = Vec::new();
    for a in &runs {
        let args: Vec<&str> = a
            .iter()
            .map(String::as_str)
            .chain(["--io-stats=json"])
            .chain(data.iter().map(String::as_str))
            .collect();
        let r = sstkit(&args);
        if r.code != 0 {
            failures.push(format!("{a:?}: exit {:?}: {}", r.code, r.stderr));
            continue;
        }
        let lines: Vec<Value> = r
            .stderr
            .lines()
            .filter(|l| l.starts_with('{'))
            .map(|l| serde_json::from_str(l).expect("io-stats JSON"))
            .collect();
        let named: Vec<&str> = lines.iter().filter_map(|v| v["sstable"].as_str()).collect();
        if named != data.iter().map(String::as_str).collect::<Vec<_>>() {
            failures.push(format!("{a:?}: lines name {named:?}"));
        }
        for v in &lines {
            for e in errors_of(v, &schema, None) {
                failures.push(format!("{a:?}: {e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
