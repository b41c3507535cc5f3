//! `compact`: sstables of a merge table compacted into one.
//!
//! * Without `--purge` and with `--now` before any TTL expires, the output
//!   holds exactly what `dump-data --merge` shows (ndjson equal), in the
//!   inputs' version and as `da`; `validate` passes.
//! * With `--purge --gc-grace 0` at the current time (every tombstone
//!   purgeable, expired TTLs converted then purged), the live rows still
//!   equal what the node returned (`select.json`, "all"): purging never
//!   changes a read when every sstable is compacted.
//! * Expired TTL cells become tombstones whose local deletion time is the
//!   cell's creation time; repaired-at and level follow the compaction rules.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::merge::{cases, cks, compare, expected, project, select};
use crate::util::{fixtures, scratch_dir, sstkit, Scratch};

/// Compact `dirs` into a fresh directory with `extra` flags: the
/// directory's guard, the output sstable and the report.
fn compact(dirs: &[String], tag: &str, extra: &[&str]) -> (Scratch, PathBuf, Value) {
    let out = scratch_dir("compact", tag);
    let mut args: Vec<String> = vec![
        "compact".into(),
        "-o".into(),
        "json".into(),
        "--output-dir".into(),
        out.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(dirs.iter().cloned());
    let r = sstkit(&args);
    assert_eq!(r.code, 0, "compact {tag}: {}{}", r.stdout, r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let output = PathBuf::from(v["output"].as_str().unwrap());
    (out, output, v)
}

fn ndjson(args: &[&str]) -> String {
    let r = sstkit(args);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    r.stdout
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("sstable");
            v.to_string() + "\n"
        })
        .collect()
}

fn valid(data: &Path) {
    let r = sstkit(["validate", data.to_str().unwrap()]);
    assert_eq!(r.code, 0, "validate {}: {}", data.display(), r.stdout);
}

const TABLES: [(&str, usize); 5] = [
    ("merge_overwrite", 3),
    ("merge_range", 3),
    ("merge_partition_delete", 3),
    ("merge_collections", 3),
    ("deletes_merge", 2),
];

#[test]
fn compact_equals_merged_read_and_select() {
    // Before any write: nothing has expired.
    let early = "946684800";
    for run in ["nb", "oa", "da"] {
        for (table, n) in TABLES {
            let Some(dirs) = cases(run, table, n) else {
                continue;
            };
            let mut merged_args = vec!["dump-data", "--merge", "-o", "ndjson", "--now", early];
            merged_args.extend(dirs.iter().map(String::as_str));
            let merged = ndjson(&merged_args);
            for target in [None, Some("da"), Some("nb")] {
                let tag = format!("{run}_{table}_{}", target.unwrap_or("same"));
                let mut extra = vec!["--now", early];
                if let Some(t) = target {
                    extra.extend(["--format-version", t]);
                }
                let (_scratch, out, rep) = compact(&dirs, &tag, &extra);
                valid(&out);
                let got = ndjson(&[
                    "dump-data",
                    "-o",
                    "ndjson",
                    "--now",
                    early,
                    out.to_str().unwrap(),
                ]);
                assert_eq!(got, merged, "{tag}");
                assert_eq!(rep["partitions"], rep["partitions_read"], "{tag}");
            }
            // Everything purgeable: the live rows are still the node's.
            let tag = format!("{run}_{table}_purged");
            let (_scratch, out, rep) = compact(&dirs, &tag, &["--purge", "--gc-grace", "0"]);
            valid(&out);
            let r = sstkit(["dump-data", "-o", "ndjson", out.to_str().unwrap()]);
            assert_eq!(r.code, 0, "{tag}: {}", r.stderr);
            let got = project(&r.stdout, "pk", cks(table));
            let want = expected(&select(&dirs[0], "all"), "pk", cks(table));
            compare(&got, &want, &tag);
            let p = &rep["purged"];
            let purged: u64 = ["cells", "rows", "markers", "partitions"]
                .iter()
                .map(|k| p[k].as_u64().unwrap())
                .sum();
            assert!(
                purged > 0 || table == "merge_overwrite",
                "{tag}: nothing purged: {rep}"
            );
            // No tombstone is left.
            let dump = ndjson(&[
                "dump-data",
                "-o",
                "ndjson",
                "--tombstones-only",
                out.to_str().unwrap(),
            ]);
            assert!(dump.trim().is_empty(), "{tag}: tombstones left: {dump}");
        }
    }
}

