//! `rewrite`: the written sstables are valid and hold the same data. Every
//! intact row-format sstable of the fixtures and of the shared corpus is
//! rewritten in its own version (BIG or BTI `da`), and every fixture across
//! formats too (BIG -> `da` -> BIG, `da` -> `oa`), and `dump-data -o
//! ndjson` of the result equals that of the source; `validate` passes on
//! every output. Filters, versions and compressions;
//! the output directory guard.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{corpus, data_files, fixture_cases, scratch_dir, sstkit, Scratch};

/// `dump-data -o ndjson` without the per-line sstable path.
fn dump(data: &Path, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["dump-data", "-o", "ndjson"];
    args.extend_from_slice(extra);
    let p = data.to_str().unwrap();
    args.push(p);
    let r = sstkit(&args);
    assert_eq!(r.code, 0, "dump-data {p}: {}", r.stderr);
    r.stdout
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("sstable");
            v
        })
        .collect()
}

/// Rewrite `data` into a fresh directory: its guard and the new Data.db.
fn rewrite(data: &Path, tag: &str, extra: &[&str]) -> (Scratch, PathBuf) {
    let out = scratch_dir("rewrite", tag);
    let mut args = vec![
        "rewrite",
        "-o",
        "json",
        "--output-dir",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    args.push(data.to_str().unwrap());
    let r = sstkit(&args);
    assert_eq!(
        r.code,
        0,
        "rewrite {}: {}{}",
        data.display(),
        r.stdout,
        r.stderr
    );
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let rep = v["sstables"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()
        .clone();
    let output = PathBuf::from(rep["output"].as_str().unwrap());
    (out, output)
}

fn valid(data: &Path) {
    let r = sstkit(["validate", data.to_str().unwrap()]);
    assert_eq!(
        r.code,
        0,
        "validate {}: {}{}",
        data.display(),
        r.stdout,
        r.stderr
    );
}

fn is_bti(data: &Path) -> bool {
    data.file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("da-")
}

#[test]
fn fixtures_round_trip() {
    for case in fixture_cases() {
        for data in data_files(&case) {
            let tag = case.file_name().unwrap().to_string_lossy().to_string();
            let source = dump(&data, &[]);
            let (_out_dir, out) = rewrite(&data, &tag, &[]);
            valid(&out);
            assert_eq!(source, dump(&out, &[]), "{}", data.display());
            // Across formats: BIG -> da -> the source's version; da -> oa.
            let version = data.file_name().unwrap().to_string_lossy()[..2].to_string();
            let other = if is_bti(&data) { "oa" } else { "da" };
            let (_across_dir, across) = rewrite(
                &data,
                &format!("{tag}-{other}"),
                &["--format-version", other],
            );
            valid(&across);
            assert_eq!(source, dump(&across, &[]), "{} as {other}", data.display());
            if !is_bti(&data) {
                let (_back_dir, back) = rewrite(
                    &across,
                    &format!("{tag}-back"),
                    &["--format-version", &version],
                );
                valid(&back);
                assert_eq!(
                    source,
                    dump(&back, &[]),
                    "{} -> da -> {version}",
                    data.display()
                );
            }
        }
    }
}

/// Row-format versions sstkit writes.
fn writable(name: &str) -> bool {
    ["ma", "mb", "mc", "md", "me", "na", "nb", "nc", "oa", "da"]
        .iter()
        .any(|v| name.starts_with(&format!("{v}-")))
}

#[test]
fn corpus_round_trip() {
    let Some(root) = corpus() else { return };
    let mut stack = vec![root];
    let mut done = 0;
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if !name.ends_with("-Data.db") || !writable(&name) {
                continue;
            }
            // Intact = validate finds nothing (the corrupt sets are skipped).
            if sstkit(["validate", p.to_str().unwrap()]).code != 0 {
                continue;
            }
            let tag = format!("corpus-{done}");
            let (_out_dir, out) = rewrite(&p, &tag, &[]);
            valid(&out);
            assert_eq!(dump(&p, &[]), dump(&out, &[]), "{}", p.display());
            done += 1;
        }
    }
    assert!(done > 50, "only {done} corpus sstables rewritten");
}

