//! `--merge`: the sstables of a table read as one.
//!
//! * `read --merge` for the single-partition, slice, multi-column slice,
//!   prefix and reversed queries of the merge tables' `select.json` (the
//!   rows a live Cassandra 5.0 returned), in nb, oa and da: the live rows'
//!   clustering keys, in order, and their simple column values equal the
//!   node's (the json output projected to CQL rows by this test).
//! * `dump-data --merge` of every merge table: the same projection equals
//!   the `all` query.
//! * `dump-data --merge -o sstabledump` of every merge table equals
//!   Cassandra's sstabledump of the sstable a node's `nodetool compact` made
//!   of the same sstables (`fixtures/make-compaction-expected.py`), and
//!   `compact` of them dumps as that sstable, positions included.
//! * Sstables of different tables: exit 2, naming both files.
//! * Pre-3.0 (ka, with `--schema`) and 3.x (mc, me) sstables of one table
//!   merge: Scylla's test data, with the values and the range counts its
//!   tests assert.
//! * A merged slice read seeks through each sstable's row index (BIG and
//!   BTI), and a range tombstone opened before the first block read still
//!   shadows the slice's rows.

use serde_json::Value;

use std::path::Path;

use crate::util::{corpus, fixtures, schema_file, scratch_dir, sstkit, write_from};

/// One query of select.json mapped to `read` arguments.
struct Q {
    table: &'static str,
    n: usize,
    name: &'static str,
    args: &'static [&'static str],
}

const QUERIES: &[Q] = &[
    Q {
        table: "merge_overwrite",
        n: 3,
        name: "partition_6",
        args: &["-k", "6"],
    },
    Q {
        table: "merge_overwrite",
        n: 3,
        name: "partition_10",
        args: &["-k", "10"],
    },
    Q {
        table: "merge_overwrite",
        n: 3,
        name: "slice_reversed",
        args: &["-k", "4", "--from", "2", "--to", "7", "--reverse"],
    },
    Q {
        table: "merge_overwrite",
        n: 3,
        name: "absent_partition",
        args: &["-k", "99"],
    },
    Q {
        table: "merge_range",
        n: 3,
        name: "partition_1",
        args: &["-k", "1"],
    },
    Q {
        table: "merge_range",
        n: 3,
        name: "slice",
        args: &["-k", "0", "--from", "2", "--to", "3"],
    },
    Q {
        table: "merge_range",
        n: 3,
        name: "multi_column_slice",
        args: &["-k", "1", "--from", "0:d", "--to", "4:b"],
    },
    Q {
        table: "merge_range",
        n: 3,
        name: "reversed",
        args: &["-k", "3", "--reverse"],
    },
    Q {
        table: "merge_range",
        n: 3,
        name: "prefix",
        args: &["-k", "4", "--from", "3", "--to", "3"],
    },
    Q {
        table: "merge_partition_delete",
        n: 3,
        name: "partition_0",
        args: &["-k", "0"],
    },
    Q {
        table: "merge_partition_delete",
        n: 3,
        name: "partition_1",
        args: &["-k", "1"],
    },
    Q {
        table: "merge_partition_delete",
        n: 3,
        name: "partition_2",
        args: &["-k", "2"],
    },
    Q {
        table: "merge_partition_delete",
        n: 3,
        name: "partition_7",
        args: &["-k", "7"],
    },
    Q {
        table: "merge_partition_delete",
        n: 3,
        name: "tombstone_only_partition",
        args: &["-k", "50"],
    },
    Q {
        table: "merge_partition_delete",
        n: 3,
        name: "slice",
        args: &["-k", "5", "--from", "8"],
    },
    Q {
        table: "merge_collections",
        n: 3,
        name: "partition_0",
        args: &["-k", "0"],
    },
    Q {
        table: "merge_collections",
        n: 3,
        name: "reversed",
        args: &["-k", "1", "--reverse"],
    },
    Q {
        table: "merge_collections",
        n: 3,
        name: "static_only",
        args: &["-k", "6"],
    },
    Q {
        table: "merge_collections",
        n: 3,
        name: "static_deleted",
        args: &["-k", "7"],
    },
];

pub(crate) fn cases(run: &str, table: &str, n: usize) -> Option<Vec<String>> {
    let v: Vec<_> = (1..=n)
        .map(|i| fixtures().join(format!("{run}_{table}_{i}")))
        .collect();
    if v.iter().all(|d| d.is_dir()) {
        Some(v.iter().map(|d| d.display().to_string()).collect())
    } else {
        eprintln!("skipping {run}_{table}: fixtures absent");
        None
    }
}

