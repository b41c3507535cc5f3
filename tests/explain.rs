//! `--explain` with `--merge`: the provenance records of the merge tables.
//!
//! * Every explained cell names, as its winner, the sstable whose own dump
//!   holds that cell with the highest timestamp; every other sstable holding
//!   it is listed as shadowed (by the newer timestamp, or a tie-break rule).
//! * The rows explained as present are exactly the rows a live Cassandra
//!   returned (`select.json`, query `all`); the absent ones name a deletion
//!   that the named sstable's own dump holds, at that timestamp.
//! * `read --merge --explain` stays within the slice and `--limit`.
//! * Text form: one line per item, absent rows in words.
//!
//! The NDJSON schema is checked in `schemas.rs`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::util::{fixtures, sstkit};

const TABLES: &[&str] = &[
    "merge_overwrite",
    "merge_range",
    "merge_partition_delete",
    "merge_collections",
];
const RUNS: &[&str] = &["nb", "oa", "da"];

fn dirs(run: &str, table: &str) -> Vec<String> {
    (1..=3)
        .map(|i| {
            fixtures()
                .join(format!("{run}_{table}_{i}"))
                .display()
                .to_string()
        })
        .collect()
}

fn ndjson(args: &[&str]) -> Vec<Value> {
    let r = sstkit(args);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    r.stdout
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn explain(dirs: &[String]) -> Vec<Value> {
    let mut a = vec!["dump-data", "--merge", "--explain", "-o", "ndjson"];
    a.extend(dirs.iter().map(String::as_str));
    ndjson(&a)
}

/// The Data.db of a fixture directory.
fn data_of(dir: &str) -> String {
    let files = crate::util::data_files(std::path::Path::new(dir));
    files
        .first()
        .unwrap_or_else(|| panic!("{dir}: no Data.db"))
        .display()
        .to_string()
}

/// (partition, clustering, column) → timestamp of each simple cell in one
/// sstable's own dump; and partition → partition deletion timestamp.
type Cells = BTreeMap<(String, String, String), i64>;

fn own_dump(data: &str) -> (Cells, BTreeMap<String, i64>) {
    let mut cells = Cells::new();
    let mut deletions = BTreeMap::new();
    for p in ndjson(&["dump-data", data, "-o", "ndjson"]) {
        let key = p["key"]["value"].as_str().expect("key").to_string();
        if let Some(t) = p["tombstone"]["timestamp"].as_i64() {
            deletions.insert(key.clone(), t);
        }
        let rows = p["clustering_elements"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for r in rows.iter().filter(|r| r["type"] == "clustering-row") {
            let ck = r["key"]["value"].as_str().expect("ck").to_string();
            for (name, c) in r["columns"].as_object().into_iter().flatten() {
                if let Some(t) = c["timestamp"].as_i64() {
                    cells.insert((key.clone(), ck.clone(), name.clone()), t);
                }
            }
        }
    }
    (cells, deletions)
}

#[test]
fn each_cell_names_the_sstable_with_its_highest_timestamp() {
    for run in RUNS {
        for table in TABLES {
            let dirs = dirs(run, table);
            let datas: Vec<String> = dirs.iter().map(|d| data_of(d)).collect();
            let owns: Vec<Cells> = datas.iter().map(|d| own_dump(d).0).collect();
            let mut checked = 0;
            for e in explain(&dirs) {
                let ck = e["clustering"]["value"].as_str().unwrap_or_default();
                if e["item"] != "cell"
                    || !e["path"].is_null()
                    || e["clustering"]["kind"] != "CLUSTERING"
                {
                    continue;
                }
                let id = (
                    e["partition"].as_str().expect("partition").to_string(),
                    ck.to_string(),
                    e["column"].as_str().expect("column").to_string(),
                );
                let holders: Vec<(&str, i64)> = datas
                    .iter()
                    .zip(&owns)
                    .filter_map(|(d, o)| o.get(&id).map(|t| (d.as_str(), *t)))
                    .collect();
                let max = holders.iter().map(|h| h.1).max().expect("a holder");
                let w = &e["winner"];
                let ws = w["sstable"].as_str().expect("winner sstable");
                assert_eq!(w["timestamp"].as_i64(), Some(max), "{run} {table} {id:?}");
                assert!(
                    holders.contains(&(ws, max)),
                    "{run} {table} {id:?}: winner {ws} does not hold the cell at {max}: {holders:?}"
                );
                let shadowed: BTreeSet<&str> = e["shadowed"]
                    .as_array()
                    .expect("shadowed")
                    .iter()
                    .map(|s| s["sstable"].as_str().expect("sstable"))
                    .collect();
                let others: BTreeSet<&str> =
                    holders.iter().map(|h| h.0).filter(|&d| d != ws).collect();
                assert_eq!(shadowed, others, "{run} {table} {id:?}");
                for s in e["shadowed"].as_array().expect("shadowed") {
                    let why = s["cause"]["reason"].as_str().expect("reason");
                    let older = s["timestamp"].as_i64() < Some(max);
                    let expected = if older {
                        "newer-timestamp"
                    } else {
                        "tie-break"
                    };
                    assert_eq!(why, expected, "{run} {table} {id:?}: {s}");
                    assert_eq!(s["cause"]["sstable"].as_str(), Some(ws));
                }
                checked += 1;
            }
            assert!(checked > 10, "{run} {table}: {checked} cells checked");
        }
    }
}

/// The clustering columns of a fixture table (from its schema.cql).
fn clustering_columns(dir: &str) -> Vec<String> {
    let cql = std::fs::read_to_string(format!("{dir}/schema.cql")).expect("schema.cql");
    let pk = cql
        .split("PRIMARY KEY (")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .expect("PRIMARY KEY");
    pk.split(',')
        .skip(1)
        .map(|s| s.trim().to_string())
        .collect()
}

fn json_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

#[test]
fn present_rows_are_the_rows_cassandra_returned_and_absent_ones_name_their_deletion() {
    for run in RUNS {
        for table in TABLES {
            let dirs = dirs(run, table);
            let datas: Vec<String> = dirs.iter().map(|d| data_of(d)).collect();
            let select: Value = serde_json::from_str(
                &std::fs::read_to_string(format!("{}/select.json", dirs[2])).expect("select.json"),
            )
            .expect("select.json");
            let all = select
                .as_array()
                .and_then(|q| q.iter().find(|q| q["name"] == "all"))
                .expect("query all");
            let cks = clustering_columns(&dirs[0]);
            let truth: BTreeSet<(String, String)> = all["rows"]
                .as_array()
                .expect("rows")
                .iter()
                .filter(|r| !r[&cks[0]].is_null())
                .map(|r| {
                    let ck: Vec<String> = cks.iter().map(|c| json_text(&r[c])).collect();
                    (json_text(&r["pk"]), ck.join(":"))
                })
                .collect();
            let records = explain(&dirs);
            let rows: Vec<&Value> = records
                .iter()
                .filter(|e| e["item"] == "row" && e["clustering"]["kind"] == "CLUSTERING")
                .collect();
            let present: BTreeSet<(String, String)> = rows
                .iter()
                .filter(|e| e["result"] == "present")
                .map(|e| {
                    (
                        json_text(&e["partition"]),
                        json_text(&e["clustering"]["value"]),
                    )
                })
                .collect();
            assert_eq!(present, truth, "{run} {table}");
            // Absent rows deleted by a partition deletion or range tombstone:
            // the named sstable holds that deletion.
            let mut deleted = 0;
            for e in rows.iter().filter(|e| e["result"] == "absent") {
                let cause = &e["absent"];
                let reason = cause["reason"].as_str().expect("reason");
                if reason == "no-live-data" {
                    continue;
                }
                let sst = cause["sstable"].as_str().expect("sstable");
                let at = cause["timestamp"].as_i64().expect("timestamp");
                assert!(datas.iter().any(|d| d == sst), "{sst}");
                let dump = sstkit(["dump-data", sst, "-o", "ndjson"]).stdout;
                match reason {
                    "partition-deletion" => {
                        let (_, dels) = own_dump(sst);
                        assert_eq!(
                            dels.get(e["partition"].as_str().expect("key")),
                            Some(&at),
                            "{run} {table}: {e}"
                        );
                    }
                    "range-tombstone" | "row-deletion" => {
                        assert!(
                            dump.contains(&format!("\"timestamp\":{at}")),
                            "{run} {table}: {sst} holds no deletion at {at}: {e}"
                        );
                    }
                    r => panic!("{run} {table}: unexpected reason {r}: {e}"),
                }
                // Every version of the row is older than the deletion.
                for s in e["sources"].as_array().expect("sources") {
                    assert!(s["timestamp"].as_i64() <= Some(at), "{e}");
                }
                deleted += 1;
            }
            if matches!(*table, "merge_range" | "merge_partition_delete") {
                assert!(deleted > 0, "{run} {table}: no deleted row explained");
            }
        }
    }
}

#[test]
fn text_says_why_a_row_is_absent() {
    let dirs = dirs("nb", "merge_range");
    let mut a = vec!["dump-data", "--merge", "--explain", "-o", "text"];
    a.extend(dirs.iter().map(String::as_str));
    let r = sstkit(&a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The NDJSON's first row deleted by a range tombstone, in words.
    let rec = explain(&dirs)
        .into_iter()
        .find(|e| e["item"] == "row" && e["absent"]["reason"] == "range-tombstone")
        .expect("a row deleted by a range tombstone");
    let ck = rec["clustering"]["value"]
        .as_str()
        .expect("ck")
        .replace(':', ", ");
    let sst = rec["absent"]["sstable"].as_str().expect("sstable");
    let short = sst
        .rsplit('/')
        .next()
        .and_then(|f| f.strip_suffix("-Data.db"))
        .expect("name");
    let at = rec["absent"]["timestamp"].as_i64().expect("ts");
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with(&format!("row ({ck}) absent")))
        .unwrap_or_else(|| panic!("no line for row ({ck}):\n{}", r.stdout));
    assert!(
        line.contains("deleted by range tombstone")
            && line.contains(&format!("@{at} in {short}"))
            && line.contains("are older"),
        "{line}"
    );
}

#[test]
fn read_explain_stays_in_the_slice_and_limit() {
    let dirs = dirs("nb", "merge_overwrite");
    let mut a = vec![
        "read",
        "--merge",
        "--explain",
        "-o",
        "ndjson",
        "-k",
        "4",
        "--from",
        "2",
        "--to",
        "5",
        "--limit",
        "2",
    ];
    a.extend(dirs.iter().map(String::as_str));
    let recs = ndjson(&a);
    let rows: Vec<String> = recs
        .iter()
        .filter(|e| e["item"] == "row" && e["result"] == "present")
        .map(|e| json_text(&e["clustering"]["value"]))
        .collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    for e in &recs {
        if e["clustering"]["kind"] == "CLUSTERING" {
            let ck: i64 = json_text(&e["clustering"]["value"])
                .parse()
                .expect("int ck");
            assert!((2..=5).contains(&ck), "{e}");
        }
        assert_eq!(e["partition"], "4");
    }
    // Other outputs are refused.
    let mut a = vec!["read", "--merge", "--explain", "-o", "cql", "-k", "4"];
    a.extend(dirs.iter().map(String::as_str));
    assert_eq!(sstkit(&a).code, 2);
    // --explain needs --merge.
    assert_eq!(sstkit(["read", "--explain", "-k", "4", &dirs[0]]).code, 2);
}

#[test]
fn text_range_bounds_read_as_sentences() {
    let dirs = dirs("nb", "merge_range");
    let mut a = vec!["dump-data", "--merge", "--explain", "-o", "text"];
    a.extend(dirs.iter().map(String::as_str));
    let r = sstkit(&a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let bounds: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("range tombstone bound "))
        .collect();
    // As many bound lines as the NDJSON has range-tombstone records.
    let records: Vec<Value> = explain(&dirs)
        .into_iter()
        .filter(|e| e["item"] == "range-tombstone")
        .collect();
    assert_eq!(bounds.len(), records.len(), "{}", r.stdout);
    let mut closing = 0;
    for (line, rec) in bounds.iter().zip(&records) {
        let closes = rec["closes"].as_array().map_or(0, Vec::len);
        if closes > 0 && rec["winner"].is_null() {
            // "ends X; Y still open" or "ends X; nothing open after it".
            closing += 1;
            let (_, after) = line.split_once(" ends ").expect(line);
            assert!(
                after.contains("; ")
                    && (line.ends_with(" still open") || line.ends_with("; nothing open after it")),
                "{line}"
            );
        }
        // A bound with no clustering values is named, not printed as a lone bracket.
        if rec["clustering"]["raw"]
            .as_array()
            .is_some_and(Vec::is_empty)
        {
            assert!(
                line.starts_with("range tombstone bound the partition "),
                "{line}"
            );
        }
    }
    assert!(closing > 0, "no bound that only closes:\n{}", r.stdout);
}
