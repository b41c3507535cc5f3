//! `jb` (Cassandra 2.0) sstables: the legacy Statistics.db blob, the Summary.db
//! without sampling level, CRC32 CRC.db with a SHA-1 digest, Adler-32
//! compressed chunks, and the cell-based Data.db read with `--schema`.
//!
//! The oracle is the `ka` twin of each `legacy_jb_*` set (same statements,
//! Cassandra 2.1): timestamps, counter shard ids/clocks and the random
//! 128-character `val` of the clust tables differ between the two writes, so
//! those are reduced to what is deterministic (presence, counter total, value
//! length) before comparing. The `verifyReads` expectations of
//! LegacySSTableTest (MANIFEST.md) are checked on the jb dump itself.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::util::{corpus, schema_file, scratch_dir, sstkit, Scratch};

/// The eight LegacySSTableTest tables: (name suffix, columns, compact).
const TABLES: &[(&str, &str, bool)] = &[
    ("simple", "pk text PRIMARY KEY, val text", false),
    ("simple_compact", "pk text PRIMARY KEY, val text", true),
    ("simple_counter", "pk text PRIMARY KEY, val counter", false),
    (
        "simple_counter_compact",
        "pk text PRIMARY KEY, val counter",
        true,
    ),
    (
        "clust",
        "pk text, ck text, val text, PRIMARY KEY (pk, ck)",
        false,
    ),
    (
        "clust_compact",
        "pk text, ck text, val text, PRIMARY KEY (pk, ck)",
        true,
    ),
    (
        "clust_counter",
        "pk text, ck text, val counter, PRIMARY KEY (pk, ck)",
        false,
    ),
    (
        "clust_counter_compact",
        "pk text, ck text, val counter, PRIMARY KEY (pk, ck)",
        true,
    ),
];

/// The thrift-style column families of the Keyspace1 sets (BytesType).
fn keyspace1(cf: &str) -> String {
    format!(
        "CREATE TABLE \"Keyspace1\".\"{cf}\" (key blob, column1 blob, value blob, \
         PRIMARY KEY (key, column1)) WITH COMPACT STORAGE;"
    )
}

fn scratch(name: &str) -> Scratch {
    scratch_dir("jb", name)
}

fn table_cql(version: &str, t: &str, cols: &str, compact: bool) -> String {
    format!(
        "CREATE TABLE legacy_tables.legacy_{version}_{t} ({cols}){};",
        if compact { " WITH COMPACT STORAGE" } else { "" }
    )
}

fn args(a: &[&Path], rest: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = rest.iter().map(|s| s.to_string()).collect();
    v.extend(a.iter().map(|p| p.to_string_lossy().into_owned()));
    v
}