pub(crate) fn select(case: &str, name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(format!("{case}/select.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let q = v
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["name"] == name)
        .unwrap_or_else(|| panic!("no query {name} in {case}"));
    q["rows"].as_array().unwrap().clone()
}

/// A CQL value as this test compares it: the text of a scalar, "set" for
/// anything else that is not null.
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Array(a) if a.is_empty() => None,
        Value::Object(o) if o.is_empty() => None,
        _ => Some("set".into()),
    }
}

/// A column of the scylla json output as [`scalar`] sees it (live only).
fn column(v: &Value) -> Option<String> {
    if let Some(cells) = v.get("cells") {
        let live = cells
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["value"]["is_live"] == true);
        return live.then(|| "set".into());
    }
    if v["is_live"] == true {
        // Frozen collections are one cell: compared as "set" like the others.
        v["value"].as_str().map(|s| {
            if s.starts_with('[') || s.starts_with('{') {
                "set".to_string()
            } else {
                s.to_string()
            }
        })
    } else {
        None
    }
}

pub(crate) type CqlRow = (Option<String>, Vec<(String, Option<String>)>);

/// The CQL rows of `read`/`dump-data --merge -o ndjson` output: clustering
/// key text (`a:b`) and each column's value, statics included.
pub(crate) fn project(ndjson: &str, pk: &str, cks: &[&str]) -> Vec<CqlRow> {
    let mut out = Vec::new();
    for line in ndjson.lines().filter(|l| !l.trim().is_empty()) {
        let p: Value = serde_json::from_str(line).unwrap();
        let key = p["key"]["value"].as_str().unwrap().to_string();
        let mut statics: Vec<(String, Option<String>)> = Vec::new();
        let mut static_live = false;
        if let Some(s) = p["static_row"].as_object() {
            for (n, v) in s {
                let c = column(v);
                static_live |= c.is_some();
                statics.push((n.clone(), c));
            }
        }
        let mut rows = 0;
        for e in p["clustering_elements"].as_array().into_iter().flatten() {
            if e["type"] != "clustering-row" {
                continue;
            }
            let mut cols: Vec<(String, Option<String>)> = vec![(pk.to_string(), Some(key.clone()))];
            let mut live = e.get("marker").is_some();
            for (n, v) in e["columns"].as_object().unwrap() {
                let c = column(v);
                live |= c.is_some();
                cols.push((n.clone(), c));
            }
            if !live {
                continue;
            }
            rows += 1;
            cols.extend(statics.iter().cloned());
            out.push((e["key"]["value"].as_str().map(str::to_string), cols));
        }
        if rows == 0 && static_live {
            let mut cols = vec![(pk.to_string(), Some(key.clone()))];
            cols.extend(statics);
            out.push((None, cols));
        }
    }
    let _ = cks;
    out
}

/// select.json rows in the same shape.
pub(crate) fn expected(rows: &[Value], pk: &str, cks: &[&str]) -> Vec<CqlRow> {
    rows.iter()
        .map(|r| {
            let o = r.as_object().unwrap();
            let ck: Vec<String> = cks.iter().filter_map(|c| scalar(&o[*c])).collect();
            let ck = (!ck.is_empty()).then(|| ck.join(":"));
            let cols = o
                .iter()
                .filter(|(n, _)| !cks.contains(&n.as_str()))
                .map(|(n, v)| (n.clone(), scalar(v)))
                .collect();
            let _ = pk;
            (ck, cols)
        })
        .collect()
}

pub(crate) fn compare(got: &[CqlRow], want: &[CqlRow], what: &str) {
    let keys = |v: &[CqlRow]| v.iter().map(|r| r.0.clone()).collect::<Vec<_>>();
    assert_eq!(keys(got), keys(want), "{what}: clustering keys");
    for (g, w) in got.iter().zip(want) {
        for (n, wv) in &w.1 {
            let gv =
                g.1.iter()
                    .find(|(m, _)| m == n)
                    .and_then(|(_, v)| v.clone());
            assert_eq!(&gv, wv, "{what}: row {:?} column {n}", w.0);
        }
    }
}

pub(crate) fn cks(table: &str) -> &'static [&'static str] {
    if table == "merge_range" {
        &["c1", "c2"]
    } else {
        &["ck"]
    }
}

#[test]
fn read_merge_equals_select() {
    for run in ["nb", "oa", "da"] {
        for q in QUERIES {
            let Some(dirs) = cases(run, q.table, q.n) else {
                continue;
            };
            let mut args = vec![
                "read".to_string(),
                "--clustering-order".to_string(),
                "--merge".into(),
                "-o".into(),
                "ndjson".into(),
            ];
            args.extend(q.args.iter().map(|s| s.to_string()));
            args.extend(dirs.iter().cloned());
            let r = sstkit(&args);
            assert_eq!(r.code, 0, "{run} {} {}: {}", q.table, q.name, r.stderr);
            let got = project(&r.stdout, "pk", cks(q.table));
            let want = expected(&select(&dirs[0], q.name), "pk", cks(q.table));
            compare(&got, &want, &format!("{run}_{} {}", q.table, q.name));
        }
    }
}

