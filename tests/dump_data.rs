//! `dump-data`: every output format against the Cassandra 5.0.9 fixtures
//! (`fixtures/cassandra/<case>/`, written and dumped by a real Cassandra), and
//! the selection flags.
//!
//! Time-dependent output. Cassandra's `"expired"` flag (TTL'd row liveness
//! and cells) compares the expiration time with the clock *when the tool
//! runs*, so a fixture dumped before an expiration and a test run after it
//! legitimately disagree. Every comparison below therefore first replaces
//! each `"expired" : true|false` token (pretty and compact spellings), in
//! both texts, with a placeholder; with that done the outputs must be equal
//! **byte for byte**. Separately, [`expired_flags_follow_the_clock`] checks
//! that each flag we print equals `expires_at < now` (row liveness) or
//! `now >= expires_at` (cells), skipping flags within a few seconds of the
//! boundary. Nothing else in the sstabledump output depends on the time.
//!
//! Cases lacking an expected file (the fixture set is trimmed of large
//! outputs) are skipped for that format. Expected files may be gzip'd; they
//! are read with the system `gzip -dc`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::util::{data_files, fixture_cases, sstkit};

/// The expected output `name` of a case (or `name.gz`), if present.
pub(crate) fn expected(case: &Path, name: &str) -> Option<String> {
    let p = case.join(name);
    if p.is_file() {
        return Some(std::fs::read_to_string(&p).expect("read expected file"));
    }
    let gz = case.join(format!("{name}.gz"));
    if gz.is_file() {
        let out = Command::new("gzip").arg("-dc").arg(&gz).output().ok()?;
        if out.status.success() {
            return Some(String::from_utf8(out.stdout).expect("utf-8 expected file"));
        }
        eprintln!("skipping {}: gzip -dc failed", gz.display());
    }
    None
}

/// Replace every `expired` flag value with a placeholder (see module docs).
fn normalize_expired(s: &str) -> String {
    s.replace("\"expired\" : true", "\"expired\" : X")
        .replace("\"expired\" : false", "\"expired\" : X")
        .replace("\"expired\":true", "\"expired\":X")
        .replace("\"expired\":false", "\"expired\":X")
}

/// The single Data.db of a fixture case.
fn data_of(case: &Path) -> PathBuf {
    let d = data_files(case);
    assert_eq!(d.len(), 1, "one sstable per case in {}", case.display());
    d[0].clone()
}

fn name(case: &Path) -> String {
    case.file_name().unwrap().to_string_lossy().into_owned()
}

/// Run dump-data with `args` on each case that has `expected_name`, and
/// compare with it byte for byte (after [`normalize_expired`]). Returns the
/// number of cases compared; panics listing every mismatch with its first
/// differing line.
fn compare_all(expected_name: &str, args: &[&str]) -> usize {
    let mut compared = 0;
    let mut failures = Vec::new();
    let mut exact_raw = Vec::new();
    for case in fixture_cases() {
        let Some(want) = expected(&case, expected_name) else {
            continue;
        };
        let data = data_of(&case);
        let mut a: Vec<String> = vec!["dump-data".into()];
        a.extend(args.iter().map(|s| s.to_string()));
        a.push(data.to_string_lossy().into_owned());
        let r = sstkit(&a);
        compared += 1;
        if r.code != 0 {
            failures.push(format!("{}: exit {}: {}", name(&case), r.code, r.stderr));
            continue;
        }
        if r.stdout == want {
            exact_raw.push(name(&case));
        }
        let (got, want) = (normalize_expired(&r.stdout), normalize_expired(&want));
        if got != want {
            let line = got.lines().zip(want.lines()).position(|(a, b)| a != b);
            let detail = match line {
                Some(i) => format!(
                    "line {}:\n  sstkit: {}\n  wanted: {}",
                    i + 1,
                    got.lines().nth(i).unwrap_or(""),
                    want.lines().nth(i).unwrap_or("")
                ),
                None => format!("lengths {} vs {}", got.len(), want.len()),
            };
            failures.push(format!("{}: {detail}", name(&case)));
        }
    }
    eprintln!(
        "{expected_name}: {compared} cases compared, {} identical without normalization: {}",
        exact_raw.len(),
        exact_raw.join(" ")
    );
    assert!(
        failures.is_empty(),
        "{expected_name} differs:\n{}",
        failures.join("\n")
    );
    compared
}