/// dump-data --output ndjson, one value per partition.
fn dump(dir: &Path, schema: &Path) -> Vec<Value> {
    let a = args(&[schema, dir], &["dump-data", "-o", "ndjson", "--schema"]);
    let r = sstkit(&a);
    assert_eq!(r.code, 0, "{a:?}: {}", r.stderr);
    r.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// What is deterministic in a LegacySSTableTest dump: per partition, its key
/// and per row (type, clustering key, marker present, per column (type,
/// live, reduced value)). Counter values are summed over shards; text values
/// of the clust tables (random) are reduced to their length.
fn logical(d: &[Value], random_val: bool) -> Vec<(Value, Vec<Value>)> {
    d.iter()
        .map(|p| {
            let rows = p["clustering_elements"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    let cols: BTreeMap<String, Value> = e["columns"]
                        .as_object()
                        .map(|m| {
                            m.iter()
                                .map(|(k, c)| {
                                    let v = match &c["value"] {
                                        Value::Array(shards) => Value::from(
                                            shards
                                                .iter()
                                                .map(|s| s["value"].as_i64().unwrap())
                                                .sum::<i64>(),
                                        ),
                                        Value::String(s) if random_val => Value::from(s.len()),
                                        v => v.clone(),
                                    };
                                    (k.clone(), serde_json::json!([c["type"], c["is_live"], v]))
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    serde_json::json!([e["type"], e["key"], e.get("marker").is_some(), cols])
                })
                .collect();
            (p["key"].clone(), rows)
        })
        .collect()
}

#[test]
fn jb_sets_read_like_their_ka_twins_and_as_verify_reads_expects() {
    let Some(root) = corpus() else { return };
    let tmp = scratch("twins");
    let mut failures = Vec::new();
    for (t, cols, compact) in TABLES {
        let jb_dir = root.join(format!("cassandra/legacy_jb_{t}"));
        let ka_dir = root.join(format!("cassandra/legacy_ka_{t}"));
        if !jb_dir.is_dir() || !ka_dir.is_dir() {
            eprintln!("skipping absent corpus set legacy_jb_{t}");
            continue;
        }
        let jb_s = schema_file(
            &tmp,
            &format!("jb_{t}"),
            &table_cql("jb", t, cols, *compact),
        );
        let ka_s = schema_file(
            &tmp,
            &format!("ka_{t}"),
            &table_cql("ka", t, cols, *compact),
        );
        let jb = dump(&jb_dir, &jb_s);
        let ka = dump(&ka_dir, &ka_s);
        let random = t.starts_with("clust") && !t.contains("counter");
        if logical(&jb, random) != logical(&ka, random) {
            failures.push(format!("legacy_jb_{t}: differs from legacy_ka_{t}"));
        }
        // verifyReads: 5 partitions '0'..'4' in ByteOrderedPartitioner order.
        let keys: Vec<&str> = jb
            .iter()
            .map(|p| p["key"]["value"].as_str().unwrap())
            .collect();
        assert_eq!(keys, ["0", "1", "2", "3", "4"], "legacy_jb_{t}");
        for p in &jb {
            let rows = p["clustering_elements"].as_array().unwrap();
            let want_rows = if t.starts_with("clust") { 50 } else { 1 };
            assert_eq!(rows.len(), want_rows, "legacy_jb_{t}");
            for (i, r) in rows.iter().enumerate() {
                let val = &r["columns"]["val"];
                if t.contains("counter") {
                    let total: i64 = val["value"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|s| s["value"].as_i64().unwrap())
                        .sum();
                    assert_eq!(total, 1, "legacy_jb_{t}: counter");
                } else if t.starts_with("clust") {
                    assert_eq!(val["value"].as_str().unwrap().len(), 128, "legacy_jb_{t}");
                } else {
                    assert_eq!(val["value"], "foo bar baz", "legacy_jb_{t}");
                }
                if t.starts_with("clust") {
                    // ck = str(i) + "0123456789" × 120, in text order.
                    let ck = r["key"]["value"].as_str().unwrap();
                    assert!(ck.ends_with(&"0123456789".repeat(120)), "legacy_jb_{t}");
                    if let Some(prev) = rows.get(i.wrapping_sub(1)) {
                        assert!(prev["key"]["value"].as_str().unwrap() < ck, "legacy_jb_{t}");
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// `legacy_jb_Keyspace1-Standard1`: 900 partitions '100'..'999', one cell
/// each whose name (and value) is the key; uncompressed with a CRC32 CRC.db
/// and a sha1sum-style Digest.sha1.
#[test]
fn jb_keyspace1_standard1_has_900_one_cell_partitions() {
    let Some(root) = corpus() else { return };
    let dir = root.join("cassandra/legacy_jb_Keyspace1-Standard1");
    if !dir.is_dir() {
        return;
    }
    let tmp = scratch("standard1");
    let s = schema_file(&tmp, "s1", &keyspace1("Standard1"));
    let d = dump(&dir, &s);
    assert_eq!(d.len(), 900);
    for (i, p) in d.iter().enumerate() {
        let key: String = (100 + i).to_string();
        let hex: String = key.bytes().map(|b| format!("{b:02x}")).collect();
        assert_eq!(p["key"]["raw"], hex.as_str());
        let rows = p["clustering_elements"].as_array().unwrap();
        assert_eq!(rows.len(), 1, "{key}");
        assert_eq!(rows[0]["key"]["value"], hex.as_str(), "{key}");
        assert_eq!(rows[0]["columns"]["value"]["value"], hex.as_str(), "{key}");
    }
    let r = sstkit(args(&[&dir], &["validate-checksums", "-o", "json"]));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let rep = v["sstables"].as_object().unwrap().values().next().unwrap();
    assert_eq!(rep["valid"], true, "{rep}");
    assert_eq!(rep["has_checksums"], true, "{rep}");
    assert_eq!(rep["has_digest"], true, "{rep}");
    assert_eq!(rep["chunks"], 1, "{rep}");
    for cmd in ["validate", "scrub"] {
        let r = sstkit(args(&[&s, &dir], &[cmd, "--schema"]));
        assert_eq!(r.code, 0, "{cmd}: {}{}", r.stdout, r.stderr);
    }
    // Filter.db (old layout and hash order): every key present; absent keys
    // rarely match (fp chance 0.01).
    let filter = |keys: std::ops::Range<u32>| -> (usize, usize) {
        let mut a = args(&[&dir], &["dump-filter", "-o", "json"]);
        for k in keys {
            a.push("--key-hex".into());
            a.push(k.to_string().bytes().map(|b| format!("{b:02x}")).collect());
        }
        let r = sstkit(&a);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        let ks = v["sstables"].as_object().unwrap().values().next().unwrap()["keys"].clone();
        let ks = ks.as_array().unwrap();
        (
            ks.iter().filter(|k| k["may_contain"] == true).count(),
            ks.len(),
        )
    };
    assert_eq!(filter(100..1000), (900, 900));
    let (fp, n) = filter(1000..1300);
    assert!(fp <= n / 20, "{fp} of {n} absent keys match");
}

/// `read` through Index.db and the promoted index of a wide jb partition
/// returns what the full scan does; a clustering slice is clipped.
#[test]
fn jb_bounded_reads_agree_with_the_scan() {
    let Some(root) = corpus() else { return };
    let dir = root.join("cassandra/legacy_jb_clust");
    if !dir.is_dir() {
        return;
    }
    let tmp = scratch("read");
    let (t, cols, compact) = TABLES[4];
    let s = schema_file(&tmp, t, &table_cql("jb", t, cols, compact));
    let all = dump(&dir, &s);
    let read = |extra: &[&str]| -> Vec<Value> {
        let mut a = args(
            &[&s, &dir],
            &["read", "-o", "ndjson", "--key", "2", "--schema"],
        );
        a.extend(extra.iter().map(|x| x.to_string()));
        let r = sstkit(&a);
        assert_eq!(r.code, 0, "{a:?}: {}", r.stderr);
        r.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    assert_eq!(read(&[]), [all[2].clone()]);
    // ck = str(i) + "0123456789" × 120: "10…" <= ck <= "12" holds for i = 10, 1, 11.
    let sliced = read(&["--from", "10", "--to", "12"]);
    let cks: Vec<String> = sliced[0]["clustering_elements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["key"]["value"].as_str().unwrap()[..3].to_string())
        .collect();
    assert_eq!(cks, ["100", "101", "110"]);
}

/// Every metadata command reads every intact jb set, in every output
/// format; validate, scrub and validate-checksums find nothing.
#[test]
fn jb_metadata_and_checks_are_clean() {
    let Some(root) = corpus() else { return };
    let tmp = scratch("meta");
    let mut failures = Vec::new();
    for (t, cols, compact) in TABLES {
        let dir = root.join(format!("cassandra/legacy_jb_{t}"));
        if !dir.is_dir() {
            continue;
        }
        let s = schema_file(&tmp, t, &table_cql("jb", t, cols, *compact));
        let mut runs: Vec<Vec<String>> = Vec::new();
        for cmd in [
            "info",
            "dump-statistics",
            "dump-summary",
            "dump-index",
            "dump-toc",
        ] {
            for f in ["json", "ndjson", "text"] {
                runs.push(args(&[&dir], &[cmd, "-o", f]));
            }
        }
        for cmd in ["dump-filter", "dump-compression-info", "validate-checksums"] {
            runs.push(args(&[&dir], &[cmd]));
        }
        for cmd in ["validate", "scrub"] {
            runs.push(args(&[&s, &dir], &[cmd, "--schema"]));
        }
        for a in runs {
            let r = sstkit(&a);
            if r.code != 0 || !r.stderr.is_empty() {
                failures.push(format!("{a:?}: exit {}: {}", r.code, r.stderr));
            }
        }
        // Statistics.db: the legacy blob mapped onto the model.
        let r = sstkit(args(&[&dir], &["dump-statistics", "-o", "json"]));
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        let st = v["sstables"].as_object().unwrap().values().next().unwrap();
        assert_eq!(st["offsets"], serde_json::json!({}), "{t}");
        assert_eq!(
            st["validation"]["partitioner"], "org.apache.cassandra.dht.ByteOrderedPartitioner",
            "{t}"
        );
        assert_eq!(st["validation"]["filter_chance"], 0.01, "{t}");
        assert!(st["compaction"]["ancestors"].is_array(), "{t}");
        assert!(st["compaction"].get("cardinality").is_none(), "{t}");
        assert!(st.get("serialization_header").is_none(), "{t}");
        let stats = &st["stats"];
        for absent in [
            "repaired_at",
            "min_ttl",
            "min_local_deletion_time",
            "has_legacy_counter_shards",
        ] {
            assert!(stats.get(absent).is_none(), "{t}: {absent}");
        }
        // 5 partitions in the row size histogram.
        let parts: i64 = stats["estimated_partition_size"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["value"].as_i64().unwrap())
            .sum();
        assert_eq!(parts, 5, "{t}");
        // Summary.db: no sampling fields before ka.
        let r = sstkit(args(&[&dir], &["dump-summary", "-o", "json"]));
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        let h = &v["sstables"].as_object().unwrap().values().next().unwrap()["header"];
        assert!(h.get("sampling_level").is_none(), "{t}: {h}");
        assert_eq!(h["effective_interval"], 128, "{t}: {h}");
        // The compressed chunks carry Adler-32 checksums.
        let r = sstkit(args(&[&dir], &["validate-checksums", "-o", "json"]));
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        let rep = v["sstables"].as_object().unwrap().values().next().unwrap();
        assert_eq!(rep["valid"], true, "{t}: {rep}");
        assert!(rep["chunks"].as_u64().unwrap() >= 1, "{t}: {rep}");
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// cassandra-2.1 `ScrubTest.testScrubOutOfOrder`: opening must fail
/// validation, scrub yields 6 ordered rows. The file holds the keys f, e, d,
/// a, b, c in that order (Index.db), two cells each.
#[test]
fn corrupt_jb_out_of_order_partitions() {
    let Some(root) = corpus() else { return };
    let dir = root.join("cassandra/corrupt-jb-Keyspace1-Standard3");
    if !dir.is_dir() {
        return;
    }
    let tmp = scratch("standard3");
    let s = schema_file(&tmp, "s3", &keyspace1("Standard3"));
    let sp = s.to_string_lossy().into_owned();
    let d = dir.to_string_lossy().into_owned();
    let key_of = |l: &str| -> String {
        let v: Value = serde_json::from_str(l).unwrap();
        v["key"]["raw"].as_str().unwrap().to_string()
    };

    let r = sstkit(["validate", &d, "--schema", &sp, "-o", "ndjson"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let summary: Value = serde_json::from_str(r.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(summary["partitions"], 6, "{summary}");
    assert!(
        summary["counts"]["partition_order"].as_u64().unwrap() >= 1,
        "{summary}"
    );

    // segregate: every partition survives, in one of the two outputs.
    let out = tmp.join("seg");
    let o = out.to_string_lossy().into_owned();
    let r = sstkit([
        "scrub",
        &d,
        "--schema",
        &sp,
        "--mode",
        "segregate",
        "--salvage-format",
        "ndjson",
        "--output-dir",
        &o,
        "-o",
        "ndjson",
    ]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let read = |suffix: &str| -> Vec<String> {
        let f = std::fs::read_dir(&out)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().ends_with(suffix))
            .unwrap();
        std::fs::read_to_string(f)
            .unwrap()
            .lines()
            .map(key_of)
            .collect()
    };
    let main = read("-salvaged.ndjson");
    let seg = read("-segregated.ndjson");
    assert!(main.windows(2).all(|w| w[0] < w[1]), "{main:?}");
    let mut all: Vec<String> = main.iter().chain(&seg).cloned().collect();
    all.sort();
    assert_eq!(all, ["61", "62", "63", "64", "65", "66"]);

    // skip: the ordered run is salvaged, the out-of-order ones are dropped
    // (and reported).
    let r = sstkit([
        "scrub", &d, "--schema", &sp, "--mode", "skip", "-o", "ndjson",
    ]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let summary: Value = serde_json::from_str(r.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(summary["partitions"], 6, "{summary}");
    assert_eq!(
        summary["salvaged"].as_u64().unwrap() + summary["dropped"].as_u64().unwrap(),
        6,
        "{summary}"
    );
}
