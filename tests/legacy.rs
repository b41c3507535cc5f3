//! Pre-3.0 `ka`/`la` Data.db through the CLI with `--schema`: the nine
//! ScyllaDB multi-version sets dump the same logical data from ka, la and
//! md (dump-data and read); exact contents from MANIFEST.md / the upstream tests; the corrupt
//! legacy sets give the findings their upstream tests expect; without
//! `--schema` the data commands exit 3 and say why.
//!
//! Known, legitimate differences between the ka/la and md dumps (the md
//! files are *fresh writes* of the same statements by Cassandra 3.11.7, not
//! upgrades of the ka files):
//!
//! * every write and deletion timestamp (and so deletion time) differs: the
//!   statements ran at other times. Timestamps and deletion times are
//!   normalised before comparing.
//! * `multi_schema_test`: the md sstable was written after the schema change
//!   (only `e` left); ka/la hold the original columns b, c, d, e. Compared
//!   through the read schema of the upstream test instead, where only `e`
//!   survives in both.
//! * `wrong_range_tombstone_order`: `DELETE ... WHERE p=0 AND a=1 AND b=4 AND
//!   c=0` (a full primary key of a COMPACT STORAGE table) is a range
//!   tombstone over one clustering in the 2.x file, read as a row deletion
//!   (C\* 3.0 `LegacyLayout`, Scylla `is_single_clustering_row_tombstone`),
//!   but a cell tombstone of `r` in the 3.11 file.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{corpus, schema_file, scratch_dir, sstkit, Scratch};

/// The nine multi-version sets and their table (MANIFEST.md).
const MULTI: &[(&str, &str)] = &[
    ("counter_test", "CREATE TABLE ks.counter_test (pk int, ck int, c1 counter, c2 counter, PRIMARY KEY (pk, ck));"),
    ("large_partition", "CREATE TABLE try1.data (t1 text, t2 text, t3 text, PRIMARY KEY (t1, t2));"),
    ("multi_schema_test", "CREATE TABLE test.test_multi_schema (a int PRIMARY KEY, b int, c int, d set<int>, e int);"),
    ("partition_skipping", "CREATE TABLE ks.test_skipping_partitions (pk int PRIMARY KEY, v int);"),
    ("promoted_index_read", "CREATE TABLE ks.promoted_index_read (pk int, ck1 int, ck2 int, v int, PRIMARY KEY (pk, ck1, ck2));"),
    ("sliced_mutation_reads", "CREATE TABLE ks.sliced_mutation_reads_test (pk int, ck int, v1 int, v2 set<int>, PRIMARY KEY (pk, ck));"),
    ("summary_test", "CREATE TABLE test.summary_test (a int PRIMARY KEY);"),
    ("wrong_counter_shard_order", "CREATE TABLE scylla_bench.test_counters (pk bigint, ck bigint, c1 counter, c2 counter, c3 counter, c4 counter, c5 counter, PRIMARY KEY (pk, ck));"),
    ("wrong_range_tombstone_order", "CREATE TABLE ks.wrong_range_tombstone_order (p int, a int, b int, c int, r int, PRIMARY KEY (p, a, b, c)) WITH COMPACT STORAGE;"),
];

/// The read schema of Scylla's `check_multi_schema`.
const MULTI_SCHEMA_READ: &str =
    "CREATE TABLE test.test_multi_schema (a int PRIMARY KEY, c set<int>, d int, e blob);";

fn scratch(name: &str) -> Scratch {
    scratch_dir("legacy", name)
}

/// The one Data.db of `version` in `dir` (both naming schemes).
fn data_of(dir: &Path, version: &str) -> PathBuf {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.ends_with("-Data.db")
                && (n.starts_with(&format!("{version}-")) || n.contains(&format!("-{version}-")))
        })
        .collect();
    v.sort();
    v.into_iter()
        .next()
        .unwrap_or_else(|| panic!("no {version} Data.db in {}", dir.display()))
}