#[test]
fn sstabledump_json_is_byte_exact() {
    let n = compare_all("sstabledump.json", &["--output", "sstabledump"]);
    assert!(n > 0, "no fixture case has sstabledump.json");
}

#[test]
fn sstabledump_json_parses_equal() {
    // The same comparison on parsed JSON (numbers kept as their text via
    // serde_json's arbitrary_precision), ignoring only "expired": a failure
    // here pinpoints a value rather than whitespace.
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("expired");
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    for case in fixture_cases() {
        let Some(want) = expected(&case, "sstabledump.json") else {
            continue;
        };
        let r = sstkit([
            "dump-data",
            "-o",
            "sstabledump",
            data_of(&case).to_str().unwrap(),
        ]);
        assert_eq!(r.code, 0, "{}: {}", name(&case), r.stderr);
        let mut got: Value = serde_json::from_str(&r.stdout).expect("sstkit output is JSON");
        let mut want: Value = serde_json::from_str(&want).expect("fixture is JSON");
        strip(&mut got);
        strip(&mut want);
        assert!(got == want, "{}: parsed JSON differs", name(&case));
    }
}

#[test]
fn sstabledump_lines_is_byte_exact() {
    compare_all("sstabledump-l.jsonl", &["--output", "sstabledump-lines"]);
}

#[test]
fn keys_only_is_byte_exact() {
    let n = compare_all(
        "sstabledump-e.json",
        &["--output", "sstabledump", "--keys-only"],
    );
    assert!(n > 0);
}

#[test]
fn raw_timestamps_is_byte_exact() {
    compare_all(
        "sstabledump-t.json",
        &["--output", "sstabledump", "--raw-timestamps"],
    );
}

#[test]
fn text_matches_sstabledump_d() {
    compare_all("sstabledump-d.txt", &["--output", "text"]);
}

/// Seconds since the epoch of `YYYY-MM-DDTHH:MM:SSZ`.
fn parse_iso_secs(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 {
        return None;
    }
    let n = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (hh, mm, ss) = (n(11..13)?, n(14..16)?, n(17..19)?);
    // days_from_civil
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss)
}

