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
                let comps = crate::read::components(e["key"]["raw"].as_str().unwrap());
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

#[test]
fn composite_keys_in_every_written_form() {
    let d = "fixtures/cassandra/nb_clustering";
    let want = ndjson(&[
        "dump-data",
        d,
        "--key",
        "sa:11",
        "-o",
        "ndjson",
        "--keys-only",
    ]);
    assert_eq!(want.len(), 1);
    for form in ["('sa', 11)", "'sa', 11", "'sa':11", "sa:'11'"] {
        let got = ndjson(&["dump-data", d, "--key", form, "-o", "ndjson", "--keys-only"]);
        assert_eq!(got, want, "--key {form}");
    }
    // The old escape still reads a colon inside a component.
    let r = sstkit(["token", "--type", "text:int", "a\\:b:1", "-o", "ndjson"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let quoted = sstkit(["token", "--type", "text:int", "'a:b':1", "-o", "ndjson"]);
    let raw = |s: &str| serde_json::from_str::<Value>(s).unwrap()["raw"].clone();
    assert_eq!(raw(&r.stdout), raw(&quoted.stdout));
}

#[test]
fn a_bad_component_is_named_with_the_escaping_rule() {
    let d = "fixtures/cassandra/nb_clustering";
    let r = sstkit(["dump-data", d, "--key", "sa:x"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("component 2 (int) 'x'"), "{}", r.stderr);
    assert!(
        r.stderr.contains("'\\:'") && r.stderr.contains("(1, 'a')"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("(text, int)"),
        "key type as users write it: {}",
        r.stderr
    );
    let r = sstkit([
        "read",
        d,
        "--key",
        "sa:11",
        "--clustering-order",
        "--from",
        "-479:a:b:c:d",
    ]);
    assert_eq!(r.code, 0, "a text component may hold colons: {}", r.stderr);
    let r = sstkit([
        "read",
        "fixtures/cassandra/nb_typed_keys",
        "--key",
        "33e26c3f-5bab-4362-abcb-03b2f72873de",
        "--from",
        "2042-05-16T13:28:02.000Z:abc",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("component 2 (decimal) 'abc'"),
        "{}",
        r.stderr
    );
}

#[test]
fn negative_numbers_are_values() {
    let r = sstkit(["token", "--type", "int", "-5", "-o", "ndjson"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("\"raw\":\"fffffffb\""), "{}", r.stdout);
    let r = sstkit(["token", "-5", "--type", "bigint", "-o", "ndjson"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = sstkit([
        "dump-data",
        "fixtures/cassandra/nb_wide",
        "--key",
        "-5",
        "-o",
        "ndjson",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // A flag that is not a number is still a flag.
    let r = sstkit(["token", "--type", "int", "-5", "--bogus"]);
    assert_eq!(r.code, 2);
}

#[test]
fn token_sstable_is_found_as_every_sstable_argument() {
    // A directory holding one sstable names it, as for the data commands.
    let d = "fixtures/cassandra/nb_clustering";
    let by_file = sstkit([
        "token",
        "--sstable",
        &format!("{d}/nb-1-big-Data.db"),
        "--hex",
        "00000001",
    ]);
    assert_eq!(by_file.code, 0, "{}", by_file.stderr);
    let by_dir = sstkit(["token", "--sstable", d, "--hex", "00000001"]);
    assert_eq!(by_dir.code, 0, "{}", by_dir.stderr);
    assert_eq!(by_dir.stdout, by_file.stdout);
    // A directory of several sstables, or of none, is a usage error.
    let tmp = crate::util::scratch_dir("keys", "token-sstable");
    for (i, from) in ["nb_clustering", "nb_wide"].iter().enumerate() {
        for f in std::fs::read_dir(format!("fixtures/cassandra/{from}")).unwrap() {
            let p = f.unwrap().path();
            let name = p.file_name().unwrap().to_str().unwrap();
            if let Some(rest) = name.strip_prefix("nb-1-") {
                std::fs::copy(&p, tmp.path().join(format!("nb-{}-{rest}", i + 1))).unwrap();
            }
        }
    }
    let several = tmp.path().to_str().unwrap();
    let empty = crate::util::scratch_dir("keys", "token-none");
    for (dir, says) in [
        (several, "2 sstables there; name one".to_string()),
        (
            empty.path().to_str().unwrap(),
            format!("no sstables found in {}", empty.path().display()),
        ),
    ] {
        let r = sstkit(["token", "--sstable", dir, "--hex", "00000001"]);
        assert_eq!(r.code, 2, "{dir}: {}", r.stderr);
        assert!(r.stderr.contains(&says), "{dir}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{dir}");
    }
}

#[test]
fn contradictory_flags_exit_2() {
    let d = "fixtures/cassandra/nb_wide";
    for args in [
        vec!["dump-data", d, "--keys-only", "--tombstones-only"],
        vec!["read", d, "--key", "5", "--from", "1", "--after", "1"],
        vec!["read", d, "--key", "5", "--to", "1", "--before", "1"],
        vec!["read", d, "--key", "5", "--naive", "--reverse"],
        vec!["token", "--sstable", d, "--partitioner", "random", "5"],
        vec![
            "dump-toc",
            d,
            "--no-index-cache",
            "--index-cache-size",
            "1MiB",
        ],
    ] {
        let r = sstkit(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("cannot be used with"),
            "{args:?}: {}",
            r.stderr
        );
        assert!(r.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn dump_index_on_bti_points_to_dump_trie() {
    let r = sstkit(["dump-index", "fixtures/cassandra/da_wide", "-o", "ndjson"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("use dump-trie"), "{}", r.stderr);
    // The ndjson record of the failed sstable is typed, never data-shaped.
    let lines: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{}", r.stdout);
    assert_eq!(lines[0]["type"], "error");
    assert!(lines[0]["error"].as_str().unwrap().contains("dump-trie"));
    let r = sstkit(["dump-index", "fixtures/cassandra/da_wide"]);
    assert!(r.stderr.contains("use dump-trie"), "{}", r.stderr);
}

#[test]
fn ndjson_errors_of_dump_data_are_typed() {
    // A Statistics.db that does not decode: the sstable's record says so.
    let tmp = crate::util::scratch_dir("keys", "ndjson-error");
    for f in std::fs::read_dir("fixtures/cassandra/nb_wide").unwrap() {
        let p = f.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        if name.starts_with("nb-1-big-") {
            std::fs::copy(&p, tmp.join(&name)).unwrap();
        }
    }
    std::fs::write(tmp.join("nb-1-big-Statistics.db"), [0u8; 3]).unwrap();
    let r = sstkit(["dump-data", tmp.to_str().unwrap(), "-o", "ndjson"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("Statistics.db"), "{}", r.stderr);
    for l in r.stdout.lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["type"], "error", "{l}");
    }
}

#[test]
fn messages_carry_no_rust_debug_text() {
    let tmp = crate::util::scratch_dir("keys", "debug-text");
    let s = crate::util::schema_file(&tmp, "cut", "CREATE TABLE ks.t (a int PRIMARY KEY");
    let r = sstkit([
        "dump-data",
        "fixtures/cassandra/nb_wide",
        "--schema",
        s.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr.contains("at the end of the statement"),
        "{}",
        r.stderr
    );
    let r = sstkit(["token", "--type", "list<int>", "{1: 2}"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("literal {1: 2} does not fit type list<int>"),
        "{}",
        r.stderr
    );
    for m in [&r.stderr] {
        for debug in ["Some(", "None", "Brace(", "Atom("] {
            assert!(!m.contains(debug), "{m}");
        }
    }
}

#[test]
fn sstables_older_than_jb_are_named() {
    let Some(root) = crate::util::corpus() else {
        return;
    };
    let dir = root.join("cassandra/invalid-legacy-ic-Keyspace1-Standard1");
    let want = "unsupported sstable version ic (Cassandra 1.2); sstkit reads jb and later";
    let r = sstkit(["info", dir.to_str().unwrap()]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains(want), "{}", r.stderr);
    let data = dir.join("Keyspace1-Standard1-ic-0-Data.db");
    let r = sstkit(["dump-data", data.to_str().unwrap()]);
    assert!(r.stderr.contains(want), "{}", r.stderr);
}

#[test]
fn info_shows_the_rest_of_a_damaged_statistics() {
    let Some(root) = crate::util::corpus() else {
        return;
    };
    let dir = root.join("scylladb/zero_sized_histogram");
    let r = sstkit(["info", dir.to_str().unwrap(), "-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let info = v["sstables"].as_object().unwrap().values().next().unwrap();
    assert_eq!(info["sstable_level"], 3);
    assert!(info["max_timestamp"].is_i64());
    assert!(info["estimated_partitions"].is_null());
    let damaged = info["damaged"].as_array().unwrap();
    assert!(damaged[0]
        .as_str()
        .unwrap()
        .contains("partition size histogram"));
    assert!(r.stderr.contains("histogram with size 0"), "{}", r.stderr);
}

/// A copy of the corpus's `scylladb/uncompressed` (la) in a scratch directory.
fn la_copy(name: &str) -> Option<crate::util::Scratch> {
    let root = crate::util::corpus()?;
    let tmp = crate::util::scratch_dir("keys", name);
    for f in std::fs::read_dir(root.join("scylladb/uncompressed")).unwrap() {
        let p = f.unwrap().path();
        std::fs::copy(&p, tmp.join(p.file_name().unwrap())).unwrap();
    }
    Some(tmp)
}

#[test]
fn schema_cql_next_to_the_sstables_is_used() {
    let Some(dir) = la_copy("schema-cql") else {
        return;
    };
    let d = dir.to_str().unwrap();
    let r = sstkit(["dump-data", d, "-o", "ndjson"]);
    assert_eq!(r.code, 3, "without a schema: {}", r.stderr);
    std::fs::write(
        dir.join("schema.cql"),
        "-- snapshot schema\nCREATE TYPE IF NOT EXISTS ks.unused (a int);\n\n\
         CREATE TABLE IF NOT EXISTS ks.uncompressed (\n    name text PRIMARY KEY, /* c */\n    \
         col1 text,\n    col2 int\n) WITH comment = 'x';\n",
    )
    .unwrap();
    let r = sstkit(["dump-data", d, "-o", "ndjson"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stderr.matches("schema.cql").count(),
        1,
        "said once: {}",
        r.stderr
    );
    assert!(r.stdout.contains("\"daughter\""), "{}", r.stdout);
    // --schema wins, and then nothing is said about schema.cql.
    let s = crate::util::schema_file(
        &dir,
        "given",
        "CREATE TABLE ks.u (name text PRIMARY KEY, col1 text, col2 int);",
    );
    let r = sstkit(["dump-data", d, "--schema", s.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("schema.cql"), "{}", r.stderr);
}

#[test]
fn a_schema_that_does_not_fit_is_named_once() {
    let Some(dir) = la_copy("schema-misfit") else {
        return;
    };
    let d = dir.to_str().unwrap();
    let s = crate::util::schema_file(
        &dir,
        "wrong",
        "CREATE TABLE ks.u (name text PRIMARY KEY, col1 int, col2 int);",
    );
    for cmd in [
        vec!["dump-data", d],
        vec!["read", d, "--key", "vinna", "--key", "isak"],
    ] {
        let mut args = cmd.clone();
        args.extend(["--schema", s.to_str().unwrap(), "-o", "text"]);
        let r = sstkit(&args);
        assert_eq!(r.code, 0, "{cmd:?}: {}", r.stderr);
        assert_eq!(
            r.stderr.matches("col1 (int)").count(),
            1,
            "{cmd:?}: {}",
            r.stderr
        );
        assert!(!r.stderr.contains("col2"), "{cmd:?}: {}", r.stderr);
    }
    let s = crate::util::schema_file(
        &dir,
        "right",
        "CREATE TABLE ks.u (name text PRIMARY KEY, col1 text, col2 int);",
    );
    let r = sstkit(["dump-data", d, "--schema", s.to_str().unwrap()]);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
}

/// One partition of a dump: the key's raw hex and the clustering rows' raw hex.
struct Dumped {
    key: String,
    rows: Vec<String>,
}

/// The partitions of `dir` as ndjson gives them (raw forms, the truth).
fn dumped(dir: &str) -> (Vec<Dumped>, Vec<Value>) {
    let r = sstkit(["dump-data", "-o", "ndjson", dir]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let parts = lines
        .iter()
        .map(|p| Dumped {
            key: p["key"]["raw"].as_str().unwrap().to_string(),
            rows: p["clustering_elements"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter(|e| e["type"] == "clustering-row")
                        .map(|e| e["key"]["raw"].as_str().unwrap().to_string())
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect();
    (parts, lines)
}

/// `read -k KEY [--from C --to C] DIR`: the key's raw hex and the rows'.
fn read_back(
    dir: &str,
    key: &str,
    clustering: Option<&str>,
) -> Result<(String, Vec<String>), String> {
    let mut a = vec!["read", "-o", "ndjson", "-k", key];
    if let Some(c) = clustering {
        a.extend(["--from", c, "--to", c]);
    }
    a.push(dir);
    let r = sstkit(&a);
    if r.code != 0 || r.stdout.trim().is_empty() {
        return Err(format!("exit {}: {}", r.code, r.stderr.trim()));
    }
    let v: Value = serde_json::from_str(r.stdout.lines().next().unwrap()).unwrap();
    let rows = v["clustering_elements"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|e| e["type"] == "clustering-row")
                .map(|e| e["key"]["raw"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default();
    Ok((v["key"]["raw"].as_str().unwrap().to_string(), rows))
}

/// A printed form, the key as printed, its raw hex, and a printed
/// clustering of one of its rows with that row's raw hex.
type Pasted = (&'static str, String, String, Option<(String, String)>);

/// Every printed key and clustering pastes back into `--key` / `--from` /
/// `--to` as it is: the text output's `[sa:11]` and `-479, 'zulu5'`,
/// sstabledump's JSON arrays `["sa","11"]` and `[ -479, "zulu5" ]`, the
/// ndjson `value`s, and the keys `partitions` prints.
#[test]
fn printed_keys_and_clusterings_paste_back() {
    let mut failures = Vec::new();
    let mut pasted = std::collections::BTreeMap::<&str, usize>::new();
    for case in [
        "nb_clustering",
        "da_clustering",
        "nb_typed_keys",
        "oa_wide_desc",
    ] {
        let dir = crate::util::fixtures().join(case).display().to_string();
        let (parts, nd) = dumped(&dir);
        // ndjson: key.value and each clustering row's key.value.
        let mut forms: Vec<Pasted> = Vec::new();
        for (p, v) in parts.iter().zip(&nd).take(12) {
            let row = v["clustering_elements"].as_array().and_then(|a| {
                a.iter().find(|e| e["type"] == "clustering-row").map(|e| {
                    (
                        e["key"]["value"].as_str().unwrap().to_string(),
                        e["key"]["raw"].as_str().unwrap().to_string(),
                    )
                })
            });
            forms.push((
                "ndjson",
                v["key"]["value"].as_str().unwrap().into(),
                p.key.clone(),
                row,
            ));
        }
        // sstabledump: partition.key and rows[].clustering as JSON text.
        let sd = sstkit(["dump-data", "-o", "sstabledump", dir.as_str()]);
        let sd: Value = serde_json::from_str(&sd.stdout).unwrap();
        for (p, v) in parts.iter().zip(sd.as_array().unwrap()).take(12) {
            let key = serde_json::to_string(&v["partition"]["key"]).unwrap();
            let row = v["rows"].as_array().and_then(|rows| {
                let r = rows.iter().find(|r| r["type"] == "row")?;
                Some((
                    serde_json::to_string(&r["clustering"]).unwrap(),
                    p.rows.first()?.clone(),
                ))
            });
            forms.push(("sstabledump", key, p.key.clone(), row));
        }
        // text: `[key]@pos Row[...]: clustering | cells`, one line per row.
        let tx = sstkit(["dump-data", "-o", "text", dir.as_str()]);
        let mut seen: Vec<(String, Option<String>)> = Vec::new();
        for line in tx.stdout.lines() {
            let Some(at) = line.find("]@") else { continue };
            let key = line[..at + 1].to_string();
            if seen.last().is_none_or(|l| l.0 != key) {
                seen.push((key, None));
            }
            let Some(last) = seen.last_mut() else {
                continue;
            };
            if last.1.is_none() && line.contains(" Row[") && !line.contains(": STATIC |") {
                last.1 = line
                    .split_once(" ]: ")
                    .and_then(|(_, rest)| rest.split_once(" | "))
                    .map(|(c, _)| c.to_string());
            }
        }
        assert_eq!(seen.len(), parts.len(), "{case}: text keys");
        for ((key, clust), p) in seen.into_iter().zip(&parts).take(12) {
            let row = clust.zip(p.rows.first().cloned());
            forms.push(("text", key, p.key.clone(), row));
        }
        // partitions: the keys of its text list, in a pipe (never cut).
        let pt = sstkit(["partitions", "-o", "text", "--top", "12", dir.as_str()]);
        let pj = sstkit(["partitions", "-o", "ndjson", "--top", "12", dir.as_str()]);
        let raws: Vec<String> = pj
            .stdout
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["type"] == "partition")
            .map(|v| v["key"]["raw"].as_str().unwrap().to_string())
            .collect();
        let keys: Vec<String> = pt
            .stdout
            .lines()
            .skip_while(|l| !l.starts_with("partition key"))
            .skip(1)
            .map(|l| l.split("  ").next().unwrap().trim().to_string())
            .collect();
        assert_eq!(keys.len(), raws.len(), "{}", pt.stdout);
        for (k, raw) in keys.into_iter().zip(raws) {
            forms.push(("partitions", k, raw, None));
        }
        for (form, key, raw, row) in forms {
            *pasted.entry(form).or_default() += 1;
            match read_back(&dir, &key, None) {
                Ok((got, _)) if got == raw => {}
                other => failures.push(format!("{case} {form} -k {key}: {other:?}")),
            }
            if let Some((c, want)) = row {
                *pasted.entry(form).or_default() += 1;
                match read_back(&dir, &key, Some(&c)) {
                    Ok((_, rows)) if rows == [want.clone()] => {}
                    other => {
                        failures.push(format!("{case} {form} -k {key} --from/--to {c}: {other:?}"))
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    for (form, n) in &pasted {
        assert!(*n >= 10, "only {n} pasted from {form}");
    }
}

/// The documented escape `\:` works in a text key, and a text key that is
/// itself bracketed is written quoted.
#[test]
fn documented_escapes_work() {
    let t = CqlType::Native(sstkit_format::types::Native::Text);
    assert_eq!(parse_key_arg(&t, "host\\:9042").unwrap(), b"host:9042");
    assert_eq!(parse_key_arg(&t, "host:9042").unwrap(), b"host:9042");
    assert_eq!(parse_key_arg(&t, "[host:9042]").unwrap(), b"host:9042");
    assert_eq!(parse_key_arg(&t, "'[abc]'").unwrap(), b"[abc]");
    assert_eq!(parse_key_arg(&t, "[\"a\\\"b\"]").unwrap(), b"a\"b");
    let composite = CqlType::Composite(vec![
        t.clone(),
        CqlType::Native(sstkit_format::types::Native::Int),
    ]);
    let want = parse_key_arg(&composite, "('host:9042', 5)").unwrap();
    assert_eq!(parse_key_arg(&composite, "host\\:9042:5").unwrap(), want);
    assert_eq!(parse_key_arg(&composite, "[host\\:9042:5]").unwrap(), want);
    assert_eq!(
        parse_key_arg(&composite, "[ \"host:9042\", \"5\" ]").unwrap(),
        want
    );
}