/// `YYYY-MM-DD HH:MM:SSz` as seconds since the epoch.
fn epoch(s: &str) -> i64 {
    let n = |r: std::ops::Range<usize>| s[r].parse::<i64>().unwrap();
    let (y, m, d) = (n(0..4), n(5..7), n(8..10));
    // Days from civil (proleptic Gregorian).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146097 + doe - 719468;
    days * 86400 + n(11..13) * 3600 + n(14..16) * 60 + n(17..19)
}

/// Every simple cell of a dump-data ndjson stream: (timestamp, the cell).
fn cells(ndjson: &str) -> Vec<(i64, Value)> {
    fn walk(v: &Value, out: &mut Vec<(i64, Value)>) {
        match v {
            Value::Object(o) => {
                if o.get("type").and_then(Value::as_str) == Some("regular") {
                    if let Some(t) = o.get("timestamp").and_then(Value::as_i64) {
                        out.push((t, v.clone()));
                    }
                }
                o.values().for_each(|x| walk(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for l in ndjson.lines() {
        walk(&serde_json::from_str(l).unwrap(), &mut out);
    }
    out
}

/// Expired TTL cells become tombstones at their creation time
/// (`AbstractCell.purge`: `localDeletionTime - ttl`); with `--purge` and
/// no grace they go.
#[test]
fn expired_cells_become_tombstones() {
    let late = "4102444800"; // 2100-01-01
    for run in ["nb", "oa", "da"] {
        let dir = fixtures().join(format!("{run}_deletes"));
        if !dir.is_dir() {
            eprintln!("skipping {run}_deletes: fixture absent");
            continue;
        }
        let dirs = vec![dir.display().to_string()];
        let src = ndjson(&["dump-data", "-o", "ndjson", &dirs[0]]);
        let expiring: Vec<(i64, i64)> = cells(&src)
            .into_iter()
            .filter_map(|(t, c)| {
                let ttl = c
                    .get("ttl")?
                    .as_str()?
                    .trim_end_matches('s')
                    .parse::<i64>()
                    .ok()?;
                Some((t, epoch(c.get("expiry")?.as_str()?) - ttl))
            })
            .collect();
        assert!(!expiring.is_empty(), "{run}_deletes has TTL cells");
        let (_scratch, out, rep) = compact(&dirs, &format!("{run}-ttl"), &["--now", late]);
        valid(&out);
        assert_eq!(
            rep["purged"]["expired_to_tombstones"].as_u64().unwrap(),
            expiring.len() as u64,
            "{run}"
        );
        let got = cells(&ndjson(&[
            "dump-data",
            "-o",
            "ndjson",
            out.to_str().unwrap(),
        ]));
        for (t, created) in &expiring {
            let c = got
                .iter()
                .find(|(u, _)| u == t)
                .map(|x| &x.1)
                .unwrap_or_else(|| panic!("{run}: no cell at {t}"));
            assert_eq!(c["is_live"], false, "{run}: {c}");
            assert!(
                c.get("ttl").is_none() && c.get("value").is_none(),
                "{run}: {c}"
            );
            assert_eq!(
                epoch(c["deletion_time"].as_str().unwrap()),
                *created,
                "{run}: {c}"
            );
        }
        let (_scratch, out, rep) = compact(
            &dirs,
            &format!("{run}-ttl-purge"),
            &["--now", late, "--purge", "--gc-grace", "0"],
        );
        valid(&out);
        assert!(
            rep["purged"]["cells"].as_u64().unwrap() >= expiring.len() as u64,
            "{rep}"
        );
        let got = cells(&ndjson(&[
            "dump-data",
            "-o",
            "ndjson",
            out.to_str().unwrap(),
        ]));
        assert!(
            got.iter()
                .all(|(t, _)| !expiring.iter().any(|(u, _)| u == t)),
            "{run}: purged cells left"
        );
    }
}

/// Bad flags and inputs of different tables are usage errors; nothing is
/// written.
#[test]
fn compact_usage_errors() {
    let fx = fixtures();
    let a = fx.join("nb_merge_overwrite_1").display().to_string();
    let b = fx.join("nb_merge_range_1").display().to_string();
    let out = scratch_dir("compact", "usage");
    let o = out.display().to_string();
    for args in [
        vec!["compact", "--output-dir", &o, &a, &b],
        vec!["compact", "--output-dir", &o, "--gc-grace", "x", &a],
        vec!["compact", "--output-dir", &o, "--format-version", "ka", &a],
        vec!["compact", "--output-dir", &a, &a],
    ] {
        let r = sstkit(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
    }
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
}

/// `--max-size`: several outputs, in token order, each valid, together
/// holding exactly the merged partitions.
#[test]
fn compact_max_size_cuts_between_partitions() {
    let Some(dirs) = cases("oa", "merge_overwrite", 3) else {
        return;
    };
    let early = "946684800";
    let mut merged_args = vec!["dump-data", "--merge", "-o", "ndjson", "--now", early];
    merged_args.extend(dirs.iter().map(String::as_str));
    let merged = ndjson(&merged_args);
    // Data.db grows a whole chunk at a time: small chunks.
    let (_scratch, _, rep) = compact(
        &dirs,
        "max-size",
        &[
            "--now",
            early,
            "--chunk-length",
            "1KiB",
            "--max-size",
            "1KiB",
        ],
    );
    let outs = rep["outputs"].as_array().unwrap();
    assert!(outs.len() > 1, "{rep}");
    let mut all = String::new();
    for o in outs {
        let p = o["output"].as_str().unwrap();
        valid(Path::new(p));
        assert!(o["partitions"].as_u64().unwrap() > 0, "{o}");
        all += &ndjson(&["dump-data", "-o", "ndjson", "--now", early, p]);
    }
    assert_eq!(all, merged);
    assert_eq!(rep["partitions"], rep["partitions_read"]);
}

/// Compaction of a Scylla view sstable keeps its shadowable deletions
/// (one input, nothing to purge: the same data).
#[test]
fn compact_keeps_scylla_shadowable_deletions() {
    for (src, ts) in crate::util::scylla_shadowable_corpus() {
        let source = crate::util::dump_records(&src);
        assert!(crate::util::shadowable_deletions(&source)
            .iter()
            .any(|(_, t)| *t == ts));
        let (_dir, out, _) = compact(&[src.display().to_string()], "shadowable", &[]);
        valid(&out);
        assert_eq!(crate::util::dump_records(&out), source, "{}", src.display());
    }
}

/// With `--purge`, a partition whose deletion is purged and that has
/// nothing else left is not written: the output holds exactly the merged
/// partitions that still have a row or static row.
#[test]
fn compact_drops_partitions_purged_whole() {
    let late = "4102444800"; // 2100-01-01
    for run in ["nb", "oa", "da"] {
        let Some(dirs) = cases(run, "merge_partition_delete", 3) else {
            continue;
        };
        let mut merged_args = vec!["dump-data", "--merge", "-o", "ndjson", "--now", late];
        merged_args.extend(dirs.iter().map(String::as_str));
        let kept: Vec<Value> = ndjson(&merged_args)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v.get("clustering_elements").is_some() || v.get("static_row").is_some())
            .map(|v| v["key"].clone())
            .collect();
        let (_scratch, out, rep) = compact(
            &dirs,
            &format!("{run}-purged-whole"),
            &["--now", late, "--purge", "--gc-grace", "0"],
        );
        valid(&out);
        let read = rep["partitions_read"].as_u64().unwrap();
        let written = rep["partitions"].as_u64().unwrap();
        assert!(written < read, "{run}: nothing dropped: {rep}");
        assert_eq!(written, kept.len() as u64, "{run}: {rep}");
        let got: Vec<Value> = ndjson(&["dump-data", "-o", "ndjson", out.to_str().unwrap()])
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["key"].clone())
            .collect();
        assert_eq!(got, kept, "{run}");
    }
}
