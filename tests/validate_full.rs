//! `validate` checks everything: missing and unlisted components, chunk
//! checksums (compressed and CRC.db), the digest, pre-3.0 sstables without
//! a schema; and every finding of `validate`, `validate-checksums` and
//! `scrub` matches `docs/schemas/finding.schema.json`.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;
use sstkit_format::validate::ProblemClass;

use crate::schema_check::check;
use crate::util::{corpus, fixtures, repo, sstkit, Run};

/// A scratch directory under the system temp dir, removed on drop.
struct Scratch(crate::util::Scratch);

impl Scratch {
    fn new(name: &str) -> Scratch {
        Scratch(crate::util::scratch_dir("vf", name))
    }

    /// Copy the components of fixture `case` whose suffix is in `only`
    /// (every `-big-` file when `only` is empty), writable.
    fn copy(&self, case: &str, only: &[&str]) {
        let dir = fixtures().join(case);
        for e in std::fs::read_dir(&dir).expect("read fixture dir").flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some((_, suffix)) = name.split_once("-big-") else {
                continue;
            };
            let base = suffix.split('.').next().unwrap_or("");
            if only.is_empty() || only.contains(&base) {
                let to = self.0.join(&name);
                std::fs::write(&to, std::fs::read(e.path()).expect("read")).expect("copy");
            }
        }
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

fn run(args: &[&str]) -> Run {
    let r = sstkit(args);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    r
}

/// The one per-sstable report of a JSON document.
fn report(r: &Run) -> Value {
    let v: Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", r.stdout, r.stderr));
    let m = v["sstables"].as_object().expect("sstables");
    assert_eq!(m.len(), 1, "{v}");
    m.values().next().cloned().unwrap_or_default()
}

fn findings(rep: &Value) -> Vec<Value> {
    rep["findings"].as_array().cloned().unwrap_or_default()
}

/// (class, component) of each finding.
fn classes(rep: &Value) -> Vec<(String, String)> {
    findings(rep)
        .iter()
        .map(|f| {
            (
                f["class"].as_str().unwrap_or("?").to_string(),
                f["component"].as_str().unwrap_or("?").to_string(),
            )
        })
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn missing_components_listed_in_the_toc_are_findings() {
    let s = Scratch::new("missing");
    s.copy(
        "nb_clustering",
        &["Data", "TOC", "Statistics", "CompressionInfo"],
    );
    let data = s.path("nb-1-big-Data.db");
    let want = pairs(&[
        ("missing_component", "Digest"),
        ("missing_component", "Filter.db"),
        ("missing_component", "Index.db"),
        ("missing_component", "Summary.db"),
    ]);
    for extra in [None, Some("--skip-checksums")] {
        let mut args = vec!["validate", data.as_str()];
        args.extend(extra);
        let r = run(&args);
        assert_eq!(r.code, 1, "{args:?}: {}{}", r.stdout, r.stderr);
        let rep = report(&r);
        assert_eq!(rep["valid"], false, "{rep}");
        assert_eq!(rep["errors"], 4, "{rep}");
        let mut got = classes(&rep);
        got.sort();
        assert_eq!(got, want, "{args:?}: {rep}");
        // The data itself still decodes and is checked.
        assert_eq!(rep["partitions"], 196, "{rep}");
    }
}

#[test]
fn unlisted_component_is_a_note() {
    let s = Scratch::new("unlisted");
    s.copy("nb_clustering", &[]);
    let toc = s.path("nb-1-big-TOC.txt");
    let text = std::fs::read_to_string(&toc).expect("TOC");
    let kept: String = text
        .lines()
        .filter(|l| l.trim() != "Filter.db")
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(kept, text, "the fixture's TOC lists Filter.db");
    std::fs::write(&toc, kept).expect("write TOC");
    let r = run(&["validate", &s.path("nb-1-big-Data.db")]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let rep = report(&r);
    assert_eq!(rep["valid"], true, "{rep}");
    assert_eq!(rep["errors"], 0, "{rep}");
    let f = findings(&rep);
    assert_eq!(classes(&rep), pairs(&[("unlisted_component", "Filter.db")]));
    assert_eq!(f[0]["severity"], "note", "{rep}");
}

/// Offset of a letter inside a multi-word text value (a regular cell,
/// not a key or clustering) at or after `from`.
fn value_letter(bytes: &[u8], from: usize) -> usize {
    let is_text = |b: &u8| b.is_ascii_lowercase() || *b == b' ';
    let mut i = from;
    while i < bytes.len() {
        let run = bytes[i..].iter().take_while(|b| is_text(b)).count();
        let spaces = bytes[i..i + run].iter().filter(|b| **b == b' ').count();
        if run >= 16 && spaces >= 2 {
            return i + run / 2 + usize::from(bytes[i + run / 2] == b' ');
        }
        i += run.max(1);
    }
    panic!("no text value after {from}");
}

#[test]
fn a_byte_changed_under_crc_db_fails_validate() {
    let s = Scratch::new("crc");
    s.copy("nb_clustering_nocompress", &[]);
    let data = s.path("nb-1-big-Data.db");
    let crc = std::fs::read(s.path("nb-1-big-CRC.db")).expect("CRC.db");
    let cs = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]) as usize;
    let mut bytes = std::fs::read(&data).expect("read");
    let at = value_letter(&bytes, cs);
    // Another lowercase letter: the structure stays valid, only the checksums see it.
    bytes[at] = if bytes[at] == b'z' {
        b'y'
    } else {
        bytes[at] + 1
    };
    std::fs::write(&data, &bytes).expect("write");
    let chunk = (at / cs) as u64;

    let r = run(&["validate", &data]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let rep = report(&r);
    assert_eq!(
        classes(&rep),
        pairs(&[("bad_chunk", "Data.db"), ("digest_mismatch", "Data.db")]),
        "{rep}"
    );
    let f = &findings(&rep)[0];
    assert_eq!(f["chunk"], chunk, "{f}");
    assert_eq!(f["offset"], chunk * cs as u64, "{f}");
    assert!(!f["partitions"].as_array().expect("partitions").is_empty());

    // The structural pass alone does not see it: checksums are what catch it.
    let r = run(&["validate", "--skip-checksums", &data]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let rep = report(&r);
    assert!(findings(&rep).is_empty(), "{rep}");
    let skipped: Vec<&str> = rep["skipped"]
        .as_array()
        .expect("skipped")
        .iter()
        .filter_map(|s| s["check"].as_str())
        .collect();
    assert_eq!(skipped, ["chunk_checksums", "digest"], "{rep}");
}

#[test]
fn a_bad_compressed_chunk_is_reported_once() {
    let s = Scratch::new("lz4");
    s.copy("nb_clustering", &[]);
    let data = s.path("nb-1-big-Data.db");
    let mut bytes = std::fs::read(&data).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x5a;
    std::fs::write(&data, &bytes).expect("write");
    let r = run(&["validate", &data]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let rep = report(&r);
    let f = findings(&rep);
    let bad: Vec<&Value> = f.iter().filter(|f| f["class"] == "bad_chunk").collect();
    assert_eq!(bad.len(), 1, "{rep}");
    // The data walk meets the same chunk: not reported a second time.
    assert!(
        !f.iter()
            .any(|x| x["class"] == "checksum" && x["chunk"] == bad[0]["chunk"]),
        "{rep}"
    );
    assert!(f.iter().any(|x| x["class"] == "digest_mismatch"), "{rep}");
}

#[test]
fn corpus_invalid_digest_fails_validate() {
    let Some(c) = corpus() else {
        eprintln!("skipped: no corpus");
        return;
    };
    for set in [
        "scylladb/3.x-lz4-integrity_check-invalid_digest",
        "scylladb/3.x-uncompressed-integrity_check-invalid_digest",
    ] {
        let d = c.join(set);
        let d = d.to_str().expect("path");
        let r = run(&["validate", d]);
        assert_eq!(r.code, 1, "{set}: {}{}", r.stdout, r.stderr);
        let rep = report(&r);
        assert_eq!(
            classes(&rep),
            pairs(&[("digest_mismatch", "Data.db")]),
            "{set}: {rep}"
        );
        let r = run(&["validate", "--skip-checksums", d]);
        assert_eq!(r.code, 0, "{set}: {}{}", r.stdout, r.stderr);
    }
}

#[test]
fn a_filter_in_another_layout_is_named_not_reported_missing() {
    let Some(c) = corpus() else {
        eprintln!("skipped: no corpus");
        return;
    };
    // Written by 2.2 in the old bit layout with the new hash order (§9):
    // most keys rejected by its version's layout, none by that one.
    let d = c.join("cassandra/bloom-filter-la");
    let d = d.to_str().expect("path");
    for threads in ["--threads=1", "--threads=2"] {
        let r = run(&["validate", "-o", "json", threads, d]);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        let rep = report(&r);
        assert_eq!(
            rep["checks"]["filter"]["note"],
            "Filter.db uses the old bit layout with the new hash order (not its version's)",
            "{rep}"
        );
        assert!(findings(&rep).is_empty(), "{rep}");
    }
    // Its sibling in its version's layout: no note.
    let d = c.join("cassandra/bloom-filter-ka");
    let rep = report(&run(&["validate", "-o", "json", d.to_str().expect("path")]));
    assert_eq!(
        rep["checks"]["filter"],
        serde_json::json!({"done": true}),
        "{rep}"
    );
}

#[test]
fn pre_3_0_without_schema_runs_what_needs_none() {
    let Some(c) = corpus() else {
        eprintln!("skipped: no corpus");
        return;
    };
    for set in [
        "cassandra/legacy_jb_clust",
        "cassandra/legacy_ka_simple",
        "cassandra/legacy_ka_indexed",
        "cassandra/legacy_la_clust",
    ] {
        let d = c.join(set);
        let d = d.to_str().expect("path");
        let r = run(&["validate", d]);
        assert_eq!(r.code, 0, "{set}: {}{}", r.stdout, r.stderr);
        let rep = report(&r);
        let skipped: BTreeSet<&str> = rep["skipped"]
            .as_array()
            .expect("skipped")
            .iter()
            .filter_map(|s| s["check"].as_str())
            .collect();
        assert!(
            skipped.contains("data") && skipped.contains("promoted_index"),
            "{set}: {rep}"
        );
        let why = rep["skipped"][0]["reason"].as_str().unwrap_or("");
        assert!(
            rep["skipped"]
                .as_array()
                .expect("skipped")
                .iter()
                .any(|s| s["reason"].as_str().unwrap_or("").contains("--schema")),
            "{set}: {why}"
        );
        for ran in [
            "index",
            "filter",
            "metadata",
            "chunk_checksums",
            "components",
        ] {
            assert_eq!(rep["checks"][ran]["done"], true, "{set} {ran}: {rep}");
        }
        assert!(
            rep["index_entries"].as_u64().unwrap_or(0) > 0,
            "{set}: {rep}"
        );
        // Text mode says on stderr what was skipped.
        let r = run(&["validate", "-o", "text", d]);
        assert_eq!(r.code, 0, "{set}");
        assert!(r.stderr.contains("skipped data"), "{set}: {}", r.stderr);
    }
    // An index out of order is found without the schema.
    let d = c.join("cassandra/corrupt-jb-Keyspace1-Standard3");
    let r = run(&["validate", d.to_str().expect("path")]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(classes(&report(&r))
        .iter()
        .any(|(c, comp)| c == "partition_order" && comp == "Index.db"));
}

// ---- the finding schema -------------------------------------------------

fn schema() -> Value {
    let p = repo().join("docs/schemas/finding.schema.json");
    let text = std::fs::read_to_string(&p).expect("finding.schema.json");
    serde_json::from_str(&text).expect("the schema is JSON")
}

/// Every finding line of NDJSON output (`"type": "finding"`).
fn ndjson_findings(r: &Run) -> Vec<Value> {
    r.stdout
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str::<Value>(l).expect("NDJSON line"))
        .filter(|v| v["type"] == "finding")
        .collect()
}

#[test]
fn the_schema_checker_rejects_what_it_should() {
    let s = schema();
    let good = serde_json::json!({"class": "bad_chunk", "severity": "error",
        "component": "Data.db", "offset": 0, "chunk": 1, "partition_key": null,
        "message": "m", "file_range": [0, 4]});
    let mut e = Vec::new();
    check(&good, &s, &s, "$", &mut e);
    assert!(e.is_empty(), "{e:?}");
    for (k, bad) in [
        ("class", serde_json::json!("no_such_class")),
        ("component", serde_json::json!("Digest.crc32")),
        ("offset", serde_json::json!(null)),
        ("file_range", serde_json::json!([0])),
        ("partition_key", serde_json::json!({"raw": "00"})),
        ("surprise", serde_json::json!(1)),
    ] {
        let mut v = good.clone();
        v[k] = bad;
        let mut e = Vec::new();
        check(&v, &s, &s, "$", &mut e);
        assert!(!e.is_empty(), "{k}: {v}");
    }
    let mut v = good.clone();
    v.as_object_mut().expect("object").remove("chunk");
    let mut e = Vec::new();
    check(&v, &s, &s, "$", &mut e);
    assert!(!e.is_empty(), "chunk is required");
}

#[test]
fn schema_classes_are_the_problem_classes() {
    let s = schema();
    let listed: BTreeSet<&str> = s["properties"]["class"]["enum"]
        .as_array()
        .expect("class enum")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let known: BTreeSet<&str> = ProblemClass::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(listed, known);
}

/// Real outputs of the three commands (JSON and NDJSON), on damaged copies
/// of fixtures, each finding checked against the schema.
#[test]
fn every_finding_matches_the_schema() {
    let s = schema();
    let dir = Scratch::new("schema");
    dir.copy(
        "nb_clustering",
        &["Data", "TOC", "Statistics", "CompressionInfo", "Index"],
    );
    let data = dir.path("nb-1-big-Data.db");
    let mut bytes = std::fs::read(&data).expect("read");
    let mid = bytes.len() / 3;
    bytes[mid] ^= 0x5a;
    std::fs::write(&data, &bytes).expect("write");
    // An extra file the TOC does not list.
    std::fs::write(dir.path("nb-1-big-CRC.db"), [0, 0, 0, 1]).expect("write");
    let mut seen = BTreeSet::new();
    let mut total = 0;
    for cmd in [
        vec!["validate"],
        vec!["validate", "--skip-checksums"],
        vec!["validate-checksums"],
        vec!["scrub"],
        vec!["scrub", "--mode", "skip"],
    ] {
        for out in ["json", "ndjson"] {
            let mut args = cmd.clone();
            args.extend(["-o", out, data.as_str()]);
            let r = run(&args);
            assert_eq!(r.code, 1, "{args:?}: {}{}", r.stdout, r.stderr);
            let list = if out == "json" {
                findings(&report(&r))
            } else {
                ndjson_findings(&r)
            };
            assert!(!list.is_empty(), "{args:?}");
            for f in &list {
                let mut e = Vec::new();
                check(f, &s, &s, "$", &mut e);
                assert!(e.is_empty(), "{args:?}: {f}: {e:?}");
                seen.insert(f["class"].as_str().unwrap_or("").to_string());
                total += 1;
            }
        }
    }
    // The run covered findings of each kind: checksum pass, components, data walk, scrub.
    for c in [
        "bad_chunk",
        "missing_component",
        "unlisted_component",
        "checksum",
        "data_lost",
    ] {
        assert!(seen.contains(c), "{c} not among {seen:?}");
    }
    assert!(total > 10);
}

#[test]
fn every_finding_of_the_corrupt_corpus_matches_the_schema() {
    let Some(c) = corpus() else {
        eprintln!("skipped: no corpus");
        return;
    };
    let s = schema();
    for set in [
        "scylladb/broken_ranges",
        "scylladb/compression-premature-eof",
        "scylladb/3.x-uncompressed-integrity_check-invalid_checksums",
        "scylladb/broken_close_tombstone",
    ] {
        let d: &Path = &c.join(set);
        let d = d.to_str().expect("path");
        for cmd in ["validate", "validate-checksums", "scrub"] {
            let r = run(&[cmd, "-o", "ndjson", d]);
            for f in ndjson_findings(&r) {
                let mut e = Vec::new();
                check(&f, &s, &s, "$", &mut e);
                assert!(e.is_empty(), "{cmd} {set}: {f}: {e:?}");
            }
        }
    }
}
