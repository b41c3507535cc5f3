//! `--output cql` against the truth: the rows a live Cassandra 5.0 node
//! returned for `SELECT JSON *` (each case's `select.json`, see the oracle
//! README's "SELECT truth"), compared as text, line by line.
//!
//! Only tables of one sstable are checked here (`case.json`
//! `sstables_in_table` 1); merged tables need `--merge`.
//!
//! The time TTLs are judged at (`--now`): the `deletes` and `collections`
//! tables hold TTLs of 1–24 hours, so their rows depend on it. When
//! `case.json` records the query time of the run that wrote these sstables
//! (`select.queried_at_s`, within an hour after the sstable's first local
//! deletion time), that is `--now`. Otherwise `select.json` comes from a
//! later run of the same (deterministic) workload than the sstables, and
//! `--now` is the sstable's minimum local deletion time (sstablemetadata.txt:
//! its first tombstone or TTL-1 s write) plus 60 s: the workload's writes,
//! flush and queries take well under a minute, and its next TTLs are hours.

use std::path::Path;

use serde_json::Value;

use crate::dump_data::expected;
use crate::util::{fixture_cases, sstkit};

/// The queries of a select.json text: name and rows, each row exactly as
/// the node printed it (the file holds one row per line).
pub(crate) fn select_queries(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut name = String::new();
    let mut rows: Option<Vec<String>> = None;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("    \"name\": ") {
            name = serde_json::from_str(n.trim_end_matches(',')).expect("query name");
        } else if line == "    \"rows\": []" {
            out.push((name.clone(), Vec::new()));
        } else if line == "    \"rows\": [" {
            rows = Some(Vec::new());
        } else if line == "    ]" {
            out.push((name.clone(), rows.take().expect("rows opened")));
        } else if let Some(r) = rows.as_mut() {
            let row = line.trim_start();
            r.push(row.strip_suffix(',').unwrap_or(row).to_string());
        }
    }
    // The line reading must agree with a JSON parse of the whole file.
    let parsed: Value = serde_json::from_str(text).expect("select.json parses");
    let entries = parsed.as_array().expect("select.json is an array");
    assert_eq!(entries.len(), out.len(), "queries read line by line");
    for (e, (n, rows)) in entries.iter().zip(&out) {
        assert_eq!(e["name"].as_str(), Some(n.as_str()));
        let want = e["rows"].as_array().expect("rows");
        assert_eq!(
            want.len(),
            rows.len(),
            "rows of query {n} read line by line"
        );
        for (w, r) in want.iter().zip(rows) {
            let v: Value = serde_json::from_str(r).expect("a row line is one JSON object");
            assert_eq!(&v, w, "row line of query {n}");
        }
    }
    out
}

/// The `all` rows of a case, when it is a one-sstable table with select.json.
fn truth_all(case: &Path) -> Option<Vec<String>> {
    let cj: Value = serde_json::from_str(&std::fs::read_to_string(case.join("case.json")).ok()?)
        .expect("case.json parses");
    if cj["sstables_in_table"].as_u64() != Some(1) {
        return None;
    }
    let text = expected(case, "select.json")?;
    let all = select_queries(&text)
        .into_iter()
        .find(|(n, _)| n == "all")
        .map(|(_, r)| r);
    assert!(
        all.is_some(),
        "{}: select.json has no `all` query",
        case.display()
    );
    all
}

/// `--now` for a case (see the module doc), or None when nothing in it
/// expires or is deleted (the truth does not depend on the time).
pub(crate) fn truth_now(case: &Path) -> Option<i64> {
    let meta = std::fs::read_to_string(case.join("sstablemetadata.txt")).ok()?;
    let line = meta
        .lines()
        .find(|l| l.starts_with("SSTable min local deletion time:"))?;
    let min_ldt: i64 = line
        .rsplit('(')
        .next()?
        .trim_end_matches(')')
        .parse()
        .ok()
        .filter(|v| *v != i64::MAX)?;
    let cj: Value =
        serde_json::from_str(&std::fs::read_to_string(case.join("case.json")).ok()?).ok()?;
    match cj["select"]["queried_at_s"].as_i64() {
        Some(q) if (0..3600).contains(&(q - min_ldt)) => Some(q),
        _ => Some(min_ldt + 60),
    }
}

fn cql_args(case: &Path, cmd: &str) -> Vec<String> {
    let mut args = vec![cmd.to_string(), "-o".into(), "cql".into()];
    if let Some(now) = truth_now(case) {
        args.push("--now".into());
        args.push(now.to_string());
    }
    args
}