#[test]
fn dump_data_merge_equals_select() {
    for run in ["nb", "oa", "da"] {
        for (table, n) in [
            ("merge_overwrite", 3),
            ("merge_range", 3),
            ("merge_partition_delete", 3),
            ("merge_collections", 3),
            ("deletes_merge", 2),
        ] {
            let Some(dirs) = cases(run, table, n) else {
                continue;
            };
            let mut args = vec![
                "dump-data".to_string(),
                "--merge".into(),
                "-o".into(),
                "ndjson".into(),
            ];
            args.extend(dirs.iter().cloned());
            let r = sstkit(&args);
            assert_eq!(r.code, 0, "{run}_{table}: {}", r.stderr);
            let got = project(&r.stdout, "pk", cks(table));
            let want = expected(&select(&dirs[0], "all"), "pk", cks(table));
            compare(&got, &want, &format!("{run}_{table} all"));
            // Reversed partitions hold the same rows, last first.
            args.push("--reverse".into());
            let r = sstkit(&args);
            assert_eq!(r.code, 0, "{run}_{table} --reverse: {}", r.stderr);
            let rev = project(&r.stdout, "pk", cks(table));
            let by_partition = |rows: &[CqlRow]| {
                let mut m: std::collections::BTreeMap<Option<String>, Vec<Option<String>>> =
                    Default::default();
                for r in rows {
                    m.entry(r.1[0].1.clone()).or_default().push(r.0.clone());
                }
                m
            };
            let mut fwd = by_partition(&got);
            for v in fwd.values_mut() {
                v.reverse();
            }
            assert_eq!(by_partition(&rev), fwd, "{run}_{table} --reverse");
        }
    }
}

#[test]
fn merge_of_different_tables_is_a_usage_error() {
    let Some(a) = cases("nb", "merge_overwrite", 1) else {
        return;
    };
    let Some(b) = cases("nb", "merge_range", 1) else {
        return;
    };
    for cmd in [
        &["dump-data", "--merge"][..],
        &["read", "--clustering-order", "--merge", "-k", "1"][..],
    ] {
        let mut args: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
        args.push(a[0].clone());
        args.push(b[0].clone());
        let r = sstkit(&args);
        assert_eq!(r.code, 2, "{cmd:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("nb_merge_overwrite_1") && r.stderr.contains("nb_merge_range_1"),
            "{cmd:?}: both files named: {}",
            r.stderr
        );
        assert!(r.stderr.contains("clustering types"), "{}", r.stderr);
    }
}

