//! BTI (`da`) sstables: `dump-trie`, and `read` / `dump-data --key` through
//! the trie indexes.
//!
//! * `read` on each `da` fixture equals `read` on the `oa` fixture holding
//!   the same data (BIG index, promoted index) for the same keys and
//!   slices — local deletion times and expiries aside (node clocks); whole
//!   partitions equal `dump-data` of the same `da` sstable.
//! * `dump-data --key` on `da` equals the partitions of a full dump.
//! * IO: a warm single-row read of the wide partition is one Data.db read;
//!   keys the filter or the trie rule out read no Data.db byte.
//! * `dump-trie`: JSON / NDJSON / text shapes, BIG sstables exit 3.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sstkit_format::component::Component;
use sstkit_format::statistics::Statistics;
use sstkit_format::types::CqlType;
use sstkit_format::Sstable;

use crate::util::{corpus, data_files, fixtures, sstkit};

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn fixture(case: &str) -> PathBuf {
    data_files(&fixtures().join(case))
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("fixture {case} missing"))
}

/// The `da` fixtures and the `oa` fixture with the same logical data (none
/// when the data differs: counters, generated time UUIDs).
fn da_fixtures() -> Vec<(PathBuf, Option<PathBuf>)> {
    let mut v = Vec::new();
    for case in [
        "all_types",
        "clustering",
        "collections",
        "counters",
        "deletes",
        "deletes_merge_1",
        "deletes_merge_2",
        "frozen_keys",
        "range_tombstones",
        "typed_keys",
        "udt",
        "wide",
        "wide_desc",
    ] {
        let oa = (!matches!(case, "counters" | "udt" | "collections"))
            .then(|| fixture(&format!("oa_{case}")));
        v.push((fixture(&format!("da_{case}")), oa));
    }
    v.push((
        fixture("da_clustering_nocompress"),
        Some(fixture("oa_clustering")),
    ));
    v
}

/// Lines of stdout as JSON, without the `sstable` field.
fn lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if let Some(o) = v.as_object_mut() {
                o.remove("sstable");
            }
            v
        })
        .collect()
}