fn lines(s: &str) -> Vec<String> {
    s.lines().map(str::to_string).collect()
}

/// The first line where `got` and `want` differ, for the failure message.
fn first_difference(got: &[String], want: &[String]) -> String {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g != w {
            return format!("row {i}:\n  got  {g}\n  want {w}");
        }
    }
    format!("{} rows, want {}", got.len(), want.len())
}

#[test]
fn dump_data_cql_equals_select_all() {
    let mut checked = Vec::new();
    let mut failed = Vec::new();
    for case in fixture_cases() {
        let Some(want) = truth_all(&case) else {
            continue;
        };
        let mut args = cql_args(&case, "dump-data");
        args.push(case.display().to_string());
        let r = sstkit(&args);
        assert_eq!(r.code, 0, "{}: {}", case.display(), r.stderr);
        let got = lines(&r.stdout);
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        if got != want {
            failed.push(format!("{name}: {}", first_difference(&got, &want)));
        }
        checked.push(name);
    }
    assert!(
        !checked.is_empty(),
        "no one-sstable fixture case has select.json"
    );
    for run in ["nb", "oa", "da"] {
        assert!(
            checked.iter().any(|c| c.starts_with(run)),
            "no {run} case checked: {checked:?}"
        );
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// Number of partition key columns, from schema.cql's PRIMARY KEY.
fn partition_key_columns(case: &Path) -> usize {
    let cql = std::fs::read_to_string(case.join("schema.cql")).expect("schema.cql");
    match cql.split_once("PRIMARY KEY (") {
        Some((_, rest)) if rest.starts_with('(') => {
            let inner = &rest[1..rest.find(')').expect("closing parenthesis")];
            inner.split(',').count()
        }
        // `PRIMARY KEY (pk, ...)`, or `id int PRIMARY KEY,`.
        _ => 1,
    }
}

/// The rows of `all` grouped by partition (in order), each with its key as
/// a `--key` argument (components joined with `:`), None when a component
/// is a collection or tuple.
fn partitions(case: &Path, all: &[String]) -> Vec<(Option<String>, Vec<String>)> {
    let n = partition_key_columns(case);
    let mut out: Vec<(Value, Option<String>, Vec<String>)> = Vec::new();
    for row in all {
        let v: Value = serde_json::from_str(row).expect("row");
        let obj = v.as_object().expect("row object");
        let key: Vec<Value> = obj.values().take(n).cloned().collect();
        let arg: Option<Vec<String>> = key
            .iter()
            .map(|c| match c {
                Value::String(s) => Some(s.replace(':', "\\:")),
                Value::Number(x) => Some(x.to_string()),
                Value::Bool(b) => Some(b.to_string()),
                _ => None,
            })
            .collect();
        let key = Value::Array(key);
        match out.last_mut() {
            Some((k, _, rows)) if *k == key => rows.push(row.clone()),
            _ => out.push((key, arg.map(|a| a.join(":")), vec![row.clone()])),
        }
    }
    out.into_iter().map(|(_, a, r)| (a, r)).collect()
}

/// `dump-data --reverse -o cql` gives each partition's rows in reverse
/// (what `ORDER BY ... DESC` returns), partitions in the same order.
#[test]
fn reversed_dump_cql_reverses_each_partition() {
    let mut checked = 0;
    let mut failed = Vec::new();
    for case in fixture_cases() {
        let Some(all) = truth_all(&case) else {
            continue;
        };
        let want: Vec<String> = partitions(&case, &all)
            .into_iter()
            .flat_map(|(_, rows)| rows.into_iter().rev())
            .collect();
        let mut args = cql_args(&case, "dump-data");
        args.push("--reverse".into());
        args.push(case.display().to_string());
        let r = sstkit(&args);
        assert_eq!(r.code, 0, "{}: {}", case.display(), r.stderr);
        let got = lines(&r.stdout);
        if got != want {
            failed.push(format!(
                "{}: {}",
                case.display(),
                first_difference(&got, &want)
            ));
        }
        checked += 1;
    }
    assert!(checked > 0, "no one-sstable fixture case has select.json");
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// `read -k K -o cql` equals the rows of partition K in `all` (what
/// `SELECT JSON * ... WHERE pk = K` returns), forward and `--reverse`d
/// (`ORDER BY ... DESC`), for the first, the last, the largest and a
/// static-only partition of each case.
#[test]
fn read_cql_equals_the_partition_rows() {
    let mut checked = 0;
    let mut failed = Vec::new();
    for case in fixture_cases() {
        let Some(all) = truth_all(&case) else {
            continue;
        };
        let parts: Vec<(String, Vec<String>)> = partitions(&case, &all)
            .into_iter()
            .filter_map(|(k, rows)| Some((k?, rows)))
            .collect();
        let mut pick: Vec<usize> = Vec::new();
        if !parts.is_empty() {
            pick.push(0);
            pick.push(parts.len() - 1);
            let largest = (0..parts.len()).max_by_key(|&i| parts[i].1.len());
            pick.extend(largest);
            // A row with every clustering column null is static content alone.
            let static_only = parts.iter().position(|(_, rows)| {
                rows.len() == 1 && rows[0].contains(": null") && case_has_statics(&case)
            });
            pick.extend(static_only);
        }
        pick.sort_unstable();
        pick.dedup();
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        for i in pick {
            let (key, want) = &parts[i];
            for reverse in [false, true] {
                let mut args = cql_args(&case, "read");
                args.extend(["-k".to_string(), key.clone()]);
                if reverse {
                    args.push("--reverse".into());
                }
                args.push(case.display().to_string());
                let r = sstkit(&args);
                assert_eq!(r.code, 0, "{name} {args:?}: {}", r.stderr);
                let got = lines(&r.stdout);
                let mut want = want.clone();
                if reverse {
                    want.reverse();
                }
                if got != want {
                    failed.push(format!(
                        "{name} -k {key}{}: {}",
                        if reverse { " --reverse" } else { "" },
                        first_difference(&got, &want)
                    ));
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "no partition read");
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

fn case_has_statics(case: &Path) -> bool {
    std::fs::read_to_string(case.join("schema.cql")).is_ok_and(|s| s.contains(" static,"))
}

/// The clustering fixture's static-only partitions: one row of static
/// content (clustering and regular columns null) for a whole-partition read
/// and a dump, none for a read bounded in the clustering (Cassandra returns
/// static content alone only to queries that leave the clustering open).
#[test]
fn static_only_partition_gives_a_row_only_when_the_clustering_is_open() {
    let case = crate::util::fixtures().join("nb_clustering");
    let dump = sstkit(["dump-data", "-o", "cql", case.to_str().unwrap()]);
    assert_eq!(dump.code, 0, "{}", dump.stderr);
    let row = dump
        .stdout
        .lines()
        .find(|l| l.contains("\"ck1\": null"))
        .expect("a static-only partition");
    let v: Value = serde_json::from_str(row).unwrap();
    let key = format!("{}:{}", v["region"].as_str().unwrap(), v["bucket"]);
    let whole = sstkit(["read", "-o", "cql", "-k", &key, case.to_str().unwrap()]);
    assert_eq!(whole.code, 0, "{}", whole.stderr);
    assert_eq!(lines(&whole.stdout), vec![row.to_string()]);
    let bounded = sstkit([
        "read",
        "-o",
        "cql",
        "-k",
        &key,
        "--from",
        "0",
        case.to_str().unwrap(),
    ]);
    assert_eq!(bounded.code, 0, "{}", bounded.stderr);
    assert_eq!(bounded.stdout, "");
}

/// `--now` takes seconds or a timestamp (the same instant gives the same
/// rows); what has expired by then is gone; a bad value is a usage error.
#[test]
fn now_judges_expiry() {
    let case = crate::util::fixtures().join("nb_deletes");
    let c = case.to_str().unwrap();
    let at = |now: &str| {
        let r = sstkit(["dump-data", "-o", "cql", "--now", now, c]);
        assert_eq!(r.code, 0, "--now {now}: {}", r.stderr);
        r.stdout
    };
    let early = at("1700000000");
    assert_eq!(early, at("2023-11-14T22:13:20Z"));
    assert_eq!(early, at("2023-11-14 23:13:20+0100"));
    // Ten years on, every TTL of the table has run out: fewer rows.
    let late = at("2035-01-01T00:00:00Z");
    assert!(
        late.lines().count() < early.lines().count(),
        "{} rows late, {} early",
        late.lines().count(),
        early.lines().count()
    );
    for bad in ["yesterday", "2023-13-01"] {
        let r = sstkit(["dump-data", "-o", "cql", "--now", bad, c]);
        assert_eq!(r.code, 2, "--now {bad}: {}", r.stderr);
        assert!(r.stderr.contains("--now"), "{}", r.stderr);
    }
    // sstabledump's "expired" flags follow --now too.
    let sd = |now: &str| {
        let r = sstkit(["dump-data", "-o", "sstabledump", "--now", now, c]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout.matches("\"expired\" : true").count()
    };
    assert!(sd("2035-01-01T00:00:00Z") > sd("1700000000"));
}

/// Options that make no sense for live CQL rows are usage errors.
#[test]
fn cql_output_refuses_tombstone_and_key_views() {
    let case = crate::util::fixtures().join("nb_deletes");
    let c = case.to_str().unwrap();
    for extra in ["--keys-only", "--tombstones-only"] {
        let r = sstkit(["dump-data", "-o", "cql", extra, c]);
        assert_eq!(r.code, 2, "{extra}: {}", r.stderr);
    }
    let r = sstkit(["read", "-o", "cql", "-k", "1", "--columns", "v1", c]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// Pre-3.0 (`la`) data decoded with `--schema`: each value in its own column
/// (rows name columns by data order, simple before complex, not by schema
/// order), collections from their cells.
#[test]
fn legacy_rows_put_each_value_in_its_column() {
    let Some(root) = crate::util::corpus() else {
        return;
    };
    let dir = root.join("scylladb/complex/la-1-big-Data.db");
    if !dir.is_file() {
        return;
    }
    let tmp = crate::util::scratch_dir("cql", "legacy");
    let schema = crate::util::schema_file(
        &tmp,
        "complex",
        "CREATE TABLE tests.complex_schema (key blob, clust1 blob, clust2 blob, \
         reg_set set<blob>, reg_list list<blob>, reg_map map<blob, blob>, \
         reg_fset frozen<set<blob>>, reg blob, static_obj blob static, \
         static_collection set<blob> static, PRIMARY KEY (key, clust1, clust2));",
    );
    let r = sstkit([
        "dump-data",
        "-o",
        "cql",
        "--schema",
        schema.to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let got = lines(&r.stdout);
    assert_eq!(
        got.first().map(String::as_str),
        Some(
            "{\"key\": \"0x6b657931\", \"clust1\": \"0x636c312e31\", \"clust2\": \"0x636c322e31\", \
             \"static_collection\": null, \"static_obj\": \"0x7374617469635f76616c7565\", \
             \"reg\": \"0x7631\", \"reg_fset\": null, \"reg_list\": null, \"reg_map\": null, \
             \"reg_set\": [\"0x31\", \"0x32\"]}"
        ),
        "{}",
        r.stdout
    );
    assert!(
        got.iter()
            .any(|l| l.contains("\"reg_map\": {\"0x33\": \"0x31\", \"0x34\": \"0x32\"}")),
        "{}",
        r.stdout
    );
}

/// `dump-data --merge -o cql` over every sstable of a multi-sstable table
/// equals the `all` rows a node returned for the table (its merge of them).
#[test]
fn merged_dump_cql_equals_select_all() {
    let mut tables: std::collections::BTreeMap<String, Vec<std::path::PathBuf>> =
        Default::default();
    for case in fixture_cases() {
        let Ok(text) = std::fs::read_to_string(case.join("case.json")) else {
            continue;
        };
        let cj: Value = serde_json::from_str(&text).expect("case.json parses");
        if cj["sstables_in_table"].as_u64().unwrap_or(1) > 1 && case.join("select.json").is_file() {
            let name = case.file_name().unwrap().to_string_lossy().to_string();
            let table = name
                .rsplit_once('_')
                .map_or(name.clone(), |(t, _)| t.to_string());
            tables.entry(table).or_default().push(case);
        }
    }
    let mut failed = Vec::new();
    for (table, cases) in &tables {
        let text = expected(&cases[0], "select.json").expect("select.json");
        let want = select_queries(&text)
            .into_iter()
            .find(|(n, _)| n == "all")
            .map(|(_, r)| r)
            .expect("an all query");
        let mut args = cql_args(&cases[0], "dump-data");
        args.push("--merge".into());
        args.extend(cases.iter().map(|c| c.display().to_string()));
        let r = sstkit(&args);
        assert_eq!(r.code, 0, "{table}: {}", r.stderr);
        let got = lines(&r.stdout);
        if got != want {
            failed.push(format!("{table}: {}", first_difference(&got, &want)));
        }
    }
    assert!(
        tables.len() >= 15,
        "merged tables found: {:?}",
        tables.keys()
    );
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
