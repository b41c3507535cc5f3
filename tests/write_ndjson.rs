//! `write`: `dump-data -o ndjson` of every fixture written back with its
//! schema.cql gives an sstable whose dump is the same (counter tables are
//! refused); `dump-data -o ndjson | write --from - --like SSTABLE` round
//! trips through a pipe; out-of-order input is refused with its line number.

use std::path::Path;

use serde_json::Value;

use crate::util::{data_files, fixture_cases, scratch_dir, sstkit};

fn dump(data: &Path) -> Vec<Value> {
    let r = sstkit(["dump-data", "-o", "ndjson", data.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}: {}", data.display(), r.stderr);
    r.stdout
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("sstable");
            v
        })
        .collect()
}

#[test]
fn dump_write_dump_round_trips() {
    let mut done = 0;
    for case in fixture_cases() {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let schema = case.join("schema.cql");
        if !schema.is_file() {
            continue;
        }
        for data in data_files(&case) {
            let version = data.file_name().unwrap().to_string_lossy()[..2].to_string();
            let out = scratch_dir("write", &name);
            let input = out.join("in.ndjson");
            let r = sstkit(["dump-data", "-o", "ndjson", data.to_str().unwrap()]);
            assert_eq!(r.code, 0, "{name}: {}", r.stderr);
            std::fs::write(&input, &r.stdout).unwrap();
            let dir = out.join("sst");
            let r = crate::util::write_from(&input, &schema, &dir, &version, &[]);
            if name.contains("counter") {
                assert_eq!(r.code, 2, "{name}: counters refused: {}", r.stderr);
                assert!(r.stderr.contains("counter"), "{name}: {}", r.stderr);
                continue;
            }
            assert_eq!(r.code, 0, "{name}: {}{}", r.stdout, r.stderr);
            let v: Value = serde_json::from_str(&r.stdout).unwrap();
            let written = Path::new(v["output"].as_str().unwrap()).to_path_buf();
            let valid = sstkit(["validate", written.to_str().unwrap()]);
            assert_eq!(valid.code, 0, "{name}: {}", valid.stdout);
            assert_eq!(dump(&written), dump(&data), "{name}");
            done += 1;
        }
    }
    assert!(done > 40, "{done} fixtures round-tripped");
}