fn dump(sst: &Path) -> Vec<Value> {
    let r = sstkit(["dump-data", "-o", "ndjson", &s(sst)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    lines(&r.stdout)
}

/// Drop what depends on the writing node's clock.
fn normalize(v: &mut Value) {
    match v {
        Value::Object(o) => {
            o.remove("deletion_time");
            o.remove("expiry");
            for x in o.values_mut() {
                normalize(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(normalize),
        _ => {}
    }
}

fn clustering_types(sst: &Path) -> Vec<CqlType> {
    let t = Sstable::open_path(sst).unwrap();
    let b = t.read_component(Component::Statistics).unwrap();
    let st = Statistics::parse_lenient(&b, t.features()).unwrap();
    st.header.unwrap().clustering_types
}

/// Command-line text of clustering components (CQL literals joined by `:`),
/// or None when a value does not round-trip.
fn bound_text(types: &[CqlType], comps: &[Vec<u8>]) -> Option<String> {
    let mut parts = Vec::new();
    for (t, c) in types.iter().zip(comps) {
        let v = sstkit_format::value::decode(t, c).ok()?;
        let lit = sstkit_commands::render::value_text(&v, sstkit_commands::render::Form::Cqlsh);
        let back = sstkit_format::value::parse_cql_literal(t, &lit).ok()?;
        if &back != c {
            return None;
        }
        if types.len() == 1 {
            return Some(lit);
        }
        parts.push(lit.replace(':', "\\:"));
    }
    Some(parts.join(":"))
}

fn elements(p: &Value) -> Vec<Value> {
    p["clustering_elements"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Slices over the clusterings `rows` of a partition: start, middle, end,
/// single rows, exclusive, prefixes, open-ended with limits.
fn slices(types: &[CqlType], rows: &[Vec<Vec<u8>>]) -> Vec<Vec<String>> {
    let n = rows.len();
    if n == 0 || types.is_empty() {
        return Vec::new();
    }
    let at = |i: usize| &rows[i.min(n - 1)];
    let t = |c: &Vec<Vec<u8>>| bound_text(types, c);
    let p1 = |c: &Vec<Vec<u8>>| bound_text(types, &c[..1]);
    let mut v: Vec<Option<Vec<String>>> = Vec::new();
    let two = |f: &str, a: Option<String>, g: &str, b: Option<String>| -> Option<Vec<String>> {
        Some(vec![f.into(), a?, g.into(), b?])
    };
    v.push(two("--from", t(at(0)), "--to", t(at(2))));
    v.push(two("--from", t(at(n / 2)), "--to", t(at(n / 2 + 3))));
    v.push(two(
        "--from",
        t(at(n.saturating_sub(3))),
        "--to",
        t(at(n - 1)),
    ));
    v.push(two("--from", t(at(n / 2)), "--to", t(at(n / 2))));
    v.push(two("--after", t(at(n / 3)), "--before", t(at(n / 3 + 4))));
    v.push(two("--from", t(at(n / 4)), "--before", t(at(n / 4 + 1))));
    v.push(t(at(n / 2)).map(|x| vec!["--after".into(), x, "--limit".into(), "7".into()]));
    v.push(t(at(n / 2)).map(|x| vec!["--before".into(), x, "--limit".into(), "5".into()]));
    v.push(t(at(2 * n / 3)).map(|x| vec!["--from".into(), x, "--limit".into(), "1".into()]));
    if types.len() > 1 {
        v.push(two("--from", p1(at(n / 2)), "--to", p1(at(n / 2))));
        v.push(two("--after", p1(at(n / 5)), "--to", p1(at(n / 5 + 9))));
    }
    v.into_iter().flatten().collect()
}

fn read(sst: &Path, key: &str, args: &[String]) -> Vec<Value> {
    let mut a = vec![
        "read".to_string(),
        "--clustering-order".to_string(),
        "-o".into(),
        "ndjson".into(),
        "--key-hex".into(),
        key.into(),
    ];
    a.extend(args.iter().cloned());
    a.push(s(sst));
    let r = sstkit(&a);
    assert_eq!(r.code, 0, "{a:?}: {}", r.stderr);
    lines(&r.stdout)
}

#[test]
fn read_on_da_equals_read_on_oa() {
    let (mut np, mut ns) = (0, 0);
    let mut failures = Vec::new();
    for (da, oa) in da_fixtures() {
        let Some(oa) = oa else { continue };
        let parts = dump(&oa);
        let types = clustering_types(&da);
        assert_eq!(types, clustering_types(&oa));
        // First, middle, last and the widest partition.
        let mut sample: Vec<&Value> = Vec::new();
        let widest = parts.iter().max_by_key(|p| elements(p).len()).unwrap();
        for p in [
            &parts[0],
            &parts[parts.len() / 2],
            &parts[parts.len() - 1],
            widest,
        ] {
            if !sample.iter().any(|x| x["key"] == p["key"]) {
                sample.push(p);
            }
        }
        for p in sample {
            np += 1;
            let key = p["key"]["raw"].as_str().unwrap();
            let els = elements(p);
            let mut rows: Vec<Vec<Vec<u8>>> = els
                .iter()
                .filter(|e| e["type"] == "clustering-row")
                .map(|e| crate::read::components(e["key"]["raw"].as_str().unwrap_or("")))
                .collect();
            rows.dedup();
            let mut all = vec![Vec::new()];
            if els.len() > 2000 {
                all[0] = vec!["--limit".into(), "40".into()];
            }
            all.extend(slices(&types, &rows));
            for args in all {
                let (mut a, mut b) = (read(&da, key, &args), read(&oa, key, &args));
                a.iter_mut().for_each(normalize);
                b.iter_mut().for_each(normalize);
                ns += 1;
                if a != b {
                    failures.push(format!(
                        "{} key {key} {args:?}:\n  da {}\n  oa {}",
                        da.display(),
                        serde_json::to_string(&a).unwrap(),
                        serde_json::to_string(&b).unwrap()
                    ));
                }
            }
        }
    }
    eprintln!("{np} partitions, {ns} reads compared (da vs oa)");
    assert!(ns > 250, "only {ns}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Every partition of `sst`, read by key (all keys in one run), equals the
/// full dump.
fn whole_partitions_equal_dump(sst: &Path) -> usize {
    let parts = dump(sst);
    let keys: String = parts
        .iter()
        .map(|p| format!("0x{}\n", p["key"]["raw"].as_str().unwrap()))
        .collect();
    let scratch = crate::util::scratch_dir("bti", "keys");
    let f = scratch.join("keys.txt");
    std::fs::write(&f, keys).unwrap();
    let r = sstkit([
        "read",
        "--clustering-order",
        "-o",
        "ndjson",
        "--keys-file",
        &s(&f),
        &s(sst),
    ]);
    assert_eq!(r.code, 0, "{}: {}", sst.display(), r.stderr);
    let got = lines(&r.stdout);
    assert_eq!(got.len(), parts.len(), "{}", sst.display());
    for (g, w) in got.iter().zip(&parts) {
        assert_eq!(g, w, "{}", sst.display());
    }
    parts.len()
}

#[test]
fn whole_partitions_equal_dump_data() {
    let mut n = 0;
    for (da, _) in da_fixtures() {
        n += whole_partitions_equal_dump(&da);
    }
    if let Some(root) = corpus() {
        for set in [
            "legacy_da_simple",
            "legacy_da_clust",
            "legacy_da_simple_counter",
            "legacy_da_clust_counter",
        ] {
            for d in data_files(&root.join("cassandra").join(set)) {
                n += whole_partitions_equal_dump(&d);
            }
        }
    }
    eprintln!("{n} partitions read whole");
    assert!(n > 900, "{n}");
}

#[test]
fn dump_data_keys_go_through_the_trie() {
    for case in ["da_wide", "da_typed_keys", "da_all_types"] {
        let sst = fixture(case);
        let parts = dump(&sst);
        let pick: Vec<&Value> = [0, parts.len() / 2, parts.len() - 1]
            .iter()
            .map(|i| &parts[*i])
            .collect();
        let mut args = vec!["dump-data".to_string(), "-o".into(), "ndjson".into()];
        for p in &pick {
            args.push("--key-hex".into());
            args.push(p["key"]["raw"].as_str().unwrap().into());
        }
        // And one that is absent.
        args.push("--key-hex".into());
        args.push("0badc0de0badc0de".into());
        args.push("--io-stats=json".into());
        args.push(s(&sst));
        let r = sstkit(&args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let mut got = lines(&r.stdout);
        let mut want: Vec<Value> = pick.into_iter().cloned().collect();
        want.dedup();
        got.sort_by_key(|v| v.to_string());
        want.sort_by_key(|v| v.to_string());
        assert_eq!(got, want, "{case}");
        // stderr: the absent key's note, then the IO counters.
        assert!(r.stderr.contains("not found: "), "{}", r.stderr);
        let io = r.stderr.lines().find(|l| l.starts_with('{')).unwrap();
        let st: Value = serde_json::from_str(io).unwrap();
        assert!(
            st["components"]["partitions"]["cache_misses"]
                .as_u64()
                .unwrap_or(0)
                + st["components"]["partitions"]["cache_hits"]
                    .as_u64()
                    .unwrap_or(0)
                > 0,
            "{case}: Partitions.db not read: {}",
            r.stderr
        );
    }
}

fn stats(stderr: &str) -> Vec<Value> {
    stderr
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn counter(op: &Value, comp: &str, field: &str) -> u64 {
    op["components"][comp][field].as_u64().unwrap_or(0)
}

#[test]
fn warm_single_row_read_is_one_data_read() {
    for case in ["da_wide", "da_wide_desc"] {
        let sst = fixture(case);
        let parts = dump(&sst);
        let types = clustering_types(&sst);
        let p = parts.iter().max_by_key(|p| elements(p).len()).unwrap();
        let key = p["key"]["raw"].as_str().unwrap();
        let els = elements(p);
        let rows: Vec<&Value> = els
            .iter()
            .filter(|e| e["type"] == "clustering-row")
            .collect();
        for at in [1, rows.len() / 2, rows.len() - 2] {
            let row = bound_text(
                &types,
                &crate::read::components(rows[at]["key"]["raw"].as_str().unwrap()),
            )
            .unwrap();
            let r = sstkit([
                "read",
                "--clustering-order",
                "-o",
                "ndjson",
                "--io-stats=json",
                "--key-hex",
                key,
                "--key-hex",
                key,
                "--from",
                &row,
                "--to",
                &row,
                &s(&sst),
            ]);
            assert_eq!(r.code, 0, "{}", r.stderr);
            let got = lines(&r.stdout);
            assert_eq!(got.len(), 2);
            assert_eq!(got[0], got[1]);
            let n = elements(&got[0])
                .iter()
                .filter(|e| e["type"] == "clustering-row")
                .count();
            assert_eq!(n, 1, "{case} {row}: {}", r.stdout);
            let ops = stats(&r.stderr);
            assert_eq!(ops.len(), 3, "open + two reads");
            let (cold, warm) = (&ops[1], &ops[2]);
            assert_eq!(warm["plan"]["blocks"], cold["plan"]["blocks"]);
            // Warm: the block (one chunk or unit range), nothing else.
            assert_eq!(counter(warm, "data", "reads"), 1, "{case} {row}: {warm}");
            for c in ["partitions", "rows"] {
                assert_eq!(counter(warm, c, "reads"), 0, "{case} {c}: {warm}");
            }
            // Cold: the trie pages and the row trie, read once.
            assert!(counter(cold, "rows", "reads") >= 1);
            assert!(counter(cold, "data", "reads") <= 2, "{cold}");
        }
    }
}

#[test]
fn absent_keys_read_no_data() {
    let sst = fixture("da_wide");
    let present: Vec<String> = dump(&sst)
        .iter()
        .map(|p| p["key"]["raw"].as_str().unwrap().to_string())
        .collect();
    let keys: String = (1000u32..3000)
        .map(|i| format!("{i:08x}"))
        .filter(|k| !present.contains(k))
        .map(|k| format!("0x{k}\n"))
        .collect();
    let scratch = crate::util::scratch_dir("bti", "absent");
    let f = scratch.join("keys.txt");
    std::fs::write(&f, keys).unwrap();
    let r = sstkit([
        "read",
        "--clustering-order",
        "-o",
        "ndjson",
        "--io-stats=json",
        "--keys-file",
        &s(&f),
        &s(&sst),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    let ops = stats(&r.stderr);
    let (mut by_filter, mut by_index, mut key_checks) = (0, 0, 0);
    for op in &ops[1..] {
        let res = op["result"].as_str().unwrap();
        let data = counter(op, "data", "reads");
        if res == "absent (bloom filter)" {
            by_filter += 1;
            assert_eq!(
                op["components"].as_object().map_or(0, |o| o.len()),
                0,
                "{op}"
            );
        } else {
            by_index += 1;
            // Ruled out by the trie (no prefix, other hash byte): no Data.db
            // read; a hash collision costs the key check in Data.db.
            if data > 0 {
                key_checks += 1;
                assert!(data <= 1, "{op}");
            }
        }
    }
    eprintln!("{by_filter} ruled out by the filter, {by_index} by the trie ({key_checks} after a key check)");
    assert!(by_filter > 1000 && by_index > 5, "{by_filter} {by_index}");
    assert!(key_checks * 10 < by_index, "{key_checks} of {by_index}");
}

#[test]
fn dump_trie_shapes() {
    let sst = fixture("da_wide");
    let r = sstkit(["dump-trie", "--rows", &s(&sst)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let t = &v["sstables"][s(&sst)];
    let p = &t["partitions"];
    assert_eq!(p["key_count"], 13);
    let entries = p["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 13);
    // Key order = Data.db order.
    let keys: Vec<&str> = entries
        .iter()
        .map(|e| e["key"]["raw"].as_str().unwrap())
        .collect();
    let dumped: Vec<String> = dump(&sst)
        .iter()
        .map(|p| p["key"]["raw"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(keys, dumped);
    assert_eq!(p["first_key"]["raw"], entries[0]["key"]["raw"]);
    assert_eq!(p["last_key"]["raw"], entries[12]["key"]["raw"]);
    for e in entries {
        assert!(e["prefix_hex"].as_str().unwrap().starts_with("40"));
        assert!(e["hash"].is_u64());
        assert!(e["position"]["data"].is_u64() || e["position"]["rows"].is_u64());
    }
    let rows = t["rows"].as_array().unwrap();
    let with_rows = entries
        .iter()
        .filter(|e| e["position"]["rows"].is_u64())
        .count();
    assert_eq!(rows.len(), with_rows);
    let wide = rows
        .iter()
        .max_by_key(|r| r["blocks"].as_u64().unwrap())
        .unwrap();
    assert_eq!(wide["key"]["value"], "0");
    let re = wide["entries"].as_array().unwrap();
    assert_eq!(re.len() as u64, wide["blocks"].as_u64().unwrap() + 1);
    assert_eq!(re[0]["separator_hex"], "");
    assert!(re.iter().any(|e| e["open_marker"]["timestamp"].is_i64()));
    // NDJSON: footer, partitions, rows.
    let r = sstkit(["dump-trie", "--rows", "-o", "ndjson", &s(&sst)]);
    assert_eq!(r.code, 0);
    let ls = lines(&r.stdout);
    assert_eq!(ls[0]["type"], "footer");
    assert_eq!(ls.iter().filter(|l| l["type"] == "partition").count(), 13);
    assert_eq!(ls.iter().filter(|l| l["type"] == "rows").count(), with_rows);
    // Text.
    let r = sstkit(["dump-trie", "-o", "text", &s(&sst)]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("key_count") && r.stdout.contains("Rows.db 8827"));
    // BIG: no tries.
    let r = sstkit(["dump-trie", &s(&fixture("oa_wide"))]);
    assert_eq!(r.code, 3);
    assert!(r.stderr.contains("Partitions.db"), "{}", r.stderr);
    // The corpus' ByteOrdered sets.
    if let Some(root) = corpus() {
        for d in data_files(&root.join("cassandra/legacy_da_clust")) {
            let r = sstkit(["dump-trie", "--rows", "-o", "ndjson", &s(&d)]);
            assert_eq!(r.code, 0, "{}", r.stderr);
            let ls = lines(&r.stdout);
            assert_eq!(ls.iter().filter(|l| l["type"] == "rows").count(), 5);
        }
    }
}
