//! `validate` and `scrub`: every fixture is valid and salvages to exactly
//! its dump; the deliberately corrupt corpus sets give the findings their
//! upstream tests expect (see shared/corpus/MANIFEST.md); output formats;
//! refusal to write into the input directory.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;
use sstkit_format::digest::ChecksumAlgo;

use crate::util::{corpus, data_files, fixture_cases, fixtures, scratch_dir, sstkit};

fn json(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

/// The per-sstable reports of a JSON document.
fn reports(v: &Value) -> Vec<(String, Value)> {
    v["sstables"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

fn classes(r: &Value) -> BTreeSet<String> {
    r["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f["class"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_fixture_is_valid() {
    for case in fixture_cases() {
        let d = case.to_str().unwrap();
        let r = sstkit(["validate", d]);
        assert_eq!(r.code, 0, "validate {d}: {}{}", r.stdout, r.stderr);
        for (_, rep) in reports(&json(&r.stdout)) {
            assert_eq!(rep["valid"], true, "{d}: {rep}");
            assert_eq!(rep["errors"], 0);
            assert!(rep["partitions"].as_u64().unwrap() > 0);
        }
        let r = sstkit(["scrub", d]);
        assert_eq!(r.code, 0, "scrub {d}: {}{}", r.stdout, r.stderr);
    }
}

fn salvage_map(text: &str) -> BTreeMap<String, Value> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let mut v = json(l);
            v.as_object_mut().unwrap().remove("sstable");
            (v["key"]["raw"].as_str().unwrap().to_string(), v)
        })
        .collect()
}

#[test]
fn scrub_skip_salvage_equals_dump_data() {
    for name in [
        "nb_clustering",
        "oa_range_tombstones",
        "nb_wide_desc",
        "da_udt",
        "nb_counters",
    ] {
        let dir = fixtures().join(name);
        if !dir.is_dir() {
            continue;
        }
        let scratch = scratch_dir("vs", name);
        let out = scratch.join("out");
        let r = sstkit([
            "scrub",
            "--mode",
            "skip",
            "--salvage-format",
            "ndjson",
            "--output-dir",
            out.to_str().unwrap(),
            dir.to_str().unwrap(),
        ]);
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        let rep = &reports(&json(&r.stdout))[0].1;
        assert_eq!(rep["salvaged"], rep["partitions"]);
        assert_eq!(rep["lost_bytes"], 0);
        let data = &data_files(&dir)[0];
        let stem = data
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace("-Data.db", "");
        let salvaged =
            std::fs::read_to_string(out.join(format!("{stem}-salvaged.ndjson"))).unwrap();
        let dump = sstkit(["dump-data", "-o", "ndjson", data.to_str().unwrap()]);
        assert_eq!(salvage_map(&salvaged), salvage_map(&dump.stdout), "{name}");
        // Byte-identical lines too (same renderer).
        let strip = |t: &str| -> Vec<String> {
            t.lines()
                .map(|l| {
                    l.split_once(",\"key\"")
                        .map(|x| x.1.to_string())
                        .unwrap_or_default()
                })
                .collect()
        };
        assert_eq!(strip(&salvaged), strip(&dump.stdout), "{name}: lines");
    }
}

#[test]
fn output_dir_is_never_the_input_dir() {
    let dir = fixtures().join("nb_clustering");
    let d = dir.to_str().unwrap();
    let r = sstkit(["scrub", "--mode", "skip", "--output-dir", d, d]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("never written"), "{}", r.stderr);
    let r = sstkit(["scrub", "--output-dir", "/tmp/x", d]);
    assert_eq!(r.code, 2, "--output-dir needs skip/segregate");
}

#[test]
fn output_formats() {
    let d = fixtures().join("oa_range_tombstones");
    let d = d.to_str().unwrap();
    let r = sstkit(["validate", "-o", "ndjson", d]);
    assert_eq!(r.code, 0);
    let last = json(r.stdout.lines().last().unwrap());
    assert_eq!(last["type"], "summary");
    assert_eq!(last["valid"], true);
    assert!(last["sstable"].as_str().unwrap().ends_with("Data.db"));
    let r = sstkit(["validate", "-o", "text", d]);
    assert!(r.stdout.starts_with("valid: 0 finding(s)"), "{}", r.stdout);
    let r = sstkit(["scrub", "-o", "text", "--mode", "abort", d]);
    assert_eq!(r.code, 0, "{}", r.stdout);
}

/// A copy of fixture `case` (its components) in a scratch directory, with
/// `damage` applied to its Data.db; the scratch guard and the Data.db path.
fn damaged_copy(
    case: &str,
    damage: impl FnOnce(&mut Vec<u8>),
) -> (crate::util::Scratch, std::path::PathBuf) {
    let dir = scratch_dir("scrub-report", case);
    for e in std::fs::read_dir(fixtures().join(case)).unwrap() {
        let p = e.unwrap().path();
        if p.file_name().unwrap().to_string_lossy().contains("-big-") {
            std::fs::copy(&p, dir.join(p.file_name().unwrap())).unwrap();
        }
    }
    let data = data_files(&dir).remove(0);
    let mut b = std::fs::read(&data).unwrap();
    damage(&mut b);
    std::fs::write(&data, b).unwrap();
    (dir, data)
}

/// Issue 32: scrub's report adds up. After a byte flip, the partitions the
/// index knows are the salvaged ones plus `lost_partitions`, `lost_keys`
/// lists the lost ones, `rows` is what the output sstable holds, and the
/// text report names the output, the lost keys and the next step.
#[test]
fn scrub_report_adds_up() {
    let (dir, data) = damaged_copy("nb_clustering", |b| {
        let mid = b.len() / 3;
        b[mid] ^= 0xff;
    });
    let out = dir.join("out");
    let d = data.to_str().unwrap();
    let o = out.to_str().unwrap();
    let r = sstkit([
        "scrub",
        "-o",
        "json",
        "--mode",
        "skip",
        "--output-dir",
        o,
        d,
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let (_, rep) = reports(&json(&r.stdout)).remove(0);
    let n = |k: &str| rep[k].as_u64().unwrap_or_else(|| panic!("{k}: {rep}"));
    let intact = fixtures().join("nb_clustering/nb-1-big-Data.db");
    let known = sstkit(["dump-data", "-o", "ndjson", intact.to_str().unwrap()]);
    assert_eq!(known.code, 0, "{}", known.stderr);
    assert_eq!(
        n("index_partitions"),
        known.stdout.lines().count() as u64,
        "{rep}"
    );
    assert!(n("lost_partitions") > 0, "{rep}");
    assert_eq!(n("dropped") + n("segregated"), 0, "{rep}");
    assert_eq!(
        n("salvaged") + n("lost_partitions"),
        n("index_partitions"),
        "{rep}"
    );
    let lost: Vec<String> = rep["lost_keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["raw"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(lost.len() as u64, n("lost_partitions"), "{rep}");
    // The output holds exactly the salvaged partitions and `rows` rows, and
    // none of the lost keys.
    let output = rep["outputs"]["salvaged"].as_str().unwrap().to_string();
    let dump = sstkit(["dump-data", "-o", "ndjson", output.as_str()]);
    assert_eq!(dump.code, 0, "{}", dump.stderr);
    let (mut parts, mut rows) = (0u64, 0u64);
    for l in dump.stdout.lines() {
        let v = json(l);
        parts += 1;
        rows += v["clustering_elements"].as_array().map_or(0, |a| {
            a.iter().filter(|e| e["type"] == "clustering-row").count()
        }) as u64;
        let raw = v["key"]["raw"].as_str().unwrap();
        assert!(!lost.iter().any(|k| k == raw), "lost key {raw} was written");
    }
    assert_eq!(parts, n("salvaged"), "{rep}");
    assert_eq!(rows, n("rows"), "{rep}");

    let out2 = dir.join("out2");
    let o2 = out2.to_str().unwrap();
    let r = sstkit([
        "scrub",
        "-o",
        "text",
        "--mode",
        "skip",
        "--output-dir",
        o2,
        d,
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let text = r.stdout.replace("\n  ", " ");
    let first_lost = rep["lost_keys"][0]["value"].as_str().unwrap();
    assert!(
        text.contains(&format!("into {o2}/")) && text.contains("-Data.db"),
        "{}",
        r.stdout
    );
    assert!(
        text.contains(&format!(
            "lost {} partitions: {first_lost}",
            n("lost_partitions")
        )),
        "{}",
        r.stdout
    );
    assert!(
        text.contains("next: check the output (sstkit validate"),
        "{}",
        r.stdout
    );
}

/// Issue 32: a Statistics.db cut in half is called truncated, with its size
/// and the size its table of contents needs.
#[test]
fn truncated_statistics_is_called_truncated() {
    let (dir, data) = damaged_copy("nb_clustering", |_| {});
    let st = dir.join("nb-1-big-Statistics.db");
    let b = std::fs::read(&st).unwrap();
    let half = b.len() / 2;
    std::fs::write(&st, &b[..half]).unwrap();
    for cmd in ["scrub", "validate"] {
        let r = sstkit([cmd, "-o", "json", data.to_str().unwrap()]);
        assert_eq!(r.code, 3, "{cmd}: {}", r.stderr);
        assert!(
            r.stderr
                .contains(&format!("truncated: {half} bytes, at least "))
                && r.stderr.contains("expected"),
            "{cmd}: {}",
            r.stderr
        );
    }
}

/// Swapping two partitions: validate flags the order and the index; scrub
/// segregate keeps both, skip drops one.
#[test]
fn swapped_partitions_are_segregated() {
    let src = fixtures().join("nb_clustering_nocompress");
    let tmp = scratch_dir("swap", "nb");
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if n.contains("-big-") {
            std::fs::copy(e.path(), tmp.join(&n)).unwrap();
        }
    }
    // Partition boundaries from dump-index (positions of the first three).
    let idx = json(&sstkit(["dump-index", tmp.to_str().unwrap()]).stdout);
    let entries = reports(&idx)[0].1.clone();
    let pos: Vec<u64> = entries
        .as_array()
        .unwrap()
        .iter()
        .take(3)
        .map(|e| e["pos"].as_u64().or(e["position"].as_u64()).unwrap())
        .collect();
    let data = tmp.join("nb-1-big-Data.db");
    let mut b = std::fs::read(&data).unwrap();
    let (s, m, e) = (pos[0] as usize, pos[1] as usize, pos[2] as usize);
    let mut swapped = b[m..e].to_vec();
    swapped.extend_from_slice(&b[s..m]);
    b[s..e].copy_from_slice(&swapped);
    std::fs::write(&data, &b).unwrap();
    // As a writer that put them out of order would: checksums of the bytes
    // as written (scrub never salvages bytes whose checksum fails).
    let crc = tmp.join("nb-1-big-CRC.db");
    let chunk = u32::from_be_bytes(std::fs::read(&crc).unwrap()[..4].try_into().unwrap());
    let mut sums = chunk.to_be_bytes().to_vec();
    for c in b.chunks(chunk as usize) {
        sums.extend_from_slice(&ChecksumAlgo::Crc32.checksum(c).to_be_bytes());
    }
    std::fs::write(&crc, sums).unwrap();
    let _ = std::fs::remove_file(tmp.join("nb-1-big-Digest.crc32"));
    let t = tmp.to_str().unwrap();
    let r = sstkit(["validate", t]);
    assert_eq!(r.code, 1);
    let rep = &reports(&json(&r.stdout))[0].1;
    let c = classes(rep);
    assert!(
        c.contains("partition_order") && c.contains("index_mismatch"),
        "{c:?}"
    );
    let out = tmp.join("out");
    let o = out.to_str().unwrap();
    let r = sstkit([
        "scrub",
        "--mode",
        "segregate",
        "--salvage-format",
        "ndjson",
        "--output-dir",
        o,
        t,
    ]);
    assert_eq!(r.code, 1);
    let rep = &reports(&json(&r.stdout))[0].1;
    assert_eq!(rep["segregated"], 1, "{rep}");
    assert_eq!(
        rep["salvaged"].as_u64().unwrap() + 1,
        rep["partitions"].as_u64().unwrap()
    );
    assert!(out.join("nb-1-big-segregated.ndjson").is_file());
    let r = sstkit(["scrub", "--mode", "skip", t]);
    let rep = &reports(&json(&r.stdout))[0].1;
    assert_eq!(rep["dropped"], 1, "{rep}");

    // As sstables: skip sorts the out-of-order partition back in, so the
    // output holds exactly the fixture's data; segregate writes it apart.
    let dump_of = |p: &str| -> Vec<String> {
        let d = sstkit(["dump-data", "-o", "ndjson", p]);
        assert_eq!(d.code, 0, "{}", d.stderr);
        let mut v: Vec<String> = d
            .stdout
            .lines()
            .map(|l| l.split_once(",\"key\"").unwrap().1.to_string())
            .collect();
        v.sort();
        v
    };
    let whole = dump_of(src.to_str().unwrap());
    let sk = tmp.join("skip");
    let r = sstkit([
        "scrub",
        "--mode",
        "skip",
        "--output-dir",
        sk.to_str().unwrap(),
        t,
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let rep = &reports(&json(&r.stdout))[0].1;
    let main = rep["outputs"]["salvaged"].as_str().unwrap().to_string();
    assert_eq!(sstkit(["validate", &main]).code, 0);
    assert_eq!(dump_of(&main), whole);
    let sg = tmp.join("segregate");
    let r = sstkit([
        "scrub",
        "--mode",
        "segregate",
        "--output-dir",
        sg.to_str().unwrap(),
        t,
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let rep = &reports(&json(&r.stdout))[0].1;
    let main = rep["outputs"]["salvaged"].as_str().unwrap().to_string();
    let seg = rep["outputs"]["segregated"].as_str().unwrap().to_string();
    assert_eq!(sstkit(["validate", &main]).code, 0);
    assert_eq!(sstkit(["validate", &seg]).code, 0);
    let (m, s) = (dump_of(&main), dump_of(&seg));
    assert_eq!(s.len(), 1);
    let mut both = [m, s].concat();
    both.sort();
    assert_eq!(both, whole);
}

/// What each deliberately corrupt corpus set must yield: (set, command,
/// exit code, classes that must be among the findings).
const CORRUPT: &[(&str, &str, i32, &[&str])] = &[
    // Scylla scrub_test: validate must report errors (chunk checksums, by
    // the checksum pass).
    (
        "scylladb/3.x-lz4-integrity_check-invalid_checksums",
        "validate",
        1,
        &["bad_chunk", "digest_mismatch"],
    ),
    (
        "scylladb/3.x-lz4-integrity_check-invalid_checksums",
        "scrub",
        1,
        &["checksum", "data_lost"],
    ),
    // broken_sstable_test: "Closing range tombstone that wasn't opened".
    (
        "scylladb/broken_close_tombstone",
        "validate",
        1,
        &["rt_not_opened"],
    ),
    (
        "scylladb/broken_close_tombstone",
        "scrub",
        1,
        &["rt_not_opened"],
    ),
    // "Range tombstones have to be disjoint".
    (
        "scylladb/broken_open_tombstone",
        "validate",
        1,
        &["rt_unclosed"],
    ),
    (
        "scylladb/broken_open_tombstone",
        "scrub",
        1,
        &["rt_unclosed"],
    ),
    // The edited end-bound timestamp no longer fits its marker_size.
    (
        "scylladb/mismatched_timestamp",
        "validate",
        1,
        &["row_size_mismatch"],
    ),
    // RT boundary of kind static_clustering.
    (
        "scylladb/invalid_boundary",
        "validate",
        1,
        &["decode_error"],
    ),
    (
        "scylladb/invalid_boundary",
        "scrub",
        1,
        &["decode_error", "data_lost"],
    ),
    // Index.db truncated: "cannot finish parsing current entry"; Data.db is fine.
    (
        "scylladb/empty_index",
        "validate",
        1,
        &["decode_error", "summary_mismatch"],
    ),
    ("scylladb/empty_index", "scrub", 0, &[]),
    // "compressed reader hit premature end-of-file".
    (
        "scylladb/compression-premature-eof",
        "validate",
        1,
        &["decode_error"],
    ),
    (
        "scylladb/compression-premature-eof",
        "scrub",
        1,
        &["decode_error", "data_lost"],
    ),
    // Zero-sized estimated histogram: Statistics.db does not decode.
    ("scylladb/zero_sized_histogram", "validate", 3, &[]),
    // Duplicate rows from the 2.x -> 3.0 upgrade bug (CASSANDRA-12144).
    (
        "cassandra/invalid-legacy-cf_with_duplicates_3_0",
        "validate",
        1,
        &["clustering_order"],
    ),
    (
        "cassandra/invalid-legacy-cf_with_duplicates_3_0",
        "scrub",
        1,
        &["clustering_order"],
    ),
    // Negative local deletion times.
    (
        "cassandra/negative-ldts-invalid_partition_deletion",
        "validate",
        1,
        &["invalid_deletion"],
    ),
    (
        "cassandra/negative-ldts-invalid_range_tombstone_compaction",
        "validate",
        1,
        &["invalid_deletion"],
    ),
    (
        "cassandra/negative-ldts-invalid_range_tombstone_reader",
        "validate",
        1,
        &["invalid_deletion"],
    ),
    (
        "cassandra/negative-ldts-invalid_tombstones",
        "validate",
        1,
        &["invalid_deletion"],
    ),
    (
        "cassandra/negative-ldts-invalid_tombstones",
        "scrub",
        1,
        &["invalid_deletion"],
    ),
    // TTL overflow (CASSANDRA-14092): negative local expiration times.
    (
        "cassandra/negative-local-expiration-table1",
        "validate",
        1,
        &["invalid_deletion"],
    ),
    (
        "cassandra/negative-local-expiration-table2",
        "validate",
        1,
        &["invalid_deletion"],
    ),
    (
        "cassandra/negative-local-expiration-table3",
        "validate",
        1,
        &["invalid_deletion"],
    ),
    (
        "cassandra/negative-local-expiration-table4",
        "scrub",
        1,
        &["invalid_deletion"],
    ),
];

#[test]
fn corrupt_corpus_sets_give_the_expected_findings() {
    let Some(root) = corpus() else { return };
    let mut failures = Vec::new();
    for (set, cmd, code, want) in CORRUPT {
        let dir = root.join(set);
        if !dir.is_dir() {
            eprintln!("skipping absent corpus set {set}");
            continue;
        }
        let r = sstkit([*cmd, dir.to_str().unwrap()]);
        if r.code != *code {
            failures.push(format!(
                "{cmd} {set}: exit {} (want {code}): {}",
                r.code, r.stderr
            ));
            continue;
        }
        if want.is_empty() {
            continue;
        }
        let got: BTreeSet<String> = reports(&json(&r.stdout))
            .iter()
            .flat_map(|(_, rep)| classes(rep))
            .collect();
        for w in *want {
            if !got.contains(*w) {
                failures.push(format!("{cmd} {set}: no {w} finding (got {got:?})"));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Every intact row-format corpus sstable validates clean (no false
/// positives from the comparator, the promoted-index or metadata checks).
#[test]
fn intact_corpus_validates_clean() {
    let Some(root) = corpus() else { return };
    let corrupt = |name: &str| {
        [
            "broken_",
            "bad",
            "corrupt-",
            "invalid",
            "integrity_check",
            "empty_index",
            "negative-",
            "mismatched_timestamp",
            "zero_sized_histogram",
            "compression-premature-eof",
            "legacy_jb",
            "wrongrange",
            "static_",
            // Its TOC lists a Summary.db that is not there: missing_component.
            "read_missing_summary",
        ]
        .iter()
        .any(|p| name.contains(p))
    };
    let mut failures = Vec::new();
    let mut n = 0;
    for origin in ["cassandra", "scylladb"] {
        let Ok(rd) = std::fs::read_dir(root.join(origin)) else {
            continue;
        };
        let mut sets: Vec<_> = rd.flatten().map(|e| e.path()).collect();
        sets.sort();
        for set in sets {
            let name = set.file_name().unwrap().to_string_lossy().into_owned();
            if corrupt(&name) || !has_row_format_sstable(&set) {
                continue;
            }
            n += 1;
            // The row-format sstables only: ka/la of the multi-version sets
            // need --schema (tests/legacy.rs validates them).
            let mut args = vec!["validate".to_string()];
            args.extend(
                data_files(&set)
                    .iter()
                    .filter(|p| is_row_format(p))
                    .map(|p| p.to_string_lossy().into_owned()),
            );
            let r = sstkit(&args);
            if r.code != 0 {
                failures.push(format!(
                    "{name}: exit {}: {}",
                    r.code,
                    r.stdout.chars().take(600).collect::<String>()
                ));
            }
        }
    }
    eprintln!("{n} intact corpus sets validated");
    assert!(failures.is_empty(), "{failures:#?}");
}

fn has_row_format_sstable(dir: &Path) -> bool {
    data_files(dir).iter().any(|p| is_row_format(p))
}

fn is_row_format(p: &Path) -> bool {
    let n = p.file_name().unwrap().to_string_lossy().into_owned();
    let v = n.split('-').rev().nth(3).unwrap_or("");
    v >= "ma" && v.len() == 2
}

/// Every input kept under tests/regressions/<target>/ runs through its
/// decoder entry point without panicking.
#[test]
fn regression_inputs_replay() {
    use sstkit_format::validate::fuzz::{run, Target};
    let root = crate::util::repo().join("tests/regressions");
    // Every directory names a target (a misspelt one would never be replayed).
    for d in std::fs::read_dir(&root).unwrap().flatten() {
        let name = d.file_name().to_string_lossy().into_owned();
        if d.path().is_dir() {
            assert!(
                Target::parse(&name).is_some(),
                "{name}: no such fuzz target"
            );
        }
    }
    let mut n = 0;
    for t in Target::ALL {
        let Ok(rd) = std::fs::read_dir(root.join(t.name())) else {
            continue;
        };
        for f in rd.flatten() {
            let bytes = std::fs::read(f.path()).unwrap();
            run(t, &bytes);
            // Truncations of it, too.
            for cut in [1, bytes.len() / 2] {
                run(t, &bytes[..bytes.len().saturating_sub(cut)]);
            }
            n += 1;
        }
    }
    assert!(n > 0, "no regression inputs found under {}", root.display());
}

/// The deliberately corrupt `ka`/`la` sets (read with `--schema`): `(set,
/// table, command, exit code, finding classes, message the upstream test
/// expects)`. Scylla `test/boost/broken_sstable_test.cc` for the scylladb
/// sets (the messages are Scylla's `malformed_sstable_exception` texts).
/// One corrupt legacy case: set, schema, command, exit code, classes, message.
type LegacyCase = (
    &'static str,
    &'static str,
    &'static [&'static str],
    i32,
    &'static [&'static str],
    &'static str,
);

const CORRUPT_LEGACY: &[LegacyCase] = &[
    (
        "scylladb/bad_column_name",
        "CREATE TABLE ks.cf (key blob PRIMARY KEY);",
        &["validate"],
        1,
        &["decode_error"],
        "Found 3 clustering elements in column name. Was not expecting that!",
    ),
    (
        "scylladb/bad_column_name",
        "CREATE TABLE ks.cf (key blob PRIMARY KEY);",
        &["scrub", "--mode", "skip"],
        1,
        &["decode_error", "data_lost"],
        "Found 3 clustering elements in column name",
    ),
    (
        "scylladb/broken_start_composite",
        "CREATE TABLE test_ks.test_table (test_key text, test_val text, PRIMARY KEY (test_key, test_val));",
        &["validate"],
        1,
        &["decode_error"],
        "Unexpected start composite marker 2",
    ),
    (
        "scylladb/broken_start_composite",
        "CREATE TABLE test_ks.test_table (test_key text, test_val text, PRIMARY KEY (test_key, test_val));",
        &["scrub", "--mode", "skip"],
        1,
        &["decode_error", "data_lost"],
        "Unexpected start composite marker 2",
    ),
    (
        "scylladb/broken_end_composite",
        "CREATE TABLE test_ks.test_table (test_key text, test_val text, PRIMARY KEY (test_key, test_val));",
        &["validate"],
        1,
        &["decode_error"],
        "Unexpected end composite marker 3",
    ),
    (
        "scylladb/broken_end_composite",
        "CREATE TABLE test_ks.test_table (test_key text, test_val text, PRIMARY KEY (test_key, test_val));",
        &["scrub", "--mode", "skip"],
        1,
        &["decode_error", "data_lost"],
        "Unexpected end composite marker 3",
    ),
    // Read with a schema where 'static' is a regular column.
    (
        "scylladb/static_column",
        "CREATE TABLE k.t (test_foo_bar_zed_baz_key text, test_foo_bar_zed_baz_val text, \
         test_foo_bar_zed_baz_static text, \
         PRIMARY KEY (test_foo_bar_zed_baz_key, test_foo_bar_zed_baz_val));",
        &["validate"],
        1,
        &["decode_error"],
        "Mismatch between static cell and non-static column definition",
    ),
    // ... and with the right schema it is valid.
    (
        "scylladb/static_column",
        "CREATE TABLE k.t (test_foo_bar_zed_baz_key text, test_foo_bar_zed_baz_val text, \
         test_foo_bar_zed_baz_static text static, \
         PRIMARY KEY (test_foo_bar_zed_baz_key, test_foo_bar_zed_baz_val));",
        &["scrub", "--mode", "skip"],
        0,
        &[],
        "",
    ),
    (
        "scylladb/static_with_clustering",
        "CREATE TABLE k.t (test_foo_bar_zed_baz_key text, test_foo_bar_zed_baz_val text, \
         test_foo_bar_zed_baz_static text static, \
         PRIMARY KEY (test_foo_bar_zed_baz_key, test_foo_bar_zed_baz_val));",
        &["validate"],
        1,
        &["decode_error"],
        "Static row has clustering key information. I didn't expect that!",
    ),
    (
        "scylladb/static_with_clustering",
        "CREATE TABLE k.t (test_foo_bar_zed_baz_key text, test_foo_bar_zed_baz_val text, \
         test_foo_bar_zed_baz_static text static, \
         PRIMARY KEY (test_foo_bar_zed_baz_key, test_foo_bar_zed_baz_val));",
        &["scrub", "--mode", "skip"],
        1,
        &["decode_error", "data_lost"],
        "Static row has clustering key information",
    ),
    // CASSANDRA-10791: range tombstones written after the partition's end
    // marker, found through Index.db as C* 2.1 scrub does (tests/legacy.rs
    // checks what scrub recovers).
    (
        "cassandra/corrupt-ka-Keyspace1-StandardInteger1",
        "CREATE TABLE \"Keyspace1\".\"StandardInteger1\" (key blob, column1 varint, value blob, \
         PRIMARY KEY (key, column1)) WITH COMPACT STORAGE;",
        &["scrub"],
        1,
        &["partition_order"],
        "row fragment detected after END_OF_ROW",
    ),
    // cassandra-2.1 `ScrubTest.testScrubOutOfOrder` (jb): opening must fail
    // validation (tests/legacy_jb.rs checks what scrub salvages).
    (
        "cassandra/corrupt-jb-Keyspace1-Standard3",
        "CREATE TABLE \"Keyspace1\".\"Standard3\" (key blob, column1 blob, value blob, \
         PRIMARY KEY (key, column1)) WITH COMPACT STORAGE;",
        &["validate"],
        1,
        &["partition_order"],
        "out of partition order",
    ),
];

#[test]
fn corrupt_legacy_sets_give_the_expected_findings() {
    let Some(root) = corpus() else { return };
    let tmp = scratch_dir("corrupt-legacy", "schemas");
    let mut failures = Vec::new();
    for (i, (set, cql, cmd, code, want, message)) in CORRUPT_LEGACY.iter().enumerate() {
        let dir = root.join(set);
        if !dir.is_dir() {
            eprintln!("skipping absent corpus set {set}");
            continue;
        }
        let schema = tmp.join(format!("{i}.cql"));
        std::fs::write(&schema, cql).unwrap();
        let mut args: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
        args.push(dir.to_string_lossy().into_owned());
        args.push("--schema".into());
        args.push(schema.to_string_lossy().into_owned());
        let r = sstkit(&args);
        if r.code != *code {
            failures.push(format!(
                "{args:?}: exit {} (want {code}): {}{}",
                r.code, r.stdout, r.stderr
            ));
            continue;
        }
        let reps = reports(&json(&r.stdout));
        let got: BTreeSet<String> = reps.iter().flat_map(|(_, rep)| classes(rep)).collect();
        for w in *want {
            if !got.contains(*w) {
                failures.push(format!("{set} {cmd:?}: no {w} finding (got {got:?})"));
            }
        }
        // The upstream message is among the findings (these sets were
        // edited by hand, so their CRC.db checksums fail first).
        let messages: Vec<String> = reps
            .iter()
            .flat_map(|(_, rep)| rep["findings"].as_array().cloned().unwrap_or_default())
            .filter_map(|f| f["message"].as_str().map(String::from))
            .collect();
        if !message.is_empty() && !messages.iter().any(|m| m.contains(message)) {
            failures.push(format!(
                "{set} {cmd:?}: findings {messages:?}, want {message:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Scrub salvaging a Scylla view sstable as an sstable keeps its
/// shadowable deletions.
#[test]
fn scrub_keeps_scylla_shadowable_deletions() {
    for (src, ts) in crate::util::scylla_shadowable_corpus() {
        let source = crate::util::dump_records(&src);
        assert!(crate::util::shadowable_deletions(&source)
            .iter()
            .any(|(_, t)| *t == ts));
        let scratch = scratch_dir("vs", "shadowable");
        let out = scratch.join("out");
        let r = sstkit([
            "scrub",
            "--mode",
            "skip",
            "-o",
            "json",
            "--output-dir",
            out.to_str().unwrap(),
            src.to_str().unwrap(),
        ]);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        let rep = &reports(&json(&r.stdout))[0].1;
        let salvaged = PathBuf::from(rep["outputs"]["salvaged"].as_str().unwrap());
        assert_eq!(
            crate::util::dump_records(&salvaged),
            source,
            "{}",
            src.display()
        );
    }
}