#[test]
fn out_of_order_partitions_are_refused_with_their_line() {
    let case = crate::util::fixtures().join("nb_clustering");
    let data = &data_files(&case)[0];
    let out = scratch_dir("write", "order");
    let r = sstkit(["dump-data", "-o", "ndjson", data.to_str().unwrap()]);
    let mut lines: Vec<&str> = r.stdout.lines().collect();
    lines.swap(0, 1);
    let input = out.join("in.ndjson");
    std::fs::write(&input, lines.join("\n")).unwrap();
    let dir = out.join("sst");
    let r = sstkit([
        "write",
        "--from",
        input.to_str().unwrap(),
        "--schema",
        case.join("schema.cql").to_str().unwrap(),
        "--output-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("line 2"), "{}", r.stderr);
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing written"
    );
}

/// Malformed records are usage errors naming the line, never a panic, and
/// nothing is written.
#[test]
fn malformed_records_are_refused_with_their_line() {
    let case = crate::util::fixtures().join("nb_clustering");
    let data = &data_files(&case)[0];
    let good = sstkit(["dump-data", "-o", "ndjson", data.to_str().unwrap()]).stdout;
    let first = good.lines().next().unwrap().to_string();
    let out = scratch_dir("write", "malformed");
    for (i, bad) in [
        "not json".to_string(),
        first.replacen("\"raw\":\"", "\"raw\":\"é", 1),
        first.replacen("\"raw\":\"", "\"raw\":\"0", 1),
        first.replacen("\"timestamp\":", "\"timestamp\":\"x\",\"t\":", 1),
        r#"{"key":{"raw":"00000001"},"clustering_elements":[{"type":"range-tombstone-change","weight":-1,"tombstone":{"timestamp":1,"deletion_time":"2026-13-45 99:00:00z"}}]}"#.to_string(),
        r#"{"key":{"raw":"00000001"},"clustering_elements":[{"type":"clustering-row","key":{"raw":"0009"},"columns":{}}]}"#.to_string(),
        r#"{"key":{"raw":"00000001"},"clustering_elements":[{"type":"clustering-row","key":{"raw":""},"columns":{"nope":{"timestamp":1}}}]}"#.to_string(),
    ]
    .iter()
    .enumerate()
    {
        let input = out.join(format!("in{i}.ndjson"));
        std::fs::write(&input, format!("{first}\n{bad}\n")).unwrap();
        let dir = out.join(format!("sst{i}"));
        let r = sstkit([
            "write",
            "--from",
            input.to_str().unwrap(),
            "--schema",
            case.join("schema.cql").to_str().unwrap(),
            "--output-dir",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(r.code, 2, "{bad}: {}", r.stderr);
        assert!(r.stderr.contains("line 2"), "{bad}: {}", r.stderr);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "{bad}: nothing written");
    }
}

/// `dump-data -o ndjson SSTABLE | sstkit write --from - --like SSTABLE`: the
/// types, partitioner, version and compression come from the sstable, and
/// the written sstable dumps as the source, for every fixture of each run.
#[test]
fn pipe_round_trip_with_like() {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let mut done = 0;
    for case in fixture_cases() {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        if name.contains("counter")
            || !name.ends_with("_collections") && !name.ends_with("_deletes")
        {
            continue;
        }
        for data in data_files(&case) {
            let r = sstkit(["dump-data", "-o", "ndjson", data.to_str().unwrap()]);
            assert_eq!(r.code, 0, "{name}: {}", r.stderr);
            let out = scratch_dir("write-pipe", &name);
            let mut child = Command::new(env!("CARGO_BIN_EXE_sstkit"))
                .args(["write", "-o", "json", "--from", "-", "--like"])
                .arg(&data)
                .arg("--output-dir")
                .arg(&out)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(r.stdout.as_bytes())
                .unwrap();
            let w = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&w.stderr);
            assert_eq!(w.status.code(), Some(0), "{name}: {stderr}");
            let v: Value = serde_json::from_slice(&w.stdout).unwrap();
            let written = Path::new(v["output"].as_str().unwrap()).to_path_buf();
            let src_version = &data.file_name().unwrap().to_string_lossy()[..2];
            assert_eq!(v["version"], src_version, "{name}: --like's version");
            assert_eq!(dump(&written), dump(&data), "{name}");
            // The spooled copy of stdin is gone: only the sstable's files remain.
            assert!(
                std::fs::read_dir(&out).unwrap().all(|e| !e
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with('.')),
                "{name}: temporary files left"
            );
            done += 1;
        }
    }
    assert!(done >= 6 || !crate::util::fixtures().is_dir(), "{done}");
}

/// A record longer than what `write` parses in memory (8 MiB) is parsed as it
/// is read: the partitions come out the same, and a later bad line is still
/// named by its number, as is text after the long record on its line.
#[test]
fn long_records_are_streamed() {
    let case = crate::util::fixtures().join("nb_clustering");
    let data = &data_files(&case)[0];
    let good = sstkit(["dump-data", "-o", "ndjson", data.to_str().unwrap()]).stdout;
    let lines: Vec<&str> = good.lines().collect();
    assert!(lines.len() >= 2, "{good}");
    // `sstable` is skipped by write: padding there makes the first record long.
    let pad = "x".repeat(9 << 20);
    let long = lines[0].replacen("\"sstable\":\"", &format!("\"sstable\":\"{pad}"), 1);
    assert!(long.len() > 9 << 20);
    let out = scratch_dir("write", "long");
    let run = |i: usize, text: String| write_text(&case, &out, i, text);
    let mut all = vec![long.clone()];
    all.extend(lines[1..].iter().map(|l| l.to_string()));
    let (r, _) = run(0, all.join("\n") + "\n");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(dump(Path::new(v["output"].as_str().unwrap())), dump(data));

    for (i, (text, line)) in [
        (format!("{long}\n{}\nnot json\n", lines[1]), "line 3"),
        (format!("{long} {{}}\n{}\n", lines[1]), "line 1"),
    ]
    .into_iter()
    .enumerate()
    {
        let (r, dir) = run(i + 1, text);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains(line), "{line}: {}", r.stderr);
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "nothing written"
        );
    }
}

/// A record's fields in another order: a key after the clustering elements
/// still writes the same partition (the elements wait for it); a static row
/// after elements already written is refused with its line.
#[test]
fn records_with_fields_out_of_order() {
    let case = crate::util::fixtures().join("nb_deletes");
    let data = &data_files(&case)[0];
    let good = sstkit(["dump-data", "-o", "ndjson", data.to_str().unwrap()]).stdout;
    let moved = |field: &str| -> String {
        good.lines()
            .map(|l| {
                let mut v: serde_json::Map<String, Value> = serde_json::from_str(l).unwrap();
                if let Some(f) = v.remove(field) {
                    v.insert(field.to_string(), f);
                }
                serde_json::to_string(&v).unwrap()
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let out = scratch_dir("write", "order-fields");
    let run = |i: usize, text: String| write_text(&case, &out, i, text);
    let (r, _) = run(0, moved("key"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(dump(Path::new(v["output"].as_str().unwrap())), dump(data));

    assert!(
        good.contains("\"static_row\""),
        "the fixture has static rows"
    );
    let (r, dir) = run(1, moved("static_row"));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("line 1") && r.stderr.contains("static_row"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing written"
    );
}

/// `write --from` of `text` (saved as `out/in<i>.ndjson`) with `case`'s
/// schema into `out/sst<i>`: the run and that directory.
fn write_text(
    case: &Path,
    out: &Path,
    i: usize,
    text: String,
) -> (crate::util::Run, std::path::PathBuf) {
    let input = out.join(format!("in{i}.ndjson"));
    std::fs::write(&input, text).unwrap();
    let dir = out.join(format!("sst{i}"));
    let r = sstkit([
        "write",
        "-o",
        "json",
        "--from",
        input.to_str().unwrap(),
        "--schema",
        case.join("schema.cql").to_str().unwrap(),
        "--output-dir",
        dir.to_str().unwrap(),
    ]);
    (r, dir)
}
