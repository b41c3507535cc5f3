//! Keys and values typed by users, and input discovery: what sstkit prints
//! reads back as input, and the messages about schemas, versions and flags.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;
use sstkit_format::component::Component;
use sstkit_format::read::ClusteringBound;
use sstkit_format::statistics::Statistics;
use sstkit_format::types::CqlType;
use sstkit_format::value::parse_key_arg;
use sstkit_format::Sstable;

use crate::util::{data_files, fixture_cases, sstkit};

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Partition key type and clustering types from the serialization header.
fn key_types(dir: &Path) -> (CqlType, Vec<CqlType>) {
    let t = Sstable::open_path(&data_files(dir)[0]).unwrap();
    let b = t.read_component(Component::Statistics).unwrap();
    let st = Statistics::parse_lenient(&b, t.features()).unwrap();
    let h = st.header.unwrap();
    (h.partition_key_type, h.clustering_types)
}

/// The components of a dump-data clustering `raw` (2-byte length + bytes
/// each).
fn clustering_components(raw: &str) -> Vec<Vec<u8>> {
    let b = unhex(raw);
    let mut out = Vec::new();
    let mut i = 0;
    while i + 2 <= b.len() {
        let n = u16::from_be_bytes([b[i], b[i + 1]]) as usize;
        out.push(b[i + 2..i + 2 + n].to_vec());
        i += 2 + n;
    }
    out
}

fn ndjson(args: &[&str]) -> Vec<Value> {
    let r = sstkit(args);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    r.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A clustering as printed, read back as a bound, must give the bytes it
/// was printed from.
fn check_bound(types: &[CqlType], printed: &str, comps: &[Vec<u8>], what: &str) {
    let b = ClusteringBound::parse(types, printed, true)
        .unwrap_or_else(|e| panic!("{what}: printed clustering {printed:?} does not parse: {e}"));
    let got: Vec<Vec<u8>> = b.values.into_iter().map(|v| v.unwrap()).collect();
    assert_eq!(got, comps, "{what}: {printed:?} reads back as other bytes");
}

#[test]
fn printed_keys_and_clusterings_read_back() {
    let cases = fixture_cases();
    assert!(!cases.is_empty());
    let (mut keys_checked, mut rows_checked, mut blocks_checked, mut reads) = (0, 0, 0, 0);
    for dir in cases {
        let d = dir.to_string_lossy().into_owned();
        let (kt, types) = key_types(&dir);
        let parts = ndjson(&["dump-data", &d, "-o", "ndjson"]);
        // Every printed key, in-process and then all at once through --key.
        let mut printed = Vec::new();
        for p in &parts {
            let (value, raw) = (
                p["key"]["value"].as_str().unwrap(),
                p["key"]["raw"].as_str().unwrap(),
            );
            let back = parse_key_arg(&kt, value)
                .unwrap_or_else(|e| panic!("{d}: printed key {value:?} does not parse: {e}"));
            assert_eq!(
                back,
                unhex(raw),
                "{d}: key {value:?} reads back as other bytes"
            );
            printed.push(value.to_string());
            keys_checked += 1;
        }
        let mut args: Vec<&str> = vec!["dump-data", &d, "-o", "ndjson", "--keys-only"];
        for k in &printed {
            args.extend(["--key", k]);
        }
        let found: BTreeSet<String> = ndjson(&args)
            .iter()
            .map(|p| p["raw"].as_str().unwrap().to_string())
            .collect();
        let all: BTreeSet<String> = parts
            .iter()
            .map(|p| p["key"]["raw"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(found, all, "{d}: --key with every printed key");
        // Every printed clustering in-process; the first and last row of a
        // few partitions through `read --key --from --to`.
        for (pi, p) in parts.iter().enumerate() {
            let key = p["key"]["value"].as_str().unwrap();
            let rows: Vec<&Value> = p["clustering_elements"]
                .as_array()
                .map(|a| a.iter().filter(|e| e["type"] == "clustering-row").collect())
                .unwrap_or_default();
            for e in &rows {
                let printed = e["key"]["value"].as_str().unwrap();
                let comps = clustering_components(e["key"]["raw"].as_str().unwrap());
                if types.is_empty() {
                    continue;
                }
                check_bound(&types, printed, &comps, &d);
                rows_checked += 1;
            }
            if types.is_empty() || rows.is_empty() || !(pi == 0 || pi + 1 == parts.len()) {
                continue;
            }
            for e in [rows[0], rows[rows.len() - 1]] {
                let ck = e["key"]["value"].as_str().unwrap();
                let got = ndjson(&[
                    "read", &d, "--key", key, "--from", ck, "--to", ck, "-o", "ndjson",
                ]);
                let got_rows: Vec<&Value> = got
                    .iter()
                    .flat_map(|p| p["clustering_elements"].as_array().unwrap().iter())
                    .filter(|x| x["type"] == "clustering-row")
                    .collect();
                assert_eq!(got_rows.len(), 1, "{d}: read --key {key} --from/--to {ck}");
                assert_eq!(got_rows[0]["key"]["raw"], e["key"]["raw"], "{d}: {ck}");
                reads += 1;
            }
        }
        // dump-index: keys and promoted-index block clusterings.
        if !d.contains("/da_") {
            for e in ndjson(&["dump-index", &d, "--promoted-index", "-o", "ndjson"]) {
                let value = e["key"]["value"].as_str().unwrap();
                assert_eq!(
                    parse_key_arg(&kt, value).unwrap(),
                    unhex(e["key"]["raw"].as_str().unwrap()),
                    "{d}: dump-index key {value:?}"
                );
                let blocks = e["promoted_index"]["entries"].as_array().cloned();
                for b in blocks.unwrap_or_default() {
                    for side in ["first", "last"] {
                        let n = &b[side];
                        let comps: Vec<Vec<u8>> = n["raw"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|c| unhex(c.as_str().unwrap()))
                            .collect();
                        if comps.is_empty() {
                            continue;
                        }
                        check_bound(&types, n["value"].as_str().unwrap(), &comps, &d);
                        blocks_checked += 1;
                    }
                }
            }
        }
    }
    assert!(keys_checked > 1000 && rows_checked > 10_000 && blocks_checked > 10 && reads > 40);
    eprintln!(
        "{keys_checked} keys, {rows_checked} rows, {blocks_checked} index blocks, {reads} reads"
    );
}