/// A merged JSON document has one entry, labelled with the sstables it
/// merges, and no `sstable_refs` for it: no one sstable is that entry (the
/// last sstable's ref was given before). A single dump keeps its ref.
#[test]
fn merged_json_has_no_sstable_ref() {
    let Some(a) = cases("nb", "merge_overwrite", 3) else {
        return;
    };
    for cmd in [
        &["dump-data", "--merge", "-o", "json"][..],
        &[
            "read",
            "--clustering-order",
            "--merge",
            "-k",
            "1",
            "-o",
            "json",
        ][..],
        &[
            "read",
            "--clustering-order",
            "--merge",
            "-k",
            "123456",
            "-o",
            "json",
        ][..],
    ] {
        let mut args: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
        args.extend(a.iter().cloned());
        let r = sstkit(&args);
        assert_eq!(r.code, 0, "{cmd:?}: {}", r.stderr);
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        let labels: Vec<&String> = v["sstables"].as_object().unwrap().keys().collect();
        assert_eq!(labels.len(), 1, "{cmd:?}: {v}");
        assert_eq!(labels[0].matches(" + ").count(), 2, "{cmd:?}: {v}");
        assert!(v.get("sstable_refs").is_none(), "{cmd:?}: {v}");
    }
    let r = sstkit(["dump-data", "-o", "json", &a[0]]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let refs = v["sstable_refs"].as_object().unwrap();
    assert_eq!(refs.len(), 1, "{v}");
    assert_eq!(refs.values().next().unwrap()["version"], "nb", "{v}");
}

/// A merge of one sstable prints what dump-data prints for it, byte for
/// byte (positions included: merged rows keep their source's).
#[test]
fn merge_of_one_sstable_equals_dump() {
    for case in [
        "nb_deletes",
        "oa_range_tombstones",
        "da_collections",
        "nb_clustering",
        "oa_counters",
        "da_udt",
    ] {
        let dir = fixtures().join(case);
        if !dir.is_dir() {
            continue;
        }
        let d = dir.display().to_string();
        for fmt in ["text", "sstabledump", "sstabledump-lines"] {
            let plain = sstkit(["dump-data", "-o", fmt, d.as_str()]);
            let merged = sstkit(["dump-data", "--merge", "-o", fmt, d.as_str()]);
            assert_eq!(plain.code, 0);
            assert_eq!(merged.code, 0, "{}", merged.stderr);
            assert!(merged.stdout == plain.stdout, "{case} -o {fmt}: differs");
        }
    }
}

/// `dump-data --merge -k K` (each sstable's index) prints what the merged
/// scan prints for K.
#[test]
fn merge_key_lookup_equals_scan() {
    for run in ["nb", "oa", "da"] {
        for table in ["merge_overwrite", "merge_range", "merge_partition_delete"] {
            let Some(dirs) = cases(run, table, 3) else {
                continue;
            };
            let mut scan = vec![
                "dump-data".to_string(),
                "--merge".into(),
                "-o".into(),
                "text".into(),
            ];
            scan.extend(dirs.iter().cloned());
            let all = sstkit(&scan);
            assert_eq!(all.code, 0, "{}", all.stderr);
            for k in ["0", "1", "4"] {
                let mut args = scan.clone();
                args.extend(["-k".to_string(), k.to_string()]);
                let one = sstkit(&args);
                assert_eq!(one.code, 0, "{}", one.stderr);
                let prefix = format!("[{k}]@");
                let want: String = all
                    .stdout
                    .lines()
                    .filter(|l| l.starts_with(&prefix))
                    .map(|l| format!("{l}\n"))
                    .collect();
                assert!(!want.is_empty(), "{run}_{table}: key {k} in the scan");
                // Positions are the first contributing sstable's, and a
                // lookup may skip an sstable a scan reads (early stop).
                assert_eq!(
                    no_positions(&one.stdout),
                    no_positions(&want),
                    "{run}_{table} -k {k}"
                );
            }
        }
    }
}

/// Text dump lines without their `@position`.
fn no_positions(text: &str) -> String {
    text.lines()
        .map(|l| match l.split_once('@') {
            Some((head, tail)) => {
                let rest = tail.trim_start_matches(|c: char| c.is_ascii_digit());
                format!("{head}{rest}\n")
            }
            None => format!("{l}\n"),
        })
        .collect()
}

/// `read --merge --io-stats=json`: one entry per sstable and a total; the
/// filter says no before any read; an sstable older than a partition
/// deletion already seen is not read; one whose clustering range cannot
/// hold the slice gives only its header.
#[test]
fn read_merge_io_stats_per_sstable() {
    for run in ["nb", "oa", "da"] {
        let Some(dirs) = cases(run, "merge_partition_delete", 3) else {
            continue;
        };
        let entries = |extra: &[&str]| -> Vec<Value> {
            let mut args: Vec<String> = [
                "read",
                "--clustering-order",
                "--merge",
                "--io-stats=json",
                "-o",
                "ndjson",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            args.extend(extra.iter().map(|s| s.to_string()));
            args.extend(dirs.iter().cloned());
            let r = sstkit(&args);
            assert_eq!(r.code, 0, "{}", r.stderr);
            r.stderr
                .lines()
                .filter(|l| l.starts_with('{'))
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        };
        let reads = |e: &Value| e["total"]["reads"].as_u64().unwrap();
        // Key 0: deleted in _2 (M2) after _1's rows; _1 (older) is not read.
        let e = entries(&["-k", "0"]);
        assert_eq!(e.len(), 4, "{run}: three sstables and the total");
        assert!(
            e[0]["result"]
                .as_str()
                .unwrap()
                .contains("partition deletion"),
            "{run}: {}",
            e[0]
        );
        assert_eq!(reads(&e[0]), 0);
        assert_eq!(e[1]["result"], "read");
        assert_eq!(e[3]["sstable"], "total");
        assert_eq!(reads(&e[3]), reads(&e[1]) + reads(&e[2]));
        // Key 50 (tombstone only, in _2): _3's filter says no, and _1 is
        // older than that deletion: neither costs a read.
        let e = entries(&["-k", "50"]);
        assert!(
            e[2]["result"]
                .as_str()
                .unwrap()
                .starts_with("skipped: absent"),
            "{run}: {}",
            e[2]
        );
        assert_eq!(reads(&e[2]), 0);
        assert_eq!(reads(&e[0]), 0);
        assert_eq!(e[1]["result"], "read");
        // Key 5 from 100: beyond every row: headers only.
        let e = entries(&["-k", "5", "--from", "100"]);
        assert!(
            e.iter().take(3).any(|x| x["result"]
                .as_str()
                .unwrap()
                .starts_with("partition header only")),
            "{run}: {e:?}"
        );
    }
}

/// The clustering-range skip against Cassandra's own reading of each
/// sstable's Statistics.db (`sstablemetadata`'s "Covered clusterings",
/// which for nb comes from the legacy min/max values): an sstable whose
/// covered range ends before the slice gives only its partition header
/// (no more Data.db reads than a full read of it), the others are read; and
/// the sliced merge holds the same rows as the whole partition's merge cut
/// to the slice. merge_range's nb sstables hold open-ended range tombstones
/// ("ALL", "[0:a, ]"): those must be read.
#[test]
fn read_merge_skips_by_covered_clustering_as_cassandra_reads_it() {
    for run in ["nb", "oa", "da"] {
        for (table, key, from) in [("merge_overwrite", "4", 8), ("merge_range", "1", 6)] {
            let Some(dirs) = cases(run, table, 3) else {
                continue;
            };
            let run_read = |extra: &[&str]| {
                let mut args = vec![
                    "read",
                    "--clustering-order",
                    "--merge",
                    "--io-stats=json",
                    "-o",
                    "cql",
                    "-k",
                    key,
                ];
                args.extend(extra);
                args.extend(dirs.iter().map(String::as_str));
                let r = sstkit(&args);
                assert_eq!(r.code, 0, "{}", r.stderr);
                let stats: Vec<Value> = r
                    .stderr
                    .lines()
                    .filter(|l| l.starts_with('{'))
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect();
                let rows: Vec<Value> = r
                    .stdout
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect();
                (stats, rows)
            };
            let from_s = from.to_string();
            let (stats, rows) = run_read(&["--from", &from_s]);
            let (full_stats, all_rows) = run_read(&[]);
            let first_ck = if table == "merge_range" { "c1" } else { "ck" };
            let cut: Vec<Value> = all_rows
                .into_iter()
                .filter(|r| r[first_ck].as_i64().unwrap() >= from)
                .collect();
            assert_eq!(rows, cut, "{run} {table}");
            let mut skipped = 0;
            for (i, dir) in dirs.iter().enumerate() {
                let meta = std::fs::read_to_string(format!("{dir}/sstablemetadata.txt")).unwrap();
                let covered = meta
                    .lines()
                    .find_map(|l| l.strip_prefix("Covered clusterings: "))
                    .unwrap();
                // "[lo, hi]": the slice is beyond it when hi's first value is below `from`.
                let hi = covered
                    .strip_suffix(']')
                    .and_then(|c| c.rsplit(", ").next())
                    .and_then(|h| h.split(':').next())
                    .and_then(|h| h.parse::<i64>().ok());
                let outside = hi.is_some_and(|h| h < from);
                let result = stats[i]["result"].as_str().unwrap();
                assert_eq!(
                    result.starts_with("partition header only"),
                    outside,
                    "{run} {table} {dir} ({covered}): {result}"
                );
                // Never more than a full read of it (these fixtures are one
                // chunk each, so a header costs that chunk too).
                let reads = |e: &Value| e["components"]["data"]["reads"].as_u64();
                if outside {
                    skipped += 1;
                    assert!(
                        reads(&stats[i]) <= reads(&full_stats[i]),
                        "{run} {table} {dir}"
                    );
                }
            }
            assert!(skipped > 0, "{run} {table}: nothing skipped");
        }
    }
}

/// Sstables of one table in different versions (nb, oa and da: after an
/// upgrade) merge to what the same table merges to in one version; only
/// local deletion times, which each run wrote at its own clock, differ.
#[test]
fn mixed_versions_merge() {
    for table in [
        "merge_overwrite",
        "merge_range",
        "merge_partition_delete",
        "merge_collections",
    ] {
        let (Some(nb), Some(oa), Some(da)) = (
            cases("nb", table, 3),
            cases("oa", table, 3),
            cases("da", table, 3),
        ) else {
            continue;
        };
        let text = |dirs: [&String; 3]| {
            let mut args = vec![
                "dump-data".to_string(),
                "--merge".into(),
                "-o".into(),
                "ndjson".into(),
            ];
            args.extend(dirs.iter().map(|d| d.to_string()));
            let r = sstkit(&args);
            assert_eq!(r.code, 0, "{}", r.stderr);
            project(&r.stdout, "pk", cks(table))
        };
        let mixed = text([&nb[0], &oa[1], &da[2]]);
        let same = text([&nb[0], &nb[1], &nb[2]]);
        assert_eq!(mixed, same, "{table}: nb + oa + da");
        assert!(!mixed.is_empty());
    }
}

/// A ka sstable (read with `--schema`) merges with mc and me sstables of the
/// same table. Scylla's `counter_test` and `large_partition` hold the same
/// data in each version; its tests assert the counter values (c1 = 13,
/// c2 = -92, row 1's c1 deleted) and the row counts of five slices of the
/// 13,520-row partition.
#[test]
fn legacy_and_3x_versions_merge() {
    let Some(c) = corpus() else { return };
    let dir = c.join("scylladb");
    if !dir.join("counter_test").is_dir() || !dir.join("large_partition").is_dir() {
        eprintln!("skipping: scylladb/counter_test or large_partition is absent");
        return;
    }
    let scratch = scratch_dir("merge", "legacy");
    // `cmd --merge FILES --schema CQL -o cql REST`, its stdout.
    let run = |cmd: &str, set: &str, files: &[&str], cql: &Path, rest: &[&str]| {
        let mut args = vec![cmd.to_string(), "--merge".into()];
        args.extend(
            files
                .iter()
                .map(|f| dir.join(set).join(f).display().to_string()),
        );
        args.extend(["--schema".into(), cql.display().to_string()]);
        args.extend(["-o", "cql"].iter().chain(rest).map(|s| s.to_string()));
        let r = sstkit(&args);
        assert_eq!(r.code, 0, "{set} {rest:?}: {}", r.stderr);
        r.stdout
    };

    let counters = schema_file(
        &scratch,
        "counters",
        "CREATE TABLE ks.counter_test (pk int, ck int, c1 counter, c2 counter, \
         PRIMARY KEY (pk, ck));",
    );
    let files = [
        "ks-counter_test-ka-5-Data.db",
        "mc-5-big-Data.db",
        "me-5-big-Data.db",
    ];
    let merged = run("dump-data", "counter_test", &files, &counters, &[]);
    let rows: Vec<Value> = merged
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        rows,
        vec![serde_json::json!({"pk": 0, "ck": 0, "c1": 13, "c2": -92})],
        "{merged}"
    );
    // The ka sstable merged with itself: its counter shards are not added twice.
    let twice = run(
        "dump-data",
        "counter_test",
        &[files[0], files[0]],
        &counters,
        &[],
    );
    assert_eq!(twice, merged);

    let wide = schema_file(
        &scratch,
        "wide",
        "CREATE TABLE try1.data (t1 text, t2 text, t3 text, PRIMARY KEY (t1, t2));",
    );
    let files = [
        "try1-data-ka-3-Data.db",
        "mc-3-big-Data.db",
        "me-3-big-Data.db",
    ];
    for (slice, n) in [
        (&["--from", "18wX", "--to", "18xB"][..], 5),
        (&["--from", "13aB", "--to", "15aA"][..], 1352),
        (&["--from", "10aB", "--to", "19aA"][..], 6084),
        (&["--to", "10aA"][..], 677),
        (&["--from", "10aA"][..], 12844),
        (&[][..], 13520),
    ] {
        let rest: Vec<&str> = ["-k", "v1"].iter().chain(slice).copied().collect();
        let out = run("read", "large_partition", &files, &wide, &rest);
        assert_eq!(out.lines().count(), n, "large_partition {slice:?}");
    }
}

/// `dump-data --merge -o sstabledump` equals Cassandra's sstabledump of the
/// node's own compaction of the same sstables (gc_grace of ten years, so the
/// compaction purged nothing), judged at the compaction's time. Only the
/// `position` fields differ: ours are the source sstables' offsets. And
/// `sstkit compact` of the same sstables dumps exactly as the node's
/// compacted sstable, positions included.
#[test]
fn merge_and_compact_equal_cassandras_compaction() {
    fn without_positions(v: Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.into_iter()
                    .filter(|(k, _)| k != "position")
                    .map(|(k, v)| (k, without_positions(v)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.into_iter().map(without_positions).collect()),
            v => v,
        }
    }
    let mut compared = 0;
    for run in ["nb", "oa", "da"] {
        for (table, n) in [
            ("merge_overwrite", 3),
            ("merge_partition_delete", 3),
            ("merge_range", 3),
            ("merge_collections", 3),
            ("deletes_merge", 2),
        ] {
            let Some(dirs) = cases(run, table, n) else {
                continue;
            };
            let truth = std::path::Path::new(&dirs[0]).join("compacted-sstabledump.json.gz");
            let Ok(file) = std::fs::File::open(&truth) else {
                eprintln!("skipping {run}_{table}: no compacted-sstabledump.json.gz");
                continue;
            };
            let want: Value = serde_json::from_reader(flate2::read::GzDecoder::new(file)).unwrap();
            let meta: Value = serde_json::from_str(
                &std::fs::read_to_string(std::path::Path::new(&dirs[0]).join("compacted.json"))
                    .unwrap(),
            )
            .unwrap();
            let now = meta["compacted_at"].as_i64().unwrap().to_string();
            let mut args: Vec<String> = vec![
                "dump-data".to_string(),
                "--merge".into(),
                "--now".into(),
                now.clone(),
                "-o".into(),
                "sstabledump".into(),
            ];
            args.extend(dirs.iter().cloned());
            let got = sstkit(&args);
            assert_eq!(got.code, 0, "{run}_{table}: {}", got.stderr);
            let got: Value = serde_json::from_str(&got.stdout).unwrap();
            assert_eq!(
                without_positions(got),
                without_positions(want.clone()),
                "{run}_{table}: the merge differs from Cassandra's compaction"
            );
            // `sstkit compact` writes the node's sstable: positions included.
            let scratch = crate::util::scratch_dir("compaction", &format!("{run}_{table}"));
            let out_dir = scratch.join("compacted");
            let mut args = vec![
                "compact".to_string(),
                "--now".into(),
                now.clone(),
                "--output-dir".into(),
                out_dir.display().to_string(),
            ];
            args.extend(dirs.iter().cloned());
            let done = sstkit(&args);
            assert_eq!(done.code, 0, "{run}_{table}: {}", done.stderr);
            let dump = sstkit([
                "dump-data",
                "--now",
                now.as_str(),
                "-o",
                "sstabledump",
                out_dir.to_str().unwrap(),
            ]);
            assert_eq!(dump.code, 0, "{run}_{table}: {}", dump.stderr);
            let ours: Value = serde_json::from_str(&dump.stdout).unwrap();
            assert_eq!(
                ours, want,
                "{run}_{table}: sstkit compact differs from Cassandra's compaction"
            );
            compared += 1;
        }
    }
    assert!(compared > 0 || !fixtures().join("nb_merge_range_1").is_dir());
}

/// A merged slice read seeks through each sstable's row index (BIG: the
/// promoted index in Index.db; BTI: Rows.db) instead of reading the
/// partition from its start. The older sstable holds a range tombstone
/// [50, 250] opened many blocks before the slice; the synthetic marker it
/// gives at the slice start must still shadow the newer sstable's older
/// rows. Truth: the merged read of the whole partition, cut to the slice.
/// Uncompressed, so that the bytes read show the seek.
#[test]
fn read_merge_seeks_and_keeps_a_range_tombstone_open_before_the_slice() {
    let out = crate::util::scratch_dir("merge", "seek");
    let schema = crate::util::schema_file(
        &out,
        "t",
        "CREATE TABLE ks.t (pk int, ck int, v text, PRIMARY KEY (pk, ck));",
    );
    let ck = |c: i32| format!("0004{:08x}", c as u32);
    let row = |c: i32, ts: i64| {
        format!(
            r#"{{"type":"clustering-row","key":{{"raw":"{}"}},"marker":{{"timestamp":{ts}}},"columns":{{"v":{{"is_live":true,"type":"regular","timestamp":{ts},"value":"{}"}}}}}}"#,
            ck(c),
            format!("{c:03}-{ts}-").repeat(80)
        )
    };
    // "rt": every third row (ts 30) and the range tombstone [50, 250] at ts 20.
    let marker = |c: i32, weight: i32, tombstone: &str| {
        format!(
            r#"{{"type":"range-tombstone-change","key":{{"raw":"{}"}},"weight":{weight},"tombstone":{tombstone}}}"#,
            ck(c)
        )
    };
    let mut rt = Vec::new();
    for c in (0..300).step_by(3) {
        if c == 51 {
            let t = r#"{"timestamp":20,"deletion_time":"2026-11-26 03:55:00z"}"#;
            rt.push(marker(50, -1, t));
        }
        if c == 252 {
            rt.push(marker(250, 1, "{}"));
        }
        rt.push(row(c, 30));
    }
    // "rows": every row at ts 10, the last one at ts 40 (the newest sstable).
    let rows: Vec<String> = (0..300)
        .map(|c| row(c, if c == 299 { 40 } else { 10 }))
        .collect();
    let part = |elems: &[String]| {
        format!(
            r#"{{"key":{{"raw":"00000001"}},"clustering_elements":[{}]}}"#,
            elems.join(",")
        )
    };
    for version in ["oa", "da"] {
        let mut dirs = Vec::new();
        for (name, elems) in [("rt", &rt), ("rows", &rows)] {
            let input = out.join(format!("{version}-{name}.ndjson"));
            std::fs::write(&input, part(elems)).unwrap();
            let dir = out.join(format!("{version}-{name}"));
            let r = write_from(
                &input,
                &schema,
                &dir,
                version,
                &["--column-index-size", "1KiB", "--compression", "none"],
            );
            assert_eq!(r.code, 0, "{version} {name}: {}{}", r.stdout, r.stderr);
            dirs.push(dir.display().to_string());
        }
        let read = |extra: &[&str], output: &str| {
            let mut args = vec![
                "read",
                "--clustering-order",
                "--merge",
                "--io-stats=json",
                "-o",
                output,
                "-k",
                "1",
            ];
            args.extend(extra);
            args.extend(dirs.iter().map(String::as_str));
            let r = sstkit(&args);
            assert_eq!(r.code, 0, "{version} {extra:?}: {}", r.stderr);
            let stats: Vec<Value> = r
                .stderr
                .lines()
                .filter(|l| l.starts_with('{'))
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            (r.stdout, stats)
        };
        let cql = |s: &str| -> Vec<Value> {
            s.lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        };
        let (whole, whole_stats) = read(&[], "cql");
        let whole = cql(&whole);
        let data_bytes = |e: &Value| e["components"]["data"]["bytes"].as_u64().unwrap_or(0);
        for (extra, lo, hi) in [
            (&["--from", "200", "--to", "210"][..], 200, 210),
            (&["--after", "199", "--before", "260"][..], 200, 259),
            (&["--from", "240", "--to", "252", "--reverse"][..], 240, 252),
            (&["--from", "100", "--to", "100"][..], 100, 100),
        ] {
            let (got, stats) = read(extra, "cql");
            let mut want: Vec<Value> = whole
                .iter()
                .filter(|r| (lo..=hi).contains(&r["ck0"].as_i64().unwrap()))
                .cloned()
                .collect();
            if extra.contains(&"--reverse") {
                want.reverse();
            }
            assert_eq!(cql(&got), want, "{version} {extra:?}");
            // Deleted rows of "rows" inside the slice are gone.
            assert!(want.iter().all(|r| r["ck0"].as_i64().unwrap() % 3 == 0
                || !(50..=250).contains(&r["ck0"].as_i64().unwrap())));
            for (i, dir) in dirs.iter().enumerate() {
                let result = stats[i]["result"].as_str().unwrap();
                // "read: block N of M", "read: blocks N-K of M", or no block
                // (the slice falls between two: row 100 is not in "rt").
                let first: Option<usize> = result
                    .strip_prefix("read: block")
                    .and_then(|r| r.trim_start_matches('s').trim().split(['-', ' ']).next())
                    .and_then(|n| n.parse().ok());
                assert!(
                    first.is_some_and(|n| n > 2) || result.contains("no block of"),
                    "{version} {dir} {extra:?}: {result}"
                );
                assert!(
                    data_bytes(&stats[i]) * 3 < data_bytes(&whole_stats[i]),
                    "{version} {dir} {extra:?}: {} of {} bytes",
                    data_bytes(&stats[i]),
                    data_bytes(&whole_stats[i])
                );
            }
        }
        // The tombstone open at the slice start is re-opened there, and closed
        // at its end.
        let (got, _) = read(&["--from", "200", "--to", "210"], "ndjson");
        let p: Value = serde_json::from_str(got.lines().next().unwrap()).unwrap();
        let e = p["clustering_elements"].as_array().unwrap();
        let (first, last) = (&e[0], &e[e.len() - 1]);
        assert_eq!(
            first["type"], "range-tombstone-change",
            "{version}: {first}"
        );
        assert_eq!(first["key"]["value"], "200", "{version}: {first}");
        assert_eq!(first["tombstone"]["timestamp"], 20, "{version}: {first}");
        assert_eq!(last["type"], "range-tombstone-change", "{version}: {last}");
        assert_eq!(last["key"]["value"], "210", "{version}: {last}");
        assert_eq!(
            last["tombstone"],
            serde_json::json!({}),
            "{version}: {last}"
        );
    }
}

/// Merging one sstable equals reading it, for slices of the wide fixtures'
/// 21,000-row partition (BIG and BTI row indexes written by Cassandra, ASC
/// and DESC clustering): range tombstones crossing the slice edges, row
/// limits, reversed reads and an empty slice (`--from` after `--to` in DESC
/// order: nothing but the header, not even a range tombstone).
#[test]
fn merge_of_one_sstable_equals_read_for_slices() {
    let slices: &[&[&str]] = &[
        &["--from", "500", "--to", "502"],
        &["--after", "100", "--before", "7000"],
        &["--from", "10799"],
        &["--to", "5"],
        &["--from", "3000", "--to", "3000", "--reverse"],
        &["--from", "2000:m", "--to", "2001:c"],
        &["--after", "6000:b"],
        &["--from", "5000", "--to", "6000", "--limit", "3"],
        &[
            "--from",
            "5000",
            "--to",
            "6000",
            "--reverse",
            "--limit",
            "3",
        ],
        &["--reverse", "--limit", "7"],
        &[
            "--after",
            "100",
            "--before",
            "7000",
            "--reverse",
            "--limit",
            "40",
        ],
        &["--reverse", "--limit", "0"],
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
                for output in ["ndjson", "sstabledump"] {
                    let run_read = |merge: bool| {
                        let mut args = vec!["read", "--clustering-order", "-o", output, "-k", "0"];
                        if merge {
                            args.push("--merge");
                        }
                        args.extend(slice.iter());
                        args.push(&case);
                        let r = sstkit(&args);
                        assert_eq!(r.code, 0, "{case} {slice:?}: {}", r.stderr);
                        r.stdout
                    };
                    assert_eq!(run_read(true), run_read(false), "{case} {output} {slice:?}");
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 0 || !fixtures().join("nb_wide").is_dir());
}