#[test]
fn expired_flags_follow_the_clock() {
    let mut checked = 0;
    for case in fixture_cases() {
        let r = sstkit([
            "dump-data",
            "-o",
            "sstabledump-lines",
            data_of(&case).to_str().unwrap(),
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        fn walk(v: &Value, now: i64, checked: &mut usize, case: &str) {
            match v {
                Value::Object(m) => {
                    if let (Some(Value::Bool(e)), Some(Value::String(at))) =
                        (m.get("expired"), m.get("expires_at"))
                    {
                        let at = parse_iso_secs(at).expect("expires_at is ISO-8601");
                        if (at - now).abs() > 5 {
                            // Liveness: at < now; cells: now >= at. Equal away from the boundary.
                            assert_eq!(
                                *e,
                                at < now,
                                "{case}: expired flag for expires_at {at}, now {now}"
                            );
                            *checked += 1;
                        }
                    }
                    m.values().for_each(|x| walk(x, now, checked, case));
                }
                Value::Array(a) => a.iter().for_each(|x| walk(x, now, checked, case)),
                _ => {}
            }
        }
        for line in r.stdout.lines() {
            let v: Value = serde_json::from_str(line).expect("one JSON object per line");
            walk(&v, now, &mut checked, &name(&case));
        }
    }
    eprintln!("{checked} expired flags checked");
}

/// Counts recorded by the fixture generator (`case.json` → `dump`).
fn case_counts(case: &Path) -> Option<(u64, u64, u64, u64)> {
    let text = std::fs::read_to_string(case.join("case.json")).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    let d = v.get("dump")?;
    let g = |k: &str| d.get(k).and_then(Value::as_u64);
    Some((
        g("partitions")?,
        g("rows")?,
        g("range_tombstone_markers")?,
        g("static_rows")?,
    ))
}

fn count_elements(p: &Value) -> (u64, u64, u64) {
    let mut rows = 0;
    let mut changes = 0;
    if let Some(Value::Array(es)) = p.get("clustering_elements") {
        for e in es {
            match e["type"].as_str() {
                Some("clustering-row") => rows += 1,
                Some("range-tombstone-change") => changes += 1,
                t => panic!("unexpected element type {t:?}"),
            }
        }
    }
    (rows, changes, u64::from(p.get("static_row").is_some()))
}

#[test]
fn json_and_ndjson_have_the_fixture_counts() {
    for case in fixture_cases() {
        let Some((parts, rows, markers, statics)) = case_counts(&case) else {
            continue;
        };
        let data = data_of(&case);
        let path = data.to_str().unwrap();
        let r = sstkit(["dump-data", path]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let v: Value = serde_json::from_str(&r.stdout).expect("json output parses");
        let ssts = v["sstables"].as_object().expect("sstables object");
        assert_eq!(ssts.len(), 1);
        let list = ssts
            .values()
            .next()
            .unwrap()
            .as_array()
            .expect("partition array");
        let mut total = (0, 0, 0);
        for p in list {
            assert!(
                p["key"]["token"].is_string()
                    && p["key"]["raw"].is_string()
                    && p["key"]["value"].is_string()
            );
            let c = count_elements(p);
            total = (total.0 + c.0, total.1 + c.1, total.2 + c.2);
        }
        let n = name(&case);
        assert_eq!(list.len() as u64, parts, "{n}: partitions");
        assert_eq!(total.0, rows, "{n}: rows");
        // One range-tombstone change per bound or boundary marker.
        assert_eq!(total.1, markers, "{n}: range tombstone changes");
        assert_eq!(total.2, statics, "{n}: static rows");

        let r = sstkit(["dump-data", "-o", "ndjson", path]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let lines: Vec<Value> = r
            .stdout
            .lines()
            .map(|l| serde_json::from_str(l).expect("ndjson line parses"))
            .collect();
        assert_eq!(lines.len() as u64, parts, "{n}: ndjson lines");
        let nd_rows: u64 = lines.iter().map(|p| count_elements(p).0).sum();
        assert_eq!(nd_rows, rows, "{n}: ndjson rows");
        assert!(lines.iter().all(|l| l["sstable"] == path));
        // Same partitions as the json document, plus the sstable field.
        for (a, b) in lines.iter().zip(list) {
            let mut a = a.clone();
            a.as_object_mut().unwrap().remove("sstable");
            assert_eq!(&a, b, "{n}: ndjson line equals the json partition");
        }
    }
}

/// Fields of `x` that depend on when the fixture was generated.
fn redact(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k == "deletion_time" || k == "expiry" {
                    *x = Value::String("[redacted]".into());
                } else {
                    redact(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(redact),
        _ => {}
    }
}

#[test]
fn json_snapshot_of_deletions() {
    let case = crate::util::fixtures().join("nb_deletes_merge_2");
    if !case.is_dir() {
        eprintln!("skipping: {} is absent", case.display());
        return;
    }
    let r = sstkit([
        "dump-data",
        "-o",
        "ndjson",
        data_of(&case).to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut parts: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for p in &mut parts {
        p.as_object_mut().unwrap().shift_remove("sstable");
        redact(p);
    }
    // Pretty-printed by serde_json (field order kept): insta's own JSON
    // serializer does not know serde_json's arbitrary-precision numbers.
    let text = serde_json::to_string_pretty(&parts).unwrap();
    insta::assert_snapshot!("nb_deletes_merge_2_json", text);
}

#[test]
fn text_snapshot() {
    let case = crate::util::fixtures().join("nb_all_types");
    if !case.is_dir() {
        eprintln!("skipping: {} is absent", case.display());
        return;
    }
    let r = sstkit([
        "dump-data",
        "-o",
        "text",
        "--limit",
        "3",
        data_of(&case).to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    insta::assert_snapshot!("nb_all_types_text", r.stdout);
}

/// The case used by the selection tests: keys are ints 0..=29 and 100.
fn deletes_case() -> Option<PathBuf> {
    let case = crate::util::fixtures().join("nb_deletes");
    case.is_dir().then(|| data_of(&case))
}

fn keys_of(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["key"]["value"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn key_is_found_through_the_index() {
    let Some(data) = deletes_case() else { return };
    let p = data.to_str().unwrap();
    let r = sstkit([
        "dump-data",
        "-o",
        "ndjson",
        "--io-stats=json",
        "-k",
        "7",
        "-k",
        "3",
        "-k",
        "999",
        p,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Data.db order (token order), not argument order; 999 is absent.
    let mut want = vec!["3".to_string(), "7".to_string()];
    let full = sstkit(["dump-data", "-o", "ndjson", p]);
    let order = keys_of(&full.stdout);
    want.sort_by_key(|k| order.iter().position(|o| o == k));
    assert_eq!(keys_of(&r.stdout), want);
    // The partitions are the same as in a full scan.
    for line in r.stdout.lines() {
        assert!(
            full.stdout.contains(line),
            "looked-up partition equals the scanned one"
        );
    }
    // Located through Summary.db and Index.db.
    let stats: Value =
        serde_json::from_str(r.stderr.lines().last().unwrap()).expect("io stats json");
    assert!(
        stats["components"]["index"]["reads"].as_u64().unwrap_or(0) > 0,
        "{stats}"
    );
    assert!(
        stats["components"]["summary"]["reads"]
            .as_u64()
            .unwrap_or(0)
            > 0,
        "{stats}"
    );

    // --key-hex and --keys-file select the same partition.
    let r2 = sstkit(["dump-data", "-o", "ndjson", "--key-hex", "00000003", p]);
    assert_eq!(keys_of(&r2.stdout), vec!["3"]);
    let scratch = crate::util::scratch_dir("dump-data", "keys");
    let f = scratch.join("keys.txt");
    std::fs::write(&f, "3\n0x00000007\n").unwrap();
    let r3 = sstkit([
        "dump-data",
        "-o",
        "ndjson",
        "--keys-file",
        f.to_str().unwrap(),
        p,
    ]);
    assert_eq!(keys_of(&r3.stdout), want);
    // sstabledump output with a key is sstabledump -k's: the same partition object.
    let r4 = sstkit(["dump-data", "-o", "sstabledump-lines", "-k", "3", p]);
    let full_l = sstkit(["dump-data", "-o", "sstabledump-lines", p]);
    assert_eq!(r4.stdout.lines().count(), 1);
    assert!(
        full_l.stdout.lines().any(|l| l == r4.stdout),
        "partition line equals the full dump's"
    );
}

#[test]
fn key_lookup_on_bti_scans() {
    // da (BTI) sstables have no Index.db/Summary.db: keys are found by scanning.
    let case = crate::util::fixtures().join("da_deletes");
    if !case.is_dir() {
        return;
    }
    let r = sstkit([
        "dump-data",
        "-o",
        "ndjson",
        "-k",
        "5",
        data_of(&case).to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(keys_of(&r.stdout), vec!["5"]);
}

#[test]
fn exclude_token_range_and_limit() {
    let Some(data) = deletes_case() else { return };
    let p = data.to_str().unwrap();
    let full = keys_of(&sstkit(["dump-data", "-o", "ndjson", p]).stdout);
    assert_eq!(full.len(), 31);

    let r = sstkit([
        "dump-data",
        "-o",
        "ndjson",
        "-x",
        "5",
        "--exclude-key",
        "23",
        p,
    ]);
    let got = keys_of(&r.stdout);
    assert_eq!(got.len(), 29);
    assert!(!got.contains(&"5".to_string()) && !got.contains(&"23".to_string()));

    let r = sstkit(["dump-data", "-o", "ndjson", "--limit", "4", p]);
    assert_eq!(keys_of(&r.stdout), full[..4].to_vec());

    // (start, end] on Murmur3 tokens.
    let all: Vec<Value> = sstkit(["dump-data", "-o", "ndjson", p])
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let tok = |v: &Value| v["key"]["token"].as_str().unwrap().parse::<i64>().unwrap();
    let (start, end) = (tok(&all[5]), tok(&all[20]));
    // `=` form: clap would take a leading `-` of a negative token for a flag.
    let r = sstkit([
        "dump-data",
        "-o",
        "ndjson",
        &format!("--token-range={start},{end}"),
        p,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let want: Vec<String> = full[6..=20].to_vec();
    assert_eq!(keys_of(&r.stdout), want);
    // Wrapping range: (end, start] = everything else.
    let r = sstkit([
        "dump-data",
        "-o",
        "ndjson",
        &format!("--token-range={end},{start}"),
        p,
    ]);
    assert_eq!(keys_of(&r.stdout).len(), 31 - 15);

    // Bad flags are usage errors.
    let r = sstkit(["dump-data", "--token-range", "12", p]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = sstkit(["dump-data", "--key-hex", "xyz", p]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[test]
fn tombstones_only_keeps_deletions() {
    let Some(data) = deletes_case() else { return };
    let r = sstkit([
        "dump-data",
        "-o",
        "ndjson",
        "--tombstones-only",
        data.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.is_empty());
    for line in r.stdout.lines() {
        let p: Value = serde_json::from_str(line).unwrap();
        let has = p.get("tombstone").is_some()
            || p.get("static_row").is_some()
            || p.get("clustering_elements")
                .is_some_and(|e| !e.as_array().unwrap().is_empty());
        assert!(has, "partition without deletions: {line}");
        assert!(!line.contains("\"is_live\":true"), "live cell kept: {line}");
    }
    let r = sstkit([
        "dump-data",
        "-o",
        "sstabledump",
        "--tombstones-only",
        data.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0);
    let v: Value = serde_json::from_str(&r.stdout).expect("valid JSON");
    assert!(!v.as_array().unwrap().is_empty());
}

#[test]
fn several_sstables_and_errors() {
    let cases: Vec<PathBuf> = ["nb_deletes_merge_1", "nb_deletes_merge_2"]
        .iter()
        .map(|c| crate::util::fixtures().join(c))
        .filter(|c| c.is_dir())
        .collect();
    if cases.len() != 2 {
        return;
    }
    let (a, b) = (data_of(&cases[0]), data_of(&cases[1]));
    let r = sstkit(["dump-data", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["sstables"].as_object().unwrap().len(), 2);
    // sstabledump: one document per sstable, newline-separated.
    let r = sstkit([
        "dump-data",
        "-o",
        "sstabledump",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    let docs: Vec<Value> = serde_json::Deserializer::from_str(&r.stdout)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(docs.len(), 2);
    // A missing sstable: exit 3, the error names the file, stdout stays clean.
    let r = sstkit(["dump-data", "/definitely/not/here-Data.db"]);
    assert_eq!(r.code, 3);
    assert!(r.stderr.contains("/definitely/not/here"), "{}", r.stderr);
}

#[test]
fn composite_key_lookup() {
    // (region text, bucket int) partition key, typed as `region:bucket`.
    let case = crate::util::fixtures().join("nb_clustering");
    if !case.is_dir() {
        return;
    }
    let data = data_of(&case);
    let p = data.to_str().unwrap();
    let keys = sstkit(["dump-data", "-o", "text", "--keys-only", "--limit", "3", p]);
    assert_eq!(keys.code, 0, "{}", keys.stderr);
    let want: Vec<&str> = keys.stdout.lines().collect();
    assert_eq!(want.len(), 3);
    let mut args = vec!["dump-data", "-o", "ndjson", "--keys-only"];
    for k in want.iter().rev() {
        args.extend(["-k", k]);
    }
    args.push(p);
    let r = sstkit(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let got: Vec<String> = r
        .stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["value"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(got, want);
    // A key of the wrong shape is a usage error.
    let r = sstkit(["dump-data", "-k", "just-one-component", p]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// `-o json` (the `scylla sstable dump-data` schema) writes a deleted row as
/// Scylla's tool does, with `"tombstone"` and `"shadowable_tombstone"`;
/// Cassandra writes no shadowable deletions, so the two are equal. The rows
/// shown deleted are those Cassandra's own sstabledump shows deleted.
#[test]
fn deleted_rows_carry_scyllas_two_tombstones() {
    let mut deleted = 0;
    for case in fixture_cases() {
        let Some(expected) = expected(&case, "sstabledump.json") else {
            continue;
        };
        let theirs: Value = serde_json::from_str(&expected).expect("sstabledump.json");
        let cassandra = theirs
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|p| p["rows"].as_array().into_iter().flatten())
            .filter(|r| r["type"] == "row" && r.get("deletion_info").is_some())
            .count();
        for data in data_files(&case) {
            let r = sstkit(["dump-data", "-o", "json", data.to_str().unwrap()]);
            assert_eq!(r.code, 0, "{}: {}", case.display(), r.stderr);
            let ours: Value = serde_json::from_str(&r.stdout).expect("json");
            let rows: Vec<&Value> = ours["sstables"]
                .as_object()
                .into_iter()
                .flat_map(|m| m.values())
                .flat_map(|ps| ps.as_array().into_iter().flatten())
                .flat_map(|p| p["clustering_elements"].as_array().into_iter().flatten())
                .filter(|e| e["type"] == "clustering-row" && e.get("tombstone").is_some())
                .collect();
            for e in &rows {
                assert_eq!(
                    e["tombstone"],
                    e["shadowable_tombstone"],
                    "{}",
                    case.display()
                );
                assert!(e["tombstone"]["timestamp"].is_i64(), "{}", case.display());
            }
            assert_eq!(rows.len(), cassandra, "{}", case.display());
            deleted += rows.len();
        }
    }
    assert!(deleted > 0, "no fixture has a deleted row");
}