#[test]
fn filters_versions_and_compressions() {
    let fx = crate::util::fixtures();
    // --exclude-key: the same data without that partition.
    let wide = &data_files(&fx.join("nb_wide"))[0];
    let (_out_dir, out) = rewrite(
        wide,
        "exclude",
        &["--exclude-key", "5", "--column-index-size", "1KiB"],
    );
    valid(&out);
    let want: Vec<Value> = dump(wide, &[])
        .into_iter()
        .filter(|v| v["key"]["value"] != "5")
        .collect();
    assert_eq!(dump(&out, &[]), want);
    // --key: only that partition.
    let (_out_dir, out) = rewrite(wide, "only", &["--key", "5"]);
    valid(&out);
    assert_eq!(dump(&out, &[]), dump(wide, &["--key", "5"]));
    // Another version and every compression: the same data, valid.
    let deletes = &data_files(&fx.join("oa_deletes"))[0];
    let whole = dump(deletes, &[]);
    for (tag, args) in [
        (
            "nb-zstd",
            vec![
                "--format-version",
                "nb",
                "--compression",
                "zstd:5",
                "--chunk-length",
                "64KiB",
            ],
        ),
        (
            "me-none",
            vec!["--format-version", "me", "--compression", "none"],
        ),
        (
            "na-snappy",
            vec!["--format-version", "na", "--compression", "snappy"],
        ),
        (
            "oa-deflate",
            vec!["--compression", "deflate", "--chunk-length", "4KiB"],
        ),
        (
            "oa-lz4",
            vec!["--compression", "lz4", "--column-index-size", "1KiB"],
        ),
    ] {
        let (_out_dir, out) = rewrite(deletes, tag, &args);
        valid(&out);
        let r = sstkit(["validate-checksums", out.to_str().unwrap()]);
        assert_eq!(r.code, 0, "{tag}: {}", r.stdout);
        assert_eq!(dump(&out, &[]), whole, "{tag}");
    }
    // Usage errors: an input's own directory, an unknown version or compression.
    let d = fx.join("nb_clustering");
    let ds = d.to_str().unwrap();
    for args in [
        vec!["rewrite", "--output-dir", ds, ds],
        vec![
            "rewrite",
            "--output-dir",
            "/tmp/sstkit-rw-x",
            "--format-version",
            "ka",
            ds,
        ],
        vec![
            "rewrite",
            "--output-dir",
            "/tmp/sstkit-rw-x",
            "--compression",
            "brotli",
            ds,
        ],
        vec![
            "rewrite",
            "--output-dir",
            "/tmp/sstkit-rw-x",
            "--chunk-length",
            "1000",
            ds,
        ],
    ] {
        let r = sstkit(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
    }
    assert!(
        crate::util::data_files(&d).len() == 1,
        "nothing written into the input directory"
    );
}

/// `split`: the outputs, in order, hold exactly the source's partitions;
/// each is valid; by size each output but the last reaches the size.
#[test]
fn split_by_size_and_token_ranges() {
    let fx = crate::util::fixtures();
    let src = &data_files(&fx.join("nb_clustering"))[0];
    let whole = dump(src, &[]);
    let out = scratch_dir("split", "size");
    let r = sstkit([
        "split",
        "-o",
        "json",
        "--output-dir",
        out.to_str().unwrap(),
        "--max-size",
        "64KiB",
        src.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let rep = v["sstables"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()
        .clone();
    let outs = rep["outputs"].as_array().unwrap();
    assert!(outs.len() >= 2, "{rep}");
    let mut all = Vec::new();
    for (i, o) in outs.iter().enumerate() {
        let p = PathBuf::from(o["output"].as_str().unwrap());
        valid(&p);
        if i + 1 < outs.len() {
            assert!(o["data_file_bytes"].as_u64().unwrap() >= 65536, "{o}");
        }
        all.extend(dump(&p, &[]));
    }
    assert_eq!(all, whole);

    let ranges = out.join("ranges.txt");
    std::fs::write(&ranges, "-9223372036854775808,0\n0,9223372036854775807\n").unwrap();
    let out2 = scratch_dir("split", "ranges");
    let outs = split_by_ranges(src, &out2, &ranges);
    assert_eq!(outs.len(), 2, "{outs:?}");
    let all: Vec<_> = outs.iter().flat_map(|p| dump(p, &[])).collect();
    assert_eq!(all, whole);
}

/// `split --token-ranges RANGES` of `src` into `out`: the Data.db of each
/// output, each checked by `validate`.
fn split_by_ranges(src: &Path, out: &Path, ranges: &Path) -> Vec<PathBuf> {
    let r = sstkit([
        "split",
        "-o",
        "json",
        "--output-dir",
        out.to_str().unwrap(),
        "--token-ranges",
        ranges.to_str().unwrap(),
        src.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let rep = v["sstables"].as_object().unwrap().values().next().unwrap();
    let outs: Vec<PathBuf> = rep["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| PathBuf::from(o["output"].as_str().unwrap()))
        .collect();
    for p in &outs {
        valid(p);
    }
    outs
}

/// A pre-3.0 `ka` sstable (with its CREATE TABLE) upgraded to `oa` holds
/// the same data, and is valid.
#[test]
fn ka_upgrades_to_oa() {
    let Some(root) = corpus() else { return };
    let dir = root.join("scylladb/sliced_mutation_reads");
    let Some(data) = data_files(&dir)
        .into_iter()
        .find(|p| p.to_string_lossy().contains("-ka-"))
    else {
        return;
    };
    let tmp = scratch_dir("rewrite", "ka-schema");
    let cql = crate::util::schema_file(
        &tmp,
        "smr",
        "CREATE TABLE ks.sliced_mutation_reads_test (pk int, ck int, v1 int, v2 set<int>, PRIMARY KEY (pk, ck));",
    );
    let c = cql.to_str().unwrap();
    let (_out_dir, out) = rewrite(&data, "ka", &["--schema", c, "--format-version", "oa"]);
    valid(&out);
    assert_eq!(dump(&data, &["--schema", c]), dump(&out, &[]));
    // Without --format-version: ka is not a version sstkit writes.
    let o = scratch_dir("rewrite", "ka-refused");
    let r = sstkit([
        "rewrite",
        "--schema",
        c,
        "--output-dir",
        o.to_str().unwrap(),
        data.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// A Scylla view sstable rewritten in its version, or another Scylla
/// writes (md, me), keeps its shadowable deletions: the dumps are equal and
/// show the deletion MANIFEST.md names, and Scylla.db comes along (Scylla
/// reads flag 0x80 only with its ShadowableTombstones feature).
#[test]
fn scylla_shadowable_deletions_survive_rewrite() {
    for (src, ts) in crate::util::scylla_shadowable_corpus() {
        let source = crate::util::dump_records(&src);
        let shown = crate::util::shadowable_deletions(&source);
        assert!(
            shown.iter().any(|(_, t)| *t == ts),
            "{}: {shown:?}",
            src.display()
        );
        for version in ["mc", "md", "me"] {
            let (_dir, out) = rewrite(
                &src,
                &format!("shadowable-{version}"),
                &["--format-version", version],
            );
            valid(&out);
            assert_eq!(
                source,
                crate::util::dump_records(&out),
                "{} as {version}",
                src.display()
            );
            let scylla = out.to_string_lossy().replace("-Data.db", "-Scylla.db");
            let r = sstkit(["dump-scylla-metadata", "-o", "json", &scylla]);
            assert_eq!(r.code, 0, "{}", r.stderr);
            assert!(
                r.stdout.contains("\"ShadowableTombstones\""),
                "{}",
                r.stdout
            );
        }
    }
}

/// Rewriting a Scylla view sstable to a Cassandra version is refused
/// (exit 3) with the sstable and the first partition holding a shadowable
/// deletion named, and leaves nothing in the output directory.
#[test]
fn scylla_shadowable_deletions_refused_in_cassandra_versions() {
    for (src, _) in crate::util::scylla_shadowable_corpus() {
        let (key, _) =
            crate::util::shadowable_deletions(&crate::util::dump_records(&src))[0].clone();
        for version in ["nb", "oa", "da"] {
            let out = scratch_dir("rewrite", &format!("shadowable-refused-{version}"));
            let r = sstkit([
                "rewrite",
                "-o",
                "text",
                "--output-dir",
                out.to_str().unwrap(),
                "--format-version",
                version,
                src.to_str().unwrap(),
            ]);
            assert_eq!(r.code, 3, "{version}: {}{}", r.stdout, r.stderr);
            assert!(
                r.stderr.contains(&src.display().to_string()),
                "{}",
                r.stderr
            );
            assert!(
                r.stderr.contains(&format!("partition key 0x{key}")),
                "{}",
                r.stderr
            );
            assert!(r.stderr.contains("shadowable"), "{}", r.stderr);
            let left: Vec<_> = std::fs::read_dir(&out)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .collect();
            assert!(left.is_empty(), "{version}: {left:?}");
        }
    }
}

/// Split of a Scylla view sstable keeps its shadowable deletions.
#[test]
fn split_keeps_scylla_shadowable_deletions() {
    for (src, _) in crate::util::scylla_shadowable_corpus() {
        let source = crate::util::dump_records(&src);
        let work = scratch_dir("split", "shadowable-ranges");
        let out = scratch_dir("split", "shadowable");
        let ranges = work.join("ranges.txt");
        std::fs::write(
            &ranges,
            "-9223372036854775808,-3700000000000000000\n-3700000000000000000,9223372036854775807\n",
        )
        .unwrap();
        let outs = split_by_ranges(&src, &out, &ranges);
        assert_eq!(outs.len(), 2, "{outs:?}");
        let all: Vec<_> = outs
            .iter()
            .flat_map(|p| crate::util::dump_records(p))
            .collect();
        assert_eq!(all, source, "{}", src.display());
    }
}