/// Replace every `"timestamp":N` and `"deletion_time":"..."` value.
fn normalize(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove("sstable");
            for (k, x) in m.iter_mut() {
                match k.as_str() {
                    "timestamp" if x.is_number() => *x = Value::from("T"),
                    "deletion_time" => *x = Value::from("D"),
                    _ => normalize(x),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(normalize),
        _ => {}
    }
}

/// dump-data --output ndjson, normalised, one value per partition.
fn dump(path: &Path, schema: Option<&Path>) -> Vec<Value> {
    let mut args = vec![
        "dump-data".to_string(),
        path.to_string_lossy().into_owned(),
        "-o".into(),
        "ndjson".into(),
    ];
    if let Some(s) = schema {
        args.push("--schema".into());
        args.push(s.to_string_lossy().into_owned());
    }
    ndjson(&args)
}

/// Run sstkit (exit 0 required); its NDJSON output, normalised.
fn ndjson(args: &[String]) -> Vec<Value> {
    let r = sstkit(args);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    r.stdout
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            normalize(&mut v);
            v
        })
        .collect()
}

#[test]
fn multi_version_sets_dump_the_same_from_ka_la_and_md() {
    let Some(root) = corpus() else { return };
    let tmp = scratch("multi");
    let mut failures = Vec::new();
    for (set, cql) in MULTI {
        let dir = root.join("scylladb").join(set);
        if !dir.is_dir() {
            eprintln!("skipping absent corpus set {set}");
            continue;
        }
        let (cql, md_schema) = if *set == "multi_schema_test" {
            (MULTI_SCHEMA_READ, true)
        } else {
            (*cql, false)
        };
        let schema = schema_file(&tmp, set, cql);
        // md carries its own header; with the read schema it is compared
        // by the column that survives (below).
        let md = dump(&data_of(&dir, "md"), None);
        for v in ["ka", "la"] {
            let got = dump(&data_of(&dir, v), Some(&schema));
            let same = if md_schema {
                // Only e = 5 survives; md shows it as int, the read schema as blob.
                let e = |d: &[Value]| {
                    d.iter()
                        .map(|p| p["clustering_elements"][0]["columns"]["e"]["value"].clone())
                        .collect::<Vec<_>>()
                };
                let cols = |d: &[Value]| {
                    d.iter()
                        .map(|p| {
                            p["clustering_elements"][0]["columns"]
                                .as_object()
                                .map(|m| m.len())
                        })
                        .collect::<Vec<_>>()
                };
                e(&md) == [Value::from("5")]
                    && e(&got) == [Value::from("00000005")]
                    && cols(&got) == [Some(1)]
            } else if *set == "wrong_range_tombstone_order" {
                // Row (1,4,0): a row deletion in 2.x, a cell tombstone in 3.11.
                let strip = |d: &[Value]| {
                    let mut d = d.to_vec();
                    for p in &mut d {
                        if let Some(a) = p["clustering_elements"].as_array_mut() {
                            a.retain(|e| e["key"]["value"] != "1:4:0");
                        }
                    }
                    d
                };
                let row = |d: &[Value]| {
                    d.iter()
                        .flat_map(|p| {
                            p["clustering_elements"]
                                .as_array()
                                .cloned()
                                .unwrap_or_default()
                        })
                        .find(|e| e["key"]["value"] == "1:4:0")
                };
                strip(&md) == strip(&got)
                    && row(&got).is_some_and(|r| r["tombstone"]["timestamp"] == "T")
                    && row(&md).is_some_and(|r| r["columns"]["r"]["is_live"] == false)
            } else {
                md == got
            };
            if !same {
                failures.push(format!(
                    "{set} {v}:\n  md: {}\n  {v}: {}",
                    serde_json::to_string(&md)
                        .unwrap()
                        .chars()
                        .take(2000)
                        .collect::<String>(),
                    serde_json::to_string(&got)
                        .unwrap()
                        .chars()
                        .take(2000)
                        .collect::<String>()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_output_format_reads_ka_and_la() {
    let Some(root) = corpus() else { return };
    let tmp = scratch("formats");
    let schema = schema_file(&tmp, "complex", COMPLEX);
    let dir = root.join("scylladb/complex");
    if !dir.is_dir() {
        return;
    }
    for f in [
        "json",
        "ndjson",
        "sstabledump",
        "sstabledump-lines",
        "text",
        "cql",
    ] {
        let r = sstkit([
            "dump-data",
            dir.to_str().unwrap(),
            "-o",
            f,
            "--schema",
            schema.to_str().unwrap(),
        ]);
        assert_eq!(r.code, 0, "{f}: {}", r.stderr);
        assert!(r.stdout.len() > 100, "{f}: {}", r.stdout);
    }
}

/// `scylladb/complex` (sstable_mutation_test.cc `complex_schema`).
const COMPLEX: &str = "CREATE TABLE tests.complex_schema (key blob, clust1 blob, clust2 blob, \
    reg_set set<blob>, reg_list list<blob>, reg_map map<blob, blob>, reg_fset frozen<set<blob>>, \
    reg blob, static_obj blob static, static_collection set<blob> static, \
    PRIMARY KEY (key, clust1, clust2));";

#[test]
fn exact_contents_from_the_manifest() {
    let Some(root) = corpus() else { return };
    let tmp = scratch("exact");
    // uncompressed: 4 partitions in data order vinna, gustaf, isak, finna.
    let s = schema_file(
        &tmp,
        "u",
        "CREATE TABLE ks.uncompressed (name text PRIMARY KEY, col1 text, col2 int);",
    );
    let d = dump(
        &root.join("scylladb/uncompressed/la-1-big-Data.db"),
        Some(&s),
    );
    let got: Vec<(String, String, String)> = d
        .iter()
        .map(|p| {
            let c = &p["clustering_elements"][0]["columns"];
            (
                p["key"]["value"].as_str().unwrap().to_string(),
                c["col1"]["value"].as_str().unwrap().to_string(),
                c["col2"]["value"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = [
        ("vinna", "daughter", "3"),
        ("gustaf", "son", "0"),
        ("isak", "son", "1"),
        ("finna", "daughter", "2"),
    ];
    assert_eq!(
        got,
        want.map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    );
    // bloom-filter-ka: foo.cql's sstable2json dump, keys 1..10 with val = key.
    let s = schema_file(
        &tmp,
        "b",
        "CREATE TABLE foo.atable (pk int PRIMARY KEY, val int);",
    );
    let d = dump(&root.join("cassandra/bloom-filter-ka"), Some(&s));
    assert_eq!(d.len(), 10);
    for p in &d {
        assert_eq!(
            p["key"]["value"],
            p["clustering_elements"][0]["columns"]["val"]["value"]
        );
    }
    // broken_ranges: 127.0.0.3 has tokens {'-8180144272884242102'} and a
    // collection tombstone; 127.0.0.2 a partition tombstone.
    let s = schema_file(
        &tmp,
        "p",
        "CREATE TABLE system.peers (peer inet PRIMARY KEY, data_center text, host_id uuid, \
         preferred_ip inet, rack text, release_version text, rpc_address inet, \
         schema_version uuid, tokens set<text>);",
    );
    let r = sstkit([
        "dump-data",
        root.join("scylladb/broken_ranges").to_str().unwrap(),
        "-o",
        "ndjson",
        "--raw-timestamps",
        "--schema",
        s.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("-8180144272884242102"), "{}", r.stdout);
}

#[test]
fn without_schema_data_commands_say_why() {
    let Some(root) = corpus() else { return };
    let dir = root.join("cassandra/legacy_ka_simple");
    if !dir.is_dir() {
        return;
    }
    for cmd in ["dump-data", "validate", "scrub"] {
        let r = sstkit([cmd, dir.to_str().unwrap()]);
        // validate runs the checks that need no schema and lists the skipped ones.
        let want = if cmd == "validate" { 0 } else { 3 };
        assert_eq!(r.code, want, "{cmd}: {}{}", r.stdout, r.stderr);
        let all = format!("{}{}", r.stdout, r.stderr);
        assert!(all.contains("--schema"), "{cmd}: {all}");
        assert!(
            all.contains("legacy_ka_simple-ka-1-Data.db"),
            "{cmd}: {all}"
        );
    }
}

#[test]
fn intact_legacy_sstables_validate_and_scrub_clean() {
    let Some(root) = corpus() else { return };
    let tmp = scratch("valid");
    let mut failures = Vec::new();
    for (set, cql) in MULTI {
        let dir = root.join("scylladb").join(set);
        if !dir.is_dir() {
            continue;
        }
        let s = schema_file(&tmp, set, cql);
        for v in ["ka", "la"] {
            let f = data_of(&dir, v);
            for cmd in ["validate", "scrub"] {
                let r = sstkit([cmd, f.to_str().unwrap(), "--schema", s.to_str().unwrap()]);
                if r.code != 0 {
                    failures.push(format!(
                        "{cmd} {set} {v}: exit {}: {}{}",
                        r.code,
                        r.stdout.chars().take(1500).collect::<String>(),
                        r.stderr
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// CASSANDRA-10791 (cassandra-2.1 `ScrubTest.testScrub10791`: "scrub -> 7
/// cells"): 2.1 wrote range tombstones after a partition's end marker.
/// `scrub --mode segregate` puts the two partitions in the main output and
/// the two stray tombstones, as fragments of their partitions, in the
/// segregated one: 4 + 1 + 1 + 1 = 7 atoms (rows and tombstone ranges).
#[test]
fn cassandra_10791_scrub_recovers_seven_cells() {
    let Some(root) = corpus() else { return };
    let dir = root.join("cassandra/corrupt-ka-Keyspace1-StandardInteger1");
    if !dir.is_dir() {
        return;
    }
    let tmp = scratch("10791");
    let schema = schema_file(
        &tmp,
        "si",
        "CREATE TABLE \"Keyspace1\".\"StandardInteger1\" (key blob, column1 varint, \
         value blob, PRIMARY KEY (key, column1)) WITH COMPACT STORAGE;",
    );
    let out = tmp.join("out");
    let r = sstkit([
        "scrub",
        dir.to_str().unwrap(),
        "--mode",
        "segregate",
        "--salvage-format",
        "ndjson",
        "--output-dir",
        out.to_str().unwrap(),
        "--schema",
        schema.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    // (key, rows, tombstone ranges) per output line.
    let read = |suffix: &str| -> Vec<(String, usize, usize)> {
        let f = std::fs::read_dir(&out)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().ends_with(suffix))
            .unwrap();
        std::fs::read_to_string(f)
            .unwrap()
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                let els = v["clustering_elements"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let rows = els.iter().filter(|e| e["type"] == "clustering-row").count();
                let opens = els
                    .iter()
                    .filter(|e| {
                        e["type"] == "range-tombstone-change"
                            && e["tombstone"]["timestamp"].is_number()
                    })
                    .count();
                (v["key"]["raw"].as_str().unwrap().to_string(), rows, opens)
            })
            .collect()
    };
    let main = read("-salvaged.ndjson");
    let seg = read("-segregated.ndjson");
    assert_eq!(
        main,
        [
            ("6b657930".to_string(), 2, 2),
            ("6b657931".to_string(), 1, 0)
        ]
    );
    assert_eq!(
        seg,
        [
            ("6b657930".to_string(), 0, 1),
            ("6b657931".to_string(), 0, 1)
        ]
    );
    let atoms: usize = main.iter().chain(&seg).map(|(_, r, t)| r + t).sum();
    assert_eq!(atoms, 7);
}

/// `read` on ka/la (whole-partition reads, the slice clipped) returns what
/// the md sstable of the same set returns, timestamps aside.
#[test]
fn read_slices_agree_with_md() {
    let Some(root) = corpus() else { return };
    let tmp = scratch("read");
    let cases: &[(&str, &[&str])] = &[
        (
            "large_partition",
            &["-k", "v1", "--from", "5aA", "--to", "5cZ"],
        ),
        ("large_partition", &["-k", "v1", "--after", "9zX"]),
        ("promoted_index_read", &["-k", "0", "--from", "0:1"]),
        (
            "sliced_mutation_reads",
            &["-k", "0", "--from", "1", "--before", "4"],
        ),
        ("partition_skipping", &["-k", "7", "-k", "3"]),
    ];
    let mut failures = Vec::new();
    for (set, args) in cases {
        let dir = root.join("scylladb").join(set);
        if !dir.is_dir() {
            continue;
        }
        let cql = MULTI.iter().find(|m| m.0 == *set).unwrap().1;
        let schema = schema_file(&tmp, set, cql);
        let run = |f: &Path, with_schema: bool| -> Vec<Value> {
            let mut a: Vec<String> = vec!["read".into(), f.to_string_lossy().into_owned()];
            a.extend(args.iter().map(|s| s.to_string()));
            a.extend(["-o".to_string(), "ndjson".to_string()]);
            if with_schema {
                a.extend([
                    "--schema".to_string(),
                    schema.to_string_lossy().into_owned(),
                ]);
            }
            ndjson(&a)
        };
        let md = run(&data_of(&dir, "md"), false);
        assert!(!md.is_empty(), "{set} {args:?}: empty md read");
        for v in ["ka", "la"] {
            let got = run(&data_of(&dir, v), true);
            if got != md {
                failures.push(format!("{set} {v} {args:?}:\n  md: {md:?}\n  {v}: {got:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `lb` (Cassandra 2.2.7+: `la` plus the commit log lower bound in
/// Statistics.db). Cassandra's `invalid-legacy-cf_with_duplicates_2_0`
/// (ScrubTest.testUpgradeSstablesWithDuplicates): the 2.x cells of one
/// clustering, a row tombstone and a live cell, are one row; upstream expects
/// 1 row after upgradesstables. Nothing to report for validate.
#[test]
fn lb_duplicates_set_reads_as_one_row() {
    let Some(root) = corpus() else { return };
    let tmp = scratch("lb");
    let s = schema_file(
        &tmp,
        "dup",
        "CREATE TABLE ks.cf_with_duplicates_2_0 (a int, b int, c int, PRIMARY KEY (a, b));",
    );
    let dir = root.join("cassandra/invalid-legacy-cf_with_duplicates_2_0");
    let d = dump(&data_of(&dir, "lb"), Some(&s));
    assert_eq!(d.len(), 1, "{d:?}");
    let rows = d[0]["clustering_elements"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["key"]["value"], "2");
    assert_eq!(rows[0]["columns"]["c"]["value"], "3");
    assert!(rows[0].get("tombstone").is_some(), "{rows:?}");
    let args = [
        "validate".to_string(),
        dir.to_string_lossy().into_owned(),
        "--schema".into(),
        s.to_string_lossy().into_owned(),
    ];
    let r = sstkit(&args);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // Statistics.db ends with the commit log lower bound (its last 12 bytes:
    // segment 0x00000155de5ee72f, position 0x00026eed).
    let r = sstkit(["dump-statistics", "-o", "json", &dir.to_string_lossy()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains(r#""commitlog_lower_bound":{"id":1468314609455,"pos":159469}"#),
        "{}",
        r.stdout
    );
}

/// `info` on a ka sstable with `--schema` prints its first and last keys
/// decoded, as they are pasted into `--key`, not as hex.
#[test]
fn info_prints_legacy_keys_decoded_with_the_schema() {
    let Some(root) = corpus() else { return };
    let dir = root.join("cassandra/legacy_ka_simple");
    if !dir.is_dir() {
        return;
    }
    let tmp = scratch("info-keys");
    let s = schema_file(
        &tmp,
        "legacy_ka_simple",
        "CREATE TABLE legacy_tables.legacy_ka_simple (pk text PRIMARY KEY, val text);",
    );
    let r = sstkit([
        "info",
        "-o",
        "json",
        "--schema",
        s.to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let sst = v["sstables"].as_object().unwrap().values().next().unwrap();
    for k in ["first_key", "last_key"] {
        let raw = sst[k]["raw"].as_str().unwrap();
        let text = String::from_utf8(
            (0..raw.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&raw[i..i + 2], 16).unwrap())
                .collect(),
        )
        .unwrap();
        assert_eq!(sst[k]["value"], text.as_str(), "{k}: {sst}");
    }
    let r = sstkit([
        "info",
        "--schema",
        s.to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    assert!(r.stdout.contains(" 0 (token 30, 0x30)"), "{}", r.stdout);
}
